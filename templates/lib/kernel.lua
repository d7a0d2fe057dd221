-- What every kernel of an op shares: its argument list, resolved for a dtype,
-- and the C parameter list that templates, references and emitted wrappers use.
local dtype = lib("dtype")
local M = {}

-- op.types(dtype) maps the symbolic types of op.args ("T", "In", ...) to
-- element types; ops without it use T = dtype.
function M.types(op, dt)
  if op.types then return op.types(dt) end
  return { T = dt }
end

-- The op's arguments with concrete element types: a list of
-- { name, role, dtype, ctype }.
function M.args(op, dt)
  local types, out = M.types(op, dt), {}
  for _, a in ipairs(op.args) do
    local t = types[a.type] or a.type
    local r = { name = a.name, role = a.role, dtype = t }
    if a.role == "dim" then r.ctype = "long long"
    elseif a.role == "scalar" then r.ctype = "float"
    else r.ctype = dtype.ctype(t) end
    out[#out + 1] = r
  end
  return out
end

local function param(a)
  if a.role == "in" then return string.format("const %s* __restrict__ %s", a.ctype, a.name) end
  if a.role == "out" or a.role == "inout" then return string.format("%s* __restrict__ %s", a.ctype, a.name) end
  return string.format("%s %s", a.ctype, a.name)
end

-- "const float* __restrict__ x, float* __restrict__ y, float a, long long n"
-- (plus "void* __restrict__ ws" when the template asks for a workspace).
function M.params(op, dt, workspace)
  local ps = {}
  for _, a in ipairs(M.args(op, dt)) do ps[#ps + 1] = param(a) end
  if workspace then ps[#ps + 1] = "void* __restrict__ ws" end
  return table.concat(ps, ", ")
end

-- Buffer sizes in elements for a shape, by argument name.
function M.sizes(op, shape)
  local out = {}
  for _, a in ipairs(op.args) do
    if a.size then out[a.name] = a.size(shape) end
  end
  return out
end

-- The fewest bytes the op must move: inputs read once, outputs written once
-- (an inout buffer counts twice).
function M.bytes(op, dt, shape)
  local sizes, total = M.sizes(op, shape), 0
  for _, a in ipairs(M.args(op, dt)) do
    local n = sizes[a.name]
    if n then
      local times = a.role == "inout" and 2 or 1
      total = total + times * n * dtype.size(a.dtype)
    end
  end
  return total
end

-- The first config, in a plain order, that t's constraints accept: `fixed`
-- gives the values that do not vary, `axes` the ones that do as a list of
-- { name, values } (the first axis varies slowest). Only t's own params are
-- kept, so one order can serve families with different params.
function M.first_valid(t, shape, dt, dev, fixed, axes)
  local own = {}
  for _, pr in ipairs(t.params) do own[pr[1]] = true end
  local p = {}
  local function walk(i)
    if i > #axes then
      local q = {}
      for k, v in pairs(fixed) do if own[k] then q[k] = v end end
      for k, v in pairs(p) do if own[k] then q[k] = v end end
      if t.constraints(q, shape, dt, dev) then return q end
      return nil
    end
    for _, v in ipairs(axes[i][2]) do
      p[axes[i][1]] = v
      local q = walk(i + 1)
      if q then return q end
    end
    return nil
  end
  return walk(1)
end

return M
