// Decode probe, programmatic dependent launch (bench/archive/decode_pdl.sh): back to
// back over rotating weight copies (the issue's "cold" method), does letting
// launch i+1 start while launch i drains (griddepcontrol) and pull its
// weights into L2 before it waits for i lift a GEMV past the 2.58 TB/s a
// plain read reaches at 32 MB? Modes: 0 plain launch; 1 PDL, wait first;
// 2 PDL, bulk-prefetch this block's weight slab to L2, then wait.
// nt: W is n x k (rows contiguous), x is m x k (hot: written by the previous
// kernel in a real decode, so read only after the wait).
#include <cstring>
#include "decode_common.cuh"


// A read of 16-byte words, each block a contiguous slab.
template<int MODE>
__global__ void readk(const uint4* __restrict__ p, long long nv, u32* out) {
  const long long per = (nv + gridDim.x - 1) / gridDim.x, b0 = (long long)blockIdx.x * per, b1 = min(nv, b0 + per);
  pdl_enter<MODE>((const char*)(p + b0), (b1 - b0) * 16, 4096);
  u32 acc = 0;
  for (long long i = b0 + threadIdx.x; i < b1; i += 4 * blockDim.x) read_step<4>(p, i, b1, acc);
  if (acc == 0x12345678u) out[0] = acc;
}





__device__ __forceinline__ void mb_init(u32 bar, u32 cnt) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(cnt) : "memory"); }
__device__ __forceinline__ void mb_arrive(u32 bar) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory"); }
__device__ __forceinline__ void mb_wait(u32 bar, u32 par) {
  u32 ok = 0;
  while (!ok) asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }" : "=r"(ok) : "r"(bar), "r"(par) : "memory");
}

// Streaming GEMV: each block takes groups of 8 weight rows (b, b + grid, ...);
// a producer warp pulls each group through S shared-memory stages of 8 rows
// x KC k, one bulk copy (KC * 2 contiguous bytes) per row; W consumer warps
// take the stage's 32-k chunks round-robin (mma.sync, permuted k) and add
// their sums in shared memory at the end of a group. MODE 2: the producer
// streams weights before the grid dependency is met (weights never depend on
// the previous kernel); consumers wait before reading x or writing d.
template<int W, int KC, int S, int MODE>
__global__ void __launch_bounds__((W + 1) * 32) gemv_bulk(const u16* __restrict__ x, const u16* __restrict__ w,
                                                          __nv_bfloat16* __restrict__ d, int m, int n, int k) {
  extern __shared__ __align__(128) unsigned char sm[];
  constexpr int PITCH = KC * 2 + 16;
  __shared__ float red[W][32][4];
  __shared__ __align__(8) unsigned long long bars[2 * S];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const u32 base = (u32)__cvta_generic_to_shared(sm), fb = (u32)__cvta_generic_to_shared(bars), eb = fb + 8 * S;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; s++) { mb_init(fb + 8 * s, 1); mb_init(eb + 8 * s, W); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (MODE >= 1) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (MODE == 1) asm volatile("griddepcontrol.wait;" ::: "memory");
  const int groups = n / 8, nk = k / KC;
  const int mine = groups > (int)blockIdx.x ? (groups - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  const int T = mine * nk;
  if (warp == W) {
    if (lane == 0)
      for (int i = 0; i < T; i++) {
        const int s = i % S, gr = blockIdx.x + (i / nk) * gridDim.x, kc = i % nk;
        if (i >= S) mb_wait(eb + 8 * s, ((i / S) - 1) & 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(fb + 8 * s), "r"(8 * KC * 2) : "memory");
        for (int r = 0; r < 8; r++)
          asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                       :: "r"(base + s * 8 * PITCH + r * PITCH), "l"(w + ((long long)gr * 8 + r) * k + (long long)kc * KC),
                          "r"(KC * 2), "r"(fb + 8 * s) : "memory");
      }
    return;
  }
  if (MODE == 2) asm volatile("griddepcontrol.wait;" ::: "memory");
  const bool lo = g < m, hi = g + 8 < m;
  const u16* xlo = x + (long long)(lo ? g : 0) * k;
  const u16* xhi = x + (long long)(hi ? g + 8 : 0) * k;
  float acc[4] = { 0.f, 0.f, 0.f, 0.f };
  for (int i = 0; i < T; i++) {
    const int s = i % S, gr = blockIdx.x + (i / nk) * gridDim.x, kc = i % nk;
    mb_wait(fb + 8 * s, (i / S) & 1);
    for (int c = warp; c < KC / 32; c += W) {
      u32 bw[4], a0[4], a1[4];
      asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(bw[0]), "=r"(bw[1]), "=r"(bw[2]), "=r"(bw[3])
                   : "r"(base + s * 8 * PITCH + g * PITCH + (c * 32 + 8 * t) * 2));
      const long long kk = (long long)kc * KC + c * 32 + 8 * t;
      if (lo) ldx(a0, xlo + kk); else for (int q = 0; q < 4; q++) a0[q] = 0;
      if (hi) ldx(a1, xhi + kk); else for (int q = 0; q < 4; q++) a1[q] = 0;
      mma16816(acc, a0[0], a1[0], a0[1], a1[1], bw[0], bw[1]);
      mma16816(acc, a0[2], a1[2], a0[3], a1[3], bw[2], bw[3]);
    }
    __syncwarp();
    if (lane == 0) mb_arrive(eb + 8 * s);
    if (kc == nk - 1) {
      for (int j = 0; j < 4; j++) red[warp][lane][j] = acc[j];
      asm volatile("bar.sync 1, %0;" :: "r"(W * 32) : "memory");
      for (int q = threadIdx.x; q < 128; q += W * 32) {
        const int l = q / 4, j = q % 4;
        float sum = 0.f;
        for (int ww = 0; ww < W; ww++) sum += red[ww][l][j];
        const int row = (l >> 2) + 8 * (j >> 1);
        const long long col = (long long)gr * 8 + 2 * (l & 3) + (j & 1);
        if (row < m) d[(long long)row * n + col] = __float2bfloat16(sum);
      }
      asm volatile("bar.sync 1, %0;" :: "r"(W * 32) : "memory");
      for (int j = 0; j < 4; j++) acc[j] = 0.f;
    }
  }
}




