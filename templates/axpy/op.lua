-- y = a*x + y, in place.
local ew = lib("elementwise")
local kernel = lib("kernel")
local op = {
  name = "axpy",
  dims = { "n" },
  dtypes = { "f32", "f16", "bf16" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.n end, init = "normal" },
    { name = "y", type = "T", role = "inout", size = function(s) return s.n end, init = "normal" },
    { name = "a", type = "f32", role = "scalar", value = 0.75 },
    { name = "n", role = "dim" },
  },
  body = "y_ = a * x_ + y_;",
  tolerance = ew.tolerance,
}
op.reference = ew.reference(op)
op.metrics = function(shape, dt)
  return { flops = 2 * shape.n, bytes = kernel.bytes(op, dt, shape) }
end
return op
