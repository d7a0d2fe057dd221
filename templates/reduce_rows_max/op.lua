-- y[r] = max over c of x[r, c], written in the input's dtype (exact).
local rows = lib("rows")
local kernel = lib("kernel")
local op = {
  name = "reduce_rows_max",
  dims = { "rows", "cols" },
  dtypes = { "bf16", "f16", "f32" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.rows * s.cols end, init = "normal" },
    { name = "y", type = "T", role = "out", size = function(s) return s.rows end },
    { name = "rows", role = "dim" },
    { name = "cols", role = "dim" },
  },
  tolerance = {
    f32 = { rtol = 0, atol = 0 },
    f16 = { rtol = 0, atol = 0 },
    bf16 = { rtol = 0, atol = 0 },
  },
}
op.reference = rows.reference(op, function(dt) return string.format([[
  double m = -1.0 / 0.0;
  for (long long c = threadIdx.x; c < cols; c += RT) {
    double v = (double)ld_%s(xr[c]);
    m = v > m ? v : m;
  }
  m = ref_block(m, sh, true);
  if (threadIdx.x == 0) y[row] = st_%s((float)m);
]], dt, dt) end)
op.metrics = function(shape, dt)
  return { flops = shape.rows * shape.cols, bytes = kernel.bytes(op, dt, shape) }
end

-- What a row computes, for the row family (lib/rows.lua: stream).
op.rows = rows.reduce_kind("CMax", "NEG_INF")
return op
