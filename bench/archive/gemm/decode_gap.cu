// Decode probe (bench/archive/decode_gap.sh): where do the mma GEMV's 1.5 us over a
// plain read of its 32 MB go (4096^2 bf16, back to back over 8 rotating
// weight copies, PDL)? Three kinds of kernel, each timed the same way:
// - a grid-stride 16-byte read (the ceiling);
// - rowk: m = 1 on the FMA pipe, each warp load 512 contiguous bytes of one
//   weight row (what templates/gemm_nt/rowdot.lua became);
// - gap: the slab GEMV of decode_common.cuh (8 rows x 64 bytes per warp
//   load, mma.sync), with flags that take parts of it away:
//   1 PRE: the first step's weights loaded before griddepcontrol.wait
//   2 NOMMA: weights xor-folded instead of the mma
//   4 NOEPI: no shared-memory reduction or store (only meaningful at G = 1:
//     at G = 2 the compiler drops the second group's loads)
//   8 NOX: no activation loads
//   16 ROT: each block starts its k sweep at a different step
//   64 weight loads with .L2::256B, 128 the first step's weights prefetched
//     into L2 before the wait (192: the template's l2pf 256 + l2pre)
// Flags 14 and 30 leave only the weight loads: the access pattern's cost.
#include <cstring>
#include "decode_common.cuh"
__device__ __forceinline__ u32 prmt(u32 a, u32 b, u32 sel) {
  u32 d; asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel)); return d;
}
__device__ __forceinline__ u32 movt(u32 a) {
  u32 d; asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a)); return d;
}
__device__ __forceinline__ void ldw256(u32 (&w)[4], const u16* p) {
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];" : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));
}
template<int G, int W, int U, int F>
__global__ void __launch_bounds__(W * 32) gap(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d,
                                               int m, int n, int k) {
  __shared__ float red[W][G][32][4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const long long rb = (long long)blockIdx.x * 8 * G;
  const u16* wr[G];
#pragma unroll
  for (int c = 0; c < G; c++) wr[c] = w + (rb + 8 * c + g) * (long long)k;
  u32 bw[U][G][4];
  const int nst = k / (W * 32 * U);
  const int rot = (F & 16) ? (int)(blockIdx.x % nst) : 0;
  int j = 0;
  int k0 = ((warp + rot * W) % (nst * W)) * 32 * U;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (F & 1) {
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int c = 0; c < G; c++) ldw(bw[u][c], wr[c] + k0 + 32 * u + 8 * t);
  }
  if (F & 128) {
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int c = 0; c < G; c++) asm volatile("prefetch.global.L2 [%0];" :: "l"(wr[c] + k0 + 32 * u + 8 * t));
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  float acc[G][4];
  u32 xa = 0;
#pragma unroll
  for (int c = 0; c < G; c++) for (int i = 0; i < 4; i++) acc[c][i] = 0.f;
  const bool lo = g < m, hi = g + 8 < m;
  const u16* xlo = x + (long long)(lo ? g : 0) * k;
  const u16* xhi = x + (long long)(hi ? g + 8 : 0) * k;
  bool first = true;
  for (; j < nst; j++, k0 = ((warp + (j + rot) * W) % (nst * W)) * 32 * U) {
    u32 a0[U][4], a1[U][4];
    if (!(F & 1) || !first) {
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int c = 0; c < G; c++) {
          if (F & 64) ldw256(bw[u][c], wr[c] + k0 + 32 * u + 8 * t); else ldw(bw[u][c], wr[c] + k0 + 32 * u + 8 * t);
        }
    }
    first = false;
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (!(F & 8) && lo) ldx(a0[u], xlo + k0 + 32 * u + 8 * t); else for (int i = 0; i < 4; i++) a0[u][i] = 0x3f803f80u;
      if (!(F & 8) && hi) ldx(a1[u], xhi + k0 + 32 * u + 8 * t); else for (int i = 0; i < 4; i++) a1[u][i] = 0;
    }
    __syncwarp();
    if (F & 2) {
#pragma unroll
      for (int u = 0; u < U; u++)
#pragma unroll
        for (int c = 0; c < G; c++) xa ^= bw[u][c][0] ^ bw[u][c][1] ^ bw[u][c][2] ^ bw[u][c][3] ^ a0[u][0] ^ a1[u][1];
    } else {
      slab_mma<G, U>(acc, a0, a1, bw);
    }
  }
  if (F & 6) {
    if (xa == 0x12345u || acc[0][0] == 1234.5f) d[0] = __float2bfloat16(acc[0][1] + (float)xa);
    return;
  }
  slab_store<G, W>(red, acc, rb, d, m, n);
}
// gapq: the slab GEMV with a quad-of-rows load: lane (g, t) loads 16 bytes
// of weight rows 2t (h = 0) and 2t + 1 (h = 1) of a group at k 8g of a
// 64-k chunk, so one warp load covers 4 rows x 128 contiguous bytes (the
// slab's covers 8 rows x 64). prmt pairs rows 2t and 2t + 1 at each k, and
// movmatrix.trans hands lane (g, t) row g at k 16t + j and 16t + 8 + j:
// an mma B fragment over k permuted the same way for A (x's 32 bytes
// [16t, 16t + 16) of rows g and g + 8, paired by the same prmt).
// F: 1 L2PRE (the first step's weights prefetched into L2 before the wait),
// 2 NOMMA (weights xor-folded), 4 .L2::256B on the weight loads, 8 NOX.
template<int G, int W, int U, int F>
__global__ void __launch_bounds__(W * 32) gapq(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d,
                                                int m, int n, int k) {
  __shared__ float red[W][G][32][4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const long long rb = (long long)blockIdx.x * 8 * G;
  const u16* wr[G][2];
#pragma unroll
  for (int c = 0; c < G; c++)
#pragma unroll
    for (int h = 0; h < 2; h++) wr[c][h] = w + (rb + 8 * c + 2 * t + h) * (long long)k + 8 * g;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (F & 1) {
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int c = 0; c < G; c++)
#pragma unroll
        for (int h = 0; h < 2; h++) asm volatile("prefetch.global.L2 [%0];" :: "l"(wr[c][h] + warp * 64 * U + 64 * u));
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  float acc[G][4];
  u32 xa = 0;
#pragma unroll
  for (int c = 0; c < G; c++) for (int i = 0; i < 4; i++) acc[c][i] = 0.f;
  const bool lo = g < m, hi = g + 8 < m;
  const u16* xlo = x + (long long)(lo ? g : 0) * k + 16 * t;
  const u16* xhi = x + (long long)(hi ? g + 8 : 0) * k + 16 * t;
  for (int k0 = warp * 64 * U; k0 < k; k0 += W * 64 * U) {
    u32 bw[U][G][2][4];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int c = 0; c < G; c++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
          if (F & 4) ldw256(bw[u][c][h], wr[c][h] + k0 + 64 * u); else ldw(bw[u][c][h], wr[c][h] + k0 + 64 * u);
        }
    u32 xl[U][2][4], xh[U][2][4];
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (!(F & 8) && lo) { ldx(xl[u][0], xlo + k0 + 64 * u); ldx(xl[u][1], xlo + k0 + 64 * u + 8); }
      else for (int i = 0; i < 4; i++) { xl[u][0][i] = 0x3f803f80u; xl[u][1][i] = 0; }
      if (!(F & 8) && hi) { ldx(xh[u][0], xhi + k0 + 64 * u); ldx(xh[u][1], xhi + k0 + 64 * u + 8); }
      else for (int i = 0; i < 4; i++) { xh[u][0][i] = 0; xh[u][1][i] = 0; }
    }
    __syncwarp();
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (F & 2) {
#pragma unroll
        for (int c = 0; c < G; c++)
          for (int i = 0; i < 4; i++) xa ^= bw[u][c][0][i] ^ bw[u][c][1][i] ^ xl[u][0][i] ^ xh[u][1][i];
        continue;
      }
      // Pair j (k = 16t + j and 16t + 8 + j): A's rows g and g + 8; each
      // group's B word from its rows' prmt pair through movmatrix.
#pragma unroll
      for (int i = 0; i < 4; i++) {
        u32 a[2][2], b[G][2];
#pragma unroll
        for (int s = 0; s < 2; s++) {
          const int j = i + 4 * s, q = j >> 1;
          const u32 sel = (j & 1) ? 0x7632u : 0x5410u;
          a[s][0] = prmt(xl[u][0][q], xl[u][1][q], sel);
          a[s][1] = prmt(xh[u][0][q], xh[u][1][q], sel);
#pragma unroll
          for (int c = 0; c < G; c++) b[c][s] = movt(prmt(bw[u][c][0][q], bw[u][c][1][q], sel));
        }
#pragma unroll
        for (int c = 0; c < G; c++) mma16816(acc[c], a[0][0], a[0][1], a[1][0], a[1][1], b[c][0], b[c][1]);
      }
    }
  }
  if (F & 2) {
    if (xa == 0x12345u) d[0] = __float2bfloat16((float)xa);
    return;
  }
  slab_store<G, W>(red, acc, rb, d, m, n);
}
static const u16* wc[16]; static int R;
template<int G, int W, int U, int F>
static void one(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k) {
  const int blocks = n / (8 * G);
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  launch(gap<G, W, U, F>, blocks, W * 32, true, x, wc[0], d, m, n, k);
  CK(cudaDeviceSynchronize());
  const int bad = (F & 6) ? -1 : count_wrong(d, ref, m, n);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, gap<G, W, U, F>);
  double us = timerot([&](int i) { launch(gap<G, W, U, F>, blocks, W * 32, true, x, wc[i], d, m, n, k); }, R);
  printf("m=%-2d G=%d W=%d U=%d F=%-3d%s%s%s%s%s regs %3d blocks %4d %7.2f us %6.3f TB/s %s\n", m, G, W, U, F,
         F & 1 ? " PRE" : "    ", F & 2 ? " NOMMA" : "      ", F & 4 ? " NOEPI" : "      ", F & 8 ? " NOX" : "    ", F & 16 ? " ROT" : "    ",
         fa.numRegs, blocks, us, (double)n * k * 2 / us / 1e6, bad < 0 ? "-" : bad ? "WRONG" : "ok");
}

