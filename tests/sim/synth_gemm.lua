-- tests/sim/synth_gemm.lua: writes tests/sim/landscapes/gemm-synthetic.tsv,
-- a SYNTHETIC landscape: no GPU measured any of it. It stands in for the
-- exhaustive sweeps of a bf16 GEMM family on an H100 until those are
-- recorded (aitune replay export), so that strategies can be compared on a
-- space with the structure such sweeps have: a few interacting params
-- (tile shape x pipeline depth x warpgroups), hard limits (shared memory,
-- accumulator registers), wave quantization on 132 SMs, split-K for skinny
-- shapes, failures (spills pruned, a few runtime faults), and a rugged
-- deterministic residue (+-4%, and 1 config in 20 slower by a third).
-- Deterministic: run it again and the file is the same.
--
--     lua5.4 tests/sim/synth_gemm.lua > tests/sim/landscapes/gemm-synthetic.tsv
local params = {
  { "bm", { 64, 128, 256 } },
  { "bn", { 64, 128, 256 } },
  { "bk", { 32, 64, 128 } },
  { "stages", { 2, 3, 4, 5 } },
  { "wg", { 1, 2 } },
  { "cluster", { 1, 2 } },
  { "split_k", { 1, 2, 4 } },
  { "raster", { 0, 1 } },
}
local shapes = {   -- the bucket chain first (warm start walks it), then skinny ones
  { 1024, 1024, 1024 }, { 2048, 2048, 2048 }, { 4096, 4096, 4096 },
  { 16, 4096, 4096 },
}

local SMS, PEAK, BW, SMEM = 132, 800e12, 3.0e12, 227 * 1024

-- A hash of a string to [0, 1): FNV-1a, 64-bit wrapping.
local function unit(s)
  local h = 0xcbf29ce484222325
  for i = 1, #s do h = ((h ~ s:byte(i)) * 0x100000001b3) end
  return ((h >> 11) & 0x1fffffffffffff) / 9007199254740992.0
end

local function log2(x) return math.log(x, 2) end

