-- y[r, c] = x[r, c] / sqrt(mean_c(x[r, :]^2) + eps) * w[c] over each row of
-- a rows x cols row-major tensor.
local rows = lib("rows")
local kernel = lib("kernel")
local dtype = lib("dtype")
local op = {
  name = "rmsnorm",
  dims = { "rows", "cols" },
  dtypes = { "bf16", "f16", "f32" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.rows * s.cols end, init = "normal" },
    { name = "w", type = "T", role = "in", size = function(s) return s.cols end, init = "normal" },
    { name = "y", type = "T", role = "out", size = function(s) return s.rows * s.cols end },
    { name = "eps", type = "f32", role = "scalar", value = 1e-6 },
    { name = "rows", role = "dim" },
    { name = "cols", role = "dim" },
  },
  tolerance = {
    f32 = { rtol = 1e-5, atol = 1e-5 },
    f16 = { rtol = 2e-3, atol = 2e-3 },
    bf16 = { rtol = 1.6e-2, atol = 1.6e-2 },
  },
}
op.reference = rows.reference(op, function(dt)
  local L = "ld_" .. dt
  return (string.format([[
  CT* yr = y + row * cols;
  double q = 0.0;
  for (long long c = threadIdx.x; c < cols; c += RT) {
    double v = (double)%s(xr[c]);
    q += v * v;
  }
  const double rr = 1.0 / sqrt(ref_block(q, sh, false) / (double)cols + (double)eps);
  for (long long c = threadIdx.x; c < cols; c += RT)
    yr[c] = st_%s((float)((double)%s(xr[c]) * rr * (double)%s(w[c])));
]], L, dt, L, L):gsub("CT", dtype.ctype(dt)))
end)
op.metrics = function(shape, dt)
  return { flops = 4 * shape.rows * shape.cols, bytes = kernel.bytes(op, dt, shape) }
end
return op
