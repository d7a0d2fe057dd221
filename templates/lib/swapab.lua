-- Swap-AB GEMM (nt, sm_90a): D = A·Bᵀ for small and mid-size m, with the
-- weight B in wgmma's M dimension and the m rows of A in its N dimension
-- (wgmma m64nBNk16, BN = 8..256), so a decode step's 1..64 rows fill the
-- narrow side of the tensor-core tile instead of 64-row tiles that are
-- mostly padding (lib/wgmma.lua), and up to 256 rows are served by one
-- stream of the weight. Three kernels: the decode kernel (bn <= 64, below),
-- the mid-size kernel (bn > 64, "The mid-size kernel" further down) and
-- the second mid-size kernel (bn > 64 and mc >= 1, lib/swapab_mid.lua
-- above MID2_HOST; searched, not the default: lib/swapab_default.lua).
--
-- This file is the family: its space, rules, launches and defaults' entry.
-- The kernels' sources are lib/swapab_decode.lua (the decode kernel and
-- its gated form) and lib/swapab_mid.lua (both mid-size kernels), the
-- defaults lib/swapab_default.lua, the sizes all share lib/swapab_geom.lua.
--
-- A CTA owns BM rows of B (BM columns of D) and, with csplit > 1, one of
-- csplit slices of k. One producer warp's elected lane streams BM x 64
-- boxes of B and the matching boxes of A (BN x 64, or fewer rows: a_box)
-- through TMA (128-byte swizzle; boxes past n or k are zero-filled), `kbox` of each per slot,
-- into a ring of `stages` slots, each with a `full` and an `empty`
-- mbarrier; one consumer warpgroup issues kbox x BM/64 x 4 wgmma per slot
-- and releases a slot once its group has retired, either at once (inflight
-- 0) or after the next slot's group is issued (inflight 1: one group in
-- flight). What TMA streams fastest is many bytes in flight per SM (about
-- 128 KB), not long runs of each row: boxes of 1 KB x 8 rows stream no
-- faster than 128 B x 64 rows (bench/tma_rows.sh, bench/archive/RESULTS-2026.md).
--
-- Split-K over a cluster (csplit, 1 x csplit CTAs along gridDim.y): CTA 0
-- of the cluster owns the tile's output. Every other CTA stores its fp32
-- sums into CTA 0's shared memory (red, one slice per rank, through
-- distributed shared memory) and arrives on CTA 0's `rbar` mbarrier with
-- release semantics at cluster scope, then exits; CTA 0 waits on rbar, adds
-- its own sums and the slices in rank order (deterministic) and stores D.
-- No workspace, so it goes with pdl. The only cluster-wide barrier is split
-- around the mainloop (arrive after the mbarriers are initialized, wait
-- before the first remote store), so nobody waits on it: a pair of full
-- cluster barriers at the end cost about 2 us per launch at 16 x 4096^2
-- (bench/archive/RESULTS-2026.md, "`swapab`: the weight in wgmma's M dimension").
--
-- pdl 1: programmatic dependent launch, as lib/gemv.lua's (nothing read or
-- written before griddepcontrol.wait). l2pre > 0 (with pdl): before the
-- wait, the producer asks L2 for its first l2pre boxes of B
-- (cp.async.bulk.prefetch.tensor), so their DRAM round trip overlaps the
-- previous kernel's tail; L2 is where that kernel's writes land, so no
-- later read can be stale.
--
-- evict 1 (any kernel): the producer loads B's boxes evict-first in L2
-- (lib/hopper.lua's tma_load_w). The weight is read once; A, which every
-- CTA reads, and the split's sums stay in L2. On an H200 (twenty-seventh
-- session, bench/results/2026-11-29/s27/evict) the decode kernel ran 2-4%
-- faster at m = 16 and 48, the mid-size kernel 1-8% faster at one tile of
-- rows (one 16% loss at 14336 x 4096, m = 248 was not reproduced: 5%
-- faster in the twenty-eighth session). Searched, and both kernels'
-- defaults set it (lib/swapab_default.lua, with an L2 prefetch).
-- Refused where the weight is read again (tiles of rows, m > bn) and in
-- the gated product (its 4-D boxes take no hint).
--
-- m > BN takes passes of BN rows of A, each streaming B again: the kernel
-- runs any m of its bucket, and constraints keep the search at one pass.
-- TMA needs 16-byte row strides: k must be a multiple of 8 (supports), and
-- A and B 16-byte aligned (the launch plan checks at bind).
--
-- The mid-size kernel (bn 96..256, m up to 256): the same ring, producer
-- warp and params, with one consumer warpgroup per 64 rows of B (BM/64 of
-- them, each holding 64 x BN fp32 sums: BN/2 registers a thread, at most
-- 128, so bm 128 with bn 256 takes two warpgroups and bm 256 stops at bn
-- 128) and a split-K over the cluster that spreads the adding: chunk c of
-- every thread's sums (acc[4c .. 4c+3], rows 8c .. 8c+7 of A) belongs to
-- rank c / CPR. After its mainloop every CTA arrives on one cluster barrier
-- and waits for it: then no ring of the cluster is read or written any
-- more, and each rank's ring becomes `red`, where every other rank stores
-- (16-byte remote stores) the chunks that rank owns and arrives on the
-- owner's rbar. An owner adds the CS parts of its chunks in rank order
-- (deterministic) and stores them. The tile's whole sums never pass
-- through one SM and need no shared memory besides the ring (a 128 x 256
-- tile's sums are 128 KB). The barrier costs waiting for the slowest CTA
-- of the cluster, which the owner of a tile waits for anyway. m > BN: more
-- tiles of rows (at most MAX_Z), the rows split evenly over them (m / tiles
-- rounded up to 8 each: mid_box), no passes; a column tile's tiles of rows
-- are neighbours along gridDim.x, so they stream its weight boxes together.
-- nvar > 1: the consumers run at the narrowest of nvar widths (bn down to
-- bn/2, lib/swapab_geom.lua) that holds a tile's rows, chosen at run time,
-- as the second kernel's do (on an H200, seventeenth session, call 8: 1000
-- x 1096 at m = 77 and 137 ran 15-18% faster with nvar 5 than with one
-- width; at 14336 x 4096, where the weight's stream sets the time, the width
-- next above m at nvar 1 stayed the fastest).
--
-- The gated product (op.swiglu, gemm_swiglu: B = [G; U], 2n x k; see
-- lib/gemm.lua) runs the decode kernel over 2n rows of B loaded as 4-D
-- boxes (lib/hopper.lua: groups of 8 gate rows, each followed by the same
-- 8 up rows), so warp w's rows g and g + 8 of a 64-row slab are a gate row
-- and its up row: the thread that holds one sum holds its pair, and the
-- store (after the split-K adding) writes SiLU(gate) * up, BM/2 columns of
-- D a CTA. Only the decode kernel (bn <= 64, m <= 64) takes it.
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local hopper = lib("hopper")
local gemv = lib("gemv")
local geom = lib("swapab_geom")
local BK, sizes, mid, mid_sizes, mid2 = geom.BK, geom.sizes, geom.mid, geom.mid_sizes, geom.mid2
local decode = lib("swapab_decode")
local mids = lib("swapab_mid")
local defaults = lib("swapab_default")
local M = {}

