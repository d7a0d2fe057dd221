// Decode probe (bench/archive/decode_seg.sh): the mma GEMV with longer contiguous
// pieces of a weight row per warp load, at 16 x 4096^2 bf16 (back to back
// over 8 rotating weight copies, PDL, median of 9; decode_common.cuh).
//
// gemv (templates/gemm_nt/gemv.lua) feeds mma.sync straight from its loads, so a
// warp load is 8 rows x 64 bytes: lane (g, t) must hold weight row g, the
// fragment's column g. Here a warp load covers R rows x 512/R bytes: lane
// (g, t) loads k [32 (g % S) + 8t, + 8) of row g / S of the load (S = 8/R
// segments of 32 k per row). Column g of the mma is then "segment g % S of
// row g / S". One mma per segment s takes A's fragment of segment s (the
// same permuted k order as gemv) and only the columns of segment s: every
// other lane passes zeros as its B words, so the other columns add
// nothing and one accumulator serves all S segments. Column g ends up
// holding the sum over k of row g / S: the S columns of a row are added at
// the end (in fixed order, with the warps' sums, in shared memory).
// Cost: S times gemv's mma count (tensor cores have room at m = 16), A's
// fragments read S times as often per weight byte (from L1).
// R = 8 (S = 1) is gemv's own pattern through the same code: the baseline.
//   F & 1: the first step's weights asked of L2 before griddepcontrol.wait
//   F & 2: weight loads with .L2::256B
//   F & 4: loads only (no A, no mma): the pattern's floor
// Built with -DGEN='"file.cu"' -DGEN_COLS=c -DGEN_BLOCK=b instead: that file
// (a template kernel named gen, printed by bench/gemm/dump.lua) is timed the
// same way, A fixed and rotated (bench/archive/decode_seg.sh OUT FILE...).
#include <cstring>
#include "decode_common.cuh"
#ifdef GEN
namespace gen_ns {
#include GEN
}
using gen_ns::gen;
#endif

template<int F> __device__ __forceinline__ void ldwf(u32 (&w)[4], const u16* p) {
  if (F & 2)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
  else
    ldw(w, p);
}

// A lane's pointers: its piece of weight row rr of each group (R rows per
// load, LPR lanes a row), A's rows g and g + 8 at k 8t, and its segment.
template<int R, int G> struct seg_lane {
  const u16* wr[G];
  const u16 *xlo, *xhi;
  int sl;
  __device__ __forceinline__ seg_lane(const u16* x, const u16* w, int k, long long rb) {
    constexpr int S = 8 / R, LPR = 32 / R;
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3, rr = lane / LPR, kl = 8 * (lane % LPR);
#pragma unroll
    for (int c = 0; c < G; c++) wr[c] = w + (rb + c * R + rr) * (long long)k + kl;
    xlo = x + (long long)g * k + 8 * t;
    xhi = x + (long long)(g + 8) * k + 8 * t;
    sl = g % S;
  }
  // PDL: let the next launch start; with PRE, ask L2 for the first step's
  // weights (k0 on) before waiting for the previous launch.
  template<bool PRE, int U, int SPAN> __device__ __forceinline__ void enter(int k0) const {
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    if (PRE) {
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int c = 0; c < G; c++) asm volatile("prefetch.global.L2 [%0];" :: "l"(wr[c] + k0 + u * SPAN));
    }
    asm volatile("griddepcontrol.wait;" ::: "memory");
  }
};

// The end of both kernels: the warps' fragments into shared memory, then
// output (i, weight row rb + c R + q) as columns q S + s of group c's
// fragments, s in [0, S), summed over warps, then over s.
template<int R, int G, int W>
__device__ __forceinline__ void seg_store(float (&red)[W][G][32][4], const float (&acc)[G][4], long long rb,
                                          __nv_bfloat16* __restrict__ d, int m, int n) {
  constexpr int S = 8 / R;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int c = 0; c < G; c++) for (int j = 0; j < 4; j++) red[warp][c][lane][j] = acc[c][j];
  __syncthreads();
  for (int o = threadIdx.x; o < 16 * G * R; o += W * 32) {
    const int i = o / (G * R), c = (o % (G * R)) / R, q = o % R;
    float sum = 0.f;
    for (int s = 0; s < S; s++) {
      const int j = q * S + s, ln = 4 * (i & 7) + (j >> 1), e = 2 * (i >> 3) + (j & 1);
      float v = 0.f;
      for (int ww = 0; ww < W; ww++) v += red[ww][c][ln][e];
      sum += v;
    }
    if (i < m) d[(long long)i * n + rb + c * R + q] = __float2bfloat16(sum);
  }
}