template<int G, int W, int U, int F>
static void oneq(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k) {
  const int blocks = n / (8 * G);
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  launch(gapq<G, W, U, F>, blocks, W * 32, true, x, wc[0], d, m, n, k);
  CK(cudaDeviceSynchronize());
  const int bad = (F & 2) ? -1 : count_wrong(d, ref, m, n);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, gapq<G, W, U, F>);
  double us = timerot([&](int i) { launch(gapq<G, W, U, F>, blocks, W * 32, true, x, wc[i], d, m, n, k); }, R);
  printf("quad m=%-2d G=%d W=%d U=%d F=%-2d%s%s%s%s regs %3d blocks %4d %7.2f us %6.3f TB/s %s\n", m, G, W, U, F,
         F & 1 ? " L2PRE" : "      ", F & 2 ? " NOMMA" : "      ", F & 4 ? " L2_256" : "       ", F & 8 ? " NOX" : "    ",
         fa.numRegs, blocks, us, (double)n * k * 2 / us / 1e6, bad < 0 ? "-" : bad ? "WRONG" : "ok");
}

// m = 1 on the FMA pipe, weight rows read contiguously: a block of 8 warps,
// KW warps per row splitting k in contiguous slices (x's slice in
// registers), 8/KW row sets per block, each taking R rows at a time, I times.
// Lane l, load j of a slice: k = slice0 + 256 j + 8 l. F: 1 PRE, 2 no FMA.
__device__ __forceinline__ float bf2f_lo(u32 v) { return __uint_as_float(v << 16); }
__device__ __forceinline__ float bf2f_hi(u32 v) { return __uint_as_float(v & 0xffff0000u); }
template<int KW, int R, int I, int F>
__global__ void __launch_bounds__(256) rowk(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d, int n, int k) {
  constexpr int S = 4096 / KW / 256;           // loads per row slice (k = 4096 here)
  constexpr int SETS = 8 / KW, RB = R * I * SETS;
  __shared__ float red[8][R * I];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, kwi = warp % KW, set = warp / KW;
  const int kbase = kwi * (k / KW);
  const long long r0 = (long long)blockIdx.x * RB + set * R * I;
  u32 wv[R][S][4];
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (F & 1) {
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
      for (int j = 0; j < S; j++) ldw(wv[r][j], w + (r0 + r) * k + kbase + 256 * j + 8 * lane);
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  u32 xv[S][4];
#pragma unroll
  for (int j = 0; j < S; j++) ldx(xv[j], x + kbase + 256 * j + 8 * lane);
  u32 xa = 0;
#pragma unroll 1
  for (int it = 0; it < I; it++) {
    if (!(F & 1) || it > 0) {
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int j = 0; j < S; j++) ldw(wv[r][j], w + (r0 + it * R + r) * k + kbase + 256 * j + 8 * lane);
    }
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
      acc[r] = 0.f;
      if (F & 2) {
#pragma unroll
        for (int j = 0; j < S; j++) xa ^= wv[r][j][0] ^ wv[r][j][1] ^ wv[r][j][2] ^ wv[r][j][3];
      } else {
#pragma unroll
        for (int j = 0; j < S; j++)
#pragma unroll
          for (int q = 0; q < 4; q++) {
            acc[r] = fmaf(bf2f_lo(wv[r][j][q]), bf2f_lo(xv[j][q]), acc[r]);
            acc[r] = fmaf(bf2f_hi(wv[r][j][q]), bf2f_hi(xv[j][q]), acc[r]);
          }
      }
#pragma unroll
      for (int o = 16; o; o >>= 1) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], o);
      if (lane == 0) red[warp][it * R + r] = acc[r];
    }
  }
  if (F & 2) { if (xa == 0x1234567u) d[0] = __float2bfloat16(1.f); return; }
  __syncthreads();
  if ((int)threadIdx.x < RB) {
    const int st = threadIdx.x / (R * I), rr = threadIdx.x % (R * I);
    float s = 0.f;
    for (int q = 0; q < KW; q++) s += red[st * KW + q][rr];
    d[(long long)blockIdx.x * RB + threadIdx.x] = __float2bfloat16(s);
  }
}
template<int KW, int R, int I, int F>
static void onerow(const u16* x, __nv_bfloat16* d, const float* ref, int n, int k) {
  constexpr int RB = R * I * (8 / KW);
  const int blocks = n / RB;
  CK(cudaMemset(d, 0xff, (size_t)n * 2));
  launch(rowk<KW, R, I, F>, blocks, 256, true, x, wc[0], d, n, k);
  CK(cudaDeviceSynchronize());
  const int bad = (F & 2) ? -1 : count_wrong(d, ref, 1, n);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, rowk<KW, R, I, F>);
  double us = timerot([&](int i) { launch(rowk<KW, R, I, F>, blocks, 256, true, x, wc[i], d, n, k); }, ::R);
  printf("rowk m=1 KW=%d R=%d I=%d F=%d%s%s regs %3d blocks %4d %7.2f us %6.3f TB/s %s\n", KW, R, I, F, F & 1 ? " PRE" : "    ",
         F & 2 ? " NOFMA" : "      ", fa.numRegs, blocks, us, (double)n * k * 2 / us / 1e6, bad < 0 ? "-" : bad ? "WRONG" : "ok");
}
template<int KW, int R, int I> static void rows3(const u16* x, __nv_bfloat16* d, const float* ref, int n, int k) {
  onerow<KW, R, I, 0>(x, d, ref, n, k); onerow<KW, R, I, 1>(x, d, ref, n, k); onerow<KW, R, I, 2>(x, d, ref, n, k);
}