M.MAX_M = 256

M.params = {
  { "bm", { 64, 128, 256 } },     -- rows of B (columns of D) per CTA
  { "bn", { 8, 16, 24, 32, 40, 48, 64, 96, 128, 160, 192, 224, 256 } },  -- rows of A per pass (wgmma N); > 64: the mid-size kernel
  -- slots in the TMA ring; 5 is the mid-size kernel's most at bn 192 and
  -- 224 (1.3-1.5% faster than 4 at 14336 x 4096, m = 160..224, on an H200:
  -- bench/results/2026-11-29/s17-stages-call7)
  { "stages", { 2, 4, 5, 6, 8, 12, 16 } },
  { "csplit", { 1, 2, 4, 8 } },   -- split-K over a cluster, added through distributed shared memory
  { "pdl", { 0, 1 } },            -- programmatic dependent launch
  { "l2pre", { 0, 1, 2, 4, 8 } },  -- pdl: boxes of B prefetched into L2 before the wait (16 and 32 measured slower)
  { "inflight", { 0, 1 } },       -- wgmma groups left running when a slot is released
  { "kbox", { 1, 2, 4 } },        -- 64-k boxes of B (and of A) per slot: one mbarrier round per kbox boxes
  { "mc", { 0, 1, 2, 4 } },       -- mid-size: 0 the first kernel; 1, 2, 4 the second, A multicast to mc column tiles
  { "nvar", { 1, 2, 3, 5 } },     -- mid-size kernels: wgmma widths (bn down to bn/2) chosen among at run time
  { "wstep", { 0, 8, 16 } },      -- nvar > 1: 0 those widths in equal steps to bn/2; 8, 16 in steps of wstep
  { "evict", { 0, 1 } },          -- 1: the weight's boxes evict-first in L2 (read once: lib/hopper.lua's tma_load_w)
}

