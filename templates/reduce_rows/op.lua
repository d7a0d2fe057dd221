-- y[r] = sum over c of x[r, c]: row sums of a rows x cols row-major tensor,
-- accumulated in fp32, written in the input's dtype.
local rows = lib("rows")
local kernel = lib("kernel")
local op = {
  name = "reduce_rows",
  dims = { "rows", "cols" },
  dtypes = { "bf16", "f16", "f32" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.rows * s.cols end, init = "normal" },
    { name = "y", type = "T", role = "out", size = function(s) return s.rows end },
    { name = "rows", role = "dim" },
    { name = "cols", role = "dim" },
  },
  -- A sum of normal values may cancel to near zero, so atol carries the fp32
  -- rounding of long rows; rtol is about one ulp of the output type.
  tolerance = {
    f32 = { rtol = 1e-5, atol = 5e-3 },
    f16 = { rtol = 2e-3, atol = 1e-2 },
    bf16 = { rtol = 1.6e-2, atol = 1e-2 },
  },
}
op.reference = rows.reference(op, function(dt) return string.format([[
  double s = 0.0;
  for (long long c = threadIdx.x; c < cols; c += RT) s += (double)ld_%s(xr[c]);
  s = ref_block(s, sh, false);
  if (threadIdx.x == 0) y[row] = st_%s((float)s);
]], dt, dt) end)
op.metrics = function(shape, dt)
  return { flops = shape.rows * shape.cols, bytes = kernel.bytes(op, dt, shape) }
end

-- What a row computes, for the row family (lib/rows.lua: stream).
op.rows = rows.reduce_kind("CSum", "0.f")
return op
