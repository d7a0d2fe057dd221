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

-- What a row computes, for the row families (lib/rows.lua: hold and stream).
-- y = exp(x - max) / sum(exp(x - max)), in base 2.
do
  local k = {
    sig = "const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols",
    call = "x, y, rows, cols",
    ptrs = { "x", "y" },
    nred = 2, nst = 2, hold = true,
  }
  k.build = function(R)
    -- SM_PASSES 1: one block reduction of (max, sum) pairs, each thread's pair
    -- taken over its own registers; 2: a max reduction, then a sum reduction.
    -- One reduction halves the barriers a row waits on between its load and
    -- its store.
    local hold = R.body(k, "hold", "    const int c0 = 0;\n    T* yr = y + (rv ? row : 0) * cols;\n" .. R.LOAD_STEP .. [[
    float ms, inv;
    if constexpr (SM_PASSES == 1) {
]] .. R.softmax_pair(R.each) .. [[
      group_all<COnl, TPR, 2>(st, buf, g, t);
      ms = st.v[0];
      inv = 1.f / st.v[1];
    } else {
      St<1> m;
      m.v[0] = NEG_INF;
]] .. R.each("m.v[0] = fmaxf(m.v[0], xe);") .. [[
      group_all<CMax, TPR, 1>(m, buf, g, t);
      ms = m.v[0] * L2E;
      St<1> s;
      s.v[0] = 0.f;
]] .. R.each("s.v[0] += fex2(fmaf(xe, L2E, -ms));") .. [[
      group_all<CSum, TPR, 1>(s, buf + SLOT, g, t);
      inv = 1.f / s.v[0];
    }
]] .. R.each_out("", "ye = fex2(fmaf(xe, L2E, -ms)) * inv;"))
    -- SM_PASSES 2: one online pass for (max, sum), one to write; 3: max, sum, write.
    local stream = R.body(k, "stream", "    T* yr = y + (rv ? row : 0) * cols;\n    float ms, inv;\n" .. [[
    if constexpr (SM_PASSES == 2) {
      St<2> st;
      st.v[0] = NEG_INF;
      st.v[1] = 0.f;
]] .. R.steps(R.reindent(R.LOAD_STEP .. [[
    float cm = NEG_INF;
]] .. R.each("cm = fmaxf(cm, xe);") .. [[
    const float nm = fmaxf(st.v[0], cm * L2E);
    if (nm != NEG_INF) {
      st.v[1] *= fex2(st.v[0] - nm);
      st.v[0] = nm;
]] .. R.each("st.v[1] += fex2(fmaf(xe, L2E, -nm));") .. [[
    }
]])) .. [[
      group_all<COnl, TPR, 2>(st, buf, g, t);
      ms = st.v[0];
      inv = 1.f / st.v[1];
    } else {
      St<1> m;
      m.v[0] = NEG_INF;
]] .. R.steps(R.reindent(R.LOAD_STEP .. R.each("m.v[0] = fmaxf(m.v[0], xe);"))) .. [[
      group_all<CMax, TPR, 1>(m, buf, g, t);
      ms = m.v[0] * L2E;
      St<1> s;
      s.v[0] = 0.f;
]] .. R.steps(R.reindent(R.LOAD_STEP .. R.each("s.v[0] += fex2(fmaf(xe, L2E, -ms));"))) .. [[
      group_all<CSum, TPR, 1>(s, buf + SLOT, g, t);
      inv = 1.f / s.v[0];
    }
]] .. R.steps(R.reindent(R.LOAD_STEP .. R.each_out("", "ye = fex2(fmaf(xe, L2E, -ms)) * inv;"))))
    return hold, stream
  end
  op.rows = k
end

-- The passes over a staged slice, for the tma family (lib/staged.lua).
op.staged = {
  args = "x, y, rows, cols",
  weights = {},
  nst = 2,
  passes = function(each, out) return rows.softmax_pair(each) .. [[
  all_reduce<COnl, 2>(st, red, part);
  const float ms = st.v[0], inv = 1.f / st.v[1];
]] .. out("ye = fex2(fmaf(xe, L2E, -ms)) * inv;") end,
}

return op
