-- GEMV-style kernels for decode shapes (m <= 16) of both layouts of
-- lib/gemm.lua: the weight B is streamed from HBM once, as wide loads with
-- several of them in flight per thread, while the few rows of A stay in L1.
--
-- nt (B is n x k, F.linear's weight): a warp owns 8*cpw output columns (cpw
-- groups of 8 weight rows) and walks its share of k: the block's k range,
-- or with kw > 1 every kw-th step of it, the kw warps of a column slot
-- adding their sums in shared memory in warp order (so a block of 8 rows
-- needs no split-K to put 512 blocks on a 4096-wide weight). Each lane loads `vec`
-- consecutive k of one weight row (16 or 8 bytes); the 16 rows of A (rows
-- past m read as zeros) and the 8 weight rows of a group then go through
-- tensor cores as one mma.sync m16n8k16 per 16 k, fp32 accumulation. The
-- lanes' loads are contiguous, so the k order inside a chunk of 4*vec is
-- permuted: the mma sums over k, and A's fragment uses the same permutation,
-- so the product is the same sum in another order. Tensor cores keep the
-- arithmetic off the FMA pipe, which at m = 16 would need as long as the
-- weight stream itself.
--
-- nt, lean 1: whole steps by vector loads without tests (rows past n or m
-- read row 0 and are never stored), the rest of k (all of it when the
-- vector path cannot run) on the FMA pipe, k by k; few registers, and
-- minb asks ptxas for blocks per SM (4 x 8 warps: 64 registers, the whole
-- 16 x 4096^2 grid in one wave). seg 2 (lean only): a warp load is 4 rows
-- x 8*vec k instead of 8 rows x 4*vec k (128 contiguous bytes of a row
-- instead of 64): lane (g, t) loads half g % 2 of row g / 2, and the mma
-- of each half takes only that half's columns (the other lanes pass
-- zeros), so a row's two columns are added at the end; twice the mma and
-- A's loads. At 16 x 4096^2: 13.15-13.17 us against 13.34-13.38 for the
-- seg 1 kernel without lean; m = 8: 12.84 against 13.07 (lean, minb 1;
-- bench/RESULTS.md, thirteenth session).
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
--
-- nt, pdl 1 (sm_90): programmatic dependent launch. The kernel lets the
-- next launch on the stream start at once (griddepcontrol.launch_dependents)
-- and waits for the previous one's writes (griddepcontrol.wait) before it
-- reads A or writes anything, so back to back, as in a decode loop, one
-- launch's start-up hides under the previous one's tail. It reads nothing
-- before the wait, not even the weights: a caller's B may be written by the
-- kernel before it on the stream. The plan asks for
-- the launch attribute (plan.h `pdl`); launched without it the wait returns
-- at once. Only without split-K: a workspace zeroed before every launch
-- would put a memset between the kernels.
--
-- Both, l2pre 1 (with pdl): before the wait, each lane asks L2 for its
-- first step's weights (prefetch.global.L2). L2 is where the previous
-- kernel's writes land, so a prefetch never makes a later load stale, and
-- nothing is read into the SM before the wait; the weights' first DRAM
-- round trip then overlaps the previous kernel's tail (16 x 4096^2: 14.42
-- -> 13.39 us, bench/RESULTS.md). nt, l2pre 2 and 4: the first 2 or 4
-- steps, so more of a block's weights are on their way while the previous
-- kernel ends. nt, apf 1: first thing, each block's first warp asks L2
-- for 4 KB of A (block b the b-th 4 KB), so A, which every block reads,
-- is fetched from DRAM once, at the start, and not step by step on each
-- block's critical path (same reasoning as l2pre: L2 only). At 16 x
-- 4096^2, apf 1 with l2pre 2-4: 12.76-12.84 us (2.61-2.63 TB/s) against
-- 13.13-13.28 with l2pre 1 (fourteenth session).
--
-- Both: split-K over gridDim.y. Each block writes fp32 partials to the
-- workspace; the last block of a column tile to arrive (a ticket counter,
-- __threadfence before and after) adds the partials in split order and
-- writes D, then resets its ticket. The sum never depends on which block
-- came last, so results are deterministic. No float atomics.
--
-- Alignment: the vector path runs when the rows allow it (nt: k a multiple
-- of vec; nn: n a multiple of vec and k of 8) and the base pointers are
-- aligned to the vector, a uniform test at run time; otherwise the same
-- code runs with 2-byte loads, every element predicated. Every k, n and m
-- tail is predicated. supports() offers the family up to m = 16, but the
-- kernels take any m (passes of 16 rows, nt; of mmax rows, nn), since a
-- bucket's winner may meet a larger m of its bucket.
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local M = {}

