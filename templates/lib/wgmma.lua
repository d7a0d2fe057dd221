-- The Hopper GEMM family (sm_90a), for both layouts of lib/gemm.lua.
--
-- One CTA = one producer warpgroup + `consumers` consumer warpgroups
-- (warp specialization). The producer's one elected thread streams BM x 64
-- tiles of A and BN x 64 (nt) or 64 x BN (nn) tiles of B into a ring of
-- `stages` shared-memory slots with TMA (128-byte swizzle; out-of-bounds
-- boxes are zero-filled, so M/N/K tails need no code); each slot has a `full`
-- mbarrier (TMA bytes landed) and an `empty` one (every consumer warp done
-- reading). Two schedules: cooperative (the consumers split each CTA tile by
-- rows, BM/consumers each) and ping-pong (each consumer owns every other
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
-- tile-columns (raster n) for L2 locality. The epilogue converts the
-- accumulators and either stores them straight from registers (masked at the
-- M/N edges) or ("tma") writes 64-row x 128-byte pieces into two swizzled
-- shared-memory buffers per consumer that TMA stores to D (the tensor map
-- clips the edges): full 128-byte lines instead of 4-byte scattered stores.
-- Where D's rows are not 16-byte aligned (n not a multiple of 8), TMA cannot
-- store them; "rows" writes the same pieces and the consumer's warps store
-- them a row at a time, each lane one aligned 4-byte word of the row (an
-- odd row start shifts the pairs by one element: the word straddling two
-- smem words is put together with a shuffle, the row's two end elements
-- stored alone), so each store instruction is one contiguous 128-byte line
-- where "direct" scatters 16 bytes over 8 rows. Storing D themselves holds
-- the consumers between tiles (at 4000^3 "rows" costs 26 us over a TMA
-- store, bench/RESULTS.md), so "tma_ws" (persistent, coop) TMA-stores the
-- pieces into a copy of D in the workspace whose rows are padded to 128
-- bytes, and the producer's idle warps copy each tile from there to D
-- (ws_copy: 16-byte loads, odd row starts stored as shifted pairs) while
-- the consumers run the next one: a consumer marks a tile ready
-- (ws_ready) a few k tiles into the next, once its TMA stores are
-- complete. The CTA's last tile has nothing after it to hide a copy under:
-- the consumers' warps, done, copy it with the copy warps.
--
-- Stream-K (persistent grids): when the units do not divide evenly among the
-- G resident workers, the last sk = `units mod G` units are not given whole
-- to a few workers (a mostly empty last wave): their k loops are split into
-- s = G / sk pieces (when s >= 2) over the idle workers, worker p * sk + u
-- taking piece p of unit u. Pieces are aligned in k across units, so the
-- workers that run together read the same k-slices of shared A and B panels,
-- as a data-parallel wave does. (A first version gave each worker an equal
-- contiguous range of the units' k-iterations, true stream-K: measured on
-- the H100 it lost up to 45% against data-parallel when every unit was
-- split, since workers at unrelated k positions share no panel slices in
-- L2.) Each piece's fp32 accumulators go to the workspace (one slot per
-- worker) with a ticket; the last piece of a unit to arrive adds the pieces
-- in k order (so the sum never depends on who came last) and stores D, then
-- resets the ticket for the next launch. No spinning, no float atomics:
-- deterministic.
--
-- Staging (`stage`): TMA needs 16-byte strides, so an operand whose rows
-- are not (k, or n for nn's B, not a multiple of 8 elements) is first copied
-- by the whole grid into the workspace with rows padded to 128 bytes, and
-- the tensor map reads the copy (the plan's `at`). Copy work is handed out
-- in claims of rows through a counter, and every CTA waits until all claims
-- are done before its first load: a CTA that is not yet resident never holds
-- a claim, so the wait cannot deadlock whatever the grid. Each thread builds
-- a 16-byte chunk of a padded row from two aligned 16-byte loads and funnel
-- shifts; the last CTA through resets the counters for the next launch. The
-- copy costs a read and a write of the operand; the product then runs at
-- the aligned speed (a TMA box cannot start at an unaligned row: see
-- bench/gemm/tma_coords.cu).
--
-- Overlapped staging (`stage` "a_overlap", "ab_overlap"; persistent grids in
-- raster m): only the rows of A that the first wave of tiles reads are
-- copied before the wait (with B when it is staged); the rest of A is
-- copied behind it by the producer warpgroup's three idle warps while the
-- consumers multiply. They claim a few rows at a time (about 8 KB) and
-- count each claim into its band's counter (a band: cdiv(tiles_m, 256)
-- tile rows), and the TMA thread waits for a tile row's band before its
-- first load. The copy then costs only B and the first wave's rows up
-- front.
local gemm = lib("gemm")
local dtype = lib("dtype")
local hopper = lib("hopper")
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

M.params = {
  { "bm", { 64, 128, 256 } },
  { "bn", { 64, 128, 192, 256 } },
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
-- Also built, not in the space: stage "abk_overlap" (nn), which copies B's
-- late k rows behind too. Measured slower than ab_overlap at 4001^3 nn (the
-- copy warps fall behind the first wave's k loops: bench/overlap_b.sh,
-- bench/RESULTS.md); a narrowed space (bench/narrow.py) can still name it.

-- A layout's params: nt's A and B rows are both k long, so they are staged
-- together or not at all (a stage value that can never be valid would only
-- dilute the space a search samples).
local NT_STAGES = { none = true, ab = true, ab_overlap = true }
local function params_of(layout)
  if layout == "nn" then return M.params end
  local out = {}
  for i, pv in ipairs(M.params) do
    if pv[1] == "stage" then
      local vals = {}
      for _, v in ipairs(pv[2]) do if NT_STAGES[v] then vals[#vals + 1] = v end end
      out[i] = { "stage", vals }
    else
      out[i] = pv
    end
  end
  return out
end

-- Rows of the CTA tile one consumer warpgroup computes.
local function rows_per_consumer(p)
  return p.schedule == "pingpong" and p.bm or p.bm // p.consumers
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
-- worker (CTA), the CTA's BM x BN fp32 tile.
local TICKET_BYTES = 4096
local function streamk_bytes(p, dev)
  return TICKET_BYTES + (dev.sms or 132) * p.bm * p.bn * 4
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

-- The workspace, in order: stream-K's tickets, staging's counters (both
-- zeroed at a launch, both left zero by the kernel: ctl is where the
-- counters start, zero where both end), stream-K's partial tiles (from
-- zero), then the staged A and B from sa: rows padded to 64 elements (128
-- bytes).
-- Overlapped staging adds a counter per band after the 128 bytes of ctl
-- (A's bands, then, for "abk_overlap", B's).
local STAGE_CTL = 128
local function ws_layout(p, dev)
  local base, _, _, ov, kb = staging(p)
  local L = { ctl = p.streamk == 1 and TICKET_BYTES or 0 }
  L.zero = L.ctl + (base ~= "none" and STAGE_CTL + (ov and 4 * NBANDS * (kb and 2 or 1) or 0) or 0)
  L.sa = L.zero + (p.streamk == 1 and streamk_bytes(p, dev) - TICKET_BYTES or 0)
  return L
end

function M.constraints(layout, p, shape, dt, dev)
  local need = stage_for(layout, shape)
  local base, _, _, ov = staging(p)
  if base ~= need then
    if need == "none" then return false, "rows are 16-byte aligned: TMA reads the operands in place" end
    return false, string.format("TMA cannot read %s in place: stage %s", need == "ab" and "A or B" or need:upper(), need)
  end
  if p.streamk == 1 then
    if p.persistent ~= 1 then return false, "stream-K needs a persistent grid" end
    local u, g = units(p, shape), workers(p, dev)
    local kiters = (shape.k + 63) // 64
    if u % g == 0 or math.min(g // (u % g), kiters) < 2 then
      return false, "no partial wave that fits twice into the idle workers: nothing for stream-K to split"
    end
  end
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
  if p.schedule == "pingpong" and p.consumers ~= 2 then return false, "ping-pong needs two consumers" end
  local wm = rows_per_consumer(p)
  if wm % 64 ~= 0 then return false, "each consumer warpgroup needs a multiple of 64 rows" end
  local acc = (wm // 64) * (p.bn // 2)
  if acc > 128 and not (acc <= 192 and consumer_regs(p) >= 232) then
    return false, string.format("%d accumulator registers per thread", acc)
  end
  if acc > 128 and p.consumers == 1 and wm > 128 then return false, "too many accumulators" end
  local a, b, smem = sizes(p)
  local cap = dev.smem_optin or 232448
  if smem > cap then return false, string.format("%d bytes of shared memory (at most %d)", smem, cap) end
  -- As many stages as shared memory allows, or one fewer (a prior: fewer
  -- stages only expose load latency).
  local fit = math.min(8, (cap - (smem - p.stages * (a + b))) // (a + b))
  if p.stages < fit - 1 then return false, string.format("%d stages where %d fit", p.stages, fit) end
  if acc <= 128 and p.producer_regs == 24 then return false, "no consumer needs 240 registers" end
  -- Measured with ptxas 13.0: 192 accumulators plus the multicast of B's
  -- 64-column chunks spill 8 bytes in the nn layout.
  if layout == "nn" and acc > 128 and share(p) == 1 then return false, "spills (192 accumulators, shared B chunks)" end
  -- Measured with ptxas 13.0: stream-K's fix-up next to 192 accumulators
  -- spills 16-120 bytes, and next to 128 with one consumer 8.
  if p.streamk == 1 and (acc > 128 or (acc == 128 and p.consumers == 1)) then
    return false, "spills (stream-K's fix-up next to the accumulators)"
  end
  -- Measured with ptxas 13.0: the staging copy, "rows" and 192 accumulators
  -- spill 16 bytes.
  local by_rows = p.epilogue == "rows" or p.epilogue == "tma_ws"
  if by_rows and p.stage ~= "none" and acc > 128 then return false, "spills (staging, " .. p.epilogue .. " stores, 192 accumulators)" end
  if shape.n % 8 ~= 0 and p.epilogue == "tma" then return false, "D's rows are not 16-byte aligned for a TMA store" end
  if shape.n % 8 == 0 and by_rows then return false, "D's rows are 16-byte aligned: the TMA store writes them" end
  if p.epilogue == "tma_ws" then
    if p.persistent ~= 1 then return false, "tma_ws: the copy warps follow a persistent CTA's tiles" end
    if p.streamk == 1 then return false, "tma_ws: stream-K's last pieces store D themselves" end
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
function M.supports(layout, shape, dt, dev)
  if (dev.cc or 0) ~= 90 then return false, "wgmma needs sm_90a" end
  return true
end

function M.source(layout, p, dt, dev, name)
  local t = gemm.types(dt)
  local a_bytes, b_bytes, smem = sizes(p)
  local wm = rows_per_consumer(p)
  local mi = wm // 64
  local wl = ws_layout(p, dev)
  local _, sa, sb, ov, kb = staging(p)
  local out_ct = dtype.ctype(t.Out)
  local store
  if t.Out == "f32" then
    store = [[
AIT_DEV void store2(float* D, long long at, float x, float y) {
  *reinterpret_cast<float2*>(D + at) = make_float2(x, y);
}]]
  else
    store = string.format([[
AIT_DEV void store2(unsigned short* D, long long at, float x, float y) {
  unsigned v; asm("cvt.rn.%s.f32 %%0, %%2, %%1;" : "=r"(v) : "f"(x), "f"(y));
  *reinterpret_cast<unsigned*>(D + at) = v;
}]], t.Out .. "x2")
  end
  local a_load, b_load, b_desc
  local sh = share(p)
  if sh == 2 then
    a_load = "tma_load_both(sA + rank * (BM / 2) * 128, &tmA, kb * 64, tm * BM + rank * (BM / 2), bar);"
  else
    a_load = "tma_load(sA, &tmA, kb * 64, tm * BM, bar);"
  end
  if layout == "nt" then
    -- B tile: BN rows (n) of 64 k, K-major like A.
    if sh == 1 then
      b_load = "tma_load_both(sB + rank * (BN / 2) * 128, &tmB, kb * 64, tn * BN + rank * (BN / 2), bar);"
    else
      b_load = "tma_load(sB, &tmB, kb * 64, tn * BN, bar);"
    end
    b_desc = "desc(sB + kk * 32, 1, 1024)"
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
]], p.bm, p.bn, p.stages, p.consumers, mi, p.group, p.raster == "n" and 1 or 0, a_bytes, b_bytes,
      128 * (p.consumers + 1), share(p), share(p) > 0 and 2 or 1, p.schedule == "pingpong" and 1 or 0, wm, p.inflight, dtype.ctype(t.Out),
      (p.epilogue == "tma" or p.epilogue == "tma_ws") and 1 or 0, p.epilogue == "rows" and 1 or 0, p.epilogue == "tma_ws" and 1 or 0, epi_bytes(p), 128 // dtype.size(t.Out),
      t.Out == "f32" and 1 or 0, t.Out == "f32" and "" or t.Out .. "x2", p.streamk,
      p.schedule == "pingpong" and 1 or p.consumers, TICKET_BYTES,
      sa and 1 or 0, sb and 1 or 0, ov and 1 or 0, kb and 1 or 0, B_PRE8, NBANDS, layout == "nt" and 1 or 0,
      wl.ctl, wl.zero, wl.sa),
    [[
]] .. hopper.ptx .. [[
// The same box into the same offset of both CTAs of the pair.
AIT_DEV void tma_load_both(unsigned dst, const tmap_t* map, int x, int y, unsigned bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"((unsigned long long)map), "r"(x), "r"(y), "r"(bar), "h"((unsigned short)3) : "memory");
}
AIT_DEV void mbar_arrive_peer(unsigned bar, unsigned peer) {
  asm volatile("{ .reg .b32 r; mapa.shared::cluster.u32 r, %0, %1; mbarrier.arrive.shared::cluster.b64 _, [r]; }"
               :: "r"(bar), "r"(peer) : "memory");
}
AIT_DEV void tma_store(const tmap_t* map, unsigned src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               :: "l"((unsigned long long)map), "r"(x), "r"(y), "r"(src) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
template<int N> AIT_DEV void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read %0;" :: "n"(N) : "memory"); }
AIT_DEV void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
AIT_DEV void wg_sync(int id) { asm volatile("bar.sync %0, 128;" :: "r"(id) : "memory"); }
AIT_DEV void st_shared(unsigned a, float x, float y) {
#if EPI_F32
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" :: "r"(a), "f"(x), "f"(y) : "memory");
#else
  unsigned v; asm("cvt.rn." EPI_CVT ".f32 %0, %2, %1;" : "=r"(v) : "f"(x), "f"(y));
  asm volatile("st.shared.b32 [%0], %1;" :: "r"(a), "r"(v) : "memory");
#endif
}
AIT_DEV void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}
AIT_DEV unsigned cluster_rank() { unsigned r; asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
// A consumer warp is done with a slot: tell this CTA's producer and, in a
// pair, the peer's (whose multicast also fills this slot).
AIT_DEV void release(unsigned bar, int rank) {
  mbar_arrive(bar);
  if (CLUSTER > 1) mbar_arrive_peer(bar, (unsigned)rank ^ 1u);
}
#if EPI_WS
// tma_ws's copy warps: 16 bytes of the copy of D through L2 (just written
// there), and a consumer's count of ready tiles.
AIT_DEV uint4 ld_cg_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p) : "memory");
  return v;
}
AIT_DEV unsigned ld_acquire_cta(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.cta.shared.u32 %0, [%1];" : "=r"(v) : "r"((unsigned)__cvta_generic_to_shared(p)) : "memory");
  return v;
}
#endif
#if STAGE_A || STAGE_B
AIT_DEV unsigned ld_acquire(const unsigned* p) {
  unsigned v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory"); return v;
}
// Between generic-proxy global stores and the async proxy (TMA) reading
// them: the staged copies.
AIT_DEV void fence_proxy_global() { asm volatile("fence.proxy.async.global;" ::: "memory"); }
#endif

// ==== host-testable from here: tests/host/staging.cpp compiles this part
// of the source on the CPU, its CUDA built-ins emulated with threads. ====
// Tile t of a tiles_m x tiles_n grid, walked in groups of GROUP rows (or
// columns) so that CTAs running together share their A (or B) tiles in L2.
AIT_DEV void tile_at(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
#if RASTER_N
  const int per = GROUP * tiles_m, g = t / per, first = g * GROUP;
  const int cols = min(tiles_n - first, GROUP), r = t - g * per;
  tn = first + r % cols; tm = r / cols;
#else
  const int per = GROUP * tiles_n, g = t / per, first = g * GROUP;
  const int rows = min(tiles_m - first, GROUP), r = t - g * per;
  tm = first + r % rows; tn = r / rows;
#endif
}

#if STAGE_A || STAGE_B
// 16 bytes from two aligned 16-byte pieces lo:hi, starting sh bytes into lo.
AIT_DEV uint4 funnel(const uint4& lo, const uint4& hi, unsigned sh) {
  const unsigned w[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
  const unsigned q = sh >> 2, b = 8 * (sh & 3);
  unsigned t[5];
#pragma unroll
  for (int i = 0; i < 5; i++) t[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[min(i + 3, 7)];
  return make_uint4(__funnelshift_r(t[0], t[1], b), __funnelshift_r(t[1], t[2], b),
                    __funnelshift_r(t[2], t[3], b), __funnelshift_r(t[3], t[4], b));
}
// Rows [r0, r0 + nr) of a rows x cols matrix into rows padded to pad
// elements at dst, by one warp: the 16-byte chunks that hold the cols valid
// elements (the padding past them is never read: the tensor map's dims stop
// at cols). A chunk is two aligned 16-byte loads and funnel shifts (a row
// has one shift), all STAGE_UNROLL chunks' loads of a lane issued before
// any is used; at the buffer's ends, element by element (nothing outside
// it is read). Measured on the H100 (bench/stage_copy.sh, A and B of
// 4001 x 4001): 2.5 TB/s read + written with 16 chunks in flight, 1.8 with
// 8 (cudaMemcpy2DAsync: 1.35); taking the second piece from the
// neighbouring lane instead was slower (1.5).
#define STAGE_UNROLL 16
AIT_DEV void stage_rows(const unsigned char* src, long long rows, long long cols, unsigned char* dst, long long pad,
                        long long r0, long long nr) {
  const int qc = (int)((cols + 7) / 8), lane = threadIdx.x % 32;
  const unsigned long long lo_end = (unsigned long long)src, hi_end = lo_end + (unsigned long long)rows * cols * 2;
  for (long long r = r0; r < r0 + nr; r++) {
    const unsigned long long at = lo_end + (unsigned long long)r * cols * 2;
    const unsigned sh = (unsigned)(at & 15ull);
    const unsigned long long al = at - sh, need = sh ? 32ull : 16ull;
    uint4* to = (uint4*)(dst + r * pad * 2);
    for (int q0 = lane; q0 < qc; q0 += 32 * STAGE_UNROLL) {
      uint4 lo[STAGE_UNROLL], hi[STAGE_UNROLL];
#pragma unroll
      for (int u = 0; u < STAGE_UNROLL; u++) {
        const unsigned long long p = al + 16ull * (q0 + 32 * u);
        lo[u] = hi[u] = make_uint4(0, 0, 0, 0);
        if (q0 + 32 * u < qc && p >= lo_end && p + need <= hi_end) {
          lo[u] = __ldg((const uint4*)p);
          if (sh) hi[u] = __ldg((const uint4*)p + 1);
        }
      }
#pragma unroll
      for (int u = 0; u < STAGE_UNROLL; u++) {
        const int q = q0 + 32 * u;
        if (q >= qc) continue;
        const unsigned long long p = al + 16ull * q;
        if (p >= lo_end && p + need <= hi_end) {
          to[q] = funnel(lo[u], hi[u], sh);
        } else {
          union { uint4 v; unsigned short e[8]; } x;
          const unsigned short* e = (const unsigned short*)(at + 16ull * q);
#pragma unroll
          for (int j = 0; j < 8; j++) x.e[j] = (unsigned long long)(e + j) + 2 <= hi_end ? e[j] : (unsigned short)0;
          to[q] = x.v;
        }
      }
    }
  }
}
// Stage the operands TMA cannot read in place, then wait until every claim
// of the grid is copied. Each warp claims rows on its own: claims of at
// least 4 KB of A's first a_pre rows (of k; all m unless OVERLAP), then of
// B's first b_pre rows (nt: n of k; nn: k of n; all of them unless
// OVERLAP_B), then (when a_pre < m) A's last row and (when b_pre < k) B's,
// which the overlapped copy leaves out (its pieces past A and B need the
// bounds checks).
// Counters: ctl[0] claims handed out, ctl[1] claims done, ctl[2] CTAs
// through (the last one resets all three for the next launch).
AIT_DEV void stage_all(const unsigned char* As, const unsigned char* Bs, unsigned char* ws, long long m, long long n, long long k,
                       long long a_pre, long long b_pre) {
  unsigned* ctl = (unsigned*)(ws + CTL_OFF);
  const long long ar = STAGE_A ? a_pre : 0, bn_ = STAGE_B ? (NT ? n : k) : 0, br = min(bn_, b_pre), bc = NT ? k : n;
  const long long ap = (k + 63) / 64 * 64, bp = (bc + 63) / 64 * 64;
  unsigned char* sa = ws + SA_OFF;
  unsigned char* sb = sa + (STAGE_A ? m * ap * 2 : 0);
  const long long acr = max(1ll, 2048 / max(k, 1ll)), bcr = max(1ll, 2048 / max(bc, 1ll));
  const unsigned ca = (unsigned)((ar + acr - 1) / acr), cb = (unsigned)((br + bcr - 1) / bcr);
  const unsigned a_last = ca + cb + (STAGE_A && a_pre < m ? 1u : 0u), total = a_last + (br < bn_ ? 1u : 0u);
  const int lane = threadIdx.x % 32;
  unsigned mine = 0, c = __shfl_sync(~0u, lane == 0 ? atomicAdd(&ctl[0], 1u) : 0u, 0);
  while (c < total) {
    const unsigned next = lane == 0 ? atomicAdd(&ctl[0], 1u) : 0u;   // lands while this claim is copied
    // Claim c: rows [r0, r0 + nr) of A (its first ar, or its last) or of B
    // (its first br, or its last), through one copy loop.
    const bool b = (c >= ca && c < ca + cb) || c >= a_last;
    const long long r0 = c < ca ? c * acr : c < ca + cb ? (c - ca) * bcr : c < a_last ? m - 1 : bn_ - 1;
    const long long nr = c < ca ? min(acr, ar - r0) : c < ca + cb ? min(bcr, br - r0) : 1;
    stage_rows(b ? Bs : As, b ? bn_ : m, b ? bc : k, b ? sb : sa, b ? bp : ap, r0, nr);
    mine++;
    c = __shfl_sync(~0u, next, 0);
  }
  // The copies are read by TMA (the async proxy), in other CTAs.
  fence_proxy_global();
  __syncwarp();
  if (lane == 0 && mine) { __threadfence(); atomicAdd(&ctl[1], mine); }
  __syncthreads();
  if (threadIdx.x == 0) {
    while (ld_acquire(&ctl[1]) < total) __nanosleep(128);
    if (atomicAdd(&ctl[2], 1u) == gridDim.x - 1) { ctl[0] = 0; ctl[1] = 0; ctl[2] = 0; }
  }
  __syncthreads();
  fence_proxy_global();
}
#endif

#if OVERLAP
// Overlapped staging. A band is bt = cdiv(tiles_m, NBANDS) tile rows of A;
// its counter (ctl[32 + band]) counts the rows copied. ctl[3]: late claims
// handed out, ctl[4]: CTAs done (the last one resets them and the bands).
#define LATE_UNROLL 2
AIT_DEV unsigned* band_ctr(unsigned char* ws) { return (unsigned*)(ws + CTL_OFF) + 32; }
// The rows of A the first wave of units reads, in whole bands (raster m:
// the first G units fill whole groups of GROUP unit rows, then the first
// rows of the next group); the grid stages them before its product.
AIT_DEV long long first_rows(long long m, long long k, int units_m, int units_n, int G, long long band_rows) {
  if (k < 16) return m;     // late_row's pieces would reach past the next row
  const int t1 = min(G, units_m * units_n) - 1, per = GROUP * units_n, g = t1 / per, first = g * GROUP;
  int tm = first + min(t1 - g * per, min(units_m - first, GROUP) - 1);
  if (SHARE == 1) tm = 2 * tm + 1;
  return min(m, ((long long)tm * BM / band_rows + 1) * band_rows);
}
// B's k rows in bands of whole k tiles (cdiv(k tiles, NBANDS) each), and
// how many of them the grid stages up front under OVERLAP_B: the first
// B_PRE8 eighths of the k tiles (the copy warps' head start on the first
// wave's k loops), or all when B's rows are too short for late_row.
AIT_DEV long long kband_rows_of(long long k) { return ((k + 63) / 64 + NBANDS - 1) / NBANDS * 64; }
AIT_DEV long long first_krows(long long n, long long k) {
  return OVERLAP_B && n >= 16 ? min(k, ((k + 63) / 64 * B_PRE8 + 7) / 8 * 64) : k;
}
// Row r of a matrix at src (rows of cols >= 16 elements: A's, or B's under
// OVERLAP_B) into its padded row `to`, by one warp, for a row with a row
// before and after it (every 16-byte piece around it lies in the matrix):
// no bounds checks and 32-bit offsets, to fit the producer's registers.
AIT_DEV void late_row(const unsigned char* src, long long r, long long cols, uint4* to) {
  const unsigned long long at = (unsigned long long)src + (unsigned long long)r * cols * 2;
  const unsigned sh = (unsigned)(at & 15ull);
  const uint4* al = (const uint4*)(at - sh);
  const int qc = (int)((cols + 7) / 8), lane = threadIdx.x % 32;
  for (int q0 = lane; q0 < qc; q0 += 32 * LATE_UNROLL) {
    uint4 lo[LATE_UNROLL], hi[LATE_UNROLL];
#pragma unroll
    for (int u = 0; u < LATE_UNROLL; u++) {
      const int q = min(q0 + 32 * u, qc - 1);
      lo[u] = __ldg(al + q);
      hi[u] = __ldg(al + q + 1);
    }
#pragma unroll
    for (int u = 0; u < LATE_UNROLL; u++)
      if (q0 + 32 * u < qc) to[q0 + 32 * u] = funnel(lo[u], hi[u], sh);
  }
}
// Rows per claim of the overlapped copy for rows `cols` long: a power of
// two, about 8 KB, at most 64 (a claim never straddles a band: bands are
// whole multiples of 64 rows past where the claims start).
AIT_DEV int claim_rows(long long cols) {
  int cr = 1;
  while (cr < 64 && 2ll * cr * cols * 2 <= 8192) cr *= 2;
  return cr;
}
// Rows [r0, r0 + nr) of a matrix of rows `cols` long into its rows padded
// to pad elements at dst, by one warp, then counted into their band (of
// band_rows, at ctr) once the stores are visible to TMA.
AIT_DEV void late_claim(const unsigned char* src, long long cols, unsigned char* dst, long long pad, long long r0, long long nr,
                        long long band_rows, unsigned* ctr) {
  for (long long r = r0; r < r0 + nr; r++) late_row(src, r, cols, (uint4*)(dst + r * pad * 2));
  fence_proxy_global();
  __syncwarp();
  if (threadIdx.x % 32 == 0) { __threadfence(); atomicAdd(&ctr[(unsigned)(r0 / band_rows)], (unsigned)nr); }
}
// By one warp of the producer warpgroup: (OVERLAP_B) B's k rows [b_pre,
// k - 1) in k order, counted into B's bands of kband_rows, then A's rows
// [a_pre, m - 1) (into A's bands), in claims of about 8 KB. Small claims
// keep the bands in flight few (about 400 rows over the grid's copy warps
// at k = 4001, three bands), so they complete in the order the tiles need
// them rather than all at once.
AIT_DEV void stage_late(const unsigned char* As, const unsigned char* Bs, unsigned char* ws, long long m, long long n, long long k,
                        long long a_pre, long long band_rows, long long b_pre, long long kband_rows) {
  unsigned* ctl = (unsigned*)(ws + CTL_OFF);
  unsigned* band = band_ctr(ws);
  const long long ap = (k + 63) / 64 * 64;
  unsigned char* sa = ws + SA_OFF;
  const int cra = claim_rows(k);
  const unsigned ta = (unsigned)((max(0ll, m - 1 - a_pre) + cra - 1) / cra);   // none when the first wave reads all of A
#if OVERLAP_B
  const int crb = claim_rows(n);
  const unsigned tb = (unsigned)((max(0ll, k - 1 - b_pre) + crb - 1) / crb);
#else
  const unsigned tb = 0;
#endif
  const int lane = threadIdx.x % 32;
  unsigned c = __shfl_sync(~0u, lane == 0 ? atomicAdd(&ctl[3], 1u) : 0u, 0);
  while (c < ta + tb) {
    const unsigned next = lane == 0 ? atomicAdd(&ctl[3], 1u) : 0u;
#if OVERLAP_B
    if (c < tb) {
      const long long r0 = b_pre + (long long)c * crb;
      late_claim(Bs, n, sa + m * ap * 2, (n + 63) / 64 * 64, r0, min((long long)crb, k - 1 - r0), kband_rows, band + NBANDS);
    } else
#endif
    {
      const long long r0 = a_pre + (long long)(c - tb) * cra;
      late_claim(As, k, sa, ap, r0, min((long long)cra, m - 1 - r0), band_rows, band);
    }
    c = __shfl_sync(~0u, next, 0);
  }
}
// The TMA thread, before tile row tm's first load: wait until its band is
// copied (bands of the first wave are, and so is A's last row).
AIT_DEV void wait_band(unsigned char* ws, int tm, long long m, long long a_pre, long long band_rows) {
  const long long r = (long long)tm * BM;
  if (r < a_pre || r >= m) return;
  const unsigned b = (unsigned)(r / band_rows);
  const unsigned need = (unsigned)(min(m - 1, (long long)(b + 1) * band_rows) - (long long)b * band_rows);
  const unsigned* ctr = band_ctr(ws) + b;
  while (ld_acquire(ctr) < need) __nanosleep(256);
  fence_proxy_global();
}
// The TMA thread, before k tile kb's loads: wait until B's k rows through
// the tile's are copied. ready: the rows below it are known copied (b_pre
// at first, k - 1 once all are: B's last row is staged up front), so each
// band is waited for once per CTA.
AIT_DEV void wait_kband(unsigned char* ws, int kb, long long k, long long b_pre, long long kband_rows, long long& ready) {
  const long long end = min(k - 1, (long long)kb * 64 + 64);
  while (ready < end) {
    const unsigned b = (unsigned)(ready / kband_rows);
    const long long hi = min(k - 1, (long long)(b + 1) * kband_rows);
    const unsigned need = (unsigned)(hi - max(b_pre, (long long)b * kband_rows));
    const unsigned* ctr = band_ctr(ws) + NBANDS + b;
    while (ld_acquire(ctr) < need) __nanosleep(128);
    fence_proxy_global();
    ready = hi;
  }
}
#endif


// This CTA's work, as items: unit u, k-tiles [k0, k1). Worker w (of G, a
// cluster counting once) takes the data-parallel units w, w + G, ... below
// dp, then (STREAMK, w < s * sk) piece w / sk of the k loop of unit
// dp + w mod sk, one of s equal pieces.
struct sched_t {
  int G, w, dp, ndp, kiters, sk, s;
};
AIT_DEV void sched_init(sched_t& S, int nunits, int kiters) {
  S.G = gridDim.x / CLUSTER; S.w = blockIdx.x / CLUSTER; S.kiters = kiters;
  S.sk = STREAMK ? nunits % S.G : 0;
  S.s = S.sk ? min(S.G / S.sk, kiters) : 0;
  if (S.s < 2) S.sk = S.s = 0;    // nothing to split: the tail stays data-parallel
  S.dp = nunits - S.sk;
  S.ndp = S.w < S.dp ? (S.dp - S.w + S.G - 1) / S.G : 0;
}
AIT_DEV bool item_at(const sched_t& S, int it, int& u, int& k0, int& k1) {
  if (it < S.ndp) { u = S.w + it * S.G; k0 = 0; k1 = S.kiters; return true; }
  if (!STREAMK || it > S.ndp || S.w >= S.s * S.sk) return false;
  const int p = S.w / S.sk;
  u = S.dp + S.w % S.sk;
  k0 = (int)((long long)p * S.kiters / S.s);
  k1 = (int)((long long)(p + 1) * S.kiters / S.s);
  return true;
}
// Worker w's accumulator slot (a worker has at most one piece).
AIT_DEV float* sk_slot(unsigned char* ws, int w, int rank, int part) {
  return (float*)(ws + SLOT_OFF) + (((long long)w * CLUSTER + rank) * NPARTS + part) * (long long)(WM * BN);
}
#if EPI_WS
// "tma_ws": D's copy in the workspace (rows padded to 128 bytes) after the
// staged operands, and the tiles each consumer has there (ws_ready[c]:
// the CTA's first ws_ready[c] tiles are complete in the copy).
__shared__ unsigned ws_ready[2];
AIT_DEV long long ws_d_pitch(long long n) { return (n * (long long)sizeof(D_T) + 127) / 128 * 128 / (long long)sizeof(D_T); }
AIT_DEV long long ws_d_off(long long m, long long n, long long k) {
  const long long kp = (k + 63) / 64 * 128;
  return SA_OFF + (STAGE_A ? m * kp : 0) + (STAGE_B ? (NT ? n * kp : k * ((n + 63) / 64 * 128)) : 0);
}
// A 16-byte chunk of a tile row (v: 8 elements, f32 4) into D at d, where
// the row has `left` (> 0) elements from d on. f32, or a chunk that starts
// on an even element: 16-, 4- or 2-byte stores as d allows. One that
// starts on an odd element stores the aligned pairs one element on (the
// last with nxt, the next chunk's first word, when `more`: the row goes on
// in this tile) and its first element alone when `first` (the tile's
// row starts here; otherwise the chunk before stored it).
AIT_DEV void ws_store_chunk(D_T* d, const uint4& v, unsigned nxt, int left, bool first, bool more) {
  const unsigned w[5] = { v.x, v.y, v.z, v.w, nxt };
  const size_t at = (size_t)d;
#if EPI_F32
  if ((at & 15) == 0 && left >= 4) { *reinterpret_cast<uint4*>(d) = v; return; }
#pragma unroll
  for (int e = 0; e < 4; e++) if (e < left) reinterpret_cast<unsigned*>(d)[e] = w[e];
#else
  unsigned short* h = reinterpret_cast<unsigned short*>(d);
  if ((at & 15) == 0 && left >= 8) { *reinterpret_cast<uint4*>(d) = v; return; }
  if ((at & 3) == 0) {
#pragma unroll
    for (int j = 0; j < 4; j++) {
      if (2 * j + 1 < left) *reinterpret_cast<unsigned*>(h + 2 * j) = w[j];
      else if (2 * j < left) h[2 * j] = (unsigned short)w[j];
    }
    return;
  }
  if (first) h[0] = (unsigned short)w[0];
#pragma unroll
  for (int j = 0; j < 4; j++) {
    const int e = 2 * j + 1;
    if (e + 1 < left && (j < 3 || more)) *reinterpret_cast<unsigned*>(h + e) = __byte_perm(w[j], w[j + 1], 0x5432);
    else if (e < left) h[e] = (unsigned short)(w[j] >> 16);
  }
#endif
}
// Tile (tm, tn) from the copy to D, by warp cw of ncw. A tile row is CPR
// 16-byte chunks; L lanes take a row (a power of two, lanes past CPR idle),
// so a warp step covers 32 / L rows, or a row takes CPR / 32 steps (f32).
// A warp loads 8 steps' chunks (16 bytes a lane each, read through L2: the
// copy was just written there), then stores them, and takes every ncw-th 8
// steps. The chunk after a lane's in its row is the next lane's.
#define WS_CPR (BN * (int)sizeof(D_T) / 16)
#define WS_L (WS_CPR <= 8 ? 8 : WS_CPR <= 16 ? 16 : 32)
#define WS_H ((WS_CPR + 31) / 32)
#define WS_CE (16 / (int)sizeof(D_T))
AIT_DEV void ws_copy_tile(D_T* D, const unsigned char* ws, long long m, long long n, long long k, int tm, int tn,
                          int cw, int ncw) {
  const D_T* W = (const D_T*)(ws + ws_d_off(m, n, k));
  const long long dp = ws_d_pitch(n);
  const int lane = threadIdx.x % 32;
  const long long r0 = (long long)tm * BM, c0 = (long long)tn * BN;
  if (r0 >= m || c0 >= n) return;     // a pair's tile past the edge
  const int rows = (int)min(m - r0, (long long)BM), cols = (int)min(n - c0, (long long)BN);
  const int steps = (rows + 32 / WS_L - 1) / (32 / WS_L) * WS_H;
  // Step s's row and chunk for this lane; false past the tile.
  auto at = [&](int s, int& row, int& ch) {
    row = s / WS_H * (32 / WS_L) + lane / WS_L;
    ch = s % WS_H * WS_L + lane % WS_L;
    return s < steps && row < rows && ch * WS_CE < cols;
  };
  for (int s0 = cw * 8; s0 < steps; s0 += ncw * 8) {
    uint4 v[8];
    int row, ch;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      v[j] = make_uint4(0u, 0u, 0u, 0u);
      if (at(s0 + j, row, ch)) v[j] = ld_cg_v4(W + (r0 + row) * dp + c0 + ch * WS_CE);
    }
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const unsigned nxt = __shfl_down_sync(~0u, v[j].x, 1);
      if (at(s0 + j, row, ch))
        ws_store_chunk(D + (r0 + row) * n + c0 + ch * WS_CE, v[j], nxt, cols - ch * WS_CE, ch == 0,
                       ch + 1 < WS_CPR && lane % WS_L + 1 < WS_L);
    }
  }
}
// Whether both consumers have the CTA's first `tiles` tiles in the copy.
AIT_DEV bool ws_ready_for(unsigned tiles) {
  return ld_acquire_cta(&ws_ready[0]) >= tiles && (CONSUMERS == 1 || ld_acquire_cta(&ws_ready[1]) >= tiles);
}
// The copy warps (the producer's warps 1-3): each tile of the CTA once
// both consumers have it in the copy; the last tile with the consumers'
// warps too (WS_WARPS in all), which have nothing left to do.
#define WS_WARPS (3 + 4 * CONSUMERS)
AIT_DEV void ws_copy(const sched_t& S, D_T* D, const unsigned char* ws, long long m, long long n, long long k,
                     int units_m, int units_n, int rank) {
  int u, k0, k1, un, k0n, k1n;
  for (int it = 0; item_at(S, it, u, k0, k1); it++) {
    int tm, tn;
    tile_at(u, units_m, units_n, tm, tn);
    if (SHARE == 1) tm = 2 * tm + rank;
    if (SHARE == 2) tn = 2 * tn + rank;
    while (!ws_ready_for((unsigned)it + 1)) __nanosleep(256);
    const bool last = !item_at(S, it + 1, un, k0n, k1n);
    ws_copy_tile(D, ws, m, n, k, tm, tn, threadIdx.x / 32 - 1, last ? WS_WARPS : 3);
  }
}
#endif

// ==== end host-testable ====
]],
    store,
    string.format([[
// A masked pair at (row, col < n): one 2-element store where the pair is
// aligned (always for an even n; every other row for an odd one, col being
// even), else element by element.
AIT_DEV void store2m(%s* D, long long row, long long col, long long n, float x, float y) {
  if (((row * n + col) & 1) == 0 && col + 1 < n) { store2(D, row * n + col, x, y); return; }
  D[row * n + col] = st_%s(x);
  if (col + 1 < n) D[row * n + col + 1] = st_%s(y);
}]], out_ct, t.Out, t.Out),
    [[
#if EPI_ROWS
// Row pr of a swizzled 64-row x 128-byte epilogue piece: lane's word at
// piece_word(pr, lane), read into w and stored by store_word_row, by one
// warp, into D's row `row` from column col, masked at n. Word `lane` of
// the piece's row holds elements 2*lane and 2*lane + 1 (f32: element lane).
// A row that starts on an odd element has its aligned pairs one element on:
// lane l stores elements 2l+1 and 2l+2 (its word's upper half and the next
// lane's lower half), lane 31 element 63 alone and lane 0 element 0 too.
AIT_DEV unsigned piece_word(int pr, int lane) { return pr * 128 + ((((unsigned)lane >> 2) ^ (unsigned)(pr & 7)) << 4) + 4 * (lane & 3); }
AIT_DEV unsigned ld_shared_u32(unsigned a) {
  unsigned w;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w) : "r"(a) : "memory");
  return w;
}
AIT_DEV void store_word_row(D_T* D, unsigned w, long long row, long long col, long long n, int lane) {
  D_T* d = D + row * n + col;
  const int left = (int)min(n - col, 64ll);     // columns of the row in D: > 0 (the caller's)
#if EPI_F32
  if (lane < left) reinterpret_cast<unsigned*>(d)[lane] = w;
#else
  const unsigned next = __shfl_down_sync(~0u, w, 1);
  const int e = 2 * lane + (int)((size_t)d >> 1 & 1);     // the first element of this lane's aligned pair
  if (e + 1 < left) *reinterpret_cast<unsigned*>(d + e) = e == 2 * lane ? w : __byte_perm(w, next, 0x5432);
  else if (e < left) d[e] = (unsigned short)(e == 2 * lane ? w : w >> 16);
  if (e != 2 * lane && lane == 0) d[0] = (unsigned short)w;
#endif
}
#endif
#if EPI_WS
// Consumer c's first `tiles` tiles are in the copy: its TMA stores of them
// complete, made visible to the copy warps' loads (one thread).
AIT_DEV void ws_mark_ready(int c, unsigned tiles) {
  bulk_wait_all();
  asm volatile("fence.proxy.async.global;" ::: "memory");
  asm volatile("st.release.cta.shared.u32 [%0], %1;" :: "r"(smem_u32(&ws_ready[c])), "r"(tiles) : "memory");
}
#endif]],
    hopper.wgmma_fn(p.bn, t.In, layout == "nn" and 1 or 0),
    string.format([[
extern "C" __global__ void __launch_bounds__(THREADS, 1)
%s(const __grid_constant__ tmap_t tmA, const __grid_constant__ tmap_t tmB,%s %s* __restrict__ D,
   long long m, long long n, long long k%s%s)
{
  extern __shared__ unsigned char smem_raw[];
  const int tiles_m = (int)((m + BM - 1) / BM), tiles_n = (int)((n + BN - 1) / BN);
  // Units of work: tiles, or pairs of tiles for a cluster (a pair past the
  // edge still loads its half of the shared operand; its stores are masked).
  const int units_m = SHARE == 1 ? (tiles_m + 1) / 2 : tiles_m, units_n = SHARE == 2 ? (tiles_n + 1) / 2 : tiles_n;
#if OVERLAP
  const long long band_rows = (long long)((tiles_m + NBANDS - 1) / NBANDS) * BM;
  const long long a_pre = first_rows(m, k, units_m, units_n, gridDim.x / CLUSTER, band_rows);
  const long long kband_rows = kband_rows_of(k), b_pre = NT ? n : first_krows(n, k);
#else
  const long long a_pre = m, b_pre = NT ? n : k;
#endif
#if STAGE_A || STAGE_B
  stage_all(As, Bs, ws, m, n, k, a_pre, b_pre);
#endif
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned ebase = base + STAGES * (A_BYTES + B_BYTES);
  const unsigned full = ebase + EPI_BYTES, empty = full + 8 * STAGES, order = empty + 8 * STAGES;
  const int wg = threadIdx.x / 128;
  const int nunits = units_m * units_n, kiters = (int)((k + 63) / 64);
  const int rank = CLUSTER > 1 ? (int)cluster_rank() : 0;
  sched_t S;
  sched_init(S, nunits, kiters);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) { mbar_init(full + 8 * s, 1); mbar_init(empty + 8 * s, (PINGPONG ? 4 : CONSUMERS * 4) * CLUSTER); }
    if (PINGPONG) { mbar_init(order, 4); mbar_init(order + 8, 4); }
#if EPI_WS
    ws_ready[0] = ws_ready[1] = 0;
#endif
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (CLUSTER > 1) cluster_sync(); else __syncthreads();
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %d;");
    if (threadIdx.x == 0) {
      int s = 0; unsigned ph = 0;
      int u, k0, k1;
#if OVERLAP_B
      long long kready = b_pre;
#endif
      for (int it = 0; item_at(S, it, u, k0, k1); it++) {
        int tm, tn;
        tile_at(u, units_m, units_n, tm, tn);
        if (SHARE == 1) tm = 2 * tm + rank;
        if (SHARE == 2) tn = 2 * tn + rank;
#if OVERLAP
        wait_band(ws, tm, m, a_pre, band_rows);
#endif
        for (int kb = k0; kb < k1; kb++) {
#if OVERLAP_B
          wait_kband(ws, kb, k, b_pre, kband_rows, kready);
#endif
          mbar_wait(empty + 8 * s, ph ^ 1);
          const unsigned bar = full + 8 * s;
          mbar_expect(bar, A_BYTES + B_BYTES);
          const unsigned sA = base + s * A_BYTES, sB = base + STAGES * A_BYTES + s * B_BYTES;
          %s
          %s
          if (++s == STAGES) { s = 0; ph ^= 1; }
        }
      }
    }
#if OVERLAP
    if (threadIdx.x >= 32) stage_late(As, Bs, ws, m, n, k, a_pre, band_rows, b_pre, kband_rows);
#endif
#if EPI_WS
    if (threadIdx.x >= 32) ws_copy(S, D, ws, m, n, k, units_m, units_n, rank);
#endif
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %d;");
    const int c = wg - 1, lane = threadIdx.x %% 32, warp = (threadIdx.x %% 128) / 32;
    int s = 0; unsigned ph = 0, mine = 0;
#if EPI_TMA || EPI_ROWS
    unsigned pieces = 0;      // epilogue pieces stored: picks the buffer
#endif
    int u, k0, k1;
#if STREAMK
    __shared__ unsigned sk_last[2];
#endif
#if EPI_WS
    int ws_tm = 0, ws_tn = 0;
    unsigned ws_tiles = 0;    // this CTA's tiles: the last is (ws_tm, ws_tn)
#endif
    for (int it = 0; item_at(S, it, u, k0, k1); it++, mine++) {
      if (PINGPONG && (int)(mine & 1) != c) {
        // The other consumer's tile: skip its slots in the ring.
        const int to = s + (k1 - k0);
        ph ^= (unsigned)((to / STAGES) & 1);
        s = to %% STAGES;
        continue;
      }
      int tm, tn;
      tile_at(u, units_m, units_n, tm, tn);
      if (SHARE == 1) tm = 2 * tm + rank;
      if (SHARE == 2) tn = 2 * tn + rank;
#if EPI_WS
      ws_tm = tm; ws_tn = tn; ws_tiles = (unsigned)it + 1;
#endif
      // Ping-pong: wait for the other consumer's mainloop of the previous tile.
      const unsigned j = mine >> 1;
      if (PINGPONG && (c == 1 || j > 0)) mbar_wait(order + 8 * c, c == 1 ? (j & 1) : ((j - 1) & 1));
      float acc[MI][BN / 2];
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < BN / 2; j++) acc[i][j] = 0.0f;
      int prev = -1;
      for (int kb = k0; kb < k1; kb++) {
        mbar_wait(full + 8 * s, ph);
        const unsigned sA = base + s * A_BYTES + (PINGPONG ? 0 : c * WM * 128);
        const unsigned sB = base + STAGES * A_BYTES + s * B_BYTES;
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
#pragma unroll
          for (int i = 0; i < MI; i++) wgmma_tile(acc[i], desc(sA + i * 64 * 128 + kk * 32, 1, 1024), %s);
        }
        wg_commit();
#if EPI_WS
        // The previous tile's TMA stores into the copy are long issued:
        // once complete, it is the copy warps' (ws_copy).
        if (it > 0 && kb == min(k0 + 2, k1 - 1) && (threadIdx.x %% 128) == 0) ws_mark_ready(c, (unsigned)it);
#endif
        // Keep INFLIGHT groups running; release the slot of the one retired.
        wg_wait<INFLIGHT>();
        if (INFLIGHT == 0) {
          if (lane == 0) release(empty + 8 * s, rank);
        } else {
          if (prev >= 0 && lane == 0) release(empty + 8 * prev, rank);
          prev = s;
        }
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
      if (PINGPONG && lane == 0) mbar_arrive(order + 8 * (c ^ 1));
      wg_wait<0>();
      if (prev >= 0 && lane == 0) release(empty + 8 * prev, rank);
#if STREAMK
      if (u >= S.dp) {
        // Part of a stream-K unit: its pieces meet in the workspace.
        const int u0 = u - S.dp, part = PINGPONG ? 0 : c, tid = threadIdx.x %% 128;
        {
          float4* mine4 = (float4*)sk_slot(ws, S.w, rank, part);
#pragma unroll
          for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
              __stcg(mine4 + (i * (BN / 8) + j) * 128 + tid,
                     make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]));
          __threadfence();
          wg_sync(1 + c);
          unsigned* ticket = (unsigned*)ws + (u0 * CLUSTER + rank) * NPARTS + part;
          if (tid == 0) sk_last[c] = atomicAdd(ticket, 1u) == (unsigned)(S.s - 1);
          wg_sync(1 + c);
          if (!sk_last[c]) continue;
          __threadfence();
          // The last piece in: add all of them in k order.
#pragma unroll
          for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < BN / 2; j++) acc[i][j] = 0.0f;
          for (int pc = 0; pc < S.s; pc++) {
            const float4* q = (const float4*)sk_slot(ws, pc * S.sk + u0, rank, part);
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
              for (int j = 0; j < BN / 8; j++) {
                const float4 v = __ldcg(q + (i * (BN / 8) + j) * 128 + tid);
                acc[i][4 * j] += v.x; acc[i][4 * j + 1] += v.y; acc[i][4 * j + 2] += v.z; acc[i][4 * j + 3] += v.w;
              }
          }
          if (tid == 0) *ticket = 0u;   // ready for the next launch
        }
      }
