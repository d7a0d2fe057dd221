// Decode GEMV ceiling probe (bench/decode_ceiling.sh): what does a pure
// 16-byte read stream reach under the worker's timing method (L2 flushed,
// one launch between events) and back to back over rotating copies, and how
// close do tensor-core GEMV layouts get? nt: W is n x k (rows contiguous), x is m x k.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
typedef unsigned int u32;
typedef unsigned short u16;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

template<int U>
__global__ void readk(const uint4* __restrict__ p, long long nv, u32* out) {
  u32 acc = 0;
  long long i = (long long)blockIdx.x * blockDim.x * U + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x * U;
  for (; i < nv; i += stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      long long j = i + (long long)u * blockDim.x;
      if (j < nv) asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w) : "l"(p + j));
      else v[u] = make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x12345678u) out[0] = acc;
}

__device__ __forceinline__ void mma16816(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void ldw(u32 (&w)[4], const u16* p) {
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
}
__device__ __forceinline__ void ldx(u32 (&w)[4], const u16* p) {
  asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
}

// Block: G groups of 8 consecutive weight rows (8G rows, a contiguous slab),
// W warps splitting k round-robin in chunks of 32*U (the block's warps read
// W*32*U contiguous k of every row per step), mma.sync with the permuted-k
// fragments, warp sums added in shared memory. MX: rows of x (1 or 16).
template<int G, int W, int U, int MX>
__global__ void __launch_bounds__(W * 32) gemv_slab(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d,
                                                   int m, int n, int k) {
  __shared__ float red[W][G][32][4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const long long rb = (long long)blockIdx.x * 8 * G;
  float acc[G][4];
#pragma unroll
  for (int c = 0; c < G; c++) for (int i = 0; i < 4; i++) acc[c][i] = 0.f;
  const u16* wr[G];
#pragma unroll
  for (int c = 0; c < G; c++) wr[c] = w + (rb + 8 * c + g) * (long long)k;
  const u16* xlo = x + (long long)g * k;
  const u16* xhi = x + (long long)(g + 8) * k;
  for (int k0 = warp * 32 * U; k0 < k; k0 += W * 32 * U) {
    u32 bw[U][G][4], a0[U][4], a1[U][4];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int c = 0; c < G; c++) ldw(bw[u][c], wr[c] + k0 + 32 * u + 8 * t);
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (MX == 1) {
        if (g == 0) ldx(a0[u], xlo + k0 + 32 * u + 8 * t); else for (int i = 0; i < 4; i++) a0[u][i] = 0;
        for (int i = 0; i < 4; i++) a1[u][i] = 0;
      } else {
        ldx(a0[u], xlo + k0 + 32 * u + 8 * t);
        ldx(a1[u], xhi + k0 + 32 * u + 8 * t);
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int s = 0; s < 2; s++)
#pragma unroll
        for (int c = 0; c < G; c++)
          mma16816(acc[c], a0[u][2 * s], a1[u][2 * s], a0[u][2 * s + 1], a1[u][2 * s + 1], bw[u][c][2 * s], bw[u][c][2 * s + 1]);
  }
  if (W == 1) {
#pragma unroll
    for (int c = 0; c < G; c++)
      for (int j = 0; j < 4; j++) {
        int row = g + 8 * (j >> 1); long long col = rb + 8 * c + 2 * t + (j & 1);
        if (row < m) d[(long long)row * n + col] = __float2bfloat16(acc[c][j]);
      }
    return;
  }
#pragma unroll
  for (int c = 0; c < G; c++) for (int j = 0; j < 4; j++) red[warp][c][lane][j] = acc[c][j];
  __syncthreads();
  for (int i = threadIdx.x; i < G * 32 * 4; i += W * 32) {
    int c = i / 128, l = (i / 4) % 32, j = i % 4;
    float s = 0.f;
    for (int ww = 0; ww < W; ww++) s += red[ww][c][l][j];
    int row = (l >> 2) + 8 * (j >> 1); long long col = rb + 8 * c + 2 * (l & 3) + (j & 1);
    if (row < m) d[(long long)row * n + col] = __float2bfloat16(s);
  }
}

// Reference (fp32).
__global__ void gemv_ref(const u16* x, const u16* w, float* d, int m, int n, int k) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= (long long)m * n) return;
  int r = i / n, c = i % n;
  float s = 0;
  for (int kk = 0; kk < k; kk++) s += __bfloat162float(*(const __nv_bfloat16*)&x[(long long)r * k + kk]) * __bfloat162float(*(const __nv_bfloat16*)&w[(long long)c * k + kk]);
  d[i] = s;
}
__global__ void fill(u16* p, long long n, u32 seed) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  u32 h = (u32)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
  float f = ((h & 0xffff) / 65536.0f - 0.5f);
  __nv_bfloat16 b = __float2bfloat16(f);
  p[i] = *(u16*)&b;
}

