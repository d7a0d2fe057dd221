-- The decode GEMV of gemm_nn (m <= 16; templates/lib/gemv.lua holds what
-- both layouts share, the family table among it).
--
-- nn (B is k x n): a lane owns `vec` consecutive columns and walks k eight
-- rows at a time (8*unroll weight loads in flight); the warps of a block
-- split k and add their sums in shared memory in a fixed order; A's rows
-- are read eight k at a time (16-byte broadcast loads) and multiplied on
-- the FMA pipe in fp32. csplit > 1 (sm_90): the k range is split over a
-- cluster of csplit blocks instead of the workspace; each block leaves its
-- sums in shared memory, and after a cluster barrier block q adds the
-- q-th slice of the columns over the cluster's blocks in rank order
-- (distributed shared memory): deterministic, no workspace, so it goes
-- with pdl and l2pre (as nt's, below).
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local gemv = lib("gemv")

local nn_params = {
  { "warps", { 1, 2, 4, 8, 16 } }, -- warps per block, splitting k
  { "vec", { 8, 4, 2 } },          -- columns per lane (16, 8 or 4 bytes)
  { "mmax", { 1, 2, 4, 8 } },      -- rows per pass over B (m > 8 takes passes of 8)
  { "unroll", { 1, 2 } },          -- groups of 8 weight rows per step (4 was measured no faster)
  { "splitk", { 1, 2, 4, 8, 16, 32 } },
  { "csplit", { 1, 2, 4, 8 } },    -- split-K over a cluster, added through distributed shared memory (sm_90)
  { "pdl", { 0, 1 } },             -- programmatic dependent launch (sm_90, no workspace split-K)
  { "l2pre", { 0, 1 } },           -- pdl: the first step's weight rows prefetched into L2 before the wait
}

local function cols_per_block(p) return 32 * p.vec end

-- Registers a config needs beyond the compiler's own (a rough upper bound
-- that keeps ptxas away from spills). At 172 (8 rows x 8 columns, 16
-- weight rows in flight) a config compiled to 237 registers: too close to
-- spilling, hence the limit of 160.
local function reg_estimate(p) return p.mmax * p.vec + 4 * p.unroll * p.vec + 4 + 40 end

local function check_tiles(p, shape, dt, dev, step, tiles)
  if p.csplit > 1 and p.splitk > 1 then return false, "split-K through the workspace or the cluster, not both" end
  if p.csplit > 1 and (dev.cc or 0) < 90 then return false, "clusters need sm_90" end
  if p.csplit > 1 and shape.k // p.csplit < step then return false, "a split of k shorter than one step" end
  if p.csplit > 1 and tiles >= 2 * (dev.sms or 132) then
    return false, "enough column tiles to fill the GPU without split-K"
  end
  if shape.m > p.mmax and p.mmax < 8 then return false, "m is larger than the rows of one pass" end
  if p.mmax >= 2 * shape.m and p.mmax > 1 then return false, "twice the rows needed compiled in" end
  return nil
end