// Block: W warps splitting k (steps of U loads interleaved), each warp G
// groups of R consecutive weight rows; rows per block G * R.
template<int R, int G, int W, int U, int F>
__global__ void __launch_bounds__(W * 32) seg(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d,
                                               int m, int n, int k) {
  constexpr int S = 8 / R, SPAN = 32 * S;
  __shared__ float red[W][G][32][4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long rb = (long long)blockIdx.x * G * R;
  const seg_lane<R, G> L(x, w, k, rb);
  const u16* const (&wr)[G] = L.wr;
  const u16 *xlo = L.xlo, *xhi = L.xhi;
  const int sl = L.sl;
  int k0 = warp * U * SPAN;
  L.template enter<(F & 1) != 0, U, SPAN>(k0);
  float acc[G][4];
#pragma unroll
  for (int c = 0; c < G; c++) for (int i = 0; i < 4; i++) acc[c][i] = 0.f;
  u32 xa = 0;
  for (; k0 < k; k0 += W * U * SPAN) {
    u32 bw[U][G][4];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int c = 0; c < G; c++) ldwf<F>(bw[u][c], wr[c] + k0 + u * SPAN);
    if (F & 4) {
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int c = 0; c < G; c++) xa ^= bw[u][c][0] ^ bw[u][c][1] ^ bw[u][c][2] ^ bw[u][c][3];
      continue;
    }
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int s = 0; s < S; s++) {
        u32 a0[4], a1[4];
        ldx(a0, xlo + k0 + u * SPAN + 32 * s);
        ldx(a1, xhi + k0 + u * SPAN + 32 * s);
        const u32 keep = (S == 1 || sl == s) ? 0xffffffffu : 0u;
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
          for (int c = 0; c < G; c++)
            mma16816(acc[c], a0[2 * h], a1[2 * h], a0[2 * h + 1], a1[2 * h + 1], bw[u][c][2 * h] & keep, bw[u][c][2 * h + 1] & keep);
      }
  }
  if (F & 4) {
    if (xa == 0x12345u) d[0] = __float2bfloat16((float)xa);
    return;
  }
  seg_store<R, G, W>(red, acc, rb, d, m, n);
}