M.MAX_M = 16

local nt_params = {
  { "warps", { 2, 4, 8 } },        -- warps per block
  { "kw", { 1, 2, 4, 8 } },        -- warps of a block sharing columns, splitting k
  { "cpw", { 1, 2, 4 } },          -- column groups of 8 per warp
  { "vec", { 8, 4 } },             -- k elements per lane per load (16 or 8 bytes)
  -- Pieces of a weight row per warp load: 1: 8 rows x 4 vec k (each lane
  -- its fragment's row); 2: 4 rows x 8 vec k, each mma taking one segment's
  -- columns (twice the mma and A's loads, longer runs of a row per load).
  { "seg", { 1, 2 } },
  -- lean 1: whole steps by vector loads without tests, the rest of k on
  -- the FMA pipe (few registers; seg 2 and minb need it).
  { "lean", { 0, 1 } },
  -- Blocks per SM asked of ptxas (__launch_bounds__'s second value; 0:
  -- none). Not asking is not asking for 1: ptxas then allots fewer
  -- registers (lean seg 1 at 8 warps, unroll 4: 61 against 110), and the
  -- decode GEMV's speed follows the registers. 4 x 8 warps leave 64; 2
  -- leave 128 (16 x 4096^2's fastest, with cpw 4, l2pre 2 and apf).
  { "minb", { 0, 1, 2, 4 } },
  { "unroll", { 1, 2, 4 } },       -- k chunks loaded before the first mma of a step
  { "splitk", { 1, 2, 4, 8, 16 } },
  -- Weight loads ask L2 for the whole 256-byte block around each 64-byte
  -- piece (.L2::256B): the warp reads the rest of it within its next steps.
  { "l2pf", { 0, 256 } },
  { "pdl", { 0, 1 } },             -- programmatic dependent launch (sm_90, no split-K)
  -- pdl: the weights of the first l2pre steps prefetched into L2 before
  -- the wait (at 16 x 4096^2, unroll 2, kw 8: 4 steps are a warp's whole
  -- share; 6 and 8 measured slower than 2 and 4).
  { "l2pre", { 0, 1, 2, 4 } },
  -- A's rows asked of L2 right after the wait, spread over the blocks: each
  -- block reads all of A, and its later steps then find it there.
  { "apf", { 0, 1 } },
}

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

-- Bytes of tickets in front of the partials (one per column tile; a tile is
-- at least 8 columns, so n of them always suffice).
local function ticket_bytes(n) return 4 * n + 64 end

local function cols_per_block(layout, p)
  if layout == "nt" then return p.warps // p.kw * (8 // p.seg) * p.cpw end
  return 32 * p.vec
end

-- Registers a config needs beyond the compiler's own (a rough upper bound
-- that keeps ptxas away from spills).
local function reg_estimate(layout, p)
  if layout == "nt" then
    return p.unroll * p.cpw * p.vec // 2 + p.unroll * p.seg * p.vec + 4 * p.cpw + 40
  end
  return p.mmax * p.vec + 4 * p.unroll * p.vec + 4 + 40
end

local function constraints(layout, p, shape, dt, dev)
  -- nn at 172 (8 rows x 8 columns, 16 weight rows in flight) compiled to
  -- 237 registers: too close to spilling.
  if reg_estimate(layout, p) > (layout == "nt" and 200 or 160) then
    return false, string.format("about %d registers per thread", reg_estimate(layout, p))
  end
  -- nt at 8 warps with 4 column groups, unroll 1 and 16-byte loads: ptxas
  -- 13.0 holds it to 128 registers (139 at 2 or 4 warps), and with split-K
  -- it spills (every such config of the H100 GEMV landscape,
  -- tests/sim/landscapes/memory-gemm_nt.tsv).
  if layout == "nt" and p.warps == 8 and p.cpw == 4 and p.unroll == 1 and p.vec == 8 and p.splitk > 1 then
    return false, "ptxas holds it to 128 registers and spills"
  end
  if layout == "nt" then
    if p.kw > p.warps or p.warps % p.kw ~= 0 then return false, "kw must divide warps" end
    if p.minb > 0 and p.lean == 0 then return false, "minb needs lean (the tested path's registers would spill or double)" end
    if p.seg > 1 and p.lean == 0 then return false, "seg 2 needs lean (measured slower without it)" end
    if p.l2pre > 1 and (p.l2pre - 1) * p.kw * p.unroll * 4 * p.vec * p.seg >= shape.k // p.splitk then
      return false, "l2pre steps past a warp's share of k (the same as fewer)"
    end
    if p.kw > 1 and shape.k // p.splitk < p.kw * p.unroll * 4 * p.vec * p.seg then
      return false, "warps along k with no step of their own"
    end
  end
  local ok, why = M.pdl_constraints(p, dev)
  if ok == false then return false, why end
  if p.pdl == 1 and p.splitk > 1 then return false, "pdl with split-K: its workspace is zeroed between launches" end
  local step = layout == "nt" and p.unroll * 4 * p.vec * p.seg or 8 * p.unroll * p.warps
  if p.splitk > 1 and shape.k // p.splitk < step then
    return false, "a split of k shorter than one step"
  end
  local tiles = (shape.n + cols_per_block(layout, p) - 1) // cols_per_block(layout, p)
  if p.splitk > 1 and tiles >= 2 * (dev.sms or 132) then
    return false, "enough column tiles to fill the GPU without split-K"
  end
  if layout == "nn" then
    if p.csplit > 1 and p.splitk > 1 then return false, "split-K through the workspace or the cluster, not both" end
    if p.csplit > 1 and (dev.cc or 0) < 90 then return false, "clusters need sm_90" end
    if p.csplit > 1 and shape.k // p.csplit < step then return false, "a split of k shorter than one step" end
    if p.csplit > 1 and tiles >= 2 * (dev.sms or 132) then
      return false, "enough column tiles to fill the GPU without split-K"
    end
    if shape.m > p.mmax and p.mmax < 8 then return false, "m is larger than the rows of one pass" end
    if p.mmax >= 2 * shape.m and p.mmax > 1 then return false, "twice the rows needed compiled in" end
  end
  return true
end

local function supports(shape, dt, dev)
  if (dev.cc or 0) < 80 then return false, "mma.sync bf16 needs sm_80" end
  if shape.m > M.MAX_M then return false, string.format("m > %d: not a decode shape", M.MAX_M) end
  return true
end

local function store_fn(t)
  return string.format("AIT_DEV %s st_out(float v) { return st_%s(v); }\n", dtype.ctype(t.Out), t.Out)
end
M.store_fn = store_fn

-- Programmatic dependent launch (PDL: the kernel's source defines it 0 or
-- 1), for both layouts and gemm_nt/rowdot.lua, and l2pre's prefetch.
local pdl_fn = [[
// pdl 1: the next launch may start at once; this one reads nothing before
// the previous one has finished and its writes are visible.
AIT_DEV void pdl_launch() {
#if PDL
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
AIT_DEV void pdl_wait() {
#if PDL
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
AIT_DEV void pdl_enter() { pdl_launch(); pdl_wait(); }
// l2pre: ask L2 for a line before the wait (L2 is coherent with the
// previous kernel's writes; nothing reaches this SM).
AIT_DEV void l2_prefetch(const void* p) { asm volatile("prefetch.global.L2 [%0];" :: "l"(p)); }
]]
M.pdl_fn = pdl_fn

-- The pdl and l2pre rules every family of this file, gemm_nt/rowdot.lua and
-- gemm_nt/swapab.lua keeps: false and the reason when p breaks one, else nil.
function M.pdl_constraints(p, dev)
  if p.pdl == 1 and (dev.cc or 0) < 90 then return false, "griddepcontrol needs sm_90" end
  if p.l2pre > 0 and p.pdl == 0 then return false, "l2pre is for pdl: without it there is no wait to hide" end
  return nil
end

-- The split-K tail both layouts share: every block has written its partials
-- for its columns [cb, cb + ncols); the last one adds them in split order.
local finish_fn = [[
AIT_DEV void splitk_finish(float* __restrict__ part, unsigned* __restrict__ ticket, OUT_T* __restrict__ D,
                           long long m, long long n, long long cb, int ncols) {
  __shared__ unsigned last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(ticket + blockIdx.x, 1u) == SPLITK - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  const long long cells = m * ncols;
  for (long long i = threadIdx.x; i < cells; i += blockDim.x) {
    const long long row = i / ncols, col = cb + i % ncols;
    if (col >= n) continue;
    float s = 0.0f;
    for (int sp = 0; sp < SPLITK; sp++) s += __ldcg(part + ((long long)sp * m + row) * n + col);
    D[row * n + col] = st_out(s);
  }
  if (threadIdx.x == 0) ticket[blockIdx.x] = 0u;   // ready for the next launch
}
]]

-- A packed pair's elements as floats (LD_IN: the input type's ld_<dt>).
M.unpack_fn = [[
AIT_DEV float lo_f(u32 w) { return LD_IN((u16)(w & 0xffffu)); }
AIT_DEV float hi_f(u32 w) { return LD_IN((u16)(w >> 16)); }
]]

-- ld_piece<V, WEIGHT>(w, row, kk, ke, ok): 2*NW elements of a row from
-- element kk on (NW defined by the source), as NW packed words; zeros when
-- !ok or past ke. V: one aligned vector load, vld_w for weights and vld_a
-- for A (PTX asm over w and p; the piece is wholly inside or wholly past
-- ke); otherwise element by element. Shared by both layouts and
-- gemm_nt/rowdot.lua.
function M.ld_piece_src(vld_w, vld_a)
  return [[
template<bool V, bool WEIGHT> AIT_DEV void ld_piece(u32 (&w)[NW], const u16* __restrict__ row, long long kk,
                                                     long long ke, bool ok) {
  if (V) {
    if (ok && kk < ke) {
      const u16* p = row + kk;
      if (WEIGHT) { ]] .. vld_w .. [[ } else { ]] .. vld_a .. [[ }
    } else {
#pragma unroll
      for (int i = 0; i < NW; i++) w[i] = 0u;
    }
  } else {
#pragma unroll
    for (int i = 0; i < NW; i++) {
      const u32 lo = (ok && kk + 2 * i < ke) ? (u32)row[kk + 2 * i] : 0u;
      const u32 hi = (ok && kk + 2 * i + 1 < ke) ? (u32)row[kk + 2 * i + 1] : 0u;
      w[i] = lo | (hi << 16);
    }
  }
}
]]
end

local function nt_source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  local nw = p.vec // 2
  local vld_w, vld_a
  local pf = p.l2pf == 256 and ".L2::256B" or ""
  if nw == 4 then
    vld_w = [[asm volatile("ld.global.nc.L1::no_allocate]] .. pf .. [[.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));]]
    vld_a = [[asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));]]
  else
    vld_w = [[asm volatile("ld.global.nc.L1::no_allocate]] .. pf .. [[.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));]]
    vld_a = [[asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));]]
  end
  return dtype.prelude .. store_fn(t) .. string.format([[
#define WARPS %d
#define KW %d
#define CPW %d
#define VEC %d
#define SEG %d
#define UNROLL %d
#define SPLITK %d
#define PDL %d
#define L2PRE %d
#define APF %d
#define LEAN %d
#define MINB %d
#define LD_IN ld_%s
#define NW (VEC / 2)
#define CHUNK (4 * VEC * SEG)
#define GROUP (8 / SEG)
#define COLS (WARPS / KW * GROUP * CPW)
#define OUT_T %s
typedef unsigned int u32;
typedef unsigned short u16;

%s
AIT_DEV void mma16816(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, {%%0, %%1, %%2, %%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Lane (g, t) loads k [8t, 8t + 8) of a 32-k chunk (VEC 8; [4t, 4t + 4) of
// 16 for VEC 4) of weight row g of each group and of A rows g and g + 8.
// mma step s takes words 2s and 2s + 1: as the fragments' k pairs (2t, 2t+1)
// and (2t+8, 2t+9) they stand for physical k 8t+4s+{0,1} and 8t+4s+{2,3}, in
// A and B alike.
// The weights of one step (UNROLL chunks of each of the CPW rows).
template<bool V> AIT_DEV void load_w(u32 (&bw)[UNROLL][CPW][NW], const u16* const (&brow)[CPW], const bool (&bok)[CPW],
                                     long long k0, long long ke, int t) {
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    const long long kk = k0 + u * CHUNK + VEC * t;
#pragma unroll
    for (int c = 0; c < CPW; c++) ld_piece<V, true>(bw[u][c], brow[c], kk, ke, bok[c]);
  }
}

// One step: A's pieces of it, then the mma.
template<bool V> AIT_DEV void step(float (&acc)[CPW][4], const u32 (&bw)[UNROLL][CPW][NW], const u16* __restrict__ alo,
                                   const u16* __restrict__ ahi, bool oklo, bool okhi, bool hi_rows, long long k0,
                                   long long ke, int t) {
  u32 aw[UNROLL][2][NW];
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    const long long kk = k0 + u * CHUNK + VEC * t;
    ld_piece<V, false>(aw[u][0], alo, kk, ke, oklo);
    if (hi_rows) ld_piece<V, false>(aw[u][1], ahi, kk, ke, okhi);
    else {
#pragma unroll
      for (int i = 0; i < NW; i++) aw[u][1][i] = 0u;
    }
  }
  __syncwarp();   // mma.sync is .aligned: the predicated loads above may diverge
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int s = 0; s < VEC / 4; s++)
#pragma unroll
      for (int c = 0; c < CPW; c++)
        mma16816(acc[c], aw[u][0][2 * s], aw[u][1][2 * s], aw[u][0][2 * s + 1], aw[u][1][2 * s + 1],
                 bw[u][c][2 * s], bw[u][c][2 * s + 1]);
}

// This warp's steps of [kb, ke): every KW-th from its own. (Requesting the
// next step's weights before this step's mma, in a second register set, was
// measured no faster on the H100 and spilled at unroll 4: bench/RESULTS.md.)
template<bool V> AIT_DEV void mainloop(float (&acc)[CPW][4], const u16* __restrict__ alo, const u16* __restrict__ ahi,
                                       bool oklo, bool okhi, bool hi_rows, const u16* const (&brow)[CPW],
                                       const bool (&bok)[CPW], long long kb, long long ke, int t, int wk) {
  const long long stride = (long long)KW * UNROLL * CHUNK;
  long long k0 = kb + (long long)wk * UNROLL * CHUNK;
  for (; k0 < ke; k0 += stride) {
    u32 bw[UNROLL][CPW][NW];
    load_w<V>(bw, brow, bok, k0, ke, t);
    step<V>(acc, bw, alo, ahi, oklo, okhi, hi_rows, k0, ke, t);
  }
}
#if LEAN
// A segment is 4 VEC k: lane (g, t) loads k [VEC t, VEC t + VEC) of it (16
// or 8 bytes), for A rows g and g + 8. mma step s takes words 2s and 2s + 1:
// as the fragments' k pairs (2t, 2t+1) and (2t+8, 2t+9) they stand for
// physical k VEC t+4s+{0,1} and VEC t+4s+{2,3}, in A and B alike.
// A group is GROUP weight rows, a load SEG segments of each: lane (g, t)
// loads segment g %% SEG of row g / SEG (SEG 1: row g; SEG 2: a warp load is
// 4 rows x 8 VEC k). Column g of a group's mma is then "segment g %% SEG of
// row g / SEG": the mma of segment s takes A's fragment of s and, as B, the
// words of the lanes of segment s only (zeros from the others), so the
// other columns add nothing and one accumulator serves every segment; a
// row's SEG columns are added at the end.
// The mma of segment q of one chunk: A's fragment a, the chunk's weights.
AIT_DEV void mma_seg(float (&acc)[CPW][4], const u32 (&a)[2][NW], const u32 (&bw)[CPW][NW], int q, int sl) {
  const u32 keep = (SEG == 1 || sl == q) ? 0xffffffffu : 0u;
#pragma unroll
  for (int s = 0; s < VEC / 4; s++)
#pragma unroll
    for (int c = 0; c < CPW; c++)
      mma16816(acc[c], a[0][2 * s], a[1][2 * s], a[0][2 * s + 1], a[1][2 * s + 1], bw[c][2 * s] & keep,
               bw[c][2 * s + 1] & keep);
}

// lean: a step wholly inside the vector range, loads without tests (rows
// past n or m read row 0, and their sums are never stored) from the
// lane's pointers wp (weights) and pl, ph (A's rows g and g + 8); each
// segment's A loaded just before its mma (fewer registers live).
AIT_DEV void step_full(float (&acc)[CPW][4], const u16* const (&wp)[CPW], const u16* __restrict__ pl,
                       const u16* __restrict__ ph, bool hi_rows, int sl) {
  u32 bw[UNROLL][CPW][NW];
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int c = 0; c < CPW; c++) vld_w(bw[u][c], wp[c] + u * CHUNK);
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int q = 0; q < SEG; q++) {
      u32 a[2][NW];
      vld_a(a[0], pl + u * CHUNK + q * 4 * VEC);
      if (hi_rows) vld_a(a[1], ph + u * CHUNK + q * 4 * VEC);
      else {
#pragma unroll
        for (int i = 0; i < NW; i++) a[1][i] = 0u;
      }
      mma_seg(acc, a, bw[u], q, sl);
    }
}

// lean: whole steps of [kb, ke) by vector loads without tests (rows past n
// or m read row 0; their sums are never stored), then the rest (all of it
// when !vec) on the FMA pipe, k by k, each lane adding its own fragment
// entries: few registers, so minb 4 leaves 64 a thread at 8 warps (4
// blocks an SM). Column j of group c is weight row GROUP c + j / SEG
// (SEG 2: the rest goes to the even columns, added to the odd at the end).
AIT_DEV void lean_loop(float (&acc)[CPW][4], const u16* __restrict__ A, long long r0, long long m, bool hi_rows,
                       const u16* const (&brow)[CPW], const u16* __restrict__ B, long long col0, long long n, long long k,
                       long long kb, long long ke, int t, int wk, int lk, int sl, bool vec) {
  // A's rows g and g + 8 (row 0 past m) are derived where they are used,
  // not kept across the mainloop: at minb 4 that is what keeps seg 2 at
  // unroll 2 from spilling.
  long long kv = kb;
  const int g = (threadIdx.x & 31) >> 2;
  if (vec) {
    const u16* alo = A + (r0 + g < m ? (r0 + g) * k : 0);
    const u16* ahi = A + (r0 + g + 8 < m ? (r0 + g + 8) * k : 0);
    // Pointers walk the steps; a 32-bit count ends the loop.
    const long long stride = (long long)KW * UNROLL * CHUNK, k0 = kb + (long long)wk * UNROLL * CHUNK;
    kv = kb + (ke - kb) / (UNROLL * CHUNK) * (UNROLL * CHUNK);
    const int steps = k0 < kv ? (int)((kv - k0 + stride - 1) / stride) : 0;
    const u16* wp[CPW];
#pragma unroll
    for (int c = 0; c < CPW; c++) wp[c] = brow[c] + k0 + VEC * lk;
    const u16* pl = alo + k0 + VEC * t;
    const u16* ph = ahi + k0 + VEC * t;
#pragma unroll 1
    for (int i = 0; i < steps; i++) {
      step_full(acc, wp, pl, ph, hi_rows, sl);
#pragma unroll
      for (int c = 0; c < CPW; c++) wp[c] += stride;
      pl += stride;
      ph += stride;
    }
  }
  const u16* alo = A + (r0 + g < m ? (r0 + g) * k : 0);
  const u16* ahi = A + (r0 + g + 8 < m ? (r0 + g + 8) * k : 0);
#pragma unroll 1
  for (long long kk = kv + wk; kk < ke; kk += KW) {
    const float xlo = LD_IN(alo[kk]), xhi = hi_rows ? LD_IN(ahi[kk]) : 0.0f;
#pragma unroll
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int j = 0; j < 2 / SEG; j++) {
        const long long col = min(col0 + GROUP * c + (2 * t + j) / SEG, n - 1);
        const float w = LD_IN(B[col * k + kk]);
        acc[c][j] = fmaf(xlo, w, acc[c][j]);
        acc[c][2 + j] = fmaf(xhi, w, acc[c][2 + j]);
      }
  }
}
#endif
%s
extern "C" __global__ void __launch_bounds__(WARPS * 32%s) %s(%s) {
  pdl_launch();
#if APF
  // A asked of L2 at once, a 128-byte line a lane of each block's first
  // warp, the blocks in turn (and the line of A's last byte, whatever its
  // alignment). Before the wait, as l2pre's weights: L2 is where the
  // previous kernel's writes land, so no later load can be stale; first
  // thing, while nothing else is live (after the pointers, ptxas spilled).
  if (threadIdx.x < 32) {
    const unsigned long long bytes = (unsigned long long)(m * k) * sizeof(u16);
    const unsigned long long step = 4096ull * gridDim.x * gridDim.y;
    for (unsigned long long off = 128ull * (threadIdx.x + 32ull * (blockIdx.x + blockIdx.y * gridDim.x));
         off < bytes + 128; off += step)
      l2_prefetch((const char*)A + (off < bytes ? off : bytes - 1));
  }
#endif
#if KW > 1
  __shared__ float red[WARPS][CPW * 4][32];
#endif
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int wc = warp / KW, wk = warp %% KW, lk = lane %% (4 * SEG), sl = g %% SEG;
  const long long cb = (long long)blockIdx.x * COLS;
  const long long col0 = cb + wc * (GROUP * CPW);
  // This block's k range: whole chunks, SPLITK ways.
  const long long nch = (k + CHUNK - 1) / CHUNK, per = (nch + SPLITK - 1) / SPLITK;
  const long long kb = min(k, (long long)blockIdx.y * per * CHUNK), ke = min(k, kb + per * CHUNK);
  const bool vec = (k %% VEC == 0) && ((((unsigned long long)A) | ((unsigned long long)B)) %% (2 * VEC) == 0);
  const u16* brow[CPW];
  bool bok[CPW];
#pragma unroll
  for (int c = 0; c < CPW; c++) {
    const long long col = col0 + GROUP * c + g / SEG;
    bok[c] = col < n;
    brow[c] = B + (bok[c] ? col * k : 0);
  }
#if L2PRE
  // The first L2PRE steps' weights asked of L2 before the wait: L2 is where
  // the previous kernel's writes land, so nothing stale can be read later,
  // and nothing is read into this SM before the wait.
  if (col0 < n) {
#pragma unroll
    for (int s = 0; s < L2PRE; s++)
#pragma unroll
      for (int u = 0; u < UNROLL; u++)
#pragma unroll
        for (int c = 0; c < CPW; c++) {
          const long long kk = kb + ((long long)s * KW + wk) * UNROLL * CHUNK + u * CHUNK + VEC * lk;
          if (bok[c] && kk < ke) l2_prefetch(brow[c] + kk);
        }
  }
#endif
  pdl_wait();
  unsigned* ticket = (unsigned*)ws;
  float* part = (float*)((char*)ws + 4 * n + 64);
  // Sixteen rows of A per pass (one pass for decode shapes; more only when a
  // larger m reaches this kernel through its bucket).
  for (long long r0 = 0; r0 < m; r0 += 16) {
    float acc[CPW][4];
#pragma unroll
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int i = 0; i < 4; i++) acc[c][i] = 0.0f;
    const bool oklo = r0 + g < m, okhi = r0 + g + 8 < m;
    const u16* alo = A + (oklo ? (r0 + g) * k : 0);
    const u16* ahi = A + (okhi ? (r0 + g + 8) * k : 0);
    if (col0 < n) {   // warp-uniform: warps wholly past n skip the stream
#if LEAN
      lean_loop(acc, A, r0, m, m - r0 > 8, brow, B, col0, n, k, kb, ke, t, wk, lk, sl, vec);
#else
      if (vec) mainloop<true>(acc, alo, ahi, oklo, okhi, m - r0 > 8, brow, bok, kb, ke, t, wk);
      else mainloop<false>(acc, alo, ahi, oklo, okhi, m - r0 > 8, brow, bok, kb, ke, t, wk);
#endif
    }
#if KW > 1
    // The kw warps of a column slot: their sums in warp order, by the first.
#pragma unroll
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int i = 0; i < 4; i++) red[warp][4 * c + i][lane] = acc[c][i];
    __syncthreads();
    if (wk == 0) {
#pragma unroll
      for (int c = 0; c < CPW; c++)
#pragma unroll
        for (int i = 0; i < 4; i++)
          for (int j = 1; j < KW; j++) acc[c][i] += red[warp + j][4 * c + i][lane];
    }
    __syncthreads();   // red is reused by the next pass of 16 rows
    if (wk != 0) continue;
#endif
#if SEG == 1
    // Fragment of D: rows g and g + 8, columns 2t and 2t + 1 of each group.
#pragma unroll
    for (int c = 0; c < CPW; c++) {
      const long long col = col0 + 8 * c + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const long long row = r0 + g + 8 * h;
        if (row < m) {
          if (SPLITK == 1) {
            if (col < n) D[row * n + col] = st_out(acc[c][2 * h]);
            if (col + 1 < n) D[row * n + col + 1] = st_out(acc[c][2 * h + 1]);
          } else {
            float* q = part + ((long long)blockIdx.y * m + row) * n;
            if (col < n) q[col] = acc[c][2 * h];
            if (col + 1 < n) q[col + 1] = acc[c][2 * h + 1];
          }
        }
      }
    }
#else
    // Fragment of D: rows g and g + 8, columns 2t and 2t + 1 of each group,
    // the two segments of weight row t: added, then stored.
#pragma unroll
    for (int c = 0; c < CPW; c++) {
      const long long col = col0 + GROUP * c + t;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const long long row = r0 + g + 8 * h;
        const float v = acc[c][2 * h] + acc[c][2 * h + 1];
        if (row < m && col < n) {
          if (SPLITK == 1) D[row * n + col] = st_out(v);
          else part[((long long)blockIdx.y * m + row) * n + col] = v;
        }
      }
    }
#endif
  }
  if (SPLITK > 1) splitk_finish(part, ticket, D, m, n, cb, COLS);
}
]], p.warps, p.kw, p.cpw, p.vec, p.seg, p.unroll, p.splitk, p.pdl, p.l2pre, p.apf, p.lean, p.minb, t.In, dtype.ctype(t.Out),
    M.ld_piece_src(vld_w, vld_a) .. (p.lean == 1 and ("AIT_DEV void vld_w(u32 (&w)[NW], const u16* p) { " .. vld_w ..
    " }\nAIT_DEV void vld_a(u32 (&w)[NW], const u16* p) { " .. vld_a .. " }\n") or ""), t.In, t.In,
    pdl_fn .. finish_fn,
    p.minb > 0 and ", MINB" or "", name, kernel.params(op, dt, true))
