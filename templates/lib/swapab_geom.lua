-- swapab's geometry (lib/swapab.lua: the family; the kernels in
-- lib/swapab_decode.lua and lib/swapab_mid.lua, the defaults in
-- lib/swapab_default.lua): k per box, the bytes of a split's sums, each
-- kernel's shared memory, which kernel a config is, and the second
-- mid-size kernel's widths.
local M = {}

M.BK = 64   -- k per box: 128 bytes of bf16/f16, the swizzle span
local BK = M.BK

-- The decode kernel's red: the fp32 sums of a bm x bn tile from each of the
-- other csplit - 1 ranks.
local function red_bytes(bm, bn, csplit) return 4 * bn * bm * (csplit - 1) end

-- Shared memory: the ring (1024-aligned slots), red (the other ranks'
-- sums), the mbarriers, and the slack to align the base to 1024 bytes.
local function sizes(p)
  local slot = p.kbox * (p.bm * BK * 2 + p.bn * BK * 2)
  return slot, p.stages * slot + red_bytes(p.bm, p.bn, p.csplit) + 16 * p.stages + 16 + 1024
end

-- The mid-size kernel (bn > 64): its warpgroups, its threads, its chunks of
-- 4 sums a thread and the most a rank adds, the bytes of red (in the ring)
-- and of shared memory (the ring, the mbarriers, the alignment slack).
local function mid(p) return p.bn > 64 end
local function mid_sizes(p)
  local z = { slot = p.kbox * (p.bm * BK * 2 + p.bn * BK * 2), wgs = p.bm // 64 }
  z.ring = p.stages * z.slot
  z.smem = z.ring + 16 * p.stages + 16 + 1024
  z.threads = 128 * z.wgs + 32
  z.cpr = (p.bn // 8 + p.csplit - 1) // p.csplit
  z.red = (p.csplit - 1) * z.cpr * 128 * z.wgs * 16
  return z
end

-- The second mid-size kernel (mc >= 1: its header above MID2_BODY) and
-- the mid-size kernels' wgmma widths, widest first. wstep 0 (or none): BN
-- down to BN / 2 in nvar - 1 equal steps (bn 256: nvar 3 is 256, 192, 128;
-- nvar 5 is 256, 224, ..., 128), so a BN tuned at a bucket's upper edge has
-- a width for its lower edge, m = BN / 2 (a batch of 128 in [128, 256)),
-- and none more than a step too wide in between. wstep 8 or 16: BN down in
-- steps of wstep, nvar widths (bn 224, wstep 8, nvar 5: 224, 216, ..., 192),
-- so a part of a range runs each m at the width cuBLASLt's tiles take there,
-- m rounded up to 8 (on an H200 at 14336 x 4096, m = 193..248, swapab's
-- 128-row tiles at that width ran 0.96-1.05x cuBLASLt, 224 wide at m = 193
-- 0.82x: bench/RESULTS.md, twenty-sixth session). A config without mc,
-- nvar or wstep (one kept from before they were params) is the first
-- kernel, one width.
local function mid2(p) return mid(p) and (p.mc or 0) >= 1 end
local function widths(p)
  local nv, ws = p.nvar or 1, p.wstep or 0
  if nv == 1 then return { p.bn } end
  local out, step = {}, ws > 0 and ws or p.bn // (2 * (nv - 1))
  for i = 0, nv - 1 do out[#out + 1] = p.bn - i * step end
  return out
end

M.red_bytes, M.sizes, M.mid, M.mid_sizes, M.mid2, M.widths = red_bytes, sizes, mid, mid_sizes, mid2, widths

return M
