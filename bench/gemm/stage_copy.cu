// The wgmma family's staging copy alone (templates/lib/wgmma.lua: stage_all),
// against cudaMemcpy2DAsync doing the same padded copy, on the GPU. The
// kernel source comes from bench/gemm/dump.lua (STAGED_SRC); the copy is
// checked element by element against the source. Built and run by
// bench/stage_copy.sh.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include STAGED_SRC

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void __launch_bounds__(THREADS, 1) copy_only(const unsigned char* As, const unsigned char* Bs, unsigned char* ws,
                                                        long long m, long long n, long long k) {
  stage_all(As, Bs, ws, m, n, k);
}

int main(int argc, char** argv) {
  const long long m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
  const int grid = argc > 4 ? atoi(argv[4]) : 132;
  const long long ar = STAGE_A ? m : 0, br = STAGE_B ? (NT ? n : k) : 0, bc = NT ? k : n;
  const long long ap = (k + 63) / 64 * 64, bp = (bc + 63) / 64 * 64;
  const size_t abytes = (size_t)m * k * 2, bbytes = (size_t)(NT ? n * k : k * n) * 2;
  const size_t wsbytes = SA_OFF + (size_t)ar * ap * 2 + (size_t)br * bp * 2;
  unsigned char *A, *B, *ws;
  CK(cudaMalloc(&A, abytes)); CK(cudaMalloc(&B, bbytes)); CK(cudaMalloc(&ws, wsbytes));
  std::vector<unsigned short> ha(abytes / 2), hb(bbytes / 2);
  for (size_t i = 0; i < ha.size(); i++) ha[i] = (unsigned short)(i * 2654435761u >> 7);
  for (size_t i = 0; i < hb.size(); i++) hb[i] = (unsigned short)(i * 40503u + 17);
  CK(cudaMemcpy(A, ha.data(), abytes, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, hb.data(), bbytes, cudaMemcpyHostToDevice));
  CK(cudaMemset(ws, 0, wsbytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const int reps = 20;
  // Staging kernel (its counters reset themselves).
  copy_only<<<grid, THREADS>>>(A, B, ws, m, n, k);
  CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(e0));
  for (int r = 0; r < reps; r++) copy_only<<<grid, THREADS>>>(A, B, ws, m, n, k);
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  const double us = ms * 1000 / reps, bytes = 2.0 * (ar * k + br * bc) * 2;
  // Check.
  long long bad = 0;
  std::vector<unsigned short> row(ap > bp ? ap : bp);
  for (long long r = 0; r < ar; r += (r < 64 || r > ar - 64) ? 1 : 97) {
    CK(cudaMemcpy(row.data(), ws + SA_OFF + r * ap * 2, k * 2, cudaMemcpyDeviceToHost));
    for (long long c = 0; c < k; c++) bad += row[c] != ha[r * k + c];
  }
  for (long long r = 0; r < br; r += (r < 64 || r > br - 64) ? 1 : 97) {
    CK(cudaMemcpy(row.data(), ws + SA_OFF + ar * ap * 2 + r * bp * 2, bc * 2, cudaMemcpyDeviceToHost));
    for (long long c = 0; c < bc; c++) bad += row[c] != hb[r * bc + c];
  }
  // The peer: cudaMemcpy2DAsync, the same padded copies.
  CK(cudaEventRecord(e0));
  for (int r = 0; r < reps; r++) {
    if (ar) CK(cudaMemcpy2DAsync(ws + SA_OFF, ap * 2, A, k * 2, k * 2, ar, cudaMemcpyDeviceToDevice));
    if (br) CK(cudaMemcpy2DAsync(ws + SA_OFF + ar * ap * 2, bp * 2, B, bc * 2, bc * 2, br, cudaMemcpyDeviceToDevice));
  }
  CK(cudaEventRecord(e1));
  CK(cudaEventSynchronize(e1));
  float ms2;
  CK(cudaEventElapsedTime(&ms2, e0, e1));
  const double us2 = ms2 * 1000 / reps;
  printf("%s %lldx%lldx%lld grid %d: stage %.1f us %.2f TB/s | memcpy2D %.1f us %.2f TB/s | %lld wrong\n", VARIANT, m, n, k, grid,
         us, bytes / us / 1e6, us2, bytes / us2 / 1e6, bad);
  return bad != 0;
}
