-- The swapped wgmma kernel's own parts (lib/wgmma.lua's family with
-- op.swap: gemm_nt/wgmma_swap, Dᵀ = B·Aᵀ, the weight's rows in BM-row tiles,
-- A's m rows in BN-wide ones): the m it serves, its widths along m and the
-- values it takes of wgmma's params, its own param wstep (the width chosen
-- at each launch: run_widths, width_expr, refuse) and its default. W, where
-- a function takes it, is lib/wgmma.lua's module (its geometry and
-- constraints).
local gemm = lib("gemm")

local M = {}

-- It serves m above this; swapab (lib/swapab.lua) the m up to it.
M.MIN_M = 256

-- Its widths along m: multiples of 8 between 128 and 256, so a ragged m
-- tiles into whole waves (cuBLASLt's kernels at row 2's sizes take 152,
-- 160, 176 and 224: nineteenth session, call 7). It stores from registers
-- and reads A and B in place. (A block that bench/narrow.py can narrow.)
local SWAP_WIDTHS = {
  128, 136, 144, 152, 160, 176, 192, 208, 224, 256,
}
-- The weight's rows a tile: wgmma's, and 192, whose two coop consumers
-- split the tile by columns (lib/wgmma.lua's cols), as cuBLASLt's 192 x 176
-- tiles (two waves at 2086 x 4096 x 4096, where 128-row tiles take three).
-- (A block that bench/narrow.py can narrow.)
local SWAP_ROWS = {
  64, 128, 192, 256,
}
-- The values of wgmma's params it takes (lib/wgmma.lua's params_of).
M.ONLY = { bm = SWAP_ROWS, bn = SWAP_WIDTHS, epilogue = { "direct" }, stage = { "none" } }
-- Its own param, wstep: 0, its tiles are bn wide at every shape; 8 or 16,
-- the launch picks the width at each m (width_expr) among the multiples of
-- wstep from 128 below bn, and bn (run_widths), each compiled into the
-- kernel: one config then fills whole waves at every m of a bucket, as
-- cuBLASLt's choice among its kernels does. On an H200
-- (twentieth session, call 3) one such config (128 x 192, wstep 8,
-- ping-pong) held 4096^2's bucket m = 2048..4094 at 0.951-1.032x cuBLASLt
-- at every m scanned (step 61), where the unswapped pair chosen at 4095
-- ran 0.675-1.01x (call 2). Each width's copy of the mainloop costs compile
-- time: 0.34-0.60 CPU s with one, 1.9 with 4 widths at bm 256, 3.8 with 9.
-- (A block that bench/narrow.py can narrow.)
local SWAP_PARAMS = {
  { "wstep", { 0, 8, 16 } },
}
M.PARAMS = SWAP_PARAMS

-- The widths a run-time-width kernel (wstep > 0) holds: the multiples of
-- wstep from RUN_MIN below bn, then bn; nil for a kernel of one width.
local RUN_MIN = 128
function M.run_widths(p)
  if (p.wstep or 0) == 0 then return nil end
  local out = {}
  for w = RUN_MIN, p.bn - 1, p.wstep do out[#out + 1] = w end
  out[#out + 1] = p.bn
  return out
end

-- The width such a kernel takes at the launch's shape (km, kn: the names
-- of the kernel's m and n in the plan; per: tiles a unit along n, 2 under
-- a 1x2 cluster; g: the grid's workers): as few waves of units as bn's
-- tiles make (v), and among the widths with that many the narrowest, so no
-- column is computed for nothing: with r rows of units, c = floor(v x
-- workers / r) units along n, each at least cdiv(kn, c) columns wide (two
-- tiles a unit under 1x2), rounded up to wstep, at least RUN_MIN and at
-- most bn. An expression over the plan's dims (expr.h: cdiv, min, max;
-- floor(a / b) written cdiv(a - b + 1, b)).
function M.width_expr(p, km, kn, per, g)
  local r = string.format("cdiv(%s, %d)", km, p.bm)
  local vg = string.format("cdiv(%s * cdiv(%s, %d), %d) * %d", r, kn, per * p.bn, g, g)
  local c = string.format("cdiv(%s - %s + 1, %s)", vg, r, r)
  return string.format("min(%d, max(%d, cdiv(cdiv(%s, %s%s), %d) * %d))", p.bn, RUN_MIN, kn,
                       per == 2 and "2 * " or "", c, p.wstep, p.wstep)
end

-- Why p's wstep cannot be (nil: it can); sh is wgmma's share(p) (1: a
-- 2x1 cluster, whose CTAs load halves of B).
function M.refuse(p, sh)
  if (p.wstep or 0) == 0 then return nil end
  if p.bn <= RUN_MIN then return "a width chosen at run time needs bn above " .. RUN_MIN end
  if p.streamk ~= 0 then return "a width chosen at run time has no stream-K fix-up" end
  if sh == 1 then return "a width chosen at run time is not split into halves of B (cluster 2x1)" end
  return nil
end

-- A config found at A's m0 rows carried to m (warm starts: src/tmpl.h's
-- tmpl_carry): a fixed width (wstep 0) keeps its number of tiles along m,
-- each the narrowest of its widths that holds them, so the grid keeps the
-- rounds of tiles it was found to fill; nil where the width is chosen at
-- run time already, is that width already, or no width holds them.
function M.carry(p, m0, m)
  if (p.wstep or 0) ~= 0 then return nil end
  return gemm.carry_rows(p, "bn", SWAP_WIDTHS, m0, m)
