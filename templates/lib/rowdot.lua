-- Dot-product GEMV for the smallest decode shapes (m <= 4) of the nt layout
-- of lib/gemm.lua (B is n x k, F.linear's weight): each weight row is read
-- as one contiguous stream, a warp's load instruction covering 512 bytes of
-- one row, and multiplied on the FMA pipe in fp32.
--
-- Why beside gemv (gemm_nt/gemv.lua): mma.sync needs eight weight rows at the
-- same k in one fragment, so gemv's warp loads read 8 rows x 64 bytes each.
-- At m = 1 the tensor cores buy nothing, and on the H100 (stream timing,
-- 4096^2 bf16) that access pattern alone cost about 1 us of a 13 us launch
-- against reading the rows contiguously (bench/archive/RESULTS-2026.md, "rowdot: 1 x
-- 4096^2 at 2.65 TB/s").
-- At m = 16 the FMA pipe would need as long as the weight stream, so this
-- family stops at m = 4 (supports()); its kernels still take any m, in
-- passes of `mrows` rows of A, since a bucket's winner may meet a larger m.
--
-- A block has `warps` warps in sets of `kw`: a set takes `rows` weight rows
-- and its kw warps split k into contiguous slices (multiples of 8 elements).
-- Lane l of a warp loads elements [8l, 8l + 8) of each 256-element piece of
-- its slice, `unroll` pieces of each row per step, then the same pieces of
-- A's rows (hot in L1 and L2: every block reads them). A lane's sums are
-- added over the warp by a shuffle tree and over the set's warps in warp
-- order in shared memory: results are deterministic. No workspace, so
-- `pdl` (sm_90) works as in gemv: the next launch starts at once and this
-- one reads nothing before the previous one has finished; with `l2pre` it
-- asks L2 for its first step's weights before it waits (as gemv's).
--
-- Alignment: the 16-byte path runs when k is a multiple of 8 and A and B
-- are 16-byte aligned (a uniform test at run time); otherwise the same code
-- runs with 2-byte loads, every element predicated. Every k, n and m tail
-- is predicated.
--
-- The gated product (op.swiglu, gemm_swiglu: B = [G; U], 2n x k; see
-- lib/gemm.lua): a set's `rows` are output columns, each two weight rows
-- (its gate row c and its up row n + c), so the kernel streams R = 2 x rows
-- weight rows a set through the same main loop and stores SiLU(gate) * up.
local gemm = lib("gemm")
local gemv = lib("gemv")
local dtype = lib("dtype")
local kernel = lib("kernel")
local M = {}

M.MAX_M = 4

M.params = {
  { "warps", { 4, 8 } },          -- warps per block
  { "kw", { 1, 2, 4, 8 } },       -- warps per weight row, splitting k in contiguous slices
  { "rows", { 1, 2, 4 } },        -- weight rows a set of kw warps takes at once
  { "mrows", { 1, 2, 4 } },       -- rows of A per pass over B
  { "unroll", { 1, 2, 4 } },      -- 256-element pieces of each row per step
  { "pdl", { 0, 1 } },            -- programmatic dependent launch (sm_90)
  { "l2pre", { 0, 1 } },          -- pdl: the first step's weights prefetched into L2 before the wait
}

local function rows_per_block(p) return p.warps // p.kw * p.rows end

-- A rough measure of a config's registers (weights and A in flight,
-- accumulators, 32 for the rest), kept at 96: ptxas's counts run higher,
-- up to about 130 across the space, far from the 255 cap.
local function reg_estimate(p)
  return 4 * p.unroll * p.rows + 4 * p.unroll + p.mrows * p.rows + 32
end

