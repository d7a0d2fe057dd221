-- y = x converted between element types. Its dtypes name both sides,
-- "f32>bf16" (narrowing, round to nearest even) and "bf16>f32" (widening).
local ew = lib("elementwise")
local kernel = lib("kernel")
local op = {
  name = "cast",
  dims = { "n" },
  dtypes = { "f32>bf16", "bf16>f32", "f32>f16", "f16>f32" },
  types = function(dt)
    local from, to = dt:match("^(%w+)>(%w+)$")
    return { In = from, Out = to }
  end,
  args = {
    { name = "x", type = "In", role = "in", size = function(s) return s.n end, init = "normal" },
    { name = "y", type = "Out", role = "out", size = function(s) return s.n end },
    { name = "n", role = "dim" },
  },
  body = "y_ = x_;",
}
-- Exact: both sides round the same float once.
op.tolerance = {}
for _, dt in ipairs(op.dtypes) do op.tolerance[dt] = { rtol = 0, atol = 0 } end
op.reference = ew.reference(op)
op.metrics = function(shape, dt)
  return { flops = 0, bytes = kernel.bytes(op, dt, shape) }
end
return op
