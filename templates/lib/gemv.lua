-- GEMV-style kernels for decode shapes (m <= 16) of both layouts of
-- lib/gemm.lua: the weight B is streamed from HBM once, as wide loads with
-- several of them in flight per thread, while the few rows of A stay in L1.
--
-- This file holds what both layouts share (and lib/rowdot.lua and
-- lib/swapab.lua use): the family table, the constraints common to
-- both, the split-K tail, programmatic dependent launch, the loads of a
-- row's piece. Each layout's kernel, params and default are in its op's
-- folder: templates/gemm_nt/gemv.lua, templates/gemm_nn/gemv.lua.
--
-- Both, l2pre 1 (with pdl): before the wait, each lane asks L2 for its
-- first step's weights (prefetch.global.L2). L2 is where the previous
-- kernel's writes land, so a prefetch never makes a later load stale, and
-- nothing is read into the SM before the wait; the weights' first DRAM
-- round trip then overlaps the previous kernel's tail (16 x 4096^2: 14.42
-- -> 13.39 us, bench/archive/RESULTS-2026.md). nt, l2pre 2 and 4: the first 2 or 4
-- steps, so more of a block's weights are on their way while the previous
-- kernel ends. nt, apf 1: first thing, each block's first warp asks L2
-- for 4 KB of A (block b the b-th 4 KB), so A, which every block reads,
-- is fetched from DRAM once, at the start, and not step by step on each
-- block's critical path (same reasoning as l2pre: L2 only). At 16 x
-- 4096^2, apf 1 with l2pre 2-4: 12.76-12.84 us (2.61-2.63 TB/s) against
-- 13.13-13.28 with l2pre 1 (bench/archive/RESULTS-2026.md, "gemv nt: deeper `l2pre`,
-- `apf`, `minb 2`, and a decode default").
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
-- tail is predicated. supports() offers the family up to a layout's max_m
-- (nn 16; nt 64, where `mt` tiles of 16 rows share each weight load), but
-- the kernels take any m (passes of 16 mt rows, nt; of mmax rows, nn),
-- since a bucket's winner may meet a larger m of its bucket.
local dtype = lib("dtype")
local M = {}

M.MAX_M = 16

-- Bytes of tickets in front of the partials (one per column tile; a tile is
-- at least 8 columns, so n of them always suffice).
local function ticket_bytes(n) return 4 * n + 64 end

-- The checks of both layouts, in order: the layout's register estimate
-- against its limit, its own checks (L.check), pdl and split-K, then its
-- checks that need the step and the column tiles (L.check_tiles).
local function constraints(L, p, shape, dt, dev)
  if L.reg_estimate(p) > L.reg_limit then
    return false, string.format("about %d registers per thread", L.reg_estimate(p))
  end
  if L.check then
    local ok, why = L.check(p, shape, dt, dev)
    if ok == false then return false, why end
  end
  local ok, why = M.pdl_constraints(p, dev)
  if ok == false then return false, why end
  if p.pdl == 1 and p.splitk > 1 then return false, "pdl with split-K: its workspace is zeroed between launches" end
  local step = L.step(p)
  if p.splitk > 1 and shape.k // p.splitk < step then
    return false, "a split of k shorter than one step"
  end
  local tiles = (shape.n + L.cols_per_block(p) - 1) // L.cols_per_block(p)
  if p.splitk > 1 and tiles >= 2 * (dev.sms or 132) then
    return false, "enough column tiles to fill the GPU without split-K"
  end
  if L.check_tiles then
    local ok2, why2 = L.check_tiles(p, shape, dt, dev, step, tiles)
    if ok2 == false then return false, why2 end
  end
  return true
end

local function supports(max_m)
  return function(shape, dt, dev)
    if (dev.cc or 0) < 80 then return false, "mma.sync bf16 needs sm_80" end
    if shape.m > max_m then return false, string.format("m > %d: not a decode shape", max_m) end
    return true
  end
end

function M.store_fn(t)
  return string.format("AIT_DEV %s st_out(float v) { return st_%s(v); }\n", dtype.ctype(t.Out), t.Out)
end

-- Programmatic dependent launch (PDL: the kernel's source defines it 0 or
-- 1), for both layouts and lib/rowdot.lua, and l2pre's prefetch.
M.pdl_fn = [[
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

-- The pdl and l2pre rules every family of this file, lib/rowdot.lua and
-- lib/swapab.lua keeps: false and the reason when p breaks one, else nil.
function M.pdl_constraints(p, dev)
  if p.pdl == 1 and (dev.cc or 0) < 90 then return false, "griddepcontrol needs sm_90" end
  if p.l2pre > 0 and p.pdl == 0 then return false, "l2pre is for pdl: without it there is no wait to hide" end
  return nil
end

-- The split-K tail both layouts share: every block has written its partials
-- for its columns [cb, cb + ncols); the last one adds them in split order.
M.finish_fn = [[
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
-- lib/rowdot.lua.
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

-- The family table of one layout's gemv for op (an op of lib/gemm.lua). L,
-- the layout: params; max_m, the largest m supports() offers (default
-- MAX_M); cols_per_block(p); reg_estimate(p) and reg_limit;
-- step(p), the k of one step; check and check_tiles (constraints above);
-- source(op, p, dt, dev, name); default(t, shape, dt, dev).
function M.family(op, L)
  local t = {
    op = op.name,
    name = "gemv",
    min_cc = 80,
    dtypes = op.dtypes,
    params = L.params,
  }
  t.constraints = function(p, shape, dt, dev) return constraints(L, p, shape, dt, dev) end
  t.supports = supports(L.max_m or M.MAX_M)
  t.workspace = function(p, shape, dt, dev)
    if p.splitk == 1 then return 16 end
    return ticket_bytes(shape.n) + 4 * p.splitk * shape.m * shape.n
  end
  t.launch = function(p, dt, dev)
    -- Without split-K the workspace is never touched: nothing to zero.
    local cs = p.csplit or 1
    return { grid = { string.format("cdiv(n, %d)", L.cols_per_block(p)), p.splitk * cs, 1 },
             block = { 32 * p.warps, 1, 1 }, cluster = { 1, cs, 1 }, smem = 0,
             zero = p.splitk == 1 and "0" or nil, pdl = p.pdl == 1 }
  end
  t.source = function(p, dt, dev, name) return L.source(op, p, dt, dev, name) end
  t.default = function(shape, dt, dev) return L.default(t, shape, dt, dev) end
  t.narrow = L.narrow
  return t
end

return M
