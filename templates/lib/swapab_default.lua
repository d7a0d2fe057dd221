-- swapab's defaults: the decode kernel's (by_cover) and the mid-size
-- kernel's (mid_default), each the first valid config of its ranked
-- candidates; t is the family table (its params and constraints).
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local red_bytes = lib("swapab_geom").red_bytes
local M = {}

-- The default above m = 64: the first mid-size kernel (mc 0), one tile of
-- rows of the narrowest width above 64 that holds m (the widest where none
-- does) or two tiles of rows of the narrowest that holds half of m (mid_z),
-- bm and csplit by fill (mid_default below). bm 64 first: on an H100 at 4096^2 (ninth
-- session, bench/results/2026-11-28/s9-mid) bm 64 with csplit 2 ran 16.0 us
-- at m = 128 and 17.4 at m = 192 (1.03x and 1.02x cuBLASLt), bm 128 with
-- csplit 2 18.3 and 23.2, csplit 4 28.0 and 33.5. The second kernel (mc >= 1) stays in the
-- space, not the default: on an H100 (bench/midm.sh, 2026-11-27 fourth
-- session) its multicast groups (mc 2, 4), which this default picked, ran
-- 1.5-7x slower than mc 1 at the same tuned size (a GPU-wide fence before each
-- cluster-scope slot release, gone since the sixth session: mc 2 and 4 now
-- run 0.97-0.99x their mc 1 twins, bench/mc_probe.sh), and its best against the
-- first kernel's best went either way (0.63-2.35x: 1024 x 4096, m = 255:
-- 20.9 us against 13.1; 4096^2, m = 121: 25.1 against 59.0).
-- The (bm, csplit) pairs over `rows` rows of B (n; 2n for the gated
-- product), in the order bm 64, 128, 256 and fewer splits first, each with
-- its CTAs and the bytes of sums a tile's split adds (bn rows of A a pass).
local function split_pairs(rows, bn)
  local pairs = {}
  for _, bm in ipairs({ 64, 128, 256 }) do
    for _, cs in ipairs({ 1, 2, 4, 8 }) do
      pairs[#pairs + 1] = { bm = bm, cs = cs, ctas = (rows + bm - 1) // bm * cs, red = red_bytes(bm, bn, cs),
                            order = #pairs }
    end
  end
  return pairs
end

-- The first valid config of bn rows of A a pass among pairs (in their order),
-- with the deepest ring that fits, two boxes of k a slot where that ring
-- holds them (one where it does not), launched with pdl. Two boxes: on an
-- H200 (eleventh session, bench/results/2026-11-28/s11-kbox-call11) the
-- decode default at 14336 x 4096 and m = 2, 8 ran 41.9 and 41.6 us with one
-- box a slot and 31.8 and 31.6 with two (cuBLASLt 31.5); at 4096^2,
-- 4096 x 14336 and 1024 x 4096 two were as fast or up to 5% faster (m = 2..24).
-- A mid-size slot is too large for two boxes in 8 slots, so the mid-size
-- default keeps one. pdl: on an H200 (eleventh
-- session, bench/results/2026-11-28/s11-box-call3) the mid-size kernel's
-- best with pdl beat its best without at 8 of 12 sizes (4 weights, m = 65,
-- 129, 190), by 0.5-1.2 us at n = 1024 and 4096; at 14336 x 4096 it lost
-- by up to 1.2 us. The decode winners of the tenth session's range sweep
-- (s10-ranges-call2) had pdl in every bucket at m <= 64.
--
-- The decode kernel's default (decode) also loads the weight evict-first
-- and asks L2 for its first 4 boxes before the wait (where its constraints
-- take them; else 2, then none): on an H200 (twenty-ninth session,
-- bench/results/2026-11-30/s29/dec) at 4096^2 and m = 16..63, over every
-- bn, csplit, kbox and stages of 1248 configs, evict 1 with l2pre 4 ran
-- 5.3-5.7% faster than neither (median at each m; evict alone 2.4-3.1%,
-- l2pre alone 0.4-1.0%), and the range sweep's winners there, which had
-- neither, ran 11.25-11.89 us against 10.37-11.20 for the best with both.
--
-- The mid-size default loads the weight evict-first too (where its
-- constraints take it: one tile of rows) and asks L2 for its first box: on
-- an H200 (thirtieth session, bench/results/2026-11-30/s30/mid), exhaustive
-- over the first mid-size kernel at the first row's four weights and m =
-- 72, 128, 190 (bm, bn, csplit, stages), evict 1 with l2pre 1 ran 1.4-10%
-- faster than neither (median at each weight and m, 12 of 12), evict alone
-- 1.4-6.4%; l2pre 1 alone within 1.7%.
local STEPS = { { "stages", { 8, 6, 4, 2 } }, { "kbox", { 2, 1 } } }
local DECODE_STEPS = { { "evict", { 1, 0 } }, { "l2pre", { 4, 2, 0 } }, STEPS[1], STEPS[2] }
local MID_STEPS = { { "evict", { 1, 0 } }, { "l2pre", { 1, 0 } }, STEPS[1], STEPS[2] }
local function first_of(t, shape, dt, dev, bn, pairs, steps)
  for _, pr in ipairs(pairs) do
    local q = kernel.first_valid(t, shape, dt, dev,
      { bm = pr.bm, bn = pr.bn or bn, csplit = pr.cs, mc = 0, nvar = 1, wstep = 0, evict = 0, pdl = 1, l2pre = 0, inflight = 1,
        kbox = 1 },
      steps)
    if q then return q end
  end
  return nil
end

-- The mid-size default's choice: of the pairs the one whose CTAs fill the
-- most of their waves (one CTA an SM), fewer splits and bm 64 first on a tie.
local function by_fill(t, shape, dt, dev, bn, rows, steps)
  local sms, pairs = dev.sms or 132, split_pairs(rows, bn)
  for _, pr in ipairs(pairs) do pr.fill = pr.ctas / (((pr.ctas + sms - 1) // sms) * sms) end
  table.sort(pairs, function(a, b)
    if a.fill ~= b.fill then return a.fill > b.fill end
    return a.order < b.order
  end)
  return first_of(t, shape, dt, dev, bn, pairs, steps)
end

-- The decode kernel's choice: it streams B and is bound by bytes in flight,
-- not by waves, so the fewest splits (bm 64 first) whose CTAs cover the SMs
-- once (at least 90% of them), among those whose split adds at most
-- DECODE_RED bytes of sums a tile (the adding grows with bn, and its buffer
-- takes ring slots); where none covers, the pair under that cap with the
-- most CTAs. On an H200 (tenth session, bench/results/2026-11-28/
-- s10-ranges-call2) these are the range sweep's swapab winners at m <= 64:
-- csplit 8 at n = 1024 with bn 8-16 and 4 with bn 48-64, 1-2 at 4096, 1 at
-- 14336 (filling waves instead picks 4 there).
local DECODE_RED = 48 * 1024
local function by_cover(t, shape, dt, dev, bn, rows)
  local sms, pairs, best = dev.sms or 132, split_pairs(rows, bn), {}
  for _, pr in ipairs(pairs) do
    if pr.red <= DECODE_RED then best[#best + 1] = pr end
  end
  table.sort(best, function(a, b)
    local ca, cb = a.ctas * 10 >= sms * 9, b.ctas * 10 >= sms * 9
    if ca ~= cb then return ca end
    if not ca and a.ctas ~= b.ctas then return a.ctas > b.ctas end
    return a.order < b.order
  end)
  return first_of(t, shape, dt, dev, bn, best, DECODE_STEPS) or by_fill(t, shape, dt, dev, bn, rows, DECODE_STEPS)
end

-- The mid-size default's choice. Its candidates: one tile of rows (z 1) of
-- the narrowest width above 64 holding m, and two (z 2) of the narrowest
-- holding half of m, each with bm 64, 128 or 256 and csplit with csplit x
-- z at most 4. Of those whose CTAs fit in one wave (one CTA an SM; all of
-- them where none does), the one that fills the most of it wins; on a tie
-- fewer splits (csplit x z), then fewer rows of A computed (z x bn), then
-- z 2 first where the weight fits in a quarter of L2 and z 1 first where it
-- does not, then bm 64 first. Rows: on an H200 (eighteenth session,
-- bench/results/2026-11-29/s18-bn128-call9) at 1024 x 4096 and m = 100..128
-- one tile of 128 rows with csplit 4 ran 7.8-8.0 us, two of 96 with csplit
-- 2 (the same 64 CTAs, 192 rows computed) 8.7-8.8. (A
-- per-SM cost model of loads, products and the split's adding, fitted to 52
-- measured shapes, chose the same config at 102 of 104 shapes of issue 33's
-- weights and a slower one at the other two: bench/RESULTS.md, fourteenth
-- session.) On an H200 (eleventh session, bench/results/
-- 2026-11-28/s11-z-call6, bm 64, pdl): at 1024 x 4096 and m = 255 two tiles
-- of 128 with csplit 2 ran 10.2 us, one of 256 with csplit 4 12.3 and with
-- csplit 8 (the fill rule's pick before) 19.6; at 4096^2 two tiles with
-- csplit 1 and one with csplit 2 ran 18.7 and 18.9 us at m = 255, 18.0 and
-- 14.3 at m = 190; csplit 4 (256 CTAs) ran 27-47 us there; at 14336 x 4096
-- and 4096 x 14336 two tiles ran 1.0-1.7x slower (weights past L2). At
-- 14336 x 4096 (224 column tiles of 64) bm 128 with csplit 1 (112 CTAs) was
-- the fastest at m = 65, 129 and 190 (s11-pdl-call2), where filling waves
-- took csplit 4 (896 CTAs).
local function mid_z(t, shape)
  local fit, half, widest
  for _, v in ipairs(kernel.values(t.params, "bn", function(v) return v > 64 end)) do
    if v >= shape.m and (not fit or v < fit) then fit = v end
    if v < shape.m and 2 * v >= shape.m and (not half or v < half) then half = v end
    if not widest or v > widest then widest = v end
  end
  return fit or widest, half
end

local function mid_default(t, shape, dt, dev)
  local one, two = mid_z(t, shape)
  if not one then return nil end
  local sms, cands = dev.sms or 132, {}
  local small = shape.n * shape.k * dtype.size(gemm.types(dt).In) * 4 <= (dev.l2 or 0)
  for z, bn in pairs({ one, two }) do
    for _, pr in ipairs(split_pairs(shape.n, bn)) do
      if pr.cs * z <= 4 then
        local ctas = pr.ctas * z
        pr.bn, pr.splits, pr.rows = bn, pr.cs * z, bn * z
        pr.fill, pr.one_wave = ctas / (((ctas + sms - 1) // sms) * sms), ctas <= sms
        pr.first = (z == 2) == small
        cands[#cands + 1] = pr
      end
    end
  end
  table.sort(cands, function(a, b)
    if a.one_wave ~= b.one_wave then return a.one_wave end
    if a.fill ~= b.fill then return a.fill > b.fill end
    if a.splits ~= b.splits then return a.splits < b.splits end
    if a.rows ~= b.rows then return a.rows < b.rows end
    if a.first ~= b.first then return a.first end
    return a.order < b.order
  end)
  return first_of(t, shape, dt, dev, one, cands, MID_STEPS)
end

M.decode, M.mid = by_cover, mid_default

return M
