-- The wgmma family's default config (lib/wgmma.lua's family table asks it):
-- 128 x 256 tiles in pairs along m (cluster 2x1, two consumers, coop,
-- persistent), or a smaller tile where the pairs leave SMs idle
-- (wave_tile), with stream-K's tail split where a full wave of units is
-- followed by a partial one it splits: on an H200 (fourteenth session,
-- bench/results/2026-11-28/s14-sk-call7) the pairs at 4096^2 ran 89.3 ->
-- 70.8 us with it at m = 1171, 136.0 -> 121.6 at 2086, 191.4 -> 178.5 at
-- 3184 and 350.4 -> 349.2 at 6295; at 14336 x 4096 it was within 1% either
-- way (m = 805, 1354, 4648). W is lib/wgmma.lua's module: its constraints
-- and geometry (units, workers, stages_fit, splits).
local M = {}

-- The default's smaller tiles and what one wave of each costs, relative to
-- the 128 x 256 pair's (1): on an H200 at 4096^2 and 14336 x 4096, k = 4096
-- (fifteenth session, bench/results/2026-11-28/s15-subwave-call5), a wave of
-- 64 x 128 tiles (one consumer) took 16.3 us, of 128 x 128 (two) 24-25, of
-- 128 x 256 pairs 43.2-43.7: smaller tiles cost less a wave but more an
-- element, so they win where the pair's grid leaves SMs idle. 64 x 192
-- (one consumer): a wave of 110 at m = 317 took 20.5 us against 40.9 for
-- 128 x 256 tiles (twenty-third session, calls 6-8, s23-ab and s23-def);
-- with it the default ran 4096^2 m = 317 in 20.6 us where 128 x 128 took
-- 31.5, 14336 x 4096 m = 317 65.4 (87.3), 1049 65.0 (68.3), 378 the same,
-- 561 and 1110 2.5-4.3% slower (s23-def/d_table.txt).
local WAVE_TILES = {
  { bm = 128, bn = 128, consumers = 2, cluster = "1x1", cost = 0.575 },
  { bm = 64, bn = 128, consumers = 1, cluster = "1x1", cost = 0.375 },
  { bm = 64, bn = 192, consumers = 1, cluster = "1x1", cost = 0.50 },
}

-- What stream-K's split tail costs, in waves: measured 0.59-0.73 of one on
-- an H200 (128 x 256 pairs at 4096^2, m = 1171, 2086, 3184: s14-sk-call7),
-- where an even split would take 0.15-0.21.
local SK_TAIL = 0.65

-- The default's tile at shape. Where the 128 x 256 pairs fill fewer than
-- three waves, the one of WAVE_TILES whose waves cost least (the first of a
-- tie): cdiv(units, workers) of them, or the full ones and SK_TAIL where
-- the default would split the tail (tail_split), each at
-- its wave's cost, with as many stages as shared memory holds (constraints'
-- fit), among those the constraints take; elsewhere the pair. Against the
-- pair alone (same call, s15-subwave-call5): 4096^2 m = 256 43.2 -> 16.3 us,
-- 317 43.6 -> 24.3, 439 43.7 -> 26.9, 561 45.3 -> 40.6, 683 48.8 -> 45.7;
-- 14336 x 4096 m = 378 93.6 -> 74.1, 561 138.8 -> 120.0; the pair where it
-- was fastest (4096^2 m = 805, 927; 14336 x 4096 m = 256, 744). Its pick
-- was within 1.3% of the best of any kind there at 10 of 12 shapes.
-- Whether the default splits p's tail with stream-K at shape: a full wave
-- of units followed by a partial one it splits.
local function tail_split(W, p, shape, dev)
  return W.units(p, shape) >= W.workers(p, dev) and W.splits(p, shape, dev)
end

local function wave_tile(W, layout, base, shape, dt, dev)
  local function cost(p, c)
    local u, w = W.units(p, shape), W.workers(p, dev)
    if tail_split(W, p, shape, dev) then return (u // w + SK_TAIL) * c end
    return ((u + w - 1) // w) * c
  end
  if W.units(base, shape) >= 3 * W.workers(base, dev) then return base end
  local best, best_cost = base, cost(base, 1)
  for _, t in ipairs(WAVE_TILES) do
    local p = {}
    for k, v in pairs(base) do p[k] = v end
    p.bm, p.bn, p.consumers, p.cluster = t.bm, t.bn, t.consumers, t.cluster
    p.stages = W.stages_fit(p, dev)
    local c = cost(p, t.cost)
    if c < best_cost and W.constraints(layout, p, shape, dt, dev) then best, best_cost = p, c end
  end
  return best
end

-- The default at shape (gs: the GEMM it runs, 2n wide for the gated
-- product; stage: the operands it must stage). The gated product keeps the
-- pair without stream-K, and nn the pair (wave_tile is measured in
-- F.linear's layout, nt, only).
function M.default(W, layout, sw, shape, gs, stage, dt, dev)
  local base = { bm = 128, bn = 256, consumers = 2, stages = 4, persistent = 1, raster = "m", group = 8,
                 producer_regs = 40, cluster = "2x1", schedule = "coop", inflight = 1,
                 epilogue = (shape.n % 8 == 0 and not sw) and "tma" or "direct", streamk = 0, stage = stage }
  local p = (sw or layout ~= "nt") and base or wave_tile(W, layout, base, gs, dt, dev)
  if not sw and tail_split(W, p, gs, dev) then
    p.streamk = 1
    if not W.constraints(layout, p, gs, dt, dev, sw) then p.streamk = 0 end
  end
  return p
end

return M
