-- y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)) over each row of a
-- rows x cols row-major tensor; fp32 arithmetic, output in the input's dtype.
local rows = lib("rows")
local kernel = lib("kernel")
local op = {
  name = "softmax",
  dims = { "rows", "cols" },
  dtypes = { "bf16", "f16", "f32" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.rows * s.cols end, init = "normal" },
    { name = "y", type = "T", role = "out", size = function(s) return s.rows * s.cols end },
    { name = "rows", role = "dim" },
    { name = "cols", role = "dim" },
  },
  -- fp32 exp2 and one division per row: a few ulp in fp32, then one rounding
  -- to the output type (up to two ulp apart from the rounded fp64 reference).
  tolerance = {
    f32 = { rtol = 2e-5, atol = 1e-7 },
    f16 = { rtol = 2e-3, atol = 1e-5 },
    bf16 = { rtol = 1.6e-2, atol = 1e-5 },
  },
}
op.reference = rows.reference(op, function(dt) return (string.format([[
  T_REF* yr = y + row * cols;
  double m = -1.0 / 0.0;
  for (long long c = threadIdx.x; c < cols; c += RT) {
    double v = (double)ld_%s(xr[c]);
    m = v > m ? v : m;
  }
  m = ref_block(m, sh, true);
  double s = 0.0;
  for (long long c = threadIdx.x; c < cols; c += RT) s += exp((double)ld_%s(xr[c]) - m);
  s = ref_block(s, sh, false);
  for (long long c = threadIdx.x; c < cols; c += RT)
    yr[c] = st_%s((float)(exp((double)ld_%s(xr[c]) - m) / s));
]], dt, dt, dt, dt):gsub("T_REF", lib("dtype").ctype(dt))) end)
op.metrics = function(shape, dt)
  return { flops = 5 * shape.rows * shape.cols, bytes = kernel.bytes(op, dt, shape) }
end
return op