function M.constraints(p, shape, dt, dev, swiglu)
  if p.kw > p.warps or p.warps % p.kw ~= 0 then return false, "kw must divide warps" end
  -- The gated product streams two weight rows an output column.
  local est = reg_estimate(swiglu and { unroll = p.unroll, rows = 2 * p.rows, mrows = p.mrows } or p)
  if est > 96 then return false, string.format("about %d registers per thread", est) end
  -- ptxas (NVRTC 13.0) holds these two to 80 registers and spills 8-16
  -- bytes; their neighbours above and below do not spill.
  if (p.warps == 8 and p.kw == 2 and p.mrows == 2 and p.rows == 2 and p.unroll == 2)
      or (p.warps == 4 and p.kw == 4 and p.mrows == 4 and p.rows == 1 and p.unroll == 4) then
    return false, "ptxas holds it to 80 registers and spills"
  end
  local ok, why = gemv.pdl_constraints(p, dev)
  if ok == false then return false, why end
  -- A step past a slice's end only loads zeros.
  local slice = ((shape.k + p.kw - 1) // p.kw + 7) // 8 * 8
  if p.unroll > 1 and 256 * p.unroll > slice then return false, "a step longer than a warp's slice of k" end
  if shape.m > p.mrows and p.mrows < M.MAX_M then return false, "m is larger than the rows of one pass" end
  if p.mrows >= 2 * shape.m and p.mrows > 1 then return false, "twice the rows needed compiled in" end
  return true
end

function M.supports(shape, dt, dev)
  if shape.m > M.MAX_M then return false, string.format("m > %d: the FMA pipe would bound it", M.MAX_M) end
  return true
end

local vld_w = [[asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));]]
local vld_a = [[asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));]]

-- The gated product's text: R weight rows a set, RO = R / 2 output columns,
-- the gate's rows first. Each piece replaces one exact piece of the GEMM's.
local SWIGLU_PIECES = {
  { "#define R %d\n", "#define RO %d\n#define R (2 * RO)\n" },
  -- ptxas 13.0 held 9 of the 444 configs at m 1 and 4 to 64-96 registers and
  -- spilled 8-56 bytes (two row pointers a column); told that one block an SM
  -- is enough, it gives them what they need (88 at one of them) and spills none.
  { "__launch_bounds__(WARPS * 32)", "__launch_bounds__(WARPS * 32, 1)" },
  { "#define RB (SETS * R)", "#define RB (SETS * RO)" },
  { "const long long row0 = (long long)blockIdx.x * RB + (long long)set * R;",
    "const long long row0 = (long long)blockIdx.x * RB + (long long)set * RO;   // output columns" },
  { [[
    bok[r] = row0 + r < n;
    brow[r] = B + (bok[r] ? (row0 + r) * k : 0);]], [[
    bok[r] = row0 + r %% RO < n;   // weight row r: the gate's (r < RO) or the up's, of column row0 + r %% RO
    brow[r] = B + (bok[r] ? (row0 + r %% RO + (r < RO ? 0 : n)) * k : 0);]] },
  { [[
    for (int i = threadIdx.x; i < SETS * MR * R; i += WARPS * 32) {
      const int s = i / (MR * R), q = (i / R) %% MR, r = i %% R;
      const long long col = (long long)blockIdx.x * RB + (long long)s * R + r;
      if (q < mr && col < n) {
        float v = red[s * KW][q * R + r];
        for (int j = 1; j < KW; j++) v += red[s * KW + j][q * R + r];
        D[(r0 + q) * n + col] = st_out(v);
      }
    }]], [[
    for (int i = threadIdx.x; i < SETS * MR * RO; i += WARPS * 32) {
      const int s = i / (MR * RO), q = (i / RO) %% MR, r = i %% RO;
      const long long col = (long long)blockIdx.x * RB + (long long)s * RO + r;
      if (q < mr && col < n) {
        float v = red[s * KW][q * R + r], u = red[s * KW][q * R + RO + r];
        for (int j = 1; j < KW; j++) {
          v += red[s * KW + j][q * R + r];
          u += red[s * KW + j][q * R + RO + r];
        }
        D[(r0 + q) * n + col] = st_out(swiglu(v, u));
      }
    }]] },
  { [[
        for (int r = 0; r < R; r++)
          if (q < mr && row0 + r < n) D[(r0 + q) * n + row0 + r] = st_out(acc[q][r]);]], [[
        for (int r = 0; r < RO; r++)
          if (q < mr && row0 + r < n) D[(r0 + q) * n + row0 + r] = st_out(swiglu(acc[q][r], acc[q][RO + r]));]] },
}