end

-- Its default (ks: its kernel shape, the GEMM's m and n exchanged): the
-- tile of bm (the weight's rows) 128 or 256 and bn (A's rows) one of its
-- widths whose waves cost least, cdiv(tiles, workers) x (bm x bn + TILE_FIXED), the
-- first of a tie (larger bm, then narrower), among those the constraints
-- take; one CTA a tile, two consumers, as many stages as fit (one fewer
-- for bm 128: 108.5 against 116.2 us at 2086 x 4096 x 4096 with 128 x 176
-- tiles, 157.8 against 171.7 at 3184 with 128 x 160; bm 256 ran 0-10%
-- faster with all that fit, but for 256 x 152 at 1049 x 14336: 191.2
-- against 204.1). TILE_FIXED, a tile's cost beyond its area in elements,
-- is fitted to an exhaustive sweep of the swapped space on an H200
-- (nineteenth session, call 8): with it the default's tile is the fastest
-- one measured at 6 of its 7 shapes (4096^2 at m = 1049: 256 x 136, 2086: 128 x 176, 3184: 128 x 160, 5258:
-- 256 x 160; 14336 x 4096 at 1049: 256 x 152, 2818: 256 x 136); at 4096^2,
-- m = 4099, it takes 256 x 128 (225.9 us) where 128 x 176 in pairs ran
-- 209.9. With 0 it would take 128 x 128 there, with 5800 (the overhead
-- that the unswapped wave tiles above imply) 256 x 136 at m = 3184, 6.5%
-- slower than 128 x 160. Tiles of 192 rows (their consumers split by
-- columns) are not among its choices yet: with them this cost takes 192 x
-- 176 at 4096^2, m = 1049 and 2086, which ran 52.6 and 106.7 us on an H200
-- where this default's 256 x 136 took 57.0-58.9 and 128 x 176 119.3
-- (twenty-second session, call 1; cuBLASLt 46.7 and 100.0), but it also
-- changes the tile at 50 more of row 2's 260 sizes: at 23 of them the two
-- defaults ran 1.001x apart (geomean; worst 0.791x cuBLASLt against 0.814x:
-- twenty-third session, call 1, s23-next-call1/deftable.txt).
local TILE_FIXED = 1000
function M.default(W, layout, ks, dt, dev)
  local best, best_cost
  for _, bm in ipairs({ 256, 128 }) do
    for _, bn in ipairs(SWAP_WIDTHS) do
      local p = { bm = bm, bn = bn, consumers = 2, persistent = 1, raster = "m", group = 8, cluster = "1x1",
                  schedule = "coop", inflight = 1, epilogue = "direct", streamk = 0, stage = "none", stages = 4 }
      -- More than 128 accumulators a thread: the consumers take 240 registers.
      p.producer_regs = W.accumulators(p) > 128 and 24 or 40
      p.stages = W.stages_fit(p, dev) - (bm == 128 and 1 or 0)
      local u, w = W.units(p, ks), W.workers(p, dev)
      local cost = ((u + w - 1) // w) * (bm * bn + TILE_FIXED)
      if (not best_cost or cost < best_cost) and W.constraints(layout, p, ks, dt, dev, nil, true) then best, best_cost = p, cost end
    end
  end
  -- Its width chosen at each m in steps of 16 (wstep; 8 compiles twice the
  -- copies of the mainloop for at most 8 columns less a tile), where bn
  -- leaves narrower widths to choose.
  if best and best.bn > RUN_MIN then
    best.wstep = 16
    if not W.constraints(layout, best, ks, dt, dev, nil, true) then best.wstep = 0 end
  elseif best then
    best.wstep = 0
  end
  return best
end

return M
