-- The Hopper GEMM family (sm_90a), for both layouts of lib/gemm.lua.
--
-- One CTA = one producer warpgroup + `consumers` consumer warpgroups
-- (warp specialization). The producer's one elected thread streams BM x 64
-- tiles of A and BN x 64 (nt) or 64 x BN (nn) tiles of B into a ring of
-- `stages` shared-memory slots with TMA (128-byte swizzle; out-of-bounds
-- boxes are zero-filled, so M/N/K tails need no code); each slot has a `full`
-- mbarrier (TMA bytes landed) and an `empty` one (every consumer warp done
-- reading). Two schedules: cooperative (the consumers split each CTA tile by
-- rows, BM/consumers each; the swapped kernel's 192-row tiles by columns,
-- BN/2 each: cols) and ping-pong (each consumer owns every other
-- tile whole, so one runs its epilogue while the other keeps the tensor cores
-- busy; their mainloops take turns through two `order` mbarriers, which also
-- keeps each consumer within one phase of the ring's barriers). Consumers issue wgmma m64nBNk16 from shared memory, one group in
-- flight, releasing a slot as soon as the group that read it retires. The
-- producer gives registers back and the consumers take them (setmaxnreg).
--
-- Clusters of two CTAs ("2x1": neighbours along M share their B tile,
-- "1x2": along N share A) halve the shared operand's L2 traffic: each CTA
-- loads half of it and TMA multicasts that half into both CTAs' slots, so a
-- slot is free only when the consumers of both CTAs released it (remote
-- mbarrier arrives through mapa).
--
-- The grid is persistent when asked (one CTA per SM walking tiles with a
-- stride): the producer then loads the next tile while the consumers run the
-- epilogue. Tiles are visited in groups of `group` tile-rows (raster m) or
-- tile-columns (raster n) for L2 locality.
--
-- The gated product (op.swiglu, gemm_swiglu: D = SiLU(A·Gᵀ) ⊙ (A·Uᵀ), B =
-- [G; U] 2n x k) is this GEMM over 2n accumulator columns whose B tile is
-- loaded by a 4-D tensor map over B (k; 8 rows; gate or up, n rows apart;
-- groups of 8 rows): the tile's rows 16g.. are the gate's rows 8g.. and
-- 16g+8.. the up's same rows, so the epilogue finds each gate column's up
-- column in the same thread, 8 accumulator columns on, and stores BN/2
-- columns of D. The rest of the kernel is unchanged: a shape is the 2n-wide
-- GEMM to constraints and launch; stream-K, staging and the stores through
-- shared memory are not offered (n and k multiples of 8, direct stores).
--
-- The swapped kernel (op.swap, gemm_nt/wgmma_swap, m > 256) is this GEMM
-- with A and B exchanged, Dᵀ = B·Aᵀ: the weight's rows in BM-row tiles, A's
-- m rows in BN-wide tiles of any multiple of 8 (so a ragged m fills whole
-- waves, as cuBLASLt's kernels do), each tile stored transposed from
-- registers (epilogue.trans_tile); see M.family. With wstep > 0 the launch
-- picks that width at each m among the ones the kernel holds a copy of its
-- mainloop for (lib/wgmma_swap.lua, wgmma_mainloop's width_switch).
--
-- The CUDA text by concern: lib/wgmma_mainloop.lua (the kernel: producer
-- and consumer loops), lib/wgmma_ptx.lua (inline PTX), lib/wgmma_stage.lua
-- (staging), lib/wgmma_streamk.lua (the work schedule, stream-K),
-- lib/wgmma_epilogue.lua (epilogues), lib/wgmma_default.lua (the default
-- config), lib/wgmma_swap.lua (the swapped kernel's own parts). This file
-- holds the family: params, constraints, sizes, the workspace, the launch
-- and the source's #defines.
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local hopper = lib("hopper")
local ptx = lib("wgmma_ptx")
local mainloop = lib("wgmma_mainloop")
local stage = lib("wgmma_stage")
local streamk = lib("wgmma_streamk")
local epilogue = lib("wgmma_epilogue")
local defaults = lib("wgmma_default")
local swapk = lib("wgmma_swap")
local M = {}

local BK = 64                  -- 128 bytes of bf16/f16: the swizzle span

-- Registers per thread after setmaxnreg. Overlapped staging's copy warps
-- need 56 in the producer (measured with ptxas 13.0: 40 spill), so two
-- consumers get 224; copying B's k rows behind too needs 72 (216).
local function overlapped(p) return p.stage:find("_overlap$") ~= nil end
-- tma_ws's copy of D (8 chunks of 16 bytes in flight a lane) needs 72 as
-- abk_overlap's copy does.
local function copies72(p) return p.stage == "abk_overlap" or p.epilogue == "tma_ws" end
local function producer_regs(p) return copies72(p) and 72 or overlapped(p) and 56 or p.producer_regs end
local function consumer_regs(p)
  if copies72(p) then return p.consumers == 2 and 216 or 240 end
  if overlapped(p) then return p.consumers == 2 and 224 or 240 end
  return p.consumers == 2 and (p.producer_regs == 24 and 240 or 232) or 240
end

-- Bytes of the TMA-store epilogue's buffers: two 8 KB pieces per consumer.
-- "rows": one 8 KB piece per consumer (each warp stores only the rows it
-- wrote, so there is nothing to double-buffer).
-- "tma_ws": the TMA store's buffers.
local function epi_bytes(p)
  local tma = p.epilogue == "tma" or p.epilogue == "tma_ws"
  return (tma and 16384 or p.epilogue == "rows" and 8192 or 0) * p.consumers
end

local function sizes(p)
  local a = p.bm * BK * 2
  local b = p.bn * BK * 2
  return a, b, p.stages * (a + b) + epi_bytes(p) + 1024 + 16 * p.stages + 16
end

-- The stages of p's tiles that shared memory holds (at most 8), and the
-- shared memory a block may take.
local function stages_fit(p, dev)
  local a, b, smem = sizes(p)
  local cap = dev.smem_optin or 232448
  return math.min(8, (cap - (smem - p.stages * (a + b))) // (a + b)), cap
end

M.params = {
  { "bm", { 64, 128, 256 } },
  { "bn", { 64, 112, 128, 192, 224, 256 } },
  { "consumers", { 1, 2 } },
  { "stages", { 2, 3, 4, 5, 6, 7, 8 } },
  { "persistent", { 0, 1 } },
  { "raster", { "m", "n" } },
  { "group", { 1, 4, 8, 16 } },
  { "producer_regs", { 24, 40 } },
  { "cluster", { "1x1", "2x1", "1x2" } },
  { "schedule", { "coop", "pingpong" } },
  { "inflight", { 0, 1 } },
  { "epilogue", { "direct", "tma", "rows", "tma_ws" } },
  { "streamk", { 0, 1 } },
  { "stage", { "none", "a", "b", "ab", "a_overlap", "ab_overlap" } },
}
-- Also built, not in the space: streamk 2 (lib/wgmma_streamk.lua's even
-- split: the tail's k-tiles in equal ranges over every worker). On an H200
-- (twenty-ninth session, bench/results/2026-11-30/s29/sk2) it ran clean
-- under compute-sanitizer but 1.35-1.6x slower than streamk 0 at 14336 x
-- 4096, m = 72..255 (46.2 against 33.3 us at m = 72, where 128 x 112 tiles
-- already make 128 units for 132 SMs and stream the weight as fast as
-- cuBLASLt). And stage "abk_overlap" (nn), which copies B's
-- late k rows behind too. Measured slower than ab_overlap at 4001^3 nn (the
-- copy warps fall behind the first wave's k loops: bench/overlap_b.sh,
-- bench/archive/RESULTS-2026.md); a narrowed space (bench/narrow.py) can still name it.

-- A layout's params: nt's A and B rows are both k long, so they are staged
-- together or not at all (a stage value that can never be valid would only
-- dilute the space a search samples).
local NT_STAGES = { none = true, ab = true, ab_overlap = true }
local function params_of(layout, swap)
  local out = {}
  for i, pv in ipairs(M.params) do
    local vals = pv[2]
    if swap and swapk.ONLY[pv[1]] then
      vals = swapk.ONLY[pv[1]]
    elseif pv[1] == "stage" and layout ~= "nn" then
      vals = {}
      for _, v in ipairs(pv[2]) do if NT_STAGES[v] then vals[#vals + 1] = v end end
    end
    out[i] = { pv[1], vals }
  end
  if swap then
    for _, pv in ipairs(swapk.PARAMS) do out[#out + 1] = pv end
  end
  return out
end

-- Whether two coop consumers split p's tile by columns, each all of its
-- rows and bn/2 columns: the swapped kernel's tiles of 192 rows (its space
-- alone has bm 192: lib/wgmma_swap.lua's ONLY), where 96 rows each would
-- not be whole m64 steps (lib/wgmma_mainloop.lua's COLS_PIECES).
local function cols(p)
  return p.bm == 192 and p.schedule == "coop" and p.consumers == 2
end

-- Rows of the CTA tile one consumer warpgroup computes.
local function rows_per_consumer(p)
  return (p.schedule == "pingpong" or cols(p)) and p.bm or p.bm // p.consumers
end

-- Accumulators a consumer thread holds: its rows' m64 steps times half its
-- columns (a quarter of bn under cols).
local function accumulators(p)
  return (rows_per_consumer(p) // 64) * (p.bn // (cols(p) and 4 or 2))
end

-- 0: no cluster, 1: a pair along M sharing B, 2: a pair along N sharing A.
local function share(p)
  return (p.cluster == "2x1" and 1) or (p.cluster == "1x2" and 2) or 0
end

-- Workers of a persistent grid, and the units a grid would have at shape.
local function workers(p, dev) return (dev.sms or 132) // (share(p) > 0 and 2 or 1) end
local function units(p, shape)
  local sh = share(p)
  local tm = (shape.m + p.bm - 1) // p.bm
  local tn = (shape.n + p.bn - 1) // p.bn
  if sh == 1 then tm = (tm + 1) // 2 end
  if sh == 2 then tn = (tn + 1) // 2 end
  return tm * tn
end

-- Stream-K workspace: a page of tickets, then one accumulator slot per
-- worker (CTA), the CTA's BM x BN fp32 tile; two under the even split
-- (streamk 2: a worker's range holds two pieces at most).
local TICKET_BYTES = 4096
local function streamk_bytes(p, dev)
  return TICKET_BYTES + p.streamk * (dev.sms or 132) * p.bm * p.bn * 4
end

-- A config's staging: the operands it stages ("none", "a", "b", "ab"),
-- whether it stages A and B, whether A's late rows overlap the product, and
-- whether B's late k rows do too ("abk_overlap", nn).
local function staging(p)
  local base = (p.stage:gsub("_overlap$", ""):gsub("k$", ""))
  return base, base:find("a", 1, true) ~= nil, base:find("b", 1, true) ~= nil, overlapped(p), p.stage == "abk_overlap"
end

-- B's k rows staged up front under "abk_overlap": the first B_PRE8 eighths
-- of its k tiles (a head start for the copy warps, which copy the rest in k
-- order ahead of the first wave's k loops), as the kernel's b_pre.
local B_PRE8 = 2
local function b_pre_rows(k)
  return math.min(k, (((k + 63) // 64) * B_PRE8 + 7) // 8 * 64)
end

-- Overlapped staging: A's rows the first wave of tiles reads (whole bands
-- of cdiv(tiles_m, NBANDS) tile rows, at most m), as the kernel's
-- first_rows computes them. Raster m: the first G units fill whole groups
-- of `group` unit rows, then the first rows of the next group.
local NBANDS = 256
local function first_wave_rows(p, shape, dev)
  local sh = share(p)
  local tiles_m, tiles_n = (shape.m + p.bm - 1) // p.bm, (shape.n + p.bn - 1) // p.bn
  local units_m = sh == 1 and (tiles_m + 1) // 2 or tiles_m
  local units_n = sh == 2 and (tiles_n + 1) // 2 or tiles_n
  local t1 = math.min(workers(p, dev), units_m * units_n) - 1
  local per = p.group * units_n
  local g = t1 // per
  local first = g * p.group
  local tm = first + math.min(t1 - g * per, math.min(units_m - first, p.group) - 1)
  if sh == 1 then tm = 2 * tm + 1 end
  local tpb = (tiles_m + NBANDS - 1) // NBANDS
  return math.min(shape.m, (tm // tpb + 1) * tpb * p.bm)
end

-- The stage a shape needs: the operands whose rows TMA cannot read in place
-- (A's are k long, B's k (nt) or n (nn)), or "none".
local function stage_for(layout, shape)
  local a = shape.k % 8 ~= 0
  local b = (layout == "nt" and shape.k or shape.n) % 8 ~= 0
  local s = (a and "a" or "") .. (b and "b" or "")
  return s == "" and "none" or s
end

-- Whether stream-K has a partial wave of units to split at shape (at least
-- twice into the idle workers). Where it has none a stream-K kernel runs
-- its units data-parallel: valid (a winner serves every size of its bucket,
-- split or not), only not worth searching there (prior).
local function splits(p, shape, dev)
  local u, g = units(p, shape), workers(p, dev)
  local kiters = (shape.k + 63) // 64
  if p.streamk == 2 then return u % g ~= 0 and kiters >= 2 end
  return u % g ~= 0 and math.min(g // (u % g), kiters) >= 2
end

-- The workspace, in order: stream-K's tickets, staging's counters (both
-- zeroed at a launch, both left zero by the kernel: ctl is where the
-- counters start, zero where both end), stream-K's partial tiles (from
-- zero), then the staged A and B from sa: rows padded to 64 elements (128
-- bytes).
-- Overlapped staging adds a counter per band after the 128 bytes of ctl
-- (A's bands, then, for "abk_overlap", B's).
local STAGE_CTL = 128
-- Whether a config's kernel takes the workspace (stream-K's tickets and
-- partial tiles, staged operands, tma_ws's copy of D). Without one it is
-- launched with programmatic dependent launch (PDL below): a workspace
-- zeroed before each launch puts a memset between two launches. On an H200
-- (twenty-third session, s23-pdl, s23-ab) PDL made swapped configs 8-11%
-- faster at k = 64 and 512, and the best config of each shape measured at
-- k = 4096 (4096^2 m = 317..4096, 14336 x 4096 m = 378) 0-5% faster or the
-- same. Grids of 96 tiles (128 x 128 at 4096^2, m = 317; swapped 128 x 160
-- at 378) ran 10-25% slower with it: those were tiles with many rows past m,
-- and with A's tail map (a_tail below) the 128 x 128 ones ran faster than
-- before PDL (twenty-fourth session). The search measures with it.
local function has_ws(p)
  return p.streamk ~= 0 or p.stage ~= "none" or p.epilogue == "tma_ws"
end

local function ws_layout(p, dev)
  local base, _, _, ov, kb = staging(p)
  local L = { ctl = p.streamk ~= 0 and TICKET_BYTES or 0 }
  L.zero = L.ctl + (base ~= "none" and STAGE_CTL + (ov and 4 * NBANDS * (kb and 2 or 1) or 0) or 0)
  L.sa = L.zero + (p.streamk ~= 0 and streamk_bytes(p, dev) - TICKET_BYTES or 0)
  return L
end

function M.constraints(layout, p, shape, dt, dev, swiglu, swap)
  if cols(p) then
    if not swap then return false, "bm 192's consumers split the columns: the swapped kernel's stores (trans_tile)" end
    if p.bn % 16 ~= 0 then return false, "bm 192's consumers take bn/2 columns each: bn must be a multiple of 16" end
    if (p.wstep or 0) % 16 ~= 0 then return false, "bm 192's consumers take half of each width: wstep 16" end
    if p.streamk ~= 0 then return false, "bm 192's column halves have no stream-K fix-up" end
    if share(p) ~= 0 then return false, "bm 192's column halves run without a cluster" end
  end
  if swiglu then
    if p.epilogue ~= "direct" then return false, "the gated product stores SiLU(gate) * up from registers (direct)" end
    if p.streamk ~= 0 then return false, "the gated product has no stream-K fix-up" end
  end
  local need = stage_for(layout, shape)
  local base, _, _, ov = staging(p)
  if base ~= need then
    if need == "none" then return false, "rows are 16-byte aligned: TMA reads the operands in place" end
    return false, string.format("TMA cannot read %s in place: stage %s", need == "ab" and "A or B" or need:upper(), need)
  end
  if p.streamk ~= 0 and p.persistent ~= 1 then return false, "stream-K needs a persistent grid" end
  local why = swapk.refuse(p, share(p))
  if why then return false, why end
  if ov then
    if p.producer_regs ~= 40 then return false, "overlapped staging sets the producer's registers itself" end
    if p.persistent ~= 1 or p.streamk ~= 0 then return false, "overlapped staging needs a persistent grid without stream-K" end
    if p.raster ~= "m" then return false, "overlapped staging: raster n's first wave reads every row of A" end
    if shape.k < 16 then return false, "overlapped staging: rows of k < 16 are all staged up front" end
    if first_wave_rows(p, shape, dev) >= shape.m then return false, "overlapped staging: the first wave reads every row of A" end
    if p.stage == "abk_overlap" and layout == "nt" then return false, "nt's rows of B each hold all of k: none is late" end
    if p.stage == "abk_overlap" and shape.n < 16 then return false, "overlapped staging: rows of B of n < 16 are all staged up front" end
    if p.stage == "abk_overlap" and b_pre_rows(shape.k) >= shape.k - 1 then
      return false, "overlapped staging: k is too short to leave rows of B to copy behind"
    end
  end
  -- setmaxnreg.inc waits until the registers are free: two consumers' must
  -- fit in what the producer gives back from the launch's 168 a thread.
  if p.consumers == 2 and producer_regs(p) + 2 * consumer_regs(p) > 3 * 168 then
    return false, string.format("%d + 2 x %d registers do not fit 3 x 168", producer_regs(p), consumer_regs(p))
  end
  if p.bn % 64 ~= 0 then
    -- A width of 112 or 224 tiles 14336 columns into 128 or 64 tiles (132
    -- SMs), where 128 and 256 leave a fifth idle. Its stores come straight
    -- from registers: the TMA and staged stores write 64-column pieces.
    if layout ~= "nt" then return false, "nn loads B in 64-column chunks: bn must be a multiple of 64" end
    if swiglu then return false, "the gated product takes widths of 64-column multiples" end
    if p.epilogue ~= "direct" then return false, "a width of " .. p.bn .. " stores directly (the TMA store writes 64-column pieces)" end
  end
  if p.schedule == "pingpong" and p.consumers ~= 2 then return false, "ping-pong needs two consumers" end
  local wm = rows_per_consumer(p)
  if wm % 64 ~= 0 then return false, "each consumer warpgroup needs a multiple of 64 rows" end
  local acc = accumulators(p)
  if acc > 128 and not (acc <= 192 and consumer_regs(p) >= 232) then
    return false, string.format("%d accumulator registers per thread", acc)
  end
  if acc > 128 and p.consumers == 1 and wm > 128 then return false, "too many accumulators" end
  local _, _, smem = sizes(p)
  local fit, cap = stages_fit(p, dev)
  if smem > cap then return false, string.format("%d bytes of shared memory (at most %d)", smem, cap) end
  -- As many stages as shared memory allows, or one fewer (a prior: fewer
  -- stages only expose load latency).
  if p.stages < fit - 1 then return false, string.format("%d stages where %d fit", p.stages, fit) end
  if acc <= 128 and p.producer_regs == 24 then return false, "no consumer needs 240 registers" end
  -- Measured with ptxas 13.0: 192 accumulators plus the multicast of B's
  -- 64-column chunks spill 8 bytes in the nn layout.
  if layout == "nn" and acc > 128 and share(p) == 1 then return false, "spills (192 accumulators, shared B chunks)" end
  -- Measured with ptxas 13.0: stream-K's fix-up next to 192 accumulators
  -- spills 16-120 bytes; with one consumer, next to 128 8, next to 112
  -- 16-36, next to 104 (the swapped kernel's bn 208) 12, and in nn pairs
  -- sharing B (2x1) 12-28 even next to 32 or 64.
  local sk_one = p.consumers == 1 and (acc >= 104 or (layout == "nn" and share(p) == 1))
  if p.streamk ~= 0 and (acc > 128 or sk_one) then
    return false, "spills (stream-K's fix-up next to the accumulators)"
  end
  -- Measured with ptxas 13.0: the even split's fix-up (streamk 2) spills 8
  -- bytes next to 128 (bm 128 x bn 256 and bm 256 x bn 128, coop).
  if p.streamk == 2 and acc >= 128 then return false, "spills (the even split's fix-up next to 128 accumulators)" end
  -- Measured with ptxas 13.0: the staging copy, "rows" and 192 accumulators
  -- spill 16 bytes.
  local by_rows = p.epilogue == "rows" or p.epilogue == "tma_ws"
  if by_rows and p.stage ~= "none" and acc > 128 then return false, "spills (staging, " .. p.epilogue .. " stores, 192 accumulators)" end
  if shape.n % 8 ~= 0 and p.epilogue == "tma" then return false, "D's rows are not 16-byte aligned for a TMA store" end
  if shape.n % 8 == 0 and by_rows then return false, "D's rows are 16-byte aligned: the TMA store writes them" end
  if p.epilogue == "tma_ws" then
    if p.persistent ~= 1 then return false, "tma_ws: the copy warps follow a persistent CTA's tiles" end
    if p.streamk ~= 0 then return false, "tma_ws: stream-K's last pieces store D themselves" end
    if p.schedule ~= "coop" then return false, "tma_ws: a tile is ready when both consumers' halves are (coop)" end
    if p.producer_regs ~= 40 then return false, "tma_ws sets the producer's registers itself" end
    -- Measured with ptxas 13.0: 48-668 bytes with one consumer.
    if p.consumers == 1 then return false, "spills (tma_ws with one consumer)" end
  end
  if p.persistent == 0 and (p.group ~= 1 or p.raster ~= "m") then
    return false, "raster order only matters for a persistent grid"
  end
  if p.consumers == 1 and p.producer_regs == 24 then return false, "one consumer: registers are not short" end
  if share(p) == 2 and (p.bm // 2) % 8 ~= 0 then return false, "half an A tile must be whole 8-row swizzle atoms" end
  return true
end

-- Any shape: TMA needs 16-byte strides for what it loads, A (k) and B (k
-- for nt, n for nn), and an operand without them is staged (constraints
-- ask for exactly those). D is TMA-stored only when n allows; other n take
-- direct or "rows" stores (constraints).
function M.supports(layout, shape, dt, dev, swiglu)
  if (dev.cc or 0) ~= 90 then return false, "wgmma needs sm_90a" end
  if swiglu then return hopper.swiglu_supports(shape) end
  return true
end

-- The rows of A's box: BM (half of it a CTA under a 1x2 cluster), or, where
-- one tile row holds all of m, m rounded up to 8 (half of m each under 1x2),
-- an expression the launch plan evaluates at bind (plan.h) and the kernel
-- at run time (its A_BOX_ROWS: the bytes each slot expects). TMA's
-- zero-filled rows past m cost time: on an H200 a 256 x 112 tile at 14336 x
-- 4096 ran 77.8 us at m = 129, 57.7 at 200 and 50.1 at 256 with a box of
-- 256 rows, 46.1 at 129 and 48.0 at 200 with this one (seventeenth session,
-- calls 1 and 2). km names the kernel's m in the expression: "m", or the
-- GEMM's "n" for the swapped kernel's launch.
local function a_box(p, km)
  km = km or "m"
  if share(p) == 2 then
    return string.format("min(%d, max(cdiv(cdiv(%s, 2), 8) * 8, (cdiv(%s, %d) - 1) * %d))", p.bm // 2, km, km, p.bm, p.bm)
  end
  return string.format("min(%d, max(cdiv(%s, 8) * 8, (cdiv(%s, %d) - 1) * %d))", p.bm, km, km, p.bm, p.bm)
end

-- Whether the last row of tiles loads A through a map of its own (tmAt),
-- whose box holds only the rows of m that row has, rounded up to 8
-- (tail_rows; under a 1x2 cluster, where each CTA of the pair loads half
-- of A's box into both, half of them): where m is not a multiple of BM,
-- A's box otherwise reaches past m, and TMA's zero-filled rows cost time.
-- On an H200 (twenty-fourth session, s23-next/c10.sh) 128 x 128 tiles at
-- 4096^2 ran m = 317 (67 rows past m) in 22.7 us with it against 29-31.6
-- without, and m = 439 (73 past) in 24.1 against 27-30; with 3..11 rows
-- past m the times were the same. Not for the swapped kernel (its A, the
-- weight, fills its tiles) or staged operands.
local function a_tail(p, swap)
  return not swap and p.stage == "none"
end
-- A tail map's box rows: the rows of dim (its name in the expression) the
-- last tile of `tile` rows holds, each CTA's half of them over a pair
-- (halves 2), rounded up to 8.
local function tail_rows(dim, tile, halves)
  local rows = string.format("%s - (cdiv(%s, %d) - 1) * %d", dim, dim, tile, tile)
  if halves == 2 then rows = "cdiv(" .. rows .. ", 2)" end
  return string.format("max(8, cdiv(%s, 8) * 8)", rows)
end
local function a_tail_box(p) return tail_rows("m", p.bm, share(p)) end
-- Whether the swapped kernel's last column of tiles loads B (the GEMM's
-- A: its m rows of activations) through a map of its own (tmBt), whose box
-- holds only the rows of m that column has, rounded up to 8 (tail_rows; kn
-- names the kernel's n in the expression: the kernel's "n" in its source,
-- the GEMM's "m" in the launch). The same cost as A's rows past m: on an
-- H200 (twenty-fourth session, s23-next/c9.sh) a swapped 64 x 192 tile at a
-- fixed width ran 4096^2 m = 317 (67 rows of B past m) in 35.6 us and 378
-- (6 past) in 21.5. Only at a fixed width (a run-time width leaves fewer
-- than wstep rows past m), without a 2x1 cluster (each CTA of the pair loads
-- half of B's box), staging or the gated product.
local function b_tail(p, swap, swiglu)
  return swap and not swiglu and not swapk.run_widths(p) and share(p) ~= 1 and p.stage == "none"
end
local function b_tail_box(p, kn) return tail_rows(kn, p.bn, 1) end
local function c_expr(e) return (e:gsub("cdiv%(", "AIT_CDIV("):gsub("min%(", "AIT_MIN("):gsub("max%(", "AIT_MAX(")) end

-- The kernel's wgmma: one of bn columns, or (widths: wstep's) one a width;
-- half as many under cols.
local function wgmma_text(p, widths, intype, tnsp_b)
  local div = cols(p) and 2 or 1
  if not widths then return hopper.wgmma_fn(p.bn // div, intype, tnsp_b) end
  local out = { string.format(mainloop.width_device, div == 2 and "BN / 4" or "BN / 2") }
  for _, w in ipairs(widths) do out[#out + 1] = hopper.wgmma_fn(w // div, intype, tnsp_b, p.bn // div) end
  return table.concat(out)
end

function M.source(layout, p, dt, dev, name, swiglu, swap)
  local t = gemm.types(dt)
  local a_bytes, b_bytes, smem = sizes(p)
  local wm = rows_per_consumer(p)
  local mi = wm // 64
  local wl = ws_layout(p, dev)
  local _, sa, sb, ov, kb = staging(p)
  local out_ct = dtype.ctype(t.Out)
  local a_load, b_load, b_desc
  local sh = share(p)
  local widths = swapk.run_widths(p)     -- nil: one width, bn
  -- A's map: the tail map for the last row of tiles (the mainloop's a_tail),
  -- each CTA's a_rows of its box (the mainloop's) under a 1x2 cluster.
  local tmA = a_tail(p, swap) and "a_tail ? &tmAt : &tmA" or "&tmA"
  if sh == 2 then
    a_load = string.format("tma_load_both(sA + rank * a_rows * 128, %s, kb * 64, tm * BM + rank * a_rows, bar);", tmA)
  else
    a_load = string.format("tma_load(sA, %s, kb * 64, tm * BM, bar);", tmA)
  end
  if layout == "nt" then
    -- B tile: BN rows (n) of 64 k, K-major like A.
    if sh == 1 then
      b_load = "tma_load_both(sB + rank * (BN / 2) * 128, &tmB, kb * 64, tn * BN + rank * (BN / 2), bar);"
    else
      b_load = string.format("tma_load(sB, %s, kb * 64, tn * %s, bar);",
                             b_tail(p, swap, swiglu) and "b_tail ? &tmBt : &tmB" or "&tmB", widths and "(int)bw" or "BN")
    end
    b_desc = "desc(sB + kk * 32, 1, 1024)"
    -- cols: consumer c's half of the tile's B rows, BN/2 (or bw/2) on.
    if cols(p) then b_desc = string.format("desc(sB + c * (%s / 2) * 128 + kk * 32, 1, 1024)", widths and "(int)bw" or "BN") end
    if swiglu then
      -- 16-row groups (8 of the gate, 8 of the up): BN/16 of them a tile.
      b_load = sh == 1 and "tma_load4_both(sB + rank * (BN / 2) * 128, &tmB, kb * 64, tn * (BN / 16) + rank * (BN / 32), bar);"
                       or "tma_load4(sB, &tmB, kb * 64, tn * (BN / 16), bar);"
    end
  else
    -- B tile: BN/64 chunks of 64 k-rows x 64 n (128 bytes), MN-major:
    -- LBO = the distance between n chunks, SBO = between groups of 8 k-rows.
    if sh == 1 then
      b_load = "for (int j = rank; j < BN / 64; j += 2) tma_load_both(sB + j * 8192, &tmB, tn * BN + j * 64, kb * 64, bar);"
    else
      b_load = "for (int j = 0; j < BN / 64; j++) tma_load(sB + j * 8192, &tmB, tn * BN + j * 64, kb * 64, bar);"
    end
    b_desc = "desc(sB + kk * 2048, 8192, 1024)"
  end
  local src = {
    dtype.prelude,
    string.format([[
#define BM %d
#define BN %d
#define STAGES %d
#define CONSUMERS %d
#define MI %d
#define GROUP %d
#define RASTER_N %d
#define A_BYTES %d
#define B_BYTES %d
#define THREADS %d
#define SHARE %d
#define CLUSTER %d
#define PINGPONG %d
#define WM %d
#define INFLIGHT %d
#define D_T %s
#define EPI_TMA %d
#define EPI_ROWS %d
#define EPI_WS %d
#define EPI_BYTES %d
#define CW %d
#define EPI_F32 %d
#define EPI_CVT "%s"
#define STREAMK %d
#define NPARTS %d
#define TICKET_BYTES %d
#define STAGE_A %d
#define STAGE_B %d
#define OVERLAP %d
#define OVERLAP_B %d
#define B_PRE8 %d
#define NBANDS %d
#define NT %d
#define CTL_OFF %d
#define SLOT_OFF %d
#define SA_OFF %d
#define AIT_CDIV(a, b) (((a) + (b) - 1) / (b))
#define AIT_MIN(a, b) ((a) < (b) ? (a) : (b))
#define AIT_MAX(a, b) ((a) > (b) ? (a) : (b))
#define A_BOX_ROWS(m) ((int)(%s))
#define PDL %d
#define A_TAIL %d
#define A_TAIL_ROWS(m) ((int)(%s))
#define B_TAIL %d
#define B_TAIL_ROWS(n) ((int)(%s))
]], p.bm, p.bn, p.stages, p.consumers, mi, p.group, p.raster == "n" and 1 or 0, a_bytes, b_bytes,
      128 * (p.consumers + 1), share(p), share(p) > 0 and 2 or 1, p.schedule == "pingpong" and 1 or 0, wm, p.inflight, dtype.ctype(t.Out),
      (p.epilogue == "tma" or p.epilogue == "tma_ws") and 1 or 0, p.epilogue == "rows" and 1 or 0, p.epilogue == "tma_ws" and 1 or 0, epi_bytes(p), 128 // dtype.size(t.Out),
      t.Out == "f32" and 1 or 0, t.Out == "f32" and "" or t.Out .. "x2", p.streamk,
      p.schedule == "pingpong" and 1 or p.consumers, TICKET_BYTES,
      sa and 1 or 0, sb and 1 or 0, ov and 1 or 0, kb and 1 or 0, B_PRE8, NBANDS, layout == "nt" and 1 or 0,
      wl.ctl, wl.zero, wl.sa, c_expr(a_box(p)), has_ws(p) and 0 or 1,
      a_tail(p, swap) and 1 or 0, c_expr(a_tail(p, swap) and a_tail_box(p) or a_box(p)),
      b_tail(p, swap, swiglu) and 1 or 0, c_expr(b_tail(p, swap, swiglu) and b_tail_box(p, "n") or "BN")),
    "" .. hopper.ptx .. ptx.text .. mainloop.host_first .. stage.device .. streamk.device .. epilogue.ws_device ..
      mainloop.host_last,
    epilogue.store2(t.Out),
    string.format(epilogue.store2m, out_ct, t.Out, t.Out),
    epilogue.device,
    wgmma_text(p, widths, t.In, layout == "nn" and 1 or 0),
    string.format(mainloop.kernel(stage, streamk, epilogue, swiglu, swap, widths, cols(p)), name,
      (a_tail(p, swap) and " const __grid_constant__ tmap_t tmAt," or "") ..
      (b_tail(p, swap, swiglu) and " const __grid_constant__ tmap_t tmBt," or "") ..
      ((p.epilogue == "tma" or p.epilogue == "tma_ws") and " const __grid_constant__ tmap_t tmD," or ""), out_ct,
      has_ws(p) and ", unsigned char* __restrict__ ws" or "",
      p.stage ~= "none" and ", const unsigned char* __restrict__ As, const unsigned char* __restrict__ Bs" or "", producer_regs(p),
      a_load, b_load, consumer_regs(p), b_desc),
  }
  -- The gated product's loads and SiLU, after the epilogues' device text.
  if swiglu then table.insert(src, 6, gemm.swiglu_device .. hopper.tma_load4 .. ptx.swiglu_text) end
  -- The swapped kernel's store of one element (epilogue.trans_tile).
  if swap then table.insert(src, 3, "#define ST_D(x) st_" .. t.Out .. "(x)") end
  return table.concat(src, "\n")
end

function M.launch(layout, p, dt, dev, swiglu, swap)
  local t = gemm.types(dt)
  local _, _, smem = sizes(p)
  local esize = dtype.size(t.In)
  local sh = share(p)
  -- The kernel's m and n: the GEMM's, or (swap) its n and m.
  local km, kn = swap and "n" or "m", swap and "m" or "n"
  -- The tile width along the kernel's n: bn, or (wstep) the launch's.
  local bw = swapk.run_widths(p) and swapk.width_expr(p, km, kn, sh == 2 and 2 or 1, workers(p, dev))
  local units = string.format("cdiv(%s, %d) * cdiv(%s%s, %s)", km, sh == 1 and 2 * p.bm or p.bm, swiglu and "2 * " or "", kn,
                              bw and (sh == 2 and "2 * " or "") .. bw or tostring(sh == 2 and 2 * p.bn or p.bn))
  local per = sh > 0 and 2 or 1
  -- Stream-K keeps every worker even when there are fewer units than SMs:
  -- the idle ones are what it splits the k-iterations over.
  local grid = p.streamk ~= 0 and tostring((dev.sms or 132) // per * per)
               or p.persistent == 1 and string.format("min(%s, %d) * %d", units, (dev.sms or 132) // per, per)
               or string.format("%s * %d", units, per)
  local wl = ws_layout(p, dev)
  local _, sa, sb = staging(p)
  -- A staged operand's map reads its copy in the workspace, whose rows are
  -- padded to 128 bytes: A's m rows of k, then B's (nt: n of k; nn: k of n).
  local a_pitch = "cdiv(k, 64) * 128"
  local b_rows, b_pitch = layout == "nt" and "n" or "k", layout == "nt" and a_pitch or "cdiv(n, 64) * 128"
  local a_copy = "m * " .. a_pitch
  local a_at = sa and tostring(wl.sa) or nil
  local b_at = sb and (sa and string.format("%d + %s", wl.sa, a_copy) or tostring(wl.sa)) or nil
  local tmB
  if swiglu then
    -- A box is BN/16 (or, each CTA of a pair, BN/32) groups of 8 gate rows
    -- and their 8 up rows.
    tmB = hopper.swiglu_bmap(esize, sh == 1 and p.bn // 32 or p.bn // 16)
  elseif layout == "nt" then
    tmB = { kind = "tmap", arg = swap and "A" or "B", at = b_at, dims = { "k", kn }, strides = { sb and b_pitch or "k*" .. esize },
            box = { BK, bw or (sh == 1 and p.bn // 2 or p.bn) },
            swizzle = 128, oob = "zero", l2 = 256 }
  else
    tmB = { kind = "tmap", arg = "B", at = b_at, dims = { "n", "k" }, strides = { sb and b_pitch or "n*" .. esize },
            box = { 64, BK }, swizzle = 128, oob = "zero", l2 = 256 }
  end
  local params = {
    { kind = "tmap", arg = swap and "B" or "A", at = a_at, dims = { "k", km }, strides = { sa and a_pitch or "k*" .. esize },
      box = { BK, a_box(p, km) }, swizzle = 128, oob = "zero", l2 = 256 },
    tmB,
  }
  -- The tail maps: A's map (params[1]) or B's (tmB) with the tail's box.
  local function with_box(map, rows) return kernel.with(map, { box = { BK, rows } }) end
  if a_tail(p, swap) then params[#params + 1] = with_box(params[1], a_tail_box(p)) end
  if b_tail(p, swap, swiglu) then params[#params + 1] = with_box(tmB, b_tail_box(p, kn)) end
  -- "tma_ws": D's copy after the staged operands (the kernel's ws_d_off),
  -- its rows padded to 128 bytes (ws_d_pitch).
  local osize = dtype.size(t.Out)
  local d_at = tostring(wl.sa) .. (sa and " + " .. a_copy or "") .. (sb and string.format(" + %s * %s", b_rows, b_pitch) or "")
  local d_pitch = string.format("cdiv(n * %d, 128) * 128", osize)
  if p.epilogue == "tma" or p.epilogue == "tma_ws" then
    params[#params + 1] = { kind = "tmap", arg = "D", at = p.epilogue == "tma_ws" and d_at or nil, dims = { "n", "m" },
                            strides = { p.epilogue == "tma_ws" and d_pitch or "n*" .. osize },
                            box = { 128 // osize, 64 }, swizzle = 128, oob = "zero", l2 = 0 }
  end
  for _, x in ipairs({ { kind = "ptr", arg = "D" }, { kind = "dim", expr = km }, { kind = "dim", expr = kn },
                       { kind = "dim", expr = "k" } }) do
    params[#params + 1] = x
  end
  if bw then params[#params + 1] = { kind = "dim", expr = bw } end
  -- Only the counters must be zero at a launch (the kernel leaves them zero
  -- again); partial tiles and staged copies are written before they are read.
  if has_ws(p) then
    local size = d_at .. (p.epilogue == "tma_ws" and " + m * " .. d_pitch or "")
    params[#params + 1] = { kind = "workspace", size = size, zero = tostring(wl.zero) }
  end
  if p.stage ~= "none" then
    params[#params + 1] = { kind = "ptr", arg = "A" }
    params[#params + 1] = { kind = "ptr", arg = "B" }
  end
  return {
    grid = { grid, 1, 1 },
    block = { 128 * (p.consumers + 1), 1, 1 },
    smem = smem,
    cluster = { per, 1, 1 },
    pdl = not has_ws(p),
    -- The rounds of tiles the grid runs (one CTA an SM, a pair under a
    -- cluster): where they step up, a tiled kernel's time jumps (plan.h).
    -- Stream-K spreads its work evenly instead.
    waves = p.streamk == 0 and string.format("cdiv(%s, %d)", units, (dev.sms or 132) // per) or nil,
    params = params,
  }
end

-- The widths of the space that are multiples of 64 (what nn and the gated
-- product take).
local function widths64()
  return kernel.values(M.params, "bn", function(v) return v % 64 == 0 end)
end

-- The stage values of layout's space whose staging is the one shape needs.
local function stages_for(layout, shape)
  local need = stage_for(layout, shape)
  return kernel.values(params_of(layout), "stage", function(v) return staging({ stage = v }) == need end)
end

-- The geometry the defaults read (lib/wgmma_default.lua, lib/wgmma_swap.lua).
M.units, M.workers, M.stages_fit, M.splits, M.accumulators = units, workers, stages_fit, splits, accumulators

-- The family table for an op of lib/gemm.lua. With op.swap (nt only:
-- templates/gemm_nt/wgmma_swap.lua) the kernel computes Dᵀ = B·Aᵀ: the
-- weight's n rows take BM-row tiles, A's m rows BN-wide ones (any multiple
-- of 8, so a ragged m tiles into whole waves), and D is stored transposed
-- from registers (epilogue.trans_tile). Its kernel shape is the GEMM's with
-- m and n exchanged (gemm_shape); its space (params_of:
-- lib/wgmma_swap.lua's ONLY) holds neither staging nor the stores through
-- shared memory. On an H200 (nineteenth session, call 8) the best of 92
-- swapped configs ran 1049 x 4096 x 4096 in 51.9 us (0.895x cuBLASLt) where
-- the best unswapped one took 65.2-66.2 (0.71-0.72x), and 1049 x 14336 x
-- 4096 in 191.2 (0.965x, against 0.80-0.84x): cuBLASLt's own kernels at
-- these sizes are swapped, with widths such as 152 and 176 along m (its
-- kernel names, call 7).
function M.family(op)
  local layout = op.layout
  local sw, swap = op.swiglu, op.swap
  local function gemm_shape(shape)
    local g = sw and gemm.swiglu_gemm_shape(shape) or shape
    if swap then return { m = g.n, n = g.m, k = g.k } end
    return g
  end
  return {
    op = op.name,
    name = swap and "wgmma_swap" or "wgmma",
    min_cc = 90,
    max_cc = 90,
    arch = "sm_90a",
    dtypes = op.dtypes,
    params = params_of(layout, swap),
    -- A polish's step that no longer fits shared memory (a wider tile) is
    -- tried with fewer stages first (search/space.lua, fit).
    fit = { "stages" },
    constraints = function(p, shape, dt, dev) return M.constraints(layout, p, gemm_shape(shape), dt, dev, sw, swap) end,
    -- The epilogues D's rows allow, the staging the operands' rows need and
    -- the widths of 64-column multiples nn and the gated product take
    -- (constraints refuse the others): the space never draws the dead values
    -- (search/space.lua), a sixth of the nt domain at aligned shapes.
    narrow = function(shape)
      local keep = { stage = stages_for(layout, gemm_shape(shape)) }
      if sw or layout == "nn" then keep.bn = widths64() end
      if sw then
        keep.epilogue, keep.streamk = { "direct" }, { 0 }
      elseif not swap then   -- the swapped space stores directly only
        keep.epilogue = shape.n % 8 == 0 and { "direct", "tma" } or { "direct", "rows", "tma_ws" }
      end
      return keep
    end,
    supports = function(shape, dt, dev)
      if swap and (layout ~= "nt" or sw) then return false, "the swapped kernel is nt's, without the gated product" end
      if swap and shape.k % 8 ~= 0 then return false, "the swapped kernel reads A and B in place: k must be a multiple of 8" end
      if swap and shape.m <= swapk.MIN_M then
        return false, "m <= " .. swapk.MIN_M .. ": swapab's (the same exchange, with kernels made for few rows)"
      end
      return M.supports(layout, shape, dt, dev, sw)
    end,
    launch = function(p, dt, dev) return M.launch(layout, p, dt, dev, sw, swap) end,
    source = function(p, dt, dev, name) return M.source(layout, p, dt, dev, name, sw, swap) end,
    -- The search draws a stream-K config with nothing to split at the task's
    -- shape a sixteenth as often (space.lua's priors; its walk tries it last).
    prior = function(p, shape, dt, dev)
      if not swap and p.bn % 64 ~= 0 and gemm_shape(shape).n % p.bn ~= 0 then
        return 1 / 8, "a width of " .. p.bn .. " that does not divide n"
      end
      if p.streamk ~= 0 and not splits(p, gemm_shape(shape), dev) then return 1 / 16, "nothing for stream-K to split" end
      return 1
    end,
    -- The swapped kernel's (lib/wgmma_swap.lua's): its widths run along A's m.
    carry = swap and function(p, from, shape) return swapk.carry(p, from.m, shape.m) end or nil,
    -- lib/wgmma_default.lua's, or (swap) lib/wgmma_swap.lua's.
    default = function(shape, dt, dev)
      if swap then return swapk.default(M, layout, gemm_shape(shape), dt, dev) end
      return defaults.default(M, layout, sw, shape, gemm_shape(shape), stage_for(layout, shape), dt, dev)
    end,
  }
end

return M