-- Time in us of config p for shape (M, N, K), or nil plus a failure status.
local function model(p, M, N, K)
  local smem = p.stages * (p.bm + p.bn) * p.bk * 2
  if smem > SMEM then return nil, "constraint" end
  local rows = p.bm // p.wg                           -- each consumer warpgroup owns 64 or 128 rows
  if rows < 64 or rows > 128 then return nil, "constraint" end
  local acc = p.bm * p.bn / (p.wg * 128)             -- fp32 accumulators per thread
  if p.split_k > 1 and K // p.split_k < p.bk * 2 then return nil, "constraint" end
  if acc + 8 * p.stages > 232 then return nil, "compile" end   -- spills: pruned
  local id = string.format("%d,%d,%d,%d,%d,%d,%d,%d", p.bm, p.bn, p.bk, p.stages, p.wg, p.cluster, p.split_k, p.raster)
  if p.cluster == 2 and p.split_k == 4 and unit(id .. "fault") < 0.3 then return nil, "runtime" end

  local tiles = math.ceil(M / p.bm) * math.ceil(N / p.bn)
  local ctas = tiles * p.split_k
  local per_sm = math.max(1, math.min(SMEM // smem, p.wg == 2 and 1 or 2))
  local slots = SMS * per_sm
  if p.cluster == 2 then slots = slots - (slots % 2) end
  local waves = math.ceil(ctas / slots)
  local wave_eff = ctas / (waves * slots)

  -- Tensor-core efficiency: arithmetic intensity of the tile, latency
  -- hidden by the pipeline (stages x bk in flight), warpgroups for big tiles.
  local ai = p.bm * p.bn / (p.bm + p.bn)
  local e_tile = ai / (ai + 18)
  local inflight = (p.stages - 1) * p.bk
  local e_pipe = 1 - 0.55 * math.exp(-inflight / 96)
  local e_bk = ({ [32] = 0.90, [64] = 1.0, [128] = 0.96 })[p.bk]
  local e_wg = (p.wg == 2) and ((p.bm * p.bn >= 128 * 128) and 1.0 or 0.88) or ((p.bm * p.bn >= 128 * 256) and 0.78 or 0.97)
  local e_occ = per_sm > 1 and 1.04 or 1.0
  local eff = e_tile * e_pipe * e_bk * e_wg * e_occ
  local flops = 2.0 * M * N * K
  local t_compute = flops / (PEAK * eff * wave_eff)

  -- DRAM traffic: A is read once per column of tiles, B once per row of
  -- tiles, divided by what L2 keeps (rasterized order keeps more; a
  -- cluster of 2 multicasts one operand).
  local reuse = p.raster == 1 and 6 or 2.5
  local a = M * K * 2 * math.max(1, math.ceil(N / p.bn) / reuse)
  local b = K * N * 2 * math.max(1, math.ceil(M / p.bm) / reuse)
  if p.cluster == 2 then b = b * 0.6 end
  local c = M * N * 2
  -- Bandwidth needs enough CTAs in flight: a few dozen SMs cannot pull 3 TB/s.
  local bw = BW * math.min(1, math.min(ctas, slots) / 100)
  local t_mem = (a + b + c) / bw
  local t = math.max(t_compute, t_mem) + 0.25 * math.min(t_compute, t_mem)
  if p.split_k > 1 then t = t + (M * N * 4 * (p.split_k + 1)) / BW + 3e-6 end
  t = t + 4e-6                                       -- launch and tail
  if p.cluster == 2 then t = t * (1 + 0.03 * (1 - wave_eff)) end
  -- The rugged residue: what no simple model of a GPU predicts.
  local bucket = string.format("%d,%d,%d", M, N, K)
  t = t * (0.96 + 0.08 * unit(id .. bucket))
  if unit(id .. bucket .. "slow") < 0.05 then t = t * 1.33 end
  return t * 1e6
end

local function compile_ms(p)
  local id = string.format("%d,%d,%d,%d,%d,%d,%d,%d", p.bm, p.bn, p.bk, p.stages, p.wg, p.cluster, p.split_k, p.raster)
  local ms = 700 + 90 * p.stages + 0.012 * p.bm * p.bn + 350 * (p.wg - 1) + 120 * (p.cluster - 1)
  return ms * (0.85 + 0.3 * unit(id .. "cc"))
end

local function json(p)
  local keys = {}
  for _, q in ipairs(params) do keys[#keys + 1] = q[1] end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = string.format("%q:%d", k, p[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local function size(n) local l = log2(n) return (l == math.floor(l)) and string.format("2^%d", l) or tostring(n) end

print("# aitune landscape v1")
print("# SYNTHETIC, NOT MEASURED: written by tests/sim/synth_gemm.lua from an analytic model of a")
print("# bf16 GEMM family on an H100-like GPU (tile shape, pipeline stages, warpgroups, cluster,")
print("# split-K, rasterization; shared-memory and register limits; waves on 132 SMs; spills pruned;")
print("# a deterministic rugged residue). It stands in for recorded GEMM sweeps, which replace it")
print("# once measured (aitune replay export). Constraint-rejected configs are left out.")
print("op\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig")
for _, s in ipairs(shapes) do
  local M, N, K = s[1], s[2], s[3]
  local bucket = string.format("m=%s,n=%s,k=%s", size(M), size(N), size(K))
  local idx = {}
  for i = 1, #params do idx[i] = 1 end
  while true do
    local p = {}
    for i, q in ipairs(params) do p[q[1]] = q[2][idx[i]] end
    local t, why = model(p, M, N, K)
    if why ~= "constraint" then
      print(string.format("gemm\tgemm/synth\tsm_90\tbf16\t%s\t%s\t%.2f\t%.0f\t%s", bucket, t and "ok" or why,
                          t or 0, compile_ms(p), json(p)))
    end
    local k = #params
    while k >= 1 do
      idx[k] = idx[k] + 1
      if idx[k] <= #params[k][2] then break end
      idx[k] = 1
      k = k - 1
    end
    if k < 1 then break end
  end
end
