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

-- What a row computes, for the row families (lib/rows.lua: hold and stream).
-- y = x * rsqrt(mean(x^2) + eps) * w.
do
  local k = {
    sig = "const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y, float eps, long long rows, long long cols",
    call = "x, w, y, eps, rows, cols",
    ptrs = { "x", "w", "y" },
    nred = 1, nst = 1, hold = true, has_b = false,
  }
  k.build = function(R)
    local hold = R.with_wreg(R.body(k, "hold", "    const int c0 = 0;\n    T* yr = y + (rv ? row : 0) * cols;\n" .. R.LOAD_STEP .. [[
    St<1> q;
    q.v[0] = 0.f;
]] .. R.each("q.v[0] = fmaf(xe, xe, q.v[0]);") .. [[
    group_all<CSum, TPR, 1>(q, buf, g, t);
    const float rr = rsqrtf(q.v[0] / (float)cols + eps);
]] .. R.each_out(R.wload(false, true), "ye = xe * rr * TO_F(wv.e[e]);")), false)
    local stream = R.body(k, "stream", [[
    T* yr = y + (rv ? row : 0) * cols;
    St<1> q;
    q.v[0] = 0.f;
]] .. R.steps(R.reindent(R.LOAD_STEP .. R.each("q.v[0] = fmaf(xe, xe, q.v[0]);"))) .. [[
    group_all<CSum, TPR, 1>(q, buf, g, t);
    const float rr = rsqrtf(q.v[0] / (float)cols + eps);
]] .. R.steps(R.reindent(R.LOAD_STEP .. R.each_out(R.wload(false, false), "ye = xe * rr * TO_F(wv.e[e]);"))))
    return hold, stream
  end
  op.rows = k
end

-- The passes over a staged slice, for the tma family (lib/staged.lua).
op.staged = {
  args = "x, w, y, eps, rows, cols",
  weights = { "w" },
  nst = 1,
  passes = function(each, out) return [[
  St<1> q;
  q.v[0] = 0.f;
]] .. each("q.v[0] = fmaf(xe, xe, q.v[0]);") .. [[
  all_reduce<CSum, 1>(q, red, part);
  const float rr = rsqrtf(q.v[0] / (float)cols + eps);
]] .. out("ye = xe * rr * TO_F(wv.e[e]);") end,
}

return op