end

local function nn_source(op, p, dt, dev, name)
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
  return dtype.prelude .. store_fn(t) .. string.format([[
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
]], p.warps, p.vec, p.mmax, p.unroll, p.splitk, p.csplit, p.pdl, p.l2pre, dtype.ctype(t.Out), t.In, M.unpack_fn,
    M.ld_piece_src(vld_w, vld_w),
    (p.csplit > 1 and lib("cluster").ptx or "") .. pdl_fn .. finish_fn,
    name, kernel.params(op, dt, true))
end

-- The family table for an op of lib/gemm.lua.
function M.family(op)
  local layout = op.layout
  local t = {
    op = op.name,
    name = "gemv",
    min_cc = 80,
    dtypes = op.dtypes,
    params = layout == "nt" and nt_params or nn_params,
  }
  t.constraints = function(p, shape, dt, dev) return constraints(layout, p, shape, dt, dev) end
  t.supports = supports
  t.workspace = function(p, shape, dt, dev)
    if p.splitk == 1 then return 16 end
    return ticket_bytes(shape.n) + 4 * p.splitk * shape.m * shape.n
  end
  t.launch = function(p, dt, dev)
    -- Without split-K the workspace is never touched: nothing to zero.
    local cs = p.csplit or 1
    return { grid = { string.format("cdiv(n, %d)", cols_per_block(layout, p)), p.splitk * cs, 1 },
             block = { 32 * p.warps, 1, 1 }, cluster = { 1, cs, 1 }, smem = 0,
             zero = p.splitk == 1 and "0" or nil, pdl = p.pdl == 1 }
  end
  t.source = function(p, dt, dev, name)
    if layout == "nt" then return nt_source(op, p, dt, dev, name) end
    return nn_source(op, p, dt, dev, name)
  end
  t.default = function(shape, dt, dev)
    if layout == "nt" then
      -- A weight wide enough for a block of 16 columns per SM, rows of
      -- whole vectors: the config measured fastest at 16 x 4096^2 as a
      -- stream (12.76-12.89 us, bench/RESULTS.md, fourteenth session), so a
      -- search that misses it in a space this size still races it.
      if (shape.n + 15) // 16 >= (dev.sms or 132) and shape.k % 8 == 0 then
        local q = kernel.first_valid(t, shape, dt, dev, { vec = 8, seg = 2, lean = 1, minb = 2, warps = 8, cpw = 4, l2pf = 0,
                                                          splitk = 1, unroll = 2, apf = 1 },
          { { "pdl", { 1, 0 } }, { "l2pre", { 2, 1, 0 } }, { "kw", { 8, 4, 2, 1 } } })
        if q then return q end
      end
      -- 8 warps x 2 groups x 4 chunks: 4 KB of weights in flight per warp,
      -- two 256-thread blocks per SM at 8-way split-K of a 4096-wide weight.
      return kernel.first_valid(t, shape, dt, dev, { vec = 8, seg = 1, lean = 0, minb = 0, warps = 8, l2pf = 256, kw = 1, pdl = 0, l2pre = 0, apf = 0 },
        { { "splitk", { 8, 4, 16, 2, 1 } }, { "cpw", { 2, 1, 4 } }, { "unroll", { 4, 2, 1 } } })
    end
    local mm = 1
    while mm < shape.m and mm < 8 do mm = mm * 2 end
    return kernel.first_valid(t, shape, dt, dev, { mmax = mm, warps = 4, csplit = 1, pdl = 0, l2pre = 0 },
      { { "vec", { 8, 4, 2 } }, { "splitk", { 8, 16, 4, 32, 2, 1 } }, { "unroll", { 2, 1 } } })
  end
  return t
end

return M
