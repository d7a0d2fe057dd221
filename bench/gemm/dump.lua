-- Print the CUDA source of one GEMM config outside the tuner, for
-- bench/gemm_probe.sh (wgmma, whose launch facts go to stderr) and
-- bench/archive/decode_seg.sh (FAM=gemv: any family of templates/gemm_LAYOUT/).
-- usage: [FAM=family] lua5.4 dump.lua ROOT layout dtype kernel_name key=value...
local root, layout, dt, name = arg[1], arg[2], arg[3], arg[4]
local cache = {}
function lib(n)
  if not cache[n] then cache[n] = dofile(root .. "/templates/lib/" .. n .. ".lua") end
  return cache[n]
end
OP = lib("gemm").op(layout)
local fam = dofile(root .. "/templates/gemm_" .. layout .. "/" .. (os.getenv("FAM") or "wgmma") .. ".lua")
-- shape=MxNxK (default 4096^3) is the shape constraints are checked at.
local shape = { m = 4096, n = 4096, k = 4096 }
for i = 5, #arg do
  local m, n, k = arg[i]:match("^shape=(%d+)x(%d+)x(%d+)$")
  if m then shape = { m = tonumber(m), n = tonumber(n), k = tonumber(k) } end
end
local p = fam.default(shape, dt, { cc = 90, sms = 132, smem_optin = 232448 })
for i = 5, #arg do
  local k, v = arg[i]:match("^([%w_]+)=(.*)$")
  if k ~= "shape" then p[k] = tonumber(v) or v end
end
local dev = { cc = 90, sms = 132, smem_optin = 232448 }
local ok, why = fam.constraints(p, shape, dt, dev)
if not ok then io.stderr:write("invalid: " .. why .. "\n") os.exit(1) end
io.write(fam.source(p, dt, dev, name))
local L = fam.launch(p, dt, dev)
if not L.params then os.exit(0) end
local share = (p.cluster == "2x1" and 1) or (p.cluster == "1x2" and 2) or 0
io.stderr:write(string.format("smem=%d block=%d share=%d abox=%d bbox=%d epi=%d streamk=%d grid=%s\n", L.smem, L.block[1], share,
  L.params[1].box[2], L.params[2].box[2], p.epilogue == "tma" and 1 or 0, p.streamk or 0, L.grid[1]))
