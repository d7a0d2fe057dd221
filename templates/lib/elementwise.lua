-- One family for every elementwise op: each thread moves `ilp` vectors of
-- `vec` elements per step, with all loads issued before the first use.
-- Vectors are used only when every pointer is aligned to its vector size;
-- otherwise, and for the last n % vec elements, a scalar path runs, so any n
-- and any pointer alignment is correct.
local dtype = lib("dtype")
local kernel = lib("kernel")
local M = {}

-- Largest element size among the op's buffers, which bounds the vector width.
local function widest(op, dt)
  local w = 0
  for _, a in ipairs(kernel.args(op, dt)) do
    if a.role ~= "dim" and a.role ~= "scalar" then w = math.max(w, dtype.size(a.dtype)) end
  end
  return w
end

local function buffers(op, dt)
  local ins, outs, all = {}, {}, {}
  for _, a in ipairs(kernel.args(op, dt)) do
    if a.role == "in" or a.role == "inout" then ins[#ins + 1] = a end
    if a.role == "out" or a.role == "inout" then outs[#outs + 1] = a end
    if a.role ~= "dim" and a.role ~= "scalar" then all[#all + 1] = a end
  end
  return ins, outs, all
end

-- Per-element code: load inputs as floats, run the op's body, store outputs.
-- `at(a)` gives the lvalue/rvalue of buffer a's element.
local function element(op, dt, body, at)
  local ins, outs = buffers(op, dt)
  local s = { "{" }
  for _, a in ipairs(ins) do
    s[#s + 1] = string.format("float %s_ = ld_%s(%s);", a.name, a.dtype, at(a))
  end
  for _, a in ipairs(outs) do
    if a.role == "out" then s[#s + 1] = string.format("float %s_;", a.name) end
  end
  s[#s + 1] = body
  for _, a in ipairs(outs) do
    s[#s + 1] = string.format("%s = st_%s(%s_);", at(a), a.dtype, a.name)
  end
  s[#s + 1] = "}"
  return table.concat(s, " ")
end

local function source(op, body, p, dt, name)
  local _, _, all = buffers(op, dt)
  local V, U, B = p.vec, p.ilp, p.block
  local out = { dtype.prelude }
  local vt = {}
  for _, a in ipairs(all) do
    if not vt[a.dtype] then
      local vname, decl = dtype.vec_struct(a.dtype, V)
      vt[a.dtype] = vname
      out[#out + 1] = decl
    end
  end
  local aligned = {}
  for _, a in ipairs(all) do
    aligned[#aligned + 1] = string.format("((unsigned long long)%s %% %d) == 0", a.name, dtype.size(a.dtype) * V)
  end
  local scalar = element(op, dt, body, function(a) return a.name .. "[i]" end)
  local vector = element(op, dt, body, function(a) return string.format("r_%s[u].e[j]", a.name) end)
  local ins, outs = buffers(op, dt)

  local loads, stores, decls = {}, {}, {}
  for _, a in ipairs(all) do
    decls[#decls + 1] = string.format("%s r_%s[%d];", vt[a.dtype], a.name, U)
  end
  for _, a in ipairs(ins) do
    loads[#loads + 1] = string.format(
      "r_%s[u] = reinterpret_cast<const %s*>(%s)[v];", a.name, vt[a.dtype], a.name)
  end
  for _, a in ipairs(outs) do
    stores[#stores + 1] = string.format(
      "reinterpret_cast<%s*>(%s)[v] = r_%s[u];", vt[a.dtype], a.name, a.name)
  end
  local step = p.grid_stride == 1 and "(long long)gridDim.x * CHUNK" or "nvec"

  out[#out + 1] = string.format([[
#define CHUNK %d
extern "C" __global__ void __launch_bounds__(%d) %s(%s) {
  if (%d > 1 && %s) {
    const long long nvec = n / %d;
    for (long long base = (long long)blockIdx.x * CHUNK; base < nvec; base += %s) {
      %s
      #pragma unroll
      for (int u = 0; u < %d; ++u) {
        long long v = base + (long long)u * %d + threadIdx.x;
        if (v < nvec) { %s }
      }
      #pragma unroll
      for (int u = 0; u < %d; ++u) {
        #pragma unroll
        for (int j = 0; j < %d; ++j) %s
      }
      #pragma unroll
      for (int u = 0; u < %d; ++u) {
        long long v = base + (long long)u * %d + threadIdx.x;
        if (v < nvec) { %s }
      }
    }
    if (blockIdx.x == 0) {
      for (long long i = nvec * %d + threadIdx.x; i < n; i += %d) %s
    }
  } else {
    %s
    for (long long i = start; i < end; i += step) %s
  }
}
]], B * U, B, name, kernel.params(op, dt),
    V, table.concat(aligned, " && "),
    V, step,
    table.concat(decls, " "),
    U, B, table.concat(loads, " "),
    U, V, vector,
    U, B, table.concat(stores, " "),
    V, B, scalar,
    p.grid_stride == 1
      and "long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x, end = n, step = (long long)gridDim.x * blockDim.x;"
      or string.format("const long long per = %d; long long start = (long long)blockIdx.x * per + threadIdx.x, end = min(n, (long long)blockIdx.x * per + per), step = blockDim.x;", B * U * V),
    scalar)
  return table.concat(out, "\n")
end

-- The reference: one thread per element, no vectors, the op's own body.
function M.reference(op)
  return {
    source = function(dt, name)
      return dtype.prelude .. string.format([[
extern "C" __global__ void %s(%s) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) %s
}
]], name, kernel.params(op, dt), element(op, dt, op.body, function(a) return a.name .. "[i]" end))
    end,
    launch = function(dt) return { grid = { "cdiv(n, 256)", 1, 1 }, block = { 256, 1, 1 }, smem = 0 } end,
  }
end

-- Tolerances shared by the elementwise ops: fp32 arithmetic, rounded once to
-- the output type.
M.tolerance = {
  f32 = { rtol = 1e-6, atol = 1e-6 },
  f16 = { rtol = 1e-3, atol = 1e-4 },
  bf16 = { rtol = 8e-3, atol = 1e-3 },
}

-- M.template(OP): the family for an op whose `body` is its element function
-- over float locals named <arg>_ (e.g. "y_ = a * x_ + y_;").
function M.template(op)
  return {
    op = op.name,
    name = "vec",
    min_cc = 80,
    dtypes = op.dtypes,
    params = {
      { "block", { 64, 128, 256, 512, 1024 } },
      { "vec", { 1, 2, 4, 8, 16 } },
      { "ilp", { 1, 2, 4, 8 } },
      { "grid_stride", { 0, 1 } },
    },
    constraints = function(p, shape, dt, dev)
      local w = widest(op, dt)
      if p.vec * w > 32 then return false, "vector wider than two 16-byte accesses" end
      if p.vec * w > 16 and p.ilp > 4 then return false, "more than 64 bytes per thread per buffer" end
      if p.block * p.ilp * p.vec > 4 * shape.n and p.block > 64 then
        return false, "one block covers the whole array four times over"
      end
      return true
    end,
    supports = function(shape, dt, dev) return shape.n >= 1 end,
    launch = function(p, dt, dev)
      local chunk = p.block * p.ilp * p.vec
      local grid = string.format("cdiv(n, %d)", chunk)
      if p.grid_stride == 1 then
        local resident = dev.sms * math.max(1, 2048 // p.block)
        grid = string.format("max(1, min(cdiv(n, %d), %d))", chunk, resident)
      end
      return { grid = { grid, 1, 1 }, block = { p.block, 1, 1 }, smem = 0 }
    end,
    source = function(p, dt, dev, name) return source(op, op.body, p, dt, name) end,
    default = function(shape, dt, dev)
      return { block = 256, vec = 1, ilp = 1, grid_stride = 0 }
    end,
  }
end

return M