#endif
      // Epilogue: thread (warp, lane) holds rows 16*warp + lane/4 (+8) and
      // column pairs 8*j + 2*(lane%%4) of each 64-row slab.
#if EPI_TMA || EPI_ROWS
      // Piece (i, jc): rows 64*i.. of this consumer's slab, CW columns from
      // CW*jc, written swizzled (16-byte chunk q of row r at q ^ (r %% 8)).
      // Warp w writes (and, for "rows", stores) rows 16*w .. 16*w + 15.
      {
        const int r = warp * 16 + lane / 4, q4 = lane %% 4;
#pragma unroll
        for (int i = 0; i < MI; i++) {
#pragma unroll
          for (int jc = 0; jc < BN / CW; jc++, pieces++) {
#if EPI_TMA
            const unsigned buf = ebase + c * 16384 + (pieces & 1) * 8192;
            if ((threadIdx.x %% 128) == 0) bulk_wait_read<1>();
            wg_sync(1 + c);
#else
            const unsigned buf = ebase + c * 8192;
#endif
#pragma unroll
            for (int jj = 0; jj < CW / 8; jj++) {
              const int j8 = jc * (CW / 8) + jj;
#if EPI_F32
              const unsigned off = ((((unsigned)(2 * jj + (q4 >> 1))) ^ (unsigned)(r & 7)) << 4) + 8 * (q4 & 1);
#else
              const unsigned off = (((unsigned)jj ^ (unsigned)(r & 7)) << 4) + 4 * q4;
#endif
              st_shared(buf + r * 128 + off, acc[i][4 * j8], acc[i][4 * j8 + 1]);
              st_shared(buf + (r + 8) * 128 + off, acc[i][4 * j8 + 2], acc[i][4 * j8 + 3]);
            }
#if EPI_TMA
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            wg_sync(1 + c);
            if ((threadIdx.x %% 128) == 0)
              tma_store(&tmD, buf, tn * BN + jc * CW, tm * BM + (PINGPONG ? 0 : c * WM) + i * 64);
#else
            __syncwarp();
            const long long grow = (long long)tm * BM + (PINGPONG ? 0 : c * WM) + i * 64 + warp * 16;
            const long long gcol = (long long)tn * BN + jc * CW;
            if (gcol < n) {
              // All 16 rows' words read first, so the reads overlap.
              unsigned w[16];
#pragma unroll
              for (int rr = 0; rr < 16; rr++) w[rr] = ld_shared_u32(buf + piece_word(warp * 16 + rr, lane));
#pragma unroll
              for (int rr = 0; rr < 16; rr++)
                if (grow + rr < m) store_word_row(D, w[rr], grow + rr, gcol, n, lane);
            }
            __syncwarp();
#endif
          }
        }
      }
