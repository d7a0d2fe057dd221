-- y[r, c] = (x[r, c] - mean_r) / sqrt(var_r + eps) * w[c] + b[c], with the
-- biased variance over each row of a rows x cols row-major tensor.
local rows = lib("rows")
local kernel = lib("kernel")
local dtype = lib("dtype")
local op = {
  name = "layernorm",
  dims = { "rows", "cols" },
  dtypes = { "bf16", "f16", "f32" },
  args = {
    { name = "x", type = "T", role = "in", size = function(s) return s.rows * s.cols end, init = "normal" },
    { name = "w", type = "T", role = "in", size = function(s) return s.cols end, init = "normal" },
    { name = "b", type = "T", role = "in", size = function(s) return s.cols end, init = "normal" },
    { name = "y", type = "T", role = "out", size = function(s) return s.rows * s.cols end },
    { name = "eps", type = "f32", role = "scalar", value = 1e-5 },
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
  double s = 0.0;
  for (long long c = threadIdx.x; c < cols; c += RT) s += (double)%s(xr[c]);
  const double mean = ref_block(s, sh, false) / (double)cols;
  double q = 0.0;
  for (long long c = threadIdx.x; c < cols; c += RT) {
    double d = (double)%s(xr[c]) - mean;
    q += d * d;
  }
  const double var = ref_block(q, sh, false) / (double)cols;
  const double rstd = 1.0 / sqrt(var + (double)eps);
  for (long long c = threadIdx.x; c < cols; c += RT)
    yr[c] = st_%s((float)(((double)%s(xr[c]) - mean) * rstd * (double)%s(w[c]) + (double)%s(b[c])));
]], L, L, dt, L, L, L):gsub("CT", dtype.ctype(dt)))
end)
op.metrics = function(shape, dt)
  return { flops = 8 * shape.rows * shape.cols, bytes = kernel.bytes(op, dt, shape) }
end

-- What a row computes, for the row families (lib/rows.lua: hold and stream).
-- y = (x - mean) * rstd * w + b, biased variance.
do
  local k = {
    sig = "const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, T* __restrict__ y, float eps, long long rows, long long cols",
    call = "x, w, b, y, eps, rows, cols",
    ptrs = { "x", "w", "b", "y" },
    nred = 2, nst = 3, hold = true, has_b = true,
  }
  k.build = function(R)
    -- hold: two exact passes over the registers (mean, then centered squares).
    local hold = R.with_wreg(R.body(k, "hold", "    const int c0 = 0;\n    T* yr = y + (rv ? row : 0) * cols;\n" .. R.LOAD_STEP .. [[
    St<1> s;
    s.v[0] = 0.f;
]] .. R.each("s.v[0] += xe;") .. [[
    group_all<CSum, TPR, 1>(s, buf, g, t);
    const float mean = s.v[0] / (float)cols;
    St<1> q;
    q.v[0] = 0.f;
]] .. R.each("const float d = xe - mean; q.v[0] = fmaf(d, d, q.v[0]);") .. [[
    group_all<CSum, TPR, 1>(q, buf + SLOT, g, t);
    const float rstd = rsqrtf(q.v[0] / (float)cols + eps);
]] .. R.each_out(R.wload(true, true), "ye = fmaf((xe - mean) * rstd, TO_F(wv.e[e]), TO_F(bv.e[e]));")), true)
    -- stream: each step's loads give exact two-pass statistics of their own
    -- (count, mean, squared deviations), merged by Chan's formula into the
    -- thread's, then across the group; then a pass that writes.
    local stream = R.body(k, "stream", [[
    T* yr = y + (rv ? row : 0) * cols;
    St<3> s;
    s.v[0] = 0.f;
    s.v[1] = 0.f;
    s.v[2] = 0.f;
]] .. R.steps(R.reindent(R.LOAD_STEP .. [[
    int cn = 0;
    float cs = 0.f;
]] .. R.COUNT .. R.each("cs += xe;") .. [[
    if (cn > 0) {
      St<3> u;
      u.v[0] = (float)cn;
      u.v[1] = cs / (float)cn;
      u.v[2] = 0.f;
]] .. R.each("const float d = xe - u.v[1]; u.v[2] = fmaf(d, d, u.v[2]);") .. [[
      CChan::f(s, u);
    }
]])) .. [[
    group_all<CChan, TPR, 3>(s, buf, g, t);
    const float mean = s.v[1];
    const float rstd = rsqrtf(fmaxf(s.v[2] / (float)cols, 0.f) + eps);
]] .. R.steps(R.reindent(R.LOAD_STEP .. R.each_out(R.wload(true, false), "ye = fmaf((xe - mean) * rstd, TO_F(wv.e[e]), TO_F(bv.e[e]));"))))
    return hold, stream
  end
  op.rows = k
end

-- The passes over a staged slice, for the tma family (lib/staged.lua).
op.staged = {
  args = "x, w, b, y, eps, rows, cols",
  weights = { "w", "b" },
  nst = 1,
  -- exact two passes over shared memory: the mean, then centered squares
  passes = function(each, out) return [[
  St<1> s;
  s.v[0] = 0.f;
]] .. each("s.v[0] += xe;") .. [[
  all_reduce<CSum, 1>(s, red, part);
  const float mean = s.v[0] / (float)cols;
  St<1> q;
  q.v[0] = 0.f;
]] .. each("const float d = xe - mean; q.v[0] = fmaf(d, d, q.v[0]);") .. [[
  all_reduce<CSum, 1>(q, red + SLOT, part + 2);
  const float rstd = rsqrtf(q.v[0] / (float)cols + eps);
]] .. out("ye = fmaf((xe - mean) * rstd, TO_F(wv.e[e]), TO_F(bv.e[e]));") end,
}

return op