// tr: the mma GEMV with contiguous weight loads. A warp takes 256-k steps
// (warps interleaved), loads each of its 8G rows' 512 bytes as one 16-byte
// piece per lane, scatters the words into a warp-private tile laid out as
// ldmatrix matrices in gemv's permuted-k order (matrix j of 32-k chunk ch,
// row r, word t = W[r][32ch + 8t + 2j], one pitch of 528 bytes per chunk so
// the 4-byte stores hit 32 banks), then per chunk: one ldmatrix.x4 per
// group and A's two 16-byte pieces, two mma.sync.
template<int G, int W>
__global__ void __launch_bounds__(W * 32) gemv_tr(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d,
                                                   int m, int n, int k) {
  extern __shared__ __align__(16) unsigned char trs[];
  constexpr int TILE = 8 * 528;
  float* red = (float*)(trs + W * G * TILE);   // [W][G][4][32]
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int ch = lane >> 2, tp = lane & 3;
  const long long rb = (long long)blockIdx.x * 8 * G;
  const u32 tb = (u32)__cvta_generic_to_shared(trs) + warp * G * TILE;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  float acc[G][4];
#pragma unroll
  for (int c = 0; c < G; c++) for (int i = 0; i < 4; i++) acc[c][i] = 0.f;
  const bool lo = g < m, hi = g + 8 < m;
  const u16* xlo = x + (long long)(lo ? g : 0) * k;
  const u16* xhi = x + (long long)(hi ? g + 8 : 0) * k;
  for (int st = warp; st < k / 256; st += W) {
    const int k0 = st * 256;
    u32 wv[G][8][4];
#pragma unroll
    for (int c = 0; c < G; c++)
#pragma unroll
      for (int r = 0; r < 8; r++) ldw(wv[c][r], w + (rb + 8 * c + r) * (long long)k + k0 + 8 * lane);
#pragma unroll
    for (int c = 0; c < G; c++)
#pragma unroll
      for (int r = 0; r < 8; r++)
#pragma unroll
        for (int j = 0; j < 4; j++)
          asm volatile("st.shared.u32 [%0], %1;" :: "r"(tb + c * TILE + ch * 528 + j * 128 + r * 16 + tp * 4), "r"(wv[c][r][j]) : "memory");
    __syncwarp();
#pragma unroll
    for (int cc = 0; cc < 8; cc++) {
      u32 a0[4], a1[4];
      if (lo) ldx(a0, xlo + k0 + 32 * cc + 8 * t); else for (int i = 0; i < 4; i++) a0[i] = 0;
      if (hi) ldx(a1, xhi + k0 + 32 * cc + 8 * t); else for (int i = 0; i < 4; i++) a1[i] = 0;
#pragma unroll
      for (int c = 0; c < G; c++) {
        u32 b[4];
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                     : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                     : "r"(tb + c * TILE + cc * 528 + (lane >> 3) * 128 + (lane & 7) * 16) : "memory");
        mma16816(acc[c], a0[0], a1[0], a0[1], a1[1], b[0], b[1]);
        mma16816(acc[c], a0[2], a1[2], a0[3], a1[3], b[2], b[3]);
      }
    }
    __syncwarp();
  }
