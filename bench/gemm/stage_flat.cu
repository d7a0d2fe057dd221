// Probe (issue 10, 4001^3's staging copy): is the padded copy of A and B
// (rows of 4001 bf16, 2-byte aligned, into rows padded to 64 elements)
// faster as a plain grid-stride copy than as the wgmma family's claimed
// rows (templates/lib/wgmma.lua stage_all, bench/stage_copy.sh: 51 us,
// 2.5 TB/s)? Each thread takes destination chunks (16 bytes) i, i + stride,
// ..., U of them in flight: two aligned 16-byte loads and a funnel shift,
// or its one load when the row happens to be aligned. Variants: the grid
// (blocks x threads: the GEMM kernel's own 132 x 384, or full occupancy),
// U, and whether the second piece comes from the neighbouring lane.
// The funnel shift is the template's own (STAGED_SRC: a staged wgmma
// kernel's source from bench/gemm/dump.lua). Built and run by
// bench/stage_copy.sh build / run, after the template's copy. (H100,
// 2026-11-23: 51.7-59.7 us, no faster than the template's 51.2;
// bench/archive/RESULTS-2026.md.)
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include STAGED_SRC
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

// One matrix: rows x cols (ld = cols) at src into rows of pad elements at dst.
// Chunk c of the destination is row c / qc, 16-byte piece c % qc.
template<int U, bool SHFL>
__global__ void flat(const unsigned char* __restrict__ src, int rows, int cols, unsigned char* __restrict__ dst, int pad) {
  const int qc = (cols + 7) / 8;
  const unsigned total = (unsigned)rows * qc, stride = gridDim.x * blockDim.x;
  const unsigned long long lo_end = (unsigned long long)src, hi_end = lo_end + (unsigned long long)rows * cols * 2;
  for (unsigned c0 = blockIdx.x * blockDim.x + threadIdx.x; c0 - threadIdx.x % 32 < total; c0 += U * stride) {
    uint4 lo[U], hi[U];
    unsigned sh[U];
    unsigned long long at[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      const unsigned c = c0 + u * stride;
      const unsigned r = c / qc, q = c - r * qc;
      at[u] = lo_end + ((unsigned long long)r * cols + 8ull * q) * 2;
      sh[u] = (unsigned)(at[u] & 15);
      const unsigned long long al = at[u] - sh[u];
      lo[u] = hi[u] = make_uint4(0, 0, 0, 0);
      if (c < total && al + 16 <= hi_end) lo[u] = __ldg((const uint4*)al);
      if (!SHFL && c < total && sh[u] && al + 32 <= hi_end) hi[u] = __ldg((const uint4*)al + 1);
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      const unsigned c = c0 + u * stride;
      if (SHFL) {
        // The next lane's piece is this one's hi when it is the next 16 bytes.
        uint4 nb;
        nb.x = __shfl_down_sync(~0u, lo[u].x, 1); nb.y = __shfl_down_sync(~0u, lo[u].y, 1);
        nb.z = __shfl_down_sync(~0u, lo[u].z, 1); nb.w = __shfl_down_sync(~0u, lo[u].w, 1);
        const unsigned long long nat = __shfl_down_sync(~0u, at[u], 1);
        const bool next = threadIdx.x % 32 != 31 && nat - (nat & 15) == at[u] - sh[u] + 16;
        if (next) hi[u] = nb;
        else if (c < total && sh[u] && at[u] - sh[u] + 32 <= hi_end) hi[u] = __ldg((const uint4*)(at[u] - sh[u]) + 1);
      }
      if (c >= total) continue;
      const unsigned r = c / qc, q = c - r * qc;
      uint4* to = (uint4*)(dst + ((unsigned long long)r * pad) * 2) + q;
      if (at[u] + 16 <= hi_end && at[u] - sh[u] + (sh[u] ? 32 : 16) <= hi_end) {
        *to = funnel(lo[u], hi[u], sh[u]);
      } else {
        union { uint4 v; unsigned short e[8]; } x;
        const unsigned short* e = (const unsigned short*)at[u];
        for (int j = 0; j < 8; j++) x.e[j] = (unsigned long long)(e + j) + 2 <= hi_end ? e[j] : (unsigned short)0;
        *to = x.v;
      }
    }
  }
}

template<int U, bool SHFL>
static void one(const unsigned char* A, const unsigned char* B, unsigned char* dA, unsigned char* dB, int n, int pad, int blocks,
                int threads, const std::vector<unsigned short>& ha) {
  const int reps = 20;
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(cudaMemset(dA, 0, (size_t)n * pad * 2));
  flat<U, SHFL><<<blocks, threads>>>(A, n, n, dA, pad); flat<U, SHFL><<<blocks, threads>>>(B, n, n, dB, pad);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(e0));
  for (int r = 0; r < reps; r++) { flat<U, SHFL><<<blocks, threads>>>(A, n, n, dA, pad); flat<U, SHFL><<<blocks, threads>>>(B, n, n, dB, pad); }
  CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
  float ms; CK(cudaEventElapsedTime(&ms, e0, e1));
  long long bad = 0;
  std::vector<unsigned short> row(pad);
  for (int r = 0; r < n; r += (r < 64 || r > n - 64) ? 1 : 97) {
    CK(cudaMemcpy(row.data(), dA + (size_t)r * pad * 2, (size_t)n * 2, cudaMemcpyDeviceToHost));
    for (int c = 0; c < n; c++) bad += row[c] != ha[(size_t)r * n + c];
  }
  const double us = ms * 1000 / reps, bytes = 2.0 * 2 * (double)n * n * 2;
  printf("flat U=%-2d %s grid %4d x %4d: A and B %6.1f us %5.2f TB/s | %lld wrong\n", U, SHFL ? "shfl" : "2ld ", blocks, threads, us,
         bytes / us / 1e6, bad);
}

int main() {
  const int n = 4001, pad = 4032;
  const size_t bytes = (size_t)n * n * 2;
  unsigned char *A, *B, *dA, *dB;
  CK(cudaMalloc(&A, bytes)); CK(cudaMalloc(&B, bytes));
  CK(cudaMalloc(&dA, (size_t)n * pad * 2)); CK(cudaMalloc(&dB, (size_t)n * pad * 2));
  std::vector<unsigned short> ha(bytes / 2);
  for (size_t i = 0; i < ha.size(); i++) ha[i] = (unsigned short)(i * 2654435761u >> 7);
  CK(cudaMemcpy(A, ha.data(), bytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, ha.data(), bytes, cudaMemcpyHostToDevice));
  one<8, false>(A, B, dA, dB, n, pad, 132, 384, ha);
  one<8, true>(A, B, dA, dB, n, pad, 132, 384, ha);
  one<4, false>(A, B, dA, dB, n, pad, 528, 512, ha);
  one<8, false>(A, B, dA, dB, n, pad, 528, 512, ha);
  one<4, true>(A, B, dA, dB, n, pad, 528, 512, ha);
  one<8, true>(A, B, dA, dB, n, pad, 528, 512, ha);
  one<2, false>(A, B, dA, dB, n, pad, 1056, 512, ha);
  one<4, false>(A, B, dA, dB, n, pad, 1056, 512, ha);
  return 0;
}
