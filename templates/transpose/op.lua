-- y[c, r] = x[r, c]: x is rows x cols row-major, y is cols x rows row-major.
local kernel = lib("kernel")
local dtype = lib("dtype")
local op = {
  name = "transpose",
  dims = { "rows", "cols" },
  dtypes = { "bf16", "f16", "f32" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.rows * s.cols end, init = "normal" },
    { name = "y", type = "T", role = "out", size = function(s) return s.rows * s.cols end },
    { name = "rows", role = "dim" },
    { name = "cols", role = "dim" },
  },
  -- A copy: exact.
  tolerance = {
    f32 = { rtol = 0, atol = 0 },
    f16 = { rtol = 0, atol = 0 },
    bf16 = { rtol = 0, atol = 0 },
  },
}
-- One thread per element with a grid stride.
op.reference = {
  source = function(dt, name)
    return dtype.prelude .. string.format([[
extern "C" __global__ void %s(%s) {
  const long long n = rows * cols;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x) {
    const long long r = i / cols, c = i %% cols;
    y[c * rows + r] = x[i];
  }
}
]], name, kernel.params(op, dt))
  end,
  launch = function(dt) return { grid = { "min(cdiv(rows * cols, 256), 1048576)", 1, 1 }, block = { 256, 1, 1 }, smem = 0 } end,
}
op.metrics = function(shape, dt)
  return { flops = 0, bytes = kernel.bytes(op, dt, shape) }
end
return op