-- Registers a thread of the mid-size kernel may have (one CTA an SM:
-- ptxas allots them to whole warpgroups, so the producer warp of a bm 256
-- CTA counts as four: 544 threads have 96, not 120) and the fewest it needs:
-- its BN/2 sums and 26 more, what ptxas 13.0 squeezed bm 256's kernels to
-- (bn 96: 74, bn 128: 90; bn 160 needed 106 and failed to compile at 96;
-- tests/cli/swapab_mid.sh). Below the cap ptxas takes more (up to BN/2 + 58).
-- Why p's shared memory does not fit dev's (nil: it fits): the mid-size
-- kernels' ring and barriers (mid_sizes), the decode kernel's with its
-- split's sums (sizes).
local function smem_refusal(p, dev)
  local bytes = mid(p) and mid_sizes(p).smem or select(2, sizes(p))
  local cap = dev and dev.smem_optin or 232448
  if bytes > cap then return string.format("%d bytes of shared memory (at most %d)", bytes, cap) end
  return nil
end

local function mid_constraints(p, shape, dt, dev)
  local z = mid_sizes(p)
  local cap = math.min(255, 65536 // ((z.threads + 127) // 128 * 128) // 8 * 8)
  if p.bn // 2 + 26 > cap then
    return false, string.format("at least %d registers a thread, %d threads have %d", p.bn // 2 + 26, z.threads, cap)
  end
  -- Measured with ptxas 13.0: the first kernel's widths beside a split of
  -- 4 or 8 at bm 256 (96 registers a thread) spill 8-40 bytes.
  if (p.mc or 0) == 0 and (p.nvar or 1) > 1 and p.bm == 256 and p.csplit >= 4 then
    return false, "spills (nvar widths, split-K 4 or 8, 96 registers at bm 256)"
  end
  if z.red > z.ring then return false, string.format("the split's %d bytes of sums do not fit the ring", z.red) end
  local why = smem_refusal(p, dev)
  if why then return false, why end
  return true
end
-- The rules on a mid-size kernel's nvar widths at bn (nil: none broken):
-- widths that wgmma has (wstep 0's equal steps multiples of 8); wstep's
-- steps only between two widths or more, none narrower than bn/2 (as nvar's
-- equal steps end; a part of a range is tuned at its upper edge, and bn 2m
-- is refused as twice the rows needed).
local function widths_refusal(bn, nv, ws)
  if ws ~= 0 and nv == 1 then return "wstep steps between nvar widths: nvar 1 has one" end
  if ws ~= 0 and 2 * (bn - ws * (nv - 1)) < bn then
    return string.format("bn %d down %d widths in steps of %d: narrower than bn/2", bn, nv, ws)
  end
  if nv > 1 and ws == 0 and bn % (16 * (nv - 1)) ~= 0 then
    return string.format("bn %d in %d widths: not multiples of 8", bn, nv)
  end
  return nil
end
-- The mid-size kernels' own rules (nil when p keeps them): mc, nvar and
-- wstep only there, the widths' rules (widths_refusal); for the second
-- kernel a cluster of at most 8 CTAs (mc column tiles x csplit slices of k,
-- the portable size) and no multicast group wider than the column tiles.
local function mid2_constraints(p, shape)
  local mc, nv, ws = p.mc or 0, p.nvar or 1, p.wstep or 0
  if not mid(p) and (mc ~= 0 or nv ~= 1 or ws ~= 0) then
    return false, "mc, nvar and wstep are the mid-size kernel's (bn > 64)"
  end
  local why = widths_refusal(p.bn, nv, ws)
  if why then return false, why end
  if mc == 0 then return nil end
  if mc * p.csplit > 8 then return false, string.format("a cluster of %d CTAs (at most 8)", mc * p.csplit) end
  if mc > 1 and (shape.n + p.bm - 1) // p.bm < mc then return false, "fewer column tiles than the multicast group" end
  return nil
end

-- The first mid-size kernel serves m > bn with tiles of rows (at most
-- MAX_Z), each CTA streaming its weight tile again, from L2 since the tiles
-- of one column are neighbours in the grid; the decode kernel would make passes,
-- each streaming the weight again, and the second mid-size kernel keeps m
-- within one pass.
local MAX_Z = 2

-- The rules on bn at a task's m alone (nil: none broken): a pass of bn rows
-- holds m, or above 64 its tiles of rows do (the second mid-size kernel's
-- own rule, mc >= 1, is in constraints), and m needs at least half of bn.
local function bn_refusal(bn, m)
  if m > bn and bn <= 64 then return "m is larger than the rows of one pass" end
  if m > MAX_Z * bn then return string.format("more than %d tiles of rows", MAX_Z) end
  if bn >= 2 * m and bn > 8 then return "twice the rows needed compiled in" end
  return nil
end

-- The values the constraints below leave a task's m (search/space.lua,
-- narrow: a value refused at every config of the task is never drawn): the
-- bn bn_refusal takes, and the mid-size kernels' mc and nvar only where a
-- bn above 64 is left. At m = 8 the domain went from 898560 indices (1200
-- valid) to 4320 when stages had six values; the walk that found those 1200
-- took 7 s of Lua a bucket. decode_only: the gated product's (bn <= 64).
local BN_VALUES = kernel.values(M.params, "bn")
local NVARS = kernel.values(M.params, "nvar")
local function narrow_for(m, decode_only)
  local bns, wide = {}, false
  for _, bn in ipairs(BN_VALUES) do
    if not bn_refusal(bn, m) and not (decode_only and bn > 64) then
      bns[#bns + 1] = bn
      wide = wide or bn > 64
    end
  end
  local keep = { bn = bns, evict = decode_only and { 0 } or nil }
  if not wide then keep.mc, keep.nvar, keep.wstep = { 0 }, { 1 }, { 0 } end
  return keep
end

local function constraints(p, shape, dt, dev)
  local ok, why = gemv.pdl_constraints(p, dev)
  if ok == false then return false, why end
  ok, why = mid2_constraints(p, shape)
  if ok == false then return false, why end
  if shape.m > p.bn and mid2(p) then return false, "m is larger than the rows of one pass" end
  why = bn_refusal(p.bn, shape.m)
  if why then return false, why end
  if p.evict == 1 and shape.m > p.bn then
    return false, "evict-first with tiles of rows: they read the weight again from L2"
  end
  local kiters = (shape.k + BK * p.kbox - 1) // (BK * p.kbox)
  if p.csplit > kiters then return false, "a split of k shorter than one slot" end
  local tiles = (shape.n + p.bm - 1) // p.bm
  if p.csplit > 1 and tiles >= 2 * (dev.sms or 132) then
    return false, "enough column tiles to fill the GPU without split-K"
  end
  -- Fewer slots' worth of k per CTA than slots: the extra slots are never used.
  local per = (kiters + p.csplit - 1) // p.csplit
  if p.stages > 2 and p.stages // 2 >= per then return false, string.format("%d slots for %d slots' worth of k", p.stages, per) end
  if p.l2pre > per * p.kbox then return false, "more boxes prefetched than the CTA reads" end
  if mid(p) then return mid_constraints(p, shape, dt, dev) end
  why = smem_refusal(p, dev)
  if why then return false, why end
  return true
end

local function supports(shape, dt, dev)
  if (dev.cc or 0) ~= 90 then return false, "wgmma needs sm_90a" end
  if shape.m > M.MAX_M then return false, string.format("m > %d: wgmma's N ends at 256", M.MAX_M) end
  if shape.k % 8 ~= 0 then return false, "rows of k not a multiple of 8 elements: TMA needs 16-byte strides" end
  return true
end
-- The second mid-size kernel's launch: column tiles padded to whole
-- multicast groups along x, the slices of k along y, passes of BN rows of A
-- along z; a cluster of mc x csplit; A's two tensor maps (boxes of 64 rows
-- and of 8).
local function mid2_launch(p, dt)
  local esize = dtype.size(gemm.types(dt).In)
  local z = mid_sizes(p)
  local x = string.format("cdiv(n, %d)", p.bm)
  if p.mc > 1 then x = string.format("cdiv(n, %d) * %d", p.bm * p.mc, p.mc) end
  local function amap(rows)
    return { kind = "tmap", arg = "A", dims = { "k", "m" }, strides = { "k*" .. esize }, box = { BK, rows },
             swizzle = 128, oob = "zero", l2 = 256 }
  end
  return {
    grid = { x, p.csplit, string.format("cdiv(m, %d)", p.bn) },
    block = { z.threads, 1, 1 },
    cluster = { p.mc, p.csplit, 1 },
    smem = z.smem,
    pdl = p.pdl == 1,
    params = {
      { kind = "tmap", arg = "B", dims = { "k", "n" }, strides = { "k*" .. esize }, box = { BK, p.bm },
        swizzle = 128, oob = "zero", l2 = 256 },
      amap(64), amap(8),
      { kind = "ptr", arg = "D" }, { kind = "dim", expr = "m" }, { kind = "dim", expr = "n" },
      { kind = "dim", expr = "k" },
    },
  }
end

-- The rows of A's box in the decode and first mid-size kernels: m rounded
-- up to 8, at most bn (an expression the launch plan evaluates at bind,
-- plan.h), so TMA zero-fills at most 7 rows past m. Each kernel's slots
-- expect the same bytes (slot_bytes); the slot's rows past the box keep
-- whatever they held, and their sums go to rows of D that are not stored
-- (column j of a wgmma's product reads row j of A only). With a box of bn
-- rows, time grew about 0.1 us for each row zero-filled past m: on an H200
-- at 4096^2 (tenth session, call 2) one bn 96 config ran 16.1 us at m = 65
-- and 13.3 at m = 87, one bn 128 config 17.8 at m = 88 and 13.9 at m = 127.
local function a_box(bn) return string.format("min(%d, cdiv(m, 8) * 8)", bn) end
-- The first mid-size kernel's: m > bn takes cdiv(m, bn) tiles of rows along
-- z, and the rows split evenly over them (each m / tiles rounded up to 8),
-- so no tile holds a box of rows mostly past m.
local function mid_box(bn)
  return string.format("min(%d, cdiv(cdiv(m, cdiv(m, %d)), 8) * 8)", bn, bn)
end

-- q with the most of its nvar widths (at most q's) that its bn takes
-- (widths_refusal), wstep 0 where one width is left: a config carried to
-- another bn (bn 256 with nvar 5 in equal steps, carried to 224, would step
-- 28 rows, not a multiple of 8).
local function widths_at(q)
  if not mid(q) then return q end
  for i = #NVARS, 2, -1 do
    local nv = NVARS[i]
    if nv <= (q.nvar or 1) and not widths_refusal(q.bn, nv, q.wstep or 0) then
      q.nvar = nv
      return q
    end
  end
  if (q.nvar or 1) > 1 then q.nvar, q.wstep = 1, 0 end
  return q
end

-- q with the most slots, at most its own, whose shared memory fits dev's
-- (smem_refusal, the constraints' rule): a config carried or spanned to a wider bn
-- keeps its ring of slots, and a ring of 5 slots of 224 rows does not fit
-- at 256. On an H200 (twenty-seventh session, call 15) 14336 x 4096's part
-- [216, 256) raced no span: its search's finalists at m = 224 took 5 slots,
-- their spans (bn 256) were refused, and wgmma's 128 x 128 held the part at
-- 0.89-0.94x cuBLASLt where one tile of rows at m's width ran 1.00-1.16x.
local STAGES = kernel.values(M.params, "stages")
local function fit_stages(q, dev)
  local own = q.stages
  for i = #STAGES, 1, -1 do
    q.stages = STAGES[i]
    if q.stages <= own and not smem_refusal(q, dev) then return q end
  end
  q.stages = own
  return q
end

-- swapab's span (the family's t.span below) over m = lo..hi: one tile of
-- rows, bn the narrowest that holds hi (p's own where it does), and the
-- fewest nvar widths in steps of 8 that reach from bn down to lo rounded up
-- to 8 (no lower than bn/2, the narrowest wstep takes), else in steps of
-- 16, else nvar's most in equal steps down to bn/2 (wstep 0).
local function span_widths(bn, low)
  for _, step in ipairs({ 8, 16 }) do
    local need = (bn - low + step - 1) // step + 1
    if need == 1 then return 1, 0 end
    for _, nv in ipairs(NVARS) do
      if nv >= need and not widths_refusal(bn, nv, step) then return nv, step end
    end
  end
  return NVARS[#NVARS], 0
end
local function span(p, lo, hi, dev)
  if not mid(p) or lo > hi then return nil end
  local bn = p.bn >= hi and p.bn or kernel.values(M.params, "bn", function(v) return v > 64 and v >= hi end)[1]
  if not bn then return nil end
  local nv, ws = span_widths(bn, math.max(((lo + 7) // 8) * 8, bn // 2))
  if bn == p.bn and (p.nvar or 1) == nv and (p.wstep or 0) == ws then return nil end
  return fit_stages(kernel.with(p, { bn = bn, nvar = nv, wstep = ws }), dev)
end

-- The gated product's rules over the GEMM's: the decode kernel, 2n rows
-- of B (a shape is the 2n-wide GEMM to constraints).
local function swiglu_constraints(p, shape, dt, dev)
  if mid(p) then return false, "the gated product runs the decode kernel (bn <= 64)" end
  if p.evict ~= 0 then return false, "the gated product's 4-D boxes load without the evict hint" end
  return constraints(p, gemm.swiglu_gemm_shape(shape), dt, dev)
end
local function swiglu_supports(shape, dt, dev)
  local ok, why = hopper.swiglu_supports(shape)
  if not ok then return false, why end
  if shape.m > 64 then return false, "m > 64: the gated product runs the decode kernel" end
  return supports(shape, dt, dev)
end

-- The family table for gemm_nt or gemm_swiglu (lib/gemm.lua).
local function family(op)
  assert(op.layout == "nt", "swapab: the nt layout only")
  local sw = op.swiglu
  local t = {
    op = op.name,
    name = "swapab",
    min_cc = 90,
    max_cc = 90,
    arch = "sm_90a",
    dtypes = op.dtypes,
    params = M.params,
    fit = { "stages" },   -- a polish's step that no longer fits is tried with fewer stages first (search/space.lua)
    constraints = sw and swiglu_constraints or constraints,
    supports = sw and swiglu_supports or supports,
  }
  -- The gated product's space is the decode kernel's: the search never draws
  -- the mid-size kernels' values.
  t.narrow = function(shape) return narrow_for(shape.m, sw) end
  -- A config found at another m (a neighbour's winner, a warm start:
  -- src/sweep_warm.h) carried to shape's: as many tiles (decode: passes) of
  -- A's rows as it made at its own m, each the narrowest width of its kernel
  -- (decode bn <= 64, mid-size above) that holds them; nil where it is that
  -- width already or none of its kernel's is wide enough. Without it a
  -- winner of one tile at m = 192 (bn 192) starts a search at m = 215 as two
  -- tiles, each streaming its weight tile again, and the one tile of 224 rows
  -- that search needs is one param away from a config it never tries.
  t.carry = function(p, from, shape, _, dev)
    local q = gemm.carry_rows(p, "bn", BN_VALUES, from.m, shape.m, function(bn) return (bn > 64) == (p.bn > 64) end)
    return q and fit_stages(widths_at(q), dev)
  end
  -- A config made to serve every m of [lo.m, hi.m] (a part of a range:
  -- src/tmpl.h's tmpl_span) at the width each m wants, as cuBLASLt's tiles
  -- of m rounded up to 8 do: one tile of rows, and the mid-size kernel's
  -- widths chosen at run time (wstep) from its bn down to lo.m, in steps of
  -- 8 where nvar's most widths reach it, else of 16 (span above). nil where
  -- p is not the mid-size kernel, no width holds hi.m, no such widths reach
  -- lo.m, or p spans them already.
  t.span = function(p, lo, hi, _, dev)
    return span(p, lo.m, hi.m, dev)
  end
  t.launch = function(p, dt, dev)
    if mid2(p) then return mid2_launch(p, dt) end
    local _, smem = sizes(p)
    local esize = dtype.size(gemm.types(dt).In)
    local x, block, abox = string.format("cdiv(%sn, %d)", sw and "2 * " or "", p.bm), 160, a_box(p.bn)
    if mid(p) then
      local ms = mid_sizes(p)
      x = string.format("cdiv(n, %d) * cdiv(m, %d)", p.bm, p.bn)
      block, smem, abox = ms.threads, ms.smem, mid_box(p.bn)
    end
    return {
      grid = { x, p.csplit, 1 },
      block = { block, 1, 1 },
      cluster = { 1, p.csplit, 1 },
      smem = smem,
      pdl = p.pdl == 1,
      params = {
        sw and hopper.swiglu_bmap(esize, p.bm // 16) or
        { kind = "tmap", arg = "B", dims = { "k", "n" }, strides = { "k*" .. esize }, box = { BK, p.bm },
          swizzle = 128, oob = "zero", l2 = 256 },
        { kind = "tmap", arg = "A", dims = { "k", "m" }, strides = { "k*" .. esize }, box = { BK, abox },
          swizzle = 128, oob = "zero", l2 = 256 },
        { kind = "ptr", arg = "D" }, { kind = "dim", expr = "m" }, { kind = "dim", expr = "n" },
        { kind = "dim", expr = "k" },
      },
    }
  end
  t.source = function(p, dt, dev, name)
    if mid2(p) then return mids.mid2_source(op, p, dt, dev, name) end
    if mid(p) then return mids.mid_source(op, p, dt, dev, name) end
    return decode.source(op, p, dt, dev, name)
  end
  -- The decode kernel's default: a pass of the power of two of rows that
  -- holds m (8 .. 64), (bm, csplit) by_cover. On an H200 (tenth session,
  -- bench/results/2026-11-28/s10-ranges-call2) the range sweep's winners at
  -- m <= 64 were bm 64 in all 16 swapab buckets; the default before (bm 128
  -- first, csplit 4) ran 16-17 us at 4096^2, m = 31, against 11.5 for bm 64,
  -- and with 8 evaluations a bucket the search missed a deep-ring bm 64 at
  -- m = 63 (16.3 us; bm 64, bn 96 ran m = 87 in 13.4).
  t.default = function(shape, dt, dev)
    if shape.m > 64 and not sw then return defaults.mid(t, shape, dt, dev) end
    local bn = 8
    while bn < shape.m and bn < 64 do bn = bn * 2 end
    return defaults.decode(t, shape, dt, dev, bn, sw and 2 * shape.n or shape.n)
  end
  return t
end

M.family = family

return M