#pragma unroll
  for (int c = 0; c < G; c++) for (int j = 0; j < 4; j++) red[((warp * G + c) * 4 + j) * 32 + lane] = acc[c][j];
  __syncthreads();
  for (int i = threadIdx.x; i < G * 32 * 4; i += W * 32) {
    const int c = i / 128, l = (i / 4) % 32, j = i % 4;
    float sum = 0.f;
    for (int ww = 0; ww < W; ww++) sum += red[((ww * G + c) * 4 + j) * 32 + l];
    const int row = (l >> 2) + 8 * (j >> 1); const long long col = rb + 8 * c + 2 * (l & 3) + (j & 1);
    if (row < m) d[(long long)row * n + col] = __float2bfloat16(sum);
  }
}
template<int G, int W>
static void onetr(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k) {
  const int blocks = n / (8 * G), smem = W * G * 8 * 528 + W * G * 512;
  CK(cudaFuncSetAttribute(gemv_tr<G, W>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto go = [&](const u16* wp) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks); cfg.blockDim = dim3(W * 32); cfg.dynamicSmemBytes = smem; cfg.stream = 0;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    CK(cudaLaunchKernelEx(&cfg, gemv_tr<G, W>, x, wp, d, m, n, k));
  };
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  go(wc[0]);
  CK(cudaDeviceSynchronize());
  const int bad = count_wrong(d, ref, m, n);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, gemv_tr<G, W>);
  double us = timerot([&](int i) { go(wc[i]); }, R);
  printf("tr m=%-2d G=%d W=%-2d regs %3d smem %6d blocks %4d %7.2f us %6.3f TB/s %s\n", m, G, W, fa.numRegs, smem, blocks, us,
         (double)n * k * 2 / us / 1e6, bad ? "WRONG" : "ok");
}

