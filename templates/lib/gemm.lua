-- Matrix products D = A·B with fp32 accumulation, shared by the layout ops:
--   gemm_nn: A is m x k row-major, B is k x n row-major (torch.matmul)
--   gemm_nt: A is m x k row-major, B is n x k row-major (F.linear's weight)
-- D is m x n row-major. Inputs are bf16 or f16; the output is the input type
-- ("bf16") or f32 ("bf16>f32").
local dtype = lib("dtype")
local kernel = lib("kernel")
local M = {}

M.dtypes = { "bf16", "f16", "bf16>f32", "f16>f32" }

-- In = element type of A and B, Out = element type of D.
function M.types(dt)
  local from, to = dt:match("^(%w+)>(%w+)$")
  if from then return { In = from, Out = to } end
  return { In = dt, Out = dt }
end

-- Tolerance for a product over k terms. The reference accumulates in fp64 and
-- rounds once to the output type; a kernel accumulating in fp32 in another
-- order differs by a random walk of fp32 roundings (about sqrt(k) of them, each
-- relative to partial sums of size sqrt(k) for unit-variance inputs), which
-- atol covers; rtol covers one rounding of the output type.
function M.tolerance(dt, shape)
  local out = M.types(dt).Out
  local walk = math.sqrt(shape.k)
  if out == "f32" then return { rtol = 1e-5, atol = 2e-6 * walk * walk } end
  if out == "f16" then return { rtol = 2e-3, atol = 1e-4 * walk * walk } end
  return { rtol = 1.6e-2, atol = 1e-4 * walk * walk }
end

-- The element offset of B(kk, col) for a layout.
local function b_at(layout)
  if layout == "nn" then return "kk * n + col" end
  return "col * k + kk"
end

-- Both references' launch: one thread an output, 16 x 16 a block.
local function reference_launch(dt)
  return { grid = { "cdiv(n, 16)", "cdiv(m, 16)", 1 }, block = { 16, 16, 1 }, smem = 0 }
end

-- The reference: one output per thread, 16 x 16 tiles of A and B staged in
-- shared memory, products accumulated in fp64.
function M.reference(op, layout)
  return {
    source = function(dt, name)
      local t = M.types(dt)
      return dtype.prelude .. string.format([[
extern "C" __global__ void %s(%s) {
  __shared__ float sa[16][17], sb[16][17];
  const long long row = (long long)blockIdx.y * 16 + threadIdx.y;
  const long long col = (long long)blockIdx.x * 16 + threadIdx.x;
  double acc = 0.0;
  for (long long k0 = 0; k0 < k; k0 += 16) {
    { long long kk = k0 + threadIdx.x;
      sa[threadIdx.y][threadIdx.x] = (row < m && kk < k) ? ld_%s(A[row * k + kk]) : 0.0f; }
    { long long kk = k0 + threadIdx.y;
      sb[threadIdx.y][threadIdx.x] = (col < n && kk < k) ? ld_%s(B[%s]) : 0.0f; }
    __syncthreads();
    for (int i = 0; i < 16; i++) acc += (double)sa[threadIdx.y][i] * (double)sb[i][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) D[row * n + col] = st_%s((float)acc);
}
]], name, kernel.params(op, dt), t.In, t.In, b_at(layout), t.Out)
    end,
    launch = reference_launch,
  }
end

-- The gated product's reference (M.swiglu_op): as M.reference's, with the
-- gate's and the up's tiles of B side by side and SiLU(gate) * up in fp64.
function M.swiglu_reference(op)
  return {
    source = function(dt, name)
      local t = M.types(dt)
      return dtype.prelude .. string.format([[
extern "C" __global__ void %s(%s) {
  __shared__ float sa[16][17], sg[16][17], su[16][17];
  const long long row = (long long)blockIdx.y * 16 + threadIdx.y;
  const long long col = (long long)blockIdx.x * 16 + threadIdx.x;
  double g = 0.0, u = 0.0;
  for (long long k0 = 0; k0 < k; k0 += 16) {
    { long long kk = k0 + threadIdx.x;
      sa[threadIdx.y][threadIdx.x] = (row < m && kk < k) ? ld_%s(A[row * k + kk]) : 0.0f; }
    { long long kk = k0 + threadIdx.y, c = (long long)blockIdx.x * 16 + threadIdx.x;
      sg[threadIdx.y][threadIdx.x] = (c < n && kk < k) ? ld_%s(B[c * k + kk]) : 0.0f;
      su[threadIdx.y][threadIdx.x] = (c < n && kk < k) ? ld_%s(B[(n + c) * k + kk]) : 0.0f; }
    __syncthreads();
    for (int i = 0; i < 16; i++) {
      g += (double)sa[threadIdx.y][i] * (double)sg[i][threadIdx.x];
      u += (double)sa[threadIdx.y][i] * (double)su[i][threadIdx.x];
    }
    __syncthreads();
  }
  if (row < m && col < n) D[row * n + col] = st_%s((float)(g / (1.0 + exp(-g)) * u));
}
]], name, kernel.params(op, dt), t.In, t.In, t.In, t.Out)
    end,
    launch = reference_launch,
  }
end

-- The op table for a layout ("nn" or "nt").
function M.op(layout)
  local op = {
    name = "gemm_" .. layout,
    layout = layout,
    dims = { "m", "n", "k" },
    dtypes = M.dtypes,
    types = M.types,
    args = {
      { name = "A", type = "In", role = "in", size = function(s) return s.m * s.k end, init = "normal" },
      { name = "B", type = "In", role = "in", size = function(s) return s.k * s.n end, init = "normal" },
      { name = "D", type = "Out", role = "out", size = function(s) return s.m * s.n end },
      { name = "m", role = "dim" },
      { name = "n", role = "dim" },
      { name = "k", role = "dim" },
    },
  }
  op.tolerance = {}
  for _, dt in ipairs(M.dtypes) do
    op.tolerance[dt] = function(shape) return M.tolerance(dt, shape) end
  end
  op.reference = M.reference(op, layout)
  op.metrics = function(shape, dt)
    return { flops = 2 * shape.m * shape.n * shape.k, bytes = kernel.bytes(op, dt, shape) }
  end
  return op
end

-- SiLU(g) * u as the gated product's kernels compute it: fp32, __expf and the
-- fast division (an IEEE division's slow path is a call that spills; silu of a
-- large negative g divides by inf and gives -0, its limit).
M.swiglu_device = [[
AIT_DEV float swiglu(float g, float u) { return __fdividef(g, 1.0f + __expf(-g)) * u; }
]]

-- A config p found at A's m0 rows carried to m (a family's carry: src/tmpl.h's
-- tmpl_carry), for a kernel whose param `name` is the width of its tiles of
-- A's rows: as many tiles at m as at m0, each of the narrowest of widths
-- (ascending; those keep(width) takes, when given) that holds them. nil
-- where p has that width already or none holds them.
function M.carry_rows(p, name, widths, m0, m, keep)
  local tiles = (m0 + p[name] - 1) // p[name]
  local need = (m + tiles - 1) // tiles
  for _, w in ipairs(widths) do
    if (not keep or keep(w)) and w >= need then
      if w == p[name] then return nil end
      return kernel.with(p, { [name] = w })
    end
  end
  return nil
end

-- The gated MLP's first half in one product (a Llama/Mistral/Qwen MLP's
-- silu(gate_proj(x)) * up_proj(x)): D = SiLU(A·Gᵀ) ⊙ (A·Uᵀ), A m x k, B the
-- 2n x k concatenation [G; U] of the gate's and the up's n x k weights
-- (F.linear's layout), D m x n; fp32 accumulation, SiLU and the product in
-- fp32, one rounding. nt's op with B twice as tall, twice the flops, and
-- bf16 or f16 out. Families: those that handle op.swiglu (wgmma, swapab,
-- rowdot).
-- The GEMM a gated product's shape is to its families' rules: 2n columns
-- of accumulators (the gate's and the up's), m and k as they are.
function M.swiglu_gemm_shape(shape)
  return { m = shape.m, n = 2 * shape.n, k = shape.k }
end

function M.swiglu_op()
  local op = M.op("nt")
  op.name, op.swiglu, op.dtypes = "gemm_swiglu", true, { "bf16", "f16" }
  op.args[2].size = function(s) return 2 * s.n * s.k end
  -- SiLU(g) * u moves by about |u| dg + |g| du: the product's atol times
  -- twice the typical |g| and |u| (sqrt(k) for unit-variance inputs).
  op.tolerance = {}
  for _, dt in ipairs(op.dtypes) do
    op.tolerance[dt] = function(shape)
      local tol = M.tolerance(dt, shape)
      return { rtol = tol.rtol, atol = tol.atol * 2 * math.sqrt(shape.k) }
    end
  end
  op.reference = M.swiglu_reference(op)
  op.metrics = function(shape, dt)
    return { flops = 4 * shape.m * shape.n * shape.k, bytes = kernel.bytes(op, dt, shape) }
  end
  return op
end

return M