static const u16* wc[16]; static int R;
template<int G, int W, int U, int MODE>
static void slab(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k) {
  if (n % (8 * G) || k % (W * 32 * U)) return;
  const int blocks = n / (8 * G);
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  launch(gemv_slab<G, W, U, MODE>, blocks, W * 32, MODE > 0, x, wc[0], d, m, n, k);
  CK(cudaDeviceSynchronize());
  const int bad = count_wrong(d, ref, m, n);
  double us = timerot([&](int i) { launch(gemv_slab<G, W, U, MODE>, blocks, W * 32, MODE > 0, x, wc[i], d, m, n, k); }, R);
  printf("gemv m=%-2d %5d^2 G=%d W=%-2d U=%d mode %d blocks %-4d %7.2f us %6.3f TB/s %s\n", m, n, G, W, U, MODE, blocks, us,
         (double)n * k * 2 / us / 1e6, bad ? "WRONG" : "ok");
}
template<int W, int KC, int S, int MODE>
static void bulk(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k, int grid) {
  if (k % KC) return;
  const int smem = S * 8 * (KC * 2 + 16);
  CK(cudaFuncSetAttribute(gemv_bulk<W, KC, S, MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto go = [&](const u16* wp) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid); cfg.blockDim = dim3((W + 1) * 32); cfg.dynamicSmemBytes = smem; cfg.stream = 0;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at; cfg.numAttrs = MODE > 0 ? 1 : 0;
    CK(cudaLaunchKernelEx(&cfg, gemv_bulk<W, KC, S, MODE>, x, wp, d, m, n, k));
  };
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  go(wc[0]);
  CK(cudaDeviceSynchronize());
  const int bad = count_wrong(d, ref, m, n);
  double us = timerot([&](int i) { go(wc[i]); }, R);
  printf("bulk m=%-2d %5d^2 W=%-2d KC=%-4d S=%d mode %d grid %-4d smem %6d %7.2f us %6.3f TB/s %s\n", m, n, W, KC, S, MODE, grid, smem, us,
         (double)n * k * 2 / us / 1e6, bad ? "WRONG" : "ok");
}
template<int W, int KC, int S> static void bmodes(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k, int grid) {
  bulk<W, KC, S, 0>(x, d, ref, m, n, k, grid); bulk<W, KC, S, 1>(x, d, ref, m, n, k, grid); bulk<W, KC, S, 2>(x, d, ref, m, n, k, grid);
}
template<int G, int W, int U> static void modes(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k) {
  slab<G, W, U, 0>(x, d, ref, m, n, k); slab<G, W, U, 1>(x, d, ref, m, n, k); slab<G, W, U, 2>(x, d, ref, m, n, k);
}