local function source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  local nw = p.vec // 2
  local vld_w
  if nw == 4 then
    vld_w = [[asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));]]
  elseif nw == 2 then
    vld_w = [[asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));]]
  else
    vld_w = [[asm volatile("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(w[0]) : "l"(p));]]
  end
  return dtype.prelude .. gemv.store_fn(t) .. string.format([[
#define WARPS %d
#define VEC %d
#define MMAX %d
#define UNROLL %d
#define SPLITK %d
#define CS %d
#define PDL %d
#define L2PRE %d
#define NW (VEC / 2)
#define COLS (32 * VEC)
#define OUT_T %s
#define LD_IN ld_%s
typedef unsigned int u32;
typedef unsigned short u16;

%s
// Columns [col, col + VEC) of weight row kk, zeros past n or when !ok:
// ld_piece<VB, true>(w, B + kk * n, col, n, ok).
%s
// A[r][kk .. kk + 8) as 4 words (all lanes read the same address); zeros
// past ke.
template<bool V> AIT_DEV void ld_arow(u32 (&w)[4], const u16* __restrict__ ar, long long kk, long long ke) {
  if (V) {
    if (kk < ke) {
      asm volatile("ld.global.nc.v4.u32 {%%0, %%1, %%2, %%3}, [%%4];"
                   : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(ar + kk));
    } else {
#pragma unroll
      for (int i = 0; i < 4; i++) w[i] = 0u;
    }
  } else {
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const u32 lo = kk + 2 * i < ke ? (u32)ar[kk + 2 * i] : 0u;
      const u32 hi = kk + 2 * i + 1 < ke ? (u32)ar[kk + 2 * i + 1] : 0u;
      w[i] = lo | (hi << 16);
    }
  }
}

// U groups of 8 weight rows per step; the element-wise path takes one (its
// loads of A would otherwise all be hoisted and spill).
template<bool VB, bool VA, int U> AIT_DEV void mainloop(float (&acc)[MMAX][VEC], const u16* __restrict__ A,
                                                        const u16* __restrict__ B, long long m, long long n,
                                                        long long k, long long col, long long kb, long long ke,
                                                        int warp) {
  for (long long k0 = kb + (long long)warp * 8 * U; k0 < ke; k0 += (long long)WARPS * 8 * U) {
    u32 bw[8 * U][NW];
#pragma unroll
    for (int j = 0; j < 8 * U; j++) ld_piece<VB, true>(bw[j], B + (k0 + j) * n, col, n, k0 + j < ke);
#pragma unroll
    for (int r = 0; r < MMAX; r++) {
      if (r < m) {   // uniform
#pragma unroll
        for (int u = 0; u < U; u++) {
          u32 aw[4];
          ld_arow<VA>(aw, A + (long long)r * k, k0 + 8 * u, ke);
#pragma unroll
          for (int j = 0; j < 8; j++) {
            const float a = (j & 1) ? hi_f(aw[j / 2]) : lo_f(aw[j / 2]);
#pragma unroll
            for (int i = 0; i < NW; i++) {
              acc[r][2 * i] = fmaf(a, lo_f(bw[8 * u + j][i]), acc[r][2 * i]);
              acc[r][2 * i + 1] = fmaf(a, hi_f(bw[8 * u + j][i]), acc[r][2 * i + 1]);
            }
          }
        }
      }
    }
  }
}
%s
extern "C" __global__ void __launch_bounds__(WARPS * 32) %s(%s) {
  pdl_launch();
  __shared__ float red[WARPS][COLS + 1];
#if CS > 1
  __shared__ float cpart[MMAX][COLS];   // this block's sums, read by the cluster
#endif
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long cb = (long long)blockIdx.x * COLS;
  const long long col = cb + lane * VEC;
  // This block's k range: whole groups of 8 rows, SPLITK (or CS) ways.
  const long long ng = (k + 7) / 8, per = (ng + SPLITK * CS - 1) / (SPLITK * CS);
  const long long kb = min(k, (long long)blockIdx.y * per * 8), ke = min(k, kb + per * 8);
  const bool vb = (n %% VEC == 0) && ((unsigned long long)B %% (2 * VEC) == 0);
  const bool va = (k %% 8 == 0) && ((unsigned long long)A %% 16 == 0);
#if L2PRE
  // The first step's weight rows asked of L2 before the wait (as nt's).
  if (col < n) {
    const long long k0 = kb + (long long)warp * 8 * UNROLL;
#pragma unroll
    for (int j = 0; j < 8 * UNROLL; j++)
      if (k0 + j < ke) l2_prefetch(B + (k0 + j) * n + col);
  }
#endif
  pdl_wait();
  unsigned* ticket = (unsigned*)ws;
  float* part = (float*)((char*)ws + 4 * n + 64);
  // MMAX rows of A per pass over B: one pass up to m = 8, two at m = 16 (a
  // register file cannot hold 16 rows of accumulators next to the loads in
  // flight without spilling), more only when a larger m reaches this kernel
  // through its bucket.
  for (long long r0 = 0; r0 < m; r0 += MMAX) {
    const long long mr = min((long long)MMAX, m - r0);
    const u16* Ar = A + r0 * k;
    float acc[MMAX][VEC];
#pragma unroll
    for (int r = 0; r < MMAX; r++)
#pragma unroll
      for (int e = 0; e < VEC; e++) acc[r][e] = 0.0f;
    // Two instantiations, not four: compile time grows with each copy.
    if (vb && va) mainloop<true, true, UNROLL>(acc, Ar, B, mr, n, k, col, kb, ke, warp);
    else mainloop<false, false, 1>(acc, Ar, B, mr, n, k, col, kb, ke, warp);
    // Row by row: the warps' sums in warp order, then one value per column.
#pragma unroll
    for (int r = 0; r < MMAX; r++) {
      if (r < mr) {   // uniform
#pragma unroll
        for (int e = 0; e < VEC; e++) red[warp][lane * VEC + e] = acc[r][e];
        __syncthreads();
        for (int i = threadIdx.x; i < COLS; i += WARPS * 32) {
          float s = red[0][i];
          for (int w = 1; w < WARPS; w++) s += red[w][i];
#if CS > 1
          cpart[r][i] = s;
#else
          const long long c = cb + i, row = r0 + r;
          if (c < n) {
            if (SPLITK == 1) D[row * n + c] = st_out(s);
            else part[((long long)blockIdx.y * m + row) * n + c] = s;
          }
#endif
        }
        __syncthreads();
      }
    }
#if CS > 1
    // Every block's sums are in place; block q adds the q-th slice of the
    // columns over the cluster in rank order, then all wait until no one
    // reads a peer's cpart any more (the next pass rewrites it).
    cluster_arrive();
    cluster_wait();
    const unsigned cbase = (unsigned)__cvta_generic_to_shared(&cpart[0][0]);
    const int q = (int)cta_rank(), slice = COLS / CS;
    for (int j = threadIdx.x; j < mr * slice; j += WARPS * 32) {
      const int r = j / slice, i = q * slice + j %% slice;
      const long long c = cb + i;
      if (c < n) {
        float s = 0.0f;
        for (int pr = 0; pr < CS; pr++) s += ld_peer(cbase + 4u * (unsigned)(r * COLS + i), (unsigned)pr);
        D[(r0 + r) * n + c] = st_out(s);
      }
    }
    cluster_arrive();
    cluster_wait();
#endif
  }
  if (SPLITK > 1) splitk_finish(part, ticket, D, m, n, cb, COLS);
}
]], p.warps, p.vec, p.mmax, p.unroll, p.splitk, p.csplit, p.pdl, p.l2pre, dtype.ctype(t.Out), t.In, gemv.unpack_fn,
    gemv.ld_piece_src(vld_w, vld_w),
    (p.csplit > 1 and lib("cluster").ptx or "") .. gemv.pdl_fn .. gemv.finish_fn,
    name, kernel.params(op, dt, true))
end

local function default(t, shape, dt, dev)
  local mm = 1
  while mm < shape.m and mm < 8 do mm = mm * 2 end
  return kernel.first_valid(t, shape, dt, dev, { mmax = mm, warps = 4, csplit = 1, pdl = 0, l2pre = 0 },
    { { "vec", { 8, 4, 2 } }, { "splitk", { 8, 16, 4, 32, 2, 1 } }, { "unroll", { 2, 1 } } })
end

return gemv.family(OP, {
  params = nn_params, cols_per_block = cols_per_block, reg_estimate = reg_estimate, reg_limit = 160,
  step = function(p) return 8 * p.unroll * p.warps end,
  check_tiles = check_tiles, source = source, default = default,
})