// segcp: the same warp loads (R = 4), through a ring of ST steps per warp
// in shared memory (cp.async, 16 bytes a lane) instead of registers: each
// lane reads back only its own pieces, so no warp barrier; bytes in
// flight no longer cost registers.
__device__ __forceinline__ void cp16(u32 saddr, const void* g) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(saddr), "l"(g) : "memory");
}
template<int G, int W, int U, int ST, int F>
__global__ void __launch_bounds__(W * 32) segcp(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d,
                                                 int m, int n, int k) {
  constexpr int R = 4, S = 2, SPAN = 64;
  extern __shared__ uint4 ring[];          // [W][ST][U][G][32]
  __shared__ float red[W][G][32][4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long rb = (long long)blockIdx.x * G * R;
  const seg_lane<R, G> L(x, w, k, rb);
  const u16* const (&wr)[G] = L.wr;
  const u16 *xlo = L.xlo, *xhi = L.xhi;
  const int sl = L.sl;
  const int k00 = warp * U * SPAN, stride = W * U * SPAN;
  const int nsteps = (k - k00 + stride - 1) / stride;
  uint4* mine = ring + (size_t)warp * ST * U * G * 32;
  const u32 sbase = (u32)__cvta_generic_to_shared(mine);
  L.template enter<(F & 1) != 0, U, SPAN>(k00);
  auto issue = [&](int i) {
    if (i < nsteps) {
      const int k0 = k00 + i * stride, slot = i % ST;
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int c = 0; c < G; c++) cp16(sbase + (u32)((((slot * U + u) * G + c) * 32 + lane) * 16), wr[c] + k0 + u * SPAN);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
#pragma unroll
  for (int i = 0; i < ST - 1; i++) issue(i);
  float acc[G][4];
#pragma unroll
  for (int c = 0; c < G; c++) for (int i = 0; i < 4; i++) acc[c][i] = 0.f;
  for (int i = 0; i < nsteps; i++) {
    issue(i + ST - 1);
    asm volatile("cp.async.wait_group %0;" :: "n"(ST - 1) : "memory");
    const int k0 = k00 + i * stride, slot = i % ST;
#pragma unroll
    for (int u = 0; u < U; u++) {
      u32 bw[G][4];
#pragma unroll
      for (int c = 0; c < G; c++) {
        const uint4 v = mine[((slot * U + u) * G + c) * 32 + lane];
        bw[c][0] = v.x; bw[c][1] = v.y; bw[c][2] = v.z; bw[c][3] = v.w;
      }
#pragma unroll
      for (int s = 0; s < S; s++) {
        u32 a0[4], a1[4];
        ldx(a0, xlo + k0 + u * SPAN + 32 * s);
        ldx(a1, xhi + k0 + u * SPAN + 32 * s);
        const u32 keep = sl == s ? 0xffffffffu : 0u;
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
          for (int c = 0; c < G; c++)
            mma16816(acc[c], a0[2 * h], a1[2 * h], a0[2 * h + 1], a1[2 * h + 1], bw[c][2 * h] & keep, bw[c][2 * h + 1] & keep);
      }
    }
  }
  seg_store<4, G, W>(red, acc, rb, d, m, n);
}

static const u16* wc[16];
static const u16* xc[16];   // A's copies: all the same buffer unless main asks for rotation
static int ncopies;
template<int R, int G, int W, int U, int F>
static void one(const decode_problem& P) {
  const int m = P.m, n = P.n, k = P.k, blocks = n / (G * R);
  CK(cudaMemset(P.d, 0xff, (size_t)m * n * 2));
  launch(seg<R, G, W, U, F>, blocks, W * 32, true, P.x, wc[0], P.d, m, n, k);
  CK(cudaDeviceSynchronize());
  const int bad = (F & 4) ? -1 : count_wrong(P.d, P.ref, m, n);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, seg<R, G, W, U, F>);
  double us = timerot([&](int i) { launch(seg<R, G, W, U, F>, blocks, W * 32, true, xc[i], wc[i], P.d, m, n, k); }, ncopies);
  printf("%s m=%-2d R=%d (S=%d, %3d B/row) G=%d W=%-2d U=%d F=%d%s%s%s regs %3d blocks %4d %7.2f us %6.3f TB/s %s\n",
         xc[1] != P.x ? "seg A rotated" : "seg A fixed  ", m, R, 8 / R, 512 / R, G, W, U, F, F & 1 ? " L2PRE" : "      ",
         F & 2 ? " L2_256" : "       ", F & 4 ? " LOADS" : "      ", fa.numRegs, blocks, us, (double)n * k * 2 / us / 1e6,
         bad < 0 ? "-" : bad ? "WRONG" : "ok");
}

template<int G, int W, int U, int ST, int F>
static void onecp(const decode_problem& P) {
  const int m = P.m, n = P.n, k = P.k, blocks = n / (G * 4);
  const size_t smem = (size_t)W * ST * U * G * 32 * 16;
  CK(cudaFuncSetAttribute(segcp<G, W, U, ST, F>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaMemset(P.d, 0xff, (size_t)m * n * 2));
  auto go = [&](const u16* xx, const u16* ww) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks); cfg.blockDim = dim3(W * 32); cfg.stream = g_stream; cfg.dynamicSmemBytes = smem;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, segcp<G, W, U, ST, F>, xx, ww, P.d, m, n, k));
  };
  go(xc[0], wc[0]);
  CK(cudaDeviceSynchronize());
  const int bad = count_wrong(P.d, P.ref, m, n);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, segcp<G, W, U, ST, F>);
  double us = timerot([&](int i) { go(xc[i], wc[i]); }, ncopies);
  printf("%s m=%-2d R=4 cp.async ring G=%d W=%-2d U=%d ST=%d F=%d regs %3d smem %6zu blocks %4d %7.2f us %6.3f TB/s %s\n",
         xc[1] != P.x ? "segcp A rotated" : "segcp A fixed  ", m, G, W, U, ST, F, fa.numRegs, smem, blocks, us,
         (double)n * k * 2 / us / 1e6, bad ? "WRONG" : "ok");
}