// decode_pdl [slab]: without an argument, the reads (grid-stride and slab,
// plain and PDL) and the bulk GEMV; "slab": the reads per block slab (plain,
// PDL, PDL + bulk prefetch to L2) and eight slab GEMV layouts in all three
// modes (the first revision's run).
int main(int argc, char** argv) {
  const bool slabs = argc > 1 && !strcmp(argv[1], "slab");
  u32* o; CK(cudaMalloc(&o, 64));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (long long mb : {32LL, 128LL}) {
    long long bytes = mb << 20, nv = bytes / 16;
    int RR = mb == 32 ? 8 : 4;
    std::vector<uint4*> cp(RR); for (auto& q : cp) { CK(cudaMalloc(&q, bytes)); CK(cudaMemset(q, 1, bytes)); }
    for (int bpsm : {1, 2, 4, 8}) for (int thr : {256, 512}) {
      if (bpsm * thr > 2048) continue;
      if (slabs) {
        if (bpsm == 8) continue;
        int grid = sms * bpsm;
        double u0 = timerot([&](int i) { launch(readk<0>, grid, thr, false, (const uint4*)cp[i], nv, o); }, RR);
        double u1 = timerot([&](int i) { launch(readk<1>, grid, thr, true, (const uint4*)cp[i], nv, o); }, RR);
        double u2 = timerot([&](int i) { launch(readk<2>, grid, thr, true, (const uint4*)cp[i], nv, o); }, RR);
        printf("read %3lld MB grid %4d x %3d: plain %6.2f us %5.3f | pdl %6.2f us %5.3f | pdl+pf %6.2f us %5.3f TB/s\n", mb, grid, thr,
               u0, bytes / u0 / 1e6, u1, bytes / u1 / 1e6, u2, bytes / u2 / 1e6);
        continue;
      }
      if (bpsm == 1) continue;
      int grid = sms * bpsm;
      double u0 = timerot([&](int i) { launch(readg<0>, grid, thr, false, (const uint4*)cp[i], nv, o); }, RR);
      double u1 = timerot([&](int i) { launch(readg<1>, grid, thr, true, (const uint4*)cp[i], nv, o); }, RR);
      double s1 = timerot([&](int i) { launch(readk<1>, grid, thr, true, (const uint4*)cp[i], nv, o); }, RR);
      printf("read %3lld MB grid %4d x %3d: stride plain %6.2f us %5.3f | stride pdl %6.2f us %5.3f | slab pdl %6.2f us %5.3f TB/s\n", mb, grid, thr,
             u0, bytes / u0 / 1e6, u1, bytes / u1 / 1e6, s1, bytes / s1 / 1e6);
    }
    for (auto q : cp) cudaFree(q);
  }
  for (int nk : {4096, 8192}) for (int m : {1, 16}) {
    decode_problem P = decode_setup(m, nk, nk, nk == 4096 ? 8 : 4);
    const int n = nk, k = nk;
    const u16* x = P.x;
    __nv_bfloat16* d = P.d;
    const float* ref = P.ref;
    R = P.R;
    for (int i = 0; i < R; i++) wc[i] = P.w[i];
    if (slabs) {
      modes<1, 4, 2>(x, d, ref, m, n, k); modes<1, 8, 2>(x, d, ref, m, n, k); modes<2, 4, 2>(x, d, ref, m, n, k);
      modes<2, 8, 2>(x, d, ref, m, n, k); modes<4, 4, 2>(x, d, ref, m, n, k); modes<2, 4, 4>(x, d, ref, m, n, k);
      modes<1, 16, 2>(x, d, ref, m, n, k); modes<4, 8, 1>(x, d, ref, m, n, k);
    } else {
      slab<1, 8, 2, 1>(x, d, ref, m, n, k); slab<1, 16, 2, 1>(x, d, ref, m, n, k);
    }
    const int gr = n / 8;
    for (int grid : {gr / 4, gr / 2, gr}) {
      if (slabs) break;
      bmodes<4, 512, 8>(x, d, ref, m, n, k, grid); bmodes<8, 512, 8>(x, d, ref, m, n, k, grid);
      bmodes<4, 1024, 4>(x, d, ref, m, n, k, grid); bmodes<8, 1024, 4>(x, d, ref, m, n, k, grid);
      bmodes<8, 1024, 6>(x, d, ref, m, n, k, grid); bmodes<8, 2048, 3>(x, d, ref, m, n, k, grid);
      bmodes<4, 256, 12>(x, d, ref, m, n, k, grid);
    }
    decode_free(P);
  }
  return 0;
}
