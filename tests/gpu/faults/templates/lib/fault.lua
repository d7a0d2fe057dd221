-- Deliberately broken axpy kernels for the fault-injection sweep
-- (tests/gpu/faults.sh). Each has one config; `body` is the per-element
-- statement over i, x, y, a, n. Never part of templates/.
local dtype = lib("dtype")
local kernel = lib("kernel")
local M = {}

function M.template(op, name, body, extra)
  extra = extra or {}
  return {
    op = "axpy", name = name, min_cc = 80, dtypes = { "f32" },
    params = { { "block", { extra.block or 256 } } },
    constraints = function() return true end,
    supports = function() return true end,
    launch = function(p)
      return { grid = { string.format("cdiv(n, %d)", p.block), 1, 1 }, block = { p.block, 1, 1 }, smem = extra.smem or 0 }
    end,
    source = function(p, dt, dev, kname)
      if extra.lua_error then error("deliberate Lua error in " .. name .. ".source()") end
      return dtype.prelude .. string.format([[
extern "C" __global__ void %s(%s) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  %s
  if (i < n) { %s }
}
]], kname, kernel.params(op, dt), extra.pre or "", body)
    end,
    default = function() return { block = extra.block or 256 } end,
  }
end

return M