-- The kernel's format string for op: the GEMM's, or the gated product's.
local function text_of(op, text)
  if not op.swiglu then return text end
  return kernel.replace(text, SWIGLU_PIECES, "rowdot")
end

local function source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  return dtype.prelude .. (op.swiglu and gemm.swiglu_device or "") .. gemv.store_fn(t) .. string.format(text_of(op, [[
#define WARPS %d
#define KW %d
#define R %d
#define MR %d
#define UNROLL %d
#define PDL %d
#define L2PRE %d
#define NW 4
#define SETS (WARPS / KW)
#define RB (SETS * R)
#define OUT_T %s
#define LD_IN ld_%s
typedef unsigned int u32;
typedef unsigned short u16;
%s
// Elements [kk, kk + 8) of a row as 4 packed words (lib/gemv.lua's
// ld_piece): weights are streamed past L1, A's rows stay in it.
%s
// This warp's slice [kb, ke) of its R weight rows against mr (<= MR) rows
// of A: every weight load of a step is issued before the first FMA. The
// element-wise path takes one piece per step (its predicated loads would
// otherwise all be hoisted and spill).
template<bool V, int U> AIT_DEV void mainloop(float (&acc)[MR][R], const u16* __restrict__ A, long long mr, long long k,
                                       const u16* const (&brow)[R], const bool (&bok)[R], long long kb,
                                       long long ke, int lane) {
  for (long long k0 = kb + 8 * lane; k0 < ke; k0 += 256 * U) {
    u32 bw[U][R][4];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
      for (int r = 0; r < R; r++) ld_piece<V, true>(bw[u][r], brow[r], k0 + 256 * u, ke, bok[r]);
#pragma unroll
    for (int q = 0; q < MR; q++) {
      if (q < mr) {   // uniform
        u32 aw[U][4];
#pragma unroll
        for (int u = 0; u < U; u++) ld_piece<V, false>(aw[u], A + q * k, k0 + 256 * u, ke, true);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
          for (int e = 0; e < 4; e++) {
            const float a0 = lo_f(aw[u][e]), a1 = hi_f(aw[u][e]);
#pragma unroll
            for (int r = 0; r < R; r++) {
              acc[q][r] = fmaf(a0, lo_f(bw[u][r][e]), acc[q][r]);
              acc[q][r] = fmaf(a1, hi_f(bw[u][r][e]), acc[q][r]);
            }
          }
      }
    }
  }
}
%s
extern "C" __global__ void __launch_bounds__(WARPS * 32) %s(%s) {
  pdl_launch();
#if KW > 1
  __shared__ float red[WARPS][MR * R];
#endif
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, set = warp / KW, wk = warp %% KW;
  const long long row0 = (long long)blockIdx.x * RB + (long long)set * R;
  // This warp's slice of k: KW contiguous ranges, each a multiple of 8 long.
  const long long per = ((k + KW - 1) / KW + 7) / 8 * 8;
  const long long kb = min(k, (long long)wk * per), ke = min(k, kb + per);
  const bool vec = (k %% 8 == 0) && ((((unsigned long long)A) | ((unsigned long long)B)) %% 16 == 0);
  const u16* brow[R];
  bool bok[R];
#pragma unroll
  for (int r = 0; r < R; r++) {
    bok[r] = row0 + r < n;
    brow[r] = B + (bok[r] ? (row0 + r) * k : 0);
  }
#if L2PRE
  // The first step's weights asked of L2 before the wait (as lib/gemv.lua's
  // l2pre: L2 is coherent with the previous kernel's writes, and nothing is
  // read into this SM before the wait).
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int r = 0; r < R; r++)
      if (bok[r] && kb + 8 * lane + 256 * u < ke) l2_prefetch(brow[r] + kb + 8 * lane + 256 * u);
#endif
  pdl_wait();
  for (long long r0 = 0; r0 < m; r0 += MR) {
    const long long mr = min((long long)MR, m - r0);
    float acc[MR][R];
#pragma unroll
    for (int q = 0; q < MR; q++)
#pragma unroll
      for (int r = 0; r < R; r++) acc[q][r] = 0.0f;
    if (row0 < n) {   // warp-uniform: sets wholly past n skip the stream
      if (vec) mainloop<true, UNROLL>(acc, A + r0 * k, mr, k, brow, bok, kb, ke, lane);
      else mainloop<false, 1>(acc, A + r0 * k, mr, k, brow, bok, kb, ke, lane);
    }
#pragma unroll
    for (int q = 0; q < MR; q++)
#pragma unroll
      for (int r = 0; r < R; r++)
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) acc[q][r] += __shfl_xor_sync(0xffffffffu, acc[q][r], o);
#if KW > 1
    if (lane == 0) {
#pragma unroll
      for (int q = 0; q < MR; q++)
#pragma unroll
        for (int r = 0; r < R; r++) red[warp][q * R + r] = acc[q][r];
    }
    __syncthreads();
    // One thread per (set, row of A, weight row): the set's warps in order.
    for (int i = threadIdx.x; i < SETS * MR * R; i += WARPS * 32) {
      const int s = i / (MR * R), q = (i / R) %% MR, r = i %% R;
      const long long col = (long long)blockIdx.x * RB + (long long)s * R + r;
      if (q < mr && col < n) {
        float v = red[s * KW][q * R + r];
        for (int j = 1; j < KW; j++) v += red[s * KW + j][q * R + r];
        D[(r0 + q) * n + col] = st_out(v);
      }
    }
    __syncthreads();   // red is reused by the next pass
#else
    if (lane == 0) {
#pragma unroll
      for (int q = 0; q < MR; q++)
#pragma unroll
        for (int r = 0; r < R; r++)
          if (q < mr && row0 + r < n) D[(r0 + q) * n + row0 + r] = st_out(acc[q][r]);
    }
#endif
  }
}
]]), p.warps, p.kw, p.rows, p.mrows, p.unroll, p.pdl, p.l2pre, dtype.ctype(t.Out), t.In, gemv.unpack_fn, gemv.ld_piece_src(vld_w, vld_a),
    gemv.pdl_fn, name,
    kernel.params(op, dt))
end

-- The family table for the nt op of lib/gemm.lua.
local function family(op)
  assert(op.layout == "nt", "rowdot reads B's rows: nt only")
  local sw = op.swiglu
  local t = {
    op = op.name,
    name = "rowdot",
    min_cc = 80,
    dtypes = op.dtypes,
    params = M.params,
    constraints = function(p, shape, dt, dev) return M.constraints(p, shape, dt, dev, sw) end,
    supports = M.supports,
  }
  t.launch = function(p, dt, dev)
    return { grid = { string.format("cdiv(n, %d)", rows_per_block(p)), 1, 1 },
             block = { 32 * p.warps, 1, 1 }, smem = 0, pdl = p.pdl == 1 }
  end
  t.source = function(p, dt, dev, name) return source(op, p, dt, dev, name) end
  t.default = function(shape, dt, dev)
    local mm = 1
    while mm < shape.m and mm < M.MAX_M do mm = mm * 2 end
    return kernel.first_valid(t, shape, dt, dev, { warps = 8, mrows = mm, pdl = 0, l2pre = 0 },
      { { "kw", { 8, 4, 2, 1 } }, { "rows", { 1, 2, 4 } }, { "unroll", { 1, 2, 4 } } })
  end
  return t
end

M.family = family

return M