static void* flushbuf; static size_t flushn = 200u << 20;
template<class F> static double timeit(F f, int reps = 40) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int i = 0; i < 5; i++) f();
  for (int i = 0; i < reps; i++) {
    CK(cudaMemsetAsync(flushbuf, i, flushn));
    cudaEventRecord(a); f(); cudaEventRecord(b); CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms * 1000.f);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}


// Back-to-back launches over R rotating copies (none in L2 when its turn
// comes), per-call time = events around L launches / L; median of 9.
template<class F> static double timerot(F f, int R, int L = 64) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int i = 0; i < R; i++) f(i);
  for (int rep = 0; rep < 9; rep++) {
    cudaEventRecord(a); for (int i = 0; i < L; i++) f(i % R); cudaEventRecord(b); CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms * 1000.f / L);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}
static const u16* g_wcopies[16]; static int g_R;
template<int G, int W, int U, int MX>
static void run_slab(const u16* x, const u16* w, __nv_bfloat16* d, float* ref, int m, int n, int k) {
  const int rows = 8 * G;
  if (n % rows || k % (W * 32 * U)) return;
  auto f = [&] { gemv_slab<G, W, U, MX><<<n / rows, W * 32>>>(x, w, d, m, n, k); };
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  f(); CK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> hd((size_t)m * n); std::vector<float> hr((size_t)m * n);
  CK(cudaMemcpy(hd.data(), d, hd.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(hr.data(), ref, hr.size() * 4, cudaMemcpyDeviceToHost));
  int bad = 0;
  for (size_t i = 0; i < hd.size(); i++) { float v = __bfloat162float(hd[i]); if (!(fabsf(v - hr[i]) <= 0.02f + 0.02f * fabsf(hr[i]))) bad++; }
  double us = timeit(f);
  const int rows2 = 8 * G;
  double ur = timerot([&](int i) { gemv_slab<G, W, U, MX><<<n / rows2, W * 32>>>(x, g_wcopies[i], d, m, n, k); }, g_R);
  printf("rot %8.2f us %6.3f TB/s | ", ur, (double)n * k * 2 / ur / 1e6);
  printf("slab m=%-2d %5dx%-5d G=%d W=%d U=%d blocks=%-5d %8.2f us %6.3f TB/s %s\n", m, n, k, G, W, U, n / rows, us,
         (double)n * k * 2 / us / 1e6, bad ? "WRONG" : "ok");
}

// Every slab layout tried, for MX rows of x.
template<int MX>
static void run_layouts(const u16* x, const u16* w, __nv_bfloat16* d, float* ref, int m, int n, int k) {
  run_slab<1, 4, 2, MX>(x, w, d, ref, m, n, k); run_slab<1, 8, 2, MX>(x, w, d, ref, m, n, k);
  run_slab<2, 4, 2, MX>(x, w, d, ref, m, n, k); run_slab<2, 8, 2, MX>(x, w, d, ref, m, n, k);
  run_slab<2, 8, 4, MX>(x, w, d, ref, m, n, k); run_slab<4, 4, 2, MX>(x, w, d, ref, m, n, k);
  run_slab<4, 8, 2, MX>(x, w, d, ref, m, n, k); run_slab<1, 8, 4, MX>(x, w, d, ref, m, n, k);
  run_slab<2, 4, 4, MX>(x, w, d, ref, m, n, k); run_slab<4, 4, 4, MX>(x, w, d, ref, m, n, k);
  run_slab<1, 16, 2, MX>(x, w, d, ref, m, n, k); run_slab<2, 16, 2, MX>(x, w, d, ref, m, n, k);
}

int main() {
  CK(cudaMalloc(&flushbuf, flushn));
  u32* o; CK(cudaMalloc(&o, 64));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (long long mb : {32LL, 128LL}) {
    long long bytes = mb << 20; long long nv = bytes / 16;
    uint4* p; CK(cudaMalloc(&p, bytes)); CK(cudaMemset(p, 1, bytes));
    for (int bpsm : {1, 2, 4, 8}) for (int thr : {256, 512}) {
      if (bpsm * thr > 2048) continue;
      int grid = sms * bpsm;
      double us4 = timeit([&] { readk<4><<<grid, thr>>>(p, nv, o); });
      double us8 = timeit([&] { readk<8><<<grid, thr>>>(p, nv, o); });
      printf("read %3lld MB grid %4d x %3d: U4 %7.2f us %5.3f TB/s   U8 %7.2f us %5.3f TB/s\n", mb, grid, thr, us4, bytes / us4 / 1e6, us8, bytes / us8 / 1e6);
    }
    {
      int R = mb == 32 ? 8 : 4; std::vector<uint4*> cp(R); for (auto& q : cp) { CK(cudaMalloc(&q, bytes)); CK(cudaMemset(q, 1, bytes)); }
      for (int bpsm : {2, 4}) { int grid = sms * bpsm;
        double ur = timerot([&](int i) { readk<4><<<grid, 256>>>(cp[i], nv, o); }, R);
        printf("read %3lld MB rotating %d copies grid %d x 256: %7.2f us %5.3f TB/s\n", mb, R, grid, ur, bytes / ur / 1e6); }
      for (auto q : cp) cudaFree(q);
    }
    double empty = timeit([&] { readk<1><<<1, 32>>>(p, 0, o); });
    printf("empty kernel: %.2f us\n", empty);
    cudaFree(p);
  }
  for (int nk : {4096, 8192}) for (int m : {1, 16}) {
    int n = nk, k = nk;
    u16 *x, *w; __nv_bfloat16* d; float* ref;
    CK(cudaMalloc(&x, (size_t)16 * k * 2)); CK(cudaMalloc(&w, (size_t)n * k * 2)); CK(cudaMalloc(&d, (size_t)16 * n * 2)); CK(cudaMalloc(&ref, (size_t)16 * n * 4));
    CK(cudaMemset(x, 0, (size_t)16 * k * 2));
    fill<<<(m * (long long)k + 255) / 256, 256>>>(x, (long long)m * k, 1);
    fill<<<((long long)n * k + 255) / 256, 256>>>(w, (long long)n * k, 2);
    gemv_ref<<<(m * n + 255) / 256, 256>>>(x, w, ref, m, n, k);
    CK(cudaDeviceSynchronize());
    g_R = nk == 4096 ? 8 : 4;
    std::vector<u16*> extra;
    g_wcopies[0] = w;
    for (int i = 1; i < g_R; i++) { u16* q; CK(cudaMalloc(&q, (size_t)n * k * 2)); CK(cudaMemcpy(q, w, (size_t)n * k * 2, cudaMemcpyDeviceToDevice)); g_wcopies[i] = q; extra.push_back(q); }
    if (m == 1) run_layouts<1>(x, w, d, ref, m, n, k);
    else run_layouts<16>(x, w, d, ref, m, n, k);
    for (auto q : extra) cudaFree(q);
    cudaFree(x); cudaFree(w); cudaFree(d); cudaFree(ref);
  }
  return 0;
}