#else
      const long long row0 = (long long)tm * BM + (PINGPONG ? 0 : c * WM) + warp * 16 + lane / 4;
      const long long col0 = (long long)tn * BN + 2 * (lane %% 4);
      if ((long long)(tm + 1) * BM <= m && (long long)(tn + 1) * BN <= n && (n & 1) == 0) {
        // An interior tile: no masks, straight-line stores.
#pragma unroll
        for (int i = 0; i < MI; i++) {
          D_T* p = D + (row0 + i * 64) * n + col0;
#pragma unroll
          for (int j = 0; j < BN / 8; j++) {
            store2(p, j * 8, acc[i][4 * j], acc[i][4 * j + 1]);
            store2(p, 8 * n + j * 8, acc[i][4 * j + 2], acc[i][4 * j + 3]);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < MI; i++) {
          const long long r0 = row0 + i * 64;
#pragma unroll
          for (int j = 0; j < BN / 8; j++) {
            const long long col = col0 + j * 8;
            if (col < n) {
              if (r0 < m) store2m(D, r0, col, n, acc[i][4 * j], acc[i][4 * j + 1]);
              if (r0 + 8 < m) store2m(D, r0 + 8, col, n, acc[i][4 * j + 2], acc[i][4 * j + 3]);
            }
          }
        }
      }
#endif
    }