int main(int argc, char** argv) {
#ifdef GEN
  {
    decode_problem P = decode_setup(16, 4096, 4096, 8);
    std::vector<u16*> xs(P.R);
    void* ws; CK(cudaMalloc(&ws, 1 << 16)); CK(cudaMemset(ws, 0, 1 << 16));
    for (int i = 0; i < P.R; i++) {
      CK(cudaMalloc(&xs[i], (size_t)16 * 4096 * 2));
      CK(cudaMemcpy(xs[i], P.x, (size_t)16 * 4096 * 2, cudaMemcpyDeviceToDevice));
    }
    const int blocks = (P.n + GEN_COLS - 1) / GEN_COLS;
    cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, gen);
    for (int rot = 0; rot < 2; rot++) {
      const u16* x0 = P.x;
      CK(cudaMemset(P.d, 0xff, (size_t)16 * P.n * 2));
      launch(gen, blocks, GEN_BLOCK, true, x0, (const u16*)P.w[0], (u16*)P.d, 16LL, (long long)P.n, (long long)P.k, ws);
      CK(cudaDeviceSynchronize());
      const int bad = count_wrong(P.d, P.ref, 16, P.n);
      double us = timerot([&](int i) {
        launch(gen, blocks, GEN_BLOCK, true, (const u16*)(rot ? xs[i] : P.x), (const u16*)P.w[i], (u16*)P.d, 16LL, (long long)P.n,
               (long long)P.k, ws); }, P.R);
      printf("%s m=16 %s regs %3d blocks %4d %7.2f us %6.3f TB/s %s\n", rot ? "gen A rotated" : "gen A fixed  ", GEN, fa.numRegs,
             blocks, us, (double)P.n * P.k * 2 / us / 1e6, bad ? "WRONG" : "ok");
    }
    return 0;
  }
#endif
  u32* o; CK(cudaMalloc(&o, 64));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  {
    long long bytes = 32LL << 20, nv = bytes / 16; int RR = 8;
    std::vector<uint4*> cp(RR); for (auto& q : cp) { CK(cudaMalloc(&q, bytes)); CK(cudaMemset(q, 1, bytes)); }
    int grid = sms * 4;
    double u1 = timerot([&](int i) { launch(readg<1>, grid, 512, true, (const uint4*)cp[i], nv, o); }, RR);
    printf("read grid-stride pdl grid %d x 512: %6.2f us %5.3f TB/s\n", grid, u1, bytes / u1 / 1e6);
    for (auto q : cp) cudaFree(q);
  }
  // A fixed (the probes' usual: hot in L2 after the first launch, as
  // activations a previous kernel wrote), then rotated over copies with the
  // weights (as aitune's stream timing and bench/peers_gemm.py --stream do).
  for (int m : {16, 3}) {
    decode_problem P = decode_setup(m, 4096, 4096, 8);
    ncopies = P.R;
    std::vector<u16*> xs(P.R);
    for (int i = 0; i < P.R; i++) {
      CK(cudaMalloc(&xs[i], (size_t)16 * 4096 * 2));
      CK(cudaMemcpy(xs[i], P.x, (size_t)16 * 4096 * 2, cudaMemcpyDeviceToDevice));
    }
    for (int rot = 0; rot < 2; rot++) {
      for (int i = 0; i < P.R; i++) { wc[i] = P.w[i]; xc[i] = rot ? xs[i] : P.x; }
      one<8, 2, 8, 4, 1>(P); one<8, 2, 8, 4, 3>(P);   // gemv's winner (cpw 2, kw = warps = 8, unroll 4)
      one<4, 2, 8, 2, 1>(P); one<4, 2, 8, 2, 3>(P); one<4, 2, 8, 2, 5>(P);
      if (m == 16) { one<4, 4, 8, 1, 1>(P); one<4, 2, 8, 4, 1>(P); one<4, 2, 8, 1, 1>(P); one<4, 2, 4, 2, 1>(P); }
      onecp<2, 8, 1, 4, 1>(P); onecp<2, 8, 2, 2, 1>(P); onecp<2, 8, 2, 3, 1>(P); onecp<2, 8, 1, 8, 1>(P);
      if (m == 16) {
        onecp<4, 8, 1, 4, 1>(P); onecp<4, 8, 1, 2, 1>(P); onecp<2, 8, 2, 4, 1>(P); onecp<2, 4, 2, 4, 1>(P);
        onecp<4, 4, 1, 4, 1>(P); onecp<2, 16, 1, 4, 1>(P); onecp<4, 8, 2, 2, 1>(P);
      }
    }
    for (auto q : xs) cudaFree(q);
    decode_free(P);
  }
  return 0;
}
