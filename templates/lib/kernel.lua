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

-- The values param `name` takes in params (a space: { name, values } pairs),
-- those keep(v) accepts (all without keep), in the space's order.
function M.values(params, name, keep)
  local out = {}
  for _, pv in ipairs(params) do
    if pv[1] == name then
      for _, v in ipairs(pv[2]) do if not keep or keep(v) then out[#out + 1] = v end end
    end
  end
  return out
end

-- A copy of table t (a config, a launch param) with the keys of `changes`
-- set to their values; t itself is left as it is.
function M.with(t, changes)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  for k, v in pairs(changes) do out[k] = v end
  return out
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

-- text with each { old, new } of pieces put in place of old, which must be in
-- it verbatim (else an error naming who: the text a variant rewrites moved).
-- A variant of a kernel written this way leaves the kernel's own text, and
-- so its cubin cache key, as it was.
function M.replace(text, pieces, who)
  for _, pc in ipairs(pieces) do
    local at = text:find(pc[1], 1, true)
    if not at then error(who .. ": the text a variant replaces moved: " .. pc[1]:match("[^\n]*"), 2) end
    text = text:sub(1, at - 1) .. pc[2] .. text:sub(at + #pc[1])
  end
  return text
end

-- A shape whose sizes are symbols: arithmetic on them builds an expression
-- over the dims (expr.h grammar) instead of a number. tmpl.c calls a
-- template's workspace(p, shape, dt, dev) with it, so a workspace written as
-- plain Lua arithmetic over shape becomes the launch plan's size expression,
-- valid at every shape, not only the one it was instantiated for.
local Sym = {}
local function sym(e, prec) return setmetatable({ e = e, prec = prec }, Sym) end
local function ex(v, prec)
  local e, p
  if getmetatable(v) == Sym then e, p = v.e, v.prec
  elseif math.type(v) == "integer" and v >= 0 then e, p = tostring(v), 3
  elseif math.type(v) == "integer" then e, p = "(" .. tostring(v) .. ")", 3
  elseif math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2^53 then
    return ex(math.tointeger(v), prec)
  else
    error("workspace(): sizes must be integers or dim expressions, not " .. tostring(v), 3)
  end
  if p < prec then return "(" .. e .. ")" end
  return e
end
Sym.__add = function(a, b) return sym(ex(a, 1) .. " + " .. ex(b, 2), 1) end
Sym.__sub = function(a, b) return sym(ex(a, 1) .. " - " .. ex(b, 2), 1) end
Sym.__mul = function(a, b) return sym(ex(a, 2) .. " * " .. ex(b, 3), 2) end
Sym.__unm = function(a) return sym("-" .. ex(a, 3), 3) end
Sym.__index = function(_, k) error("workspace(): a dim is a size, not a table (." .. tostring(k) .. ")", 2) end

-- The workspace size of config p as an expression over dims (a list of
-- names), or nil when t has no workspace.
function M.workspace_expr(t, p, dims, dt, dev)
  if not t.workspace then return nil end
  local shape = {}
  for _, d in ipairs(dims) do shape[d] = sym(d, 3) end
  return ex(t.workspace(p, shape, dt, dev), 0)
end

-- The op's buffer sizes as expressions over dims (a list of names):
-- { name = "rows * cols" }. An arg whose size() is not plain arithmetic over
-- the shape is left out (its size is then unknown to the launch plan).
function M.size_exprs(op, dims)
  local shape, out = {}, {}
  for _, d in ipairs(dims) do shape[d] = sym(d, 3) end
  for _, a in ipairs(op.args) do
    if a.size then
      local ok, e = pcall(function() return ex(a.size(shape), 0) end)
      if ok then out[a.name] = e end
    end
  end
  return out
end

return M