#if EPI_WS
    // The last tile: in the copy once its stores are complete, then copied
    // to D by these warps and the copy warps together.
    if (ws_tiles > 0) {
      if ((threadIdx.x %% 128) == 0) ws_mark_ready(c, ws_tiles);
      while (!ws_ready_for(ws_tiles)) __nanosleep(64);
      ws_copy_tile(D, ws, m, n, k, ws_tm, ws_tn, 3 + 4 * c + warp, WS_WARPS);
    }
#endif
  }
  // Shared memory must outlive the TMA stores reading it.
  if (EPI_TMA && wg > 0 && (threadIdx.x %% 128) == 0) bulk_wait_all();
  // No CTA of a pair leaves while its peer may still arrive on its barriers.
  if (CLUSTER > 1) cluster_sync();
#if OVERLAP
  // Every warp of this CTA is past its claims and waits: the last CTA out
  // leaves the late counters zero for the next launch.
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* ctl = (unsigned*)(ws + CTL_OFF);
    __threadfence();
    if (atomicAdd(&ctl[4], 1u) == gridDim.x - 1) {
      ctl[3] = 0; ctl[4] = 0;
      for (int b = 0; b < NBANDS * (1 + OVERLAP_B); b++) band_ctr(ws)[b] = 0;
    }
  }
