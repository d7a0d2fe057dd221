// Decode GEMV ceiling probe (bench/archive/decode_ceiling.sh): what does a pure
// 16-byte read stream reach under the worker's timing method (L2 flushed,
// one launch between events) and back to back over rotating copies, and how
// close do tensor-core GEMV layouts get? nt: W is n x k (rows contiguous), x is m x k.
// The slab GEMV is decode_common.cuh's (without PDL); the third session's
// figures came from an earlier copy here that specialized m = 1 at compile
// time (git history), the same work.
#include "decode_common.cuh"

template<int U>
__global__ void readk(const uint4* __restrict__ p, long long nv, u32* out) {
  u32 acc = 0;
  long long i = (long long)blockIdx.x * blockDim.x * U + threadIdx.x;
  long long stride = (long long)gridDim.x * blockDim.x * U;
  for (; i < nv; i += stride) read_step<U>(p, i, nv, acc);
  if (acc == 0x12345678u) out[0] = acc;
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
template<class F> static double timerot_noflush(F f, int R, int L = 64) {
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
  auto f = [&] { gemv_slab<G, W, U, 0><<<n / rows, W * 32>>>(x, w, d, m, n, k); };
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  f(); CK(cudaDeviceSynchronize());
  const int bad = count_wrong(d, ref, m, n);
  double us = timeit(f);
  const int rows2 = 8 * G;
  double ur = timerot_noflush([&](int i) { gemv_slab<G, W, U, 0><<<n / rows2, W * 32>>>(x, g_wcopies[i], d, m, n, k); }, g_R);
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
        double ur = timerot_noflush([&](int i) { readk<4><<<grid, 256>>>(cp[i], nv, o); }, R);
        printf("read %3lld MB rotating %d copies grid %d x 256: %7.2f us %5.3f TB/s\n", mb, R, grid, ur, bytes / ur / 1e6); }
      for (auto q : cp) cudaFree(q);
    }
    double empty = timeit([&] { readk<1><<<1, 32>>>(p, 0, o); });
    printf("empty kernel: %.2f us\n", empty);
    cudaFree(p);
  }
  for (int nk : {4096, 8192}) for (int m : {1, 16}) {
    decode_problem P = decode_setup(m, nk, nk, nk == 4096 ? 8 : 4);
    const int n = nk, k = nk;
    u16* x = P.x;
    u16* w = P.w[0];
    __nv_bfloat16* d = P.d;
    float* ref = P.ref;
    g_R = P.R;
    for (int i = 0; i < g_R; i++) g_wcopies[i] = P.w[i];
    if (m == 1) run_layouts<1>(x, w, d, ref, m, n, k);
    else run_layouts<16>(x, w, d, ref, m, n, k);
    decode_free(P);
  }
  return 0;
}