// lds: the mma GEMV fed by cp.async and ldmatrix. A block of W warps takes
// G groups of 8 weight rows and the k-slice of its rank in a cluster of CS
// blocks (split-K added through distributed shared memory); each warp
// takes 256 k of that slice: A's fragments for them in registers (native
// mma order), and per group one stage of 8 rows x 256 k, copied with
// cp.async 16 bytes a lane (each instruction 512 contiguous bytes of one
// row) into a warp-private ring of S stages, read back with ldmatrix.
#define AIT_CLUSTER_PTX
__device__ __forceinline__ unsigned lds_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ void lds_csync() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ float lds_peer(unsigned addr, unsigned rank) {
  unsigned a; float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(a) : "r"(addr), "r"(rank));
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ u32 ld32(const u16* p) { u32 v; asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p)); return v; }
template<int G, int W, int CS, int S>
__global__ void __launch_bounds__(W * 32) gemv_lds(const u16* __restrict__ x, const u16* __restrict__ w, __nv_bfloat16* __restrict__ d,
                                                    int m, int n, int k) {
  extern __shared__ __align__(128) unsigned char sm[];
  constexpr int ROWP = 528, STG = 8 * ROWP;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const unsigned rank = CS > 1 ? lds_rank() : 0;
  const long long rb = (long long)blockIdx.x * 8 * G;
  const int kw0 = ((int)rank * W + warp) * 256;
  const u32 ring = (u32)__cvta_generic_to_shared(sm) + warp * S * STG;
  float* red = (float*)(sm + W * S * STG);     // [W][G][4][32]
  float* cpart = red + W * G * 128;            // [G][32][4]
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const u16* src0 = w + rb * k + kw0 + 8 * lane;
#pragma unroll
  for (int j = 0; j < S; j++) {
    if (j < G) {
      const u32 dst = ring + j * STG + lane * 16;
#pragma unroll
      for (int r = 0; r < 8; r++)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst + r * ROWP), "l"(src0 + (8LL * j + r) * k) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  u32 af[16][4];
  const bool lo = g < m, hi = g + 8 < m;
  const u16* xlo = x + (long long)(lo ? g : 0) * k + kw0 + 2 * t;
  const u16* xhi = x + (long long)(hi ? g + 8 : 0) * k + kw0 + 2 * t;
#pragma unroll
  for (int s = 0; s < 16; s++) {
    af[s][0] = lo ? ld32(xlo + 16 * s) : 0u;
    af[s][1] = hi ? ld32(xhi + 16 * s) : 0u;
    af[s][2] = lo ? ld32(xlo + 16 * s + 8) : 0u;
    af[s][3] = hi ? ld32(xhi + 16 * s + 8) : 0u;
  }
  float acc[G][4];
#pragma unroll
  for (int j = 0; j < G; j++) for (int i = 0; i < 4; i++) acc[j][i] = 0.f;
#pragma unroll
  for (int j = 0; j < G; j++) {
    asm volatile("cp.async.wait_group %0;" :: "n"(S - 1) : "memory");
    __syncwarp();
    const u32 st = ring + (j % S) * STG + (lane & 7) * ROWP + (lane >> 3) * 16;
#pragma unroll
    for (int q = 0; q < 8; q++) {
      u32 b[4];
      asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                   : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3]) : "r"(st + q * 64) : "memory");
      mma16816(acc[j], af[2 * q][0], af[2 * q][1], af[2 * q][2], af[2 * q][3], b[0], b[1]);
      mma16816(acc[j], af[2 * q + 1][0], af[2 * q + 1][1], af[2 * q + 1][2], af[2 * q + 1][3], b[2], b[3]);
    }
    __syncwarp();
    if (j + S < G) {
      const u32 dst = ring + (j % S) * STG + lane * 16;
#pragma unroll
      for (int r = 0; r < 8; r++)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(dst + r * ROWP), "l"(src0 + (8LL * (j + S) + r) * k) : "memory");
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
#pragma unroll
  for (int j = 0; j < G; j++) for (int i = 0; i < 4; i++) red[((warp * G + j) * 4 + i) * 32 + lane] = acc[j][i];
  __syncthreads();
  for (int idx = threadIdx.x; idx < G * 128; idx += W * 32) {
    const int j = idx / 128, l = (idx / 4) % 32, i = idx % 4;
    float v = 0.f;
    for (int ww = 0; ww < W; ww++) v += red[((ww * G + j) * 4 + i) * 32 + l];
    cpart[idx] = v;
  }
  if (CS > 1) lds_csync(); else __syncthreads();
  const int per = G * 128 / CS;
  const u32 cbase = (u32)__cvta_generic_to_shared(cpart);
  for (int q = threadIdx.x; q < per; q += W * 32) {
    const int idx = (int)rank * per + q;
    float v = 0.f;
    for (int pr = 0; pr < CS; pr++) v += CS > 1 ? lds_peer(cbase + 4u * idx, pr) : cpart[idx];
    const int j = idx / 128, l = (idx / 4) % 32, i = idx % 4;
    const int row = (l >> 2) + 8 * (i >> 1);
    const long long col = rb + 8 * j + 2 * (l & 3) + (i & 1);
    if (row < m) d[(long long)row * n + col] = __float2bfloat16(v);
  }
  if (CS > 1) lds_csync();
}
template<int G, int W, int CS, int S>
static void onelds(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k) {
  if (CS * W * 256 != k) return;
  const int blocks = n / (8 * G), smem = W * S * 8 * 528 + W * G * 512 + G * 512;
  CK(cudaFuncSetAttribute(gemv_lds<G, W, CS, S>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  auto go = [&](const u16* wp) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(blocks, CS); cfg.blockDim = dim3(W * 32); cfg.dynamicSmemBytes = smem; cfg.stream = 0;
    cudaLaunchAttribute at[2];
    at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at[0].val.programmaticStreamSerializationAllowed = 1;
    at[1].id = cudaLaunchAttributeClusterDimension;
    at[1].val.clusterDim.x = 1; at[1].val.clusterDim.y = CS; at[1].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 2;
    CK(cudaLaunchKernelEx(&cfg, gemv_lds<G, W, CS, S>, x, wp, d, m, n, k));
  };
  CK(cudaMemset(d, 0xff, (size_t)m * n * 2));
  go(wc[0]);
  CK(cudaDeviceSynchronize());
  const int bad = count_wrong(d, ref, m, n);
  cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, gemv_lds<G, W, CS, S>);
  double us = timerot([&](int i) { go(wc[i]); }, R);
  printf("lds m=%-2d G=%-2d W=%d CS=%d S=%d regs %3d smem %6d blocks %4d %7.2f us %6.3f TB/s %s\n", m, G, W, CS, S, fa.numRegs, smem,
         blocks * CS, us, (double)n * k * 2 / us / 1e6, bad ? "WRONG" : "ok");
}
template<int G, int W, int U> static void all(const u16* x, __nv_bfloat16* d, const float* ref, int m, int n, int k) {
  one<G, W, U, 0>(x, d, ref, m, n, k); one<G, W, U, 1>(x, d, ref, m, n, k);
  one<G, W, U, 16>(x, d, ref, m, n, k); one<G, W, U, 17>(x, d, ref, m, n, k);
  one<G, W, U, 14>(x, d, ref, m, n, k); one<G, W, U, 30>(x, d, ref, m, n, k); one<G, W, U, 31>(x, d, ref, m, n, k);
}
// The probes' problem at 4096^2 with m rows of A: set up (8 weight copies,
// which the timed chains rotate through wc), handed to f, freed.
template<class F> static void with_problem(int m, F f) {
  decode_problem P = decode_setup(m, 4096, 4096, 8);
  R = P.R;
  for (int i = 0; i < R; i++) wc[i] = P.w[i];
  f(P);
  decode_free(P);
}
int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "quad")) {
    // Each list three ways: the legacy stream with chains of 96 (the
    // probes' usual), a non-blocking stream with 96, and one with 20 (as
    // aitune's stream timing: 5 copies x 4).
    cudaStream_t own; CK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
    const int m = 16;
    for (int way = 0; way < 3; way++) {
      g_stream = way ? own : 0; g_chain = way == 2 ? 20 : 96;
      printf("-- %s stream, chains of %d\n", way ? "non-blocking" : "legacy default", g_chain);
      with_problem(m, [&](decode_problem& P) {
        // The template's slab winner at 16 x 4096^2 (cpw 2, kw = warps = 8,
        // unroll 4, l2pf 256, l2pre), then quad shapes.
        one<2, 8, 4, 192>(P.x, P.d, P.ref, m, 4096, 4096); one<2, 8, 4, 128>(P.x, P.d, P.ref, m, 4096, 4096);
        one<2, 16, 2, 192>(P.x, P.d, P.ref, m, 4096, 4096); one<2, 16, 2, 128>(P.x, P.d, P.ref, m, 4096, 4096);
        oneq<2, 8, 2, 1>(P.x, P.d, P.ref, m, 4096, 4096); oneq<2, 16, 1, 1>(P.x, P.d, P.ref, m, 4096, 4096);
        oneq<1, 16, 1, 1>(P.x, P.d, P.ref, m, 4096, 4096); oneq<1, 16, 2, 1>(P.x, P.d, P.ref, m, 4096, 4096);
        oneq<2, 32, 1, 1>(P.x, P.d, P.ref, m, 4096, 4096); oneq<1, 32, 1, 1>(P.x, P.d, P.ref, m, 4096, 4096);
        oneq<4, 16, 1, 1>(P.x, P.d, P.ref, m, 4096, 4096); oneq<2, 16, 1, 5>(P.x, P.d, P.ref, m, 4096, 4096);
        oneq<2, 16, 1, 10>(P.x, P.d, P.ref, m, 4096, 4096);
      });
    }
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "lds")) {
    for (int m : {16, 1})
      with_problem(m, [&](decode_problem& P) {
        onelds<8, 4, 4, 4>(P.x, P.d, P.ref, m, 4096, 4096); onelds<4, 4, 4, 4>(P.x, P.d, P.ref, m, 4096, 4096);
        onelds<8, 4, 4, 3>(P.x, P.d, P.ref, m, 4096, 4096); onelds<8, 4, 4, 6>(P.x, P.d, P.ref, m, 4096, 4096);
        onelds<16, 4, 4, 4>(P.x, P.d, P.ref, m, 4096, 4096); onelds<2, 4, 4, 2>(P.x, P.d, P.ref, m, 4096, 4096);
        onelds<8, 8, 2, 4>(P.x, P.d, P.ref, m, 4096, 4096); onelds<4, 8, 2, 4>(P.x, P.d, P.ref, m, 4096, 4096);
        onelds<4, 2, 8, 4>(P.x, P.d, P.ref, m, 4096, 4096); onelds<8, 2, 8, 4>(P.x, P.d, P.ref, m, 4096, 4096);
        onelds<2, 2, 8, 2>(P.x, P.d, P.ref, m, 4096, 4096); onelds<1, 4, 4, 1>(P.x, P.d, P.ref, m, 4096, 4096);
        one<2, 8, 2, 0>(P.x, P.d, P.ref, m, 4096, 4096);
      });
    return 0;
  }
  if (argc > 1 && !strcmp(argv[1], "tr")) {
    for (int m : {16, 1})
      with_problem(m, [&](decode_problem& P) {
        onetr<1, 8>(P.x, P.d, P.ref, m, 4096, 4096); onetr<2, 8>(P.x, P.d, P.ref, m, 4096, 4096);
        onetr<1, 4>(P.x, P.d, P.ref, m, 4096, 4096); onetr<2, 4>(P.x, P.d, P.ref, m, 4096, 4096);
        onetr<1, 16>(P.x, P.d, P.ref, m, 4096, 4096); onetr<4, 4>(P.x, P.d, P.ref, m, 4096, 4096);
        one<1, 8, 2, 0>(P.x, P.d, P.ref, m, 4096, 4096); one<2, 8, 2, 0>(P.x, P.d, P.ref, m, 4096, 4096);
      });
    return 0;
  }
  u32* o; CK(cudaMalloc(&o, 64));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  {
    long long bytes = 32LL << 20, nv = bytes / 16; int RR = 8;
    std::vector<uint4*> cp(RR); for (auto& q : cp) { CK(cudaMalloc(&q, bytes)); CK(cudaMemset(q, 1, bytes)); }
    for (int bpsm : {2, 4}) for (int thr : {256, 512}) {
      int grid = sms * bpsm;
      double u1 = timerot([&](int i) { launch(readg<1>, grid, thr, true, (const uint4*)cp[i], nv, o); }, RR);
      printf("read grid-stride pdl grid %d x %d: %6.2f us %5.3f TB/s\n", grid, thr, u1, bytes / u1 / 1e6);
    }
    for (auto q : cp) cudaFree(q);
  }
  with_problem(1, [&](decode_problem& P) {
    rows3<8, 1, 1>(P.x, P.d, P.ref, 4096, 4096); rows3<8, 2, 1>(P.x, P.d, P.ref, 4096, 4096);
    rows3<8, 4, 1>(P.x, P.d, P.ref, 4096, 4096); rows3<8, 2, 2>(P.x, P.d, P.ref, 4096, 4096);
    rows3<8, 4, 2>(P.x, P.d, P.ref, 4096, 4096); rows3<8, 8, 1>(P.x, P.d, P.ref, 4096, 4096);
    rows3<4, 1, 1>(P.x, P.d, P.ref, 4096, 4096); rows3<4, 2, 1>(P.x, P.d, P.ref, 4096, 4096);
    rows3<4, 4, 1>(P.x, P.d, P.ref, 4096, 4096); rows3<4, 2, 2>(P.x, P.d, P.ref, 4096, 4096);
    rows3<2, 1, 1>(P.x, P.d, P.ref, 4096, 4096); rows3<2, 2, 1>(P.x, P.d, P.ref, 4096, 4096);
    rows3<2, 1, 2>(P.x, P.d, P.ref, 4096, 4096); rows3<1, 1, 1>(P.x, P.d, P.ref, 4096, 4096);
    rows3<1, 1, 2>(P.x, P.d, P.ref, 4096, 4096);
    all<1, 8, 2>(P.x, P.d, P.ref, 1, 4096, 4096);
    all<2, 8, 2>(P.x, P.d, P.ref, 1, 4096, 4096);
  });
  return 0;
}