#endif
}
]], name, (p.epilogue == "tma" or p.epilogue == "tma_ws") and " const __grid_constant__ tmap_t tmD," or "", out_ct,
    (p.streamk == 1 or p.stage ~= "none" or p.epilogue == "tma_ws") and ", unsigned char* __restrict__ ws" or "",
    p.stage ~= "none" and ", const unsigned char* __restrict__ As, const unsigned char* __restrict__ Bs" or "", producer_regs(p),
    a_load, b_load, consumer_regs(p), b_desc),
  }
  return table.concat(src, "\n")
end

function M.launch(layout, p, dt, dev)
  local t = gemm.types(dt)
  local _, _, smem = sizes(p)
  local esize = dtype.size(t.In)
  local sh = share(p)
  local units = string.format("cdiv(m, %d) * cdiv(n, %d)", sh == 1 and 2 * p.bm or p.bm, sh == 2 and 2 * p.bn or p.bn)
  local per = sh > 0 and 2 or 1
  -- Stream-K keeps every worker even when there are fewer units than SMs:
  -- the idle ones are what it splits the k-iterations over.
  local grid = p.streamk == 1 and tostring((dev.sms or 132) // per * per)
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
  if layout == "nt" then
    tmB = { kind = "tmap", arg = "B", at = b_at, dims = { "k", "n" }, strides = { sb and b_pitch or "k*" .. esize },
            box = { BK, sh == 1 and p.bn // 2 or p.bn },
            swizzle = 128, oob = "zero", l2 = 256 }
  else
    tmB = { kind = "tmap", arg = "B", at = b_at, dims = { "n", "k" }, strides = { sb and b_pitch or "n*" .. esize },
            box = { 64, BK }, swizzle = 128, oob = "zero", l2 = 256 }
  end
  local params = {
    { kind = "tmap", arg = "A", at = a_at, dims = { "k", "m" }, strides = { sa and a_pitch or "k*" .. esize },
      box = { BK, sh == 2 and p.bm // 2 or p.bm }, swizzle = 128, oob = "zero", l2 = 256 },
    tmB,
  }
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
  for _, x in ipairs({ { kind = "ptr", arg = "D" }, { kind = "dim", expr = "m" }, { kind = "dim", expr = "n" },
                       { kind = "dim", expr = "k" } }) do
    params[#params + 1] = x
  end
  -- Only the counters must be zero at a launch (the kernel leaves them zero
  -- again); partial tiles and staged copies are written before they are read.
  if p.streamk == 1 or p.stage ~= "none" or p.epilogue == "tma_ws" then
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
    params = params,
  }
end

-- The family table for an op of lib/gemm.lua.
function M.family(op)
  local layout = op.layout
  return {
    op = op.name,
    name = "wgmma",
    min_cc = 90,
    max_cc = 90,
    arch = "sm_90a",
    dtypes = op.dtypes,
    params = params_of(layout),
    constraints = function(p, shape, dt, dev) return M.constraints(layout, p, shape, dt, dev) end,
    -- The epilogues D's rows allow (constraints refuse the others): the
    -- space never draws the dead half (search/space.lua).
    narrow = function(shape)
      return { epilogue = shape.n % 8 == 0 and { "direct", "tma" } or { "direct", "rows", "tma_ws" } }
    end,
    supports = function(shape, dt, dev) return M.supports(layout, shape, dt, dev) end,
    launch = function(p, dt, dev) return M.launch(layout, p, dt, dev) end,
    source = function(p, dt, dev, name) return M.source(layout, p, dt, dev, name) end,
    default = function(shape, dt, dev)
      return { bm = 128, bn = 256, consumers = 2, stages = 4, persistent = 1, raster = "m", group = 8,
               producer_regs = 40, cluster = "2x1", schedule = "coop", inflight = 1,
               epilogue = shape.n % 8 == 0 and "tma" or "direct", streamk = 0,
               stage = stage_for(layout, shape) }
    end,
  }
end

return M
