-- y[0] = sum of x[0..n): a whole-tensor sum, accumulated in fp32 and written
-- as fp32 whatever the input type. Inputs are uniform in [0, 1) so the sum
-- does not cancel and a relative tolerance is meaningful.
local kernel = lib("kernel")
local dtype = lib("dtype")
local op = {
  name = "reduce_all",
  dims = { "n" },
  dtypes = { "f32", "bf16", "f16" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.n end, init = "uniform" },
    { name = "y", type = "f32", role = "out", size = function(s) return 1 end },
    { name = "n", role = "dim" },
  },
  -- fp32 partial sums of positive values: relative error grows with the
  -- elements one thread adds in sequence (about a thousand at 2^28).
  tolerance = {
    f32 = { rtol = 1e-4, atol = 1e-3 },
    f16 = { rtol = 1e-4, atol = 1e-3 },
    bf16 = { rtol = 1e-4, atol = 1e-3 },
  },
}
-- One block, fp64 partial sums, eight independent loads per thread per step.
op.reference = {
  source = function(dt, name)
    return dtype.prelude .. string.format([[
extern "C" __global__ void __launch_bounds__(1024) %s(%s) {
  __shared__ double sh[1024];
  double s = 0.0;
  for (long long i0 = 0; i0 < n; i0 += 8 * 1024) {
    double v[8];
    for (int u = 0; u < 8; ++u) {
      long long i = i0 + u * 1024 + threadIdx.x;
      v[u] = i < n ? (double)ld_%s(x[i]) : 0.0;
    }
    for (int u = 0; u < 8; ++u) s += v[u];
  }
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int h = 512; h > 0; h >>= 1) {
    if ((int)threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[0] = (float)sh[0];
}
]], name, kernel.params(op, dt), dt)
  end,
  launch = function(dt) return { grid = { 1, 1, 1 }, block = { 1024, 1, 1 }, smem = 0 } end,
}
op.metrics = function(shape, dt)
  return { flops = shape.n, bytes = kernel.bytes(op, dt, shape) }
end
return op
