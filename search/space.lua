-- The space a strategy searches: one template's params for one task, with
-- the template's constraints applied up front. Strategies see only this.
--   space.size            number of valid configs
--   space.names           param names; space.values[i]: the values of names[i], in order
--   space.configs         the valid configs, in enumeration order
--   space.rejected        { {cfg, why, kind}, ... } kind: "constraint" | "error"
--   space:valid(cfg)      true if cfg is one of the valid configs
--   space:sample(rng)     a uniformly chosen valid config
--   space:neighbors(cfg)  valid configs one param step away
--   space:encode(cfg)     numeric vector: each param's value index, 0-based
--   space:decode(v)       the config of an index vector (valid or not)
--   space:mutate(cfg, rng, k)  a valid config k params away, or nil
--   space:key(cfg)        a string that identifies cfg
--   space:walk(order, n)  a strategy trying configs in a fixed order
--   space:ledger(opts)    the bookkeeping strategies share (asked, cap, warm start)
-- Space.from_list(configs) builds a space from given configs (a replayed
-- landscape): the params are their keys, each param's values sorted.
--
-- A strategy is new(space, opts) with ask(n) and tell(cfg, result).
-- opts: rng (Space.rng), seed, max_evals (nil: the whole space), warm (a
-- list of configs to try first, e.g. the finalists of neighbouring buckets;
-- those this space does not hold are skipped).
-- result: status ("ok" | "compile" | "runtime" | "timeout" | "wrong"),
-- and what is known: time (us, ok only), spread, min, max, registers,
-- spills, smem, compile_ms.
local Space = {}
Space.__index = Space

local function key(names, cfg)
  local parts = {}
  for i, n in ipairs(names) do parts[i] = tostring(cfg[n]) end
  return table.concat(parts, ",")
end

local function empty()
  return setmetatable({ names = {}, values = {}, configs = {}, rejected = {}, index = {} }, Space)
end

function Space.new(t, shape, dtype, dev)
  local self = empty()
  for i, p in ipairs(t.params) do
    self.names[i], self.values[i] = p[1], p[2]
  end
  local n = #self.names
  local idx = {}
  for i = 1, n do idx[i] = 1 end
  while true do
    local cfg = {}
    for i, name in ipairs(self.names) do cfg[name] = self.values[i][idx[i]] end
    local okcall, ok, why = pcall(t.constraints, cfg, shape, dtype, dev)
    if not okcall then
      self.rejected[#self.rejected + 1] = { cfg, tostring(ok), "error" }
    elseif ok then
      self.configs[#self.configs + 1] = cfg
      self.index[key(self.names, cfg)] = #self.configs
    else
      self.rejected[#self.rejected + 1] = { cfg, why or "constraint", "constraint" }
    end
    local k = n
    while k >= 1 do
      idx[k] = idx[k] + 1
      if idx[k] <= #self.values[k] then break end
      idx[k] = 1
      k = k - 1
    end
    if k < 1 then break end
  end
  self.size = #self.configs
  return self
end

-- Values of one param in a stable order: numbers ascending, then strings,
-- then booleans (false first), so neighbours are one step apart.
local function before(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta < tb end
  if ta == "boolean" then return (not a) and b end
  return a < b
end

function Space.from_list(list)
  local self = empty()
  local seen = {}
  for _, cfg in ipairs(list) do
    for name in pairs(cfg) do
      if not seen[name] then
        seen[name] = {}
        self.names[#self.names + 1] = name
      end
    end
  end
  table.sort(self.names)
  for i, name in ipairs(self.names) do
    local vals, have = {}, seen[name]
    for _, cfg in ipairs(list) do
      local v = cfg[name]
      if v == nil then error(string.format("config %d has no '%s'", _, name)) end
      if not have[tostring(v)] then
        have[tostring(v)] = true
        vals[#vals + 1] = v
      end
    end
    table.sort(vals, before)
    self.values[i] = vals
  end
  for _, cfg in ipairs(list) do
    local k = key(self.names, cfg)
    if not self.index[k] then
      self.configs[#self.configs + 1] = cfg
      self.index[k] = #self.configs
    end
  end
  self.size = #self.configs
  return self
end

-- One search per bucket across templates. A joined config is a template's
-- config plus `template` (its name) and "-" for every param that another
-- template of the bucket has and this one lacks, so all of a bucket's
-- configs share one set of params: `template` is one more categorical param
-- and a param a template lacks is one more level of it.
--
-- Space.joined(items): items = { { template = name, config = cfg }, ... };
-- the joined configs, in order.
function Space.joined(items)
  local all = {}
  for _, it in ipairs(items) do
    for k in pairs(it.config) do all[k] = true end
  end
  all.template = nil
  local out = {}
  for i, it in ipairs(items) do
    local c = { template = it.template }
    for k in pairs(all) do
      local v = it.config[k]
      if v == nil then v = "-" end
      c[k] = v
    end
    out[i] = c
  end
  return out
end

-- Space.union(spaces, names): one space over the spaces (Space.new) of the
-- templates names[i]; its rejected configs keep their template.
function Space.union(spaces, names)
  local items = {}
  for i, sp in ipairs(spaces) do
    for _, cfg in ipairs(sp.configs) do items[#items + 1] = { template = names[i], config = cfg } end
  end
  local self = Space.from_list(Space.joined(items))
  for i, sp in ipairs(spaces) do
    for _, r in ipairs(sp.rejected) do
      local c = {}
      for k, v in pairs(r[1]) do c[k] = v end
      c.template = names[i]
      self.rejected[#self.rejected + 1] = { c, r[2], r[3] }
    end
  end
  return self
end

-- Space.split(joined): its template, and the config as the template knows it.
function Space.split(cfg)
  local c = {}
  for k, v in pairs(cfg) do
    if k ~= "template" and v ~= "-" then c[k] = v end
  end
  return cfg.template, c
end

function Space:key(cfg) return key(self.names, cfg) end
function Space:valid(cfg) return self.index[key(self.names, cfg)] ~= nil end

function Space:sample(rng)
  if self.size == 0 then return nil end
  return self.configs[rng:int(self.size)]
end

function Space:encode(cfg)
  local v = {}
  for i, name in ipairs(self.names) do
    for j, x in ipairs(self.values[i]) do
      if x == cfg[name] then v[i] = j - 1 end
    end
  end
  return v
end

function Space:neighbors(cfg)
  local out = {}
  for i, name in ipairs(self.names) do
    local vals = self.values[i]
    for j, x in ipairs(vals) do
      if x == cfg[name] then
        for _, d in ipairs({ -1, 1 }) do
          if vals[j + d] ~= nil then
            local c = {}
            for k, v in pairs(cfg) do c[k] = v end
            c[name] = vals[j + d]
            if self:valid(c) then out[#out + 1] = c end
          end
        end
      end
    end
  end
  return out
end

function Space:decode(v)
  local cfg = {}
  for i, name in ipairs(self.names) do cfg[name] = self.values[i][v[i] + 1] end
  return cfg
end

-- A valid config that differs from cfg in k params (each moved one step, or
-- to any value), or nil when a few tries find none.
function Space:mutate(cfg, rng, k)
  local n = #self.names
  if n == 0 then return nil end
  local base = self:encode(cfg)
  for _ = 1, 16 do
    local v = {}
    for i = 1, n do v[i] = base[i] end
    for _ = 1, k do
      local i = rng:int(n)
      local m = #self.values[i]
      if m > 1 then
        if rng:float() < 0.5 then
          v[i] = math.max(0, math.min(m - 1, v[i] + (rng:float() < 0.5 and -1 or 1)))
        else
          v[i] = rng:int(m) - 1
        end
      end
    end
    local c = self:decode(v)
    local j = self.index[key(self.names, c)]
    if j and key(self.names, c) ~= key(self.names, cfg) then return self.configs[j] end
  end
  return nil
end

-- The bookkeeping strategies share: configs already asked (never twice),
-- the cap (opts.max_evals), and the warm-start queue (opts.warm: configs
-- to try first, in order; those not in this space are skipped).
local Ledger = {}
Ledger.__index = Ledger
function Space:ledger(opts)
  local warm = {}
  for _, c in ipairs(opts.warm or {}) do
    local j = self.index[key(self.names, c)]
    if j then warm[#warm + 1] = self.configs[j] end
  end
  return setmetatable({ space = self, tried = {}, n = 0, warm = warm, wi = 1,
                        limit = math.min(self.size, opts.max_evals or self.size) }, Ledger)
end
function Ledger:has(cfg) return self.tried[self.space:key(cfg)] ~= nil end
function Ledger:full() return self.n >= self.limit end
-- Append cfg to out unless it was asked before or the cap is reached.
function Ledger:take(cfg, out)
  local k = self.space:key(cfg)
  if self.tried[k] or self.n >= self.limit then return false end
  self.tried[k] = true
  self.n = self.n + 1
  out[#out + 1] = cfg
  return true
end
-- Warm-start configs not yet asked, until out holds n.
function Ledger:take_warm(out, n)
  while #out < n and self.wi <= #self.warm do
    self:take(self.warm[self.wi], out)
    self.wi = self.wi + 1
  end
end
-- A random config not yet asked, or nil once every one was.
function Ledger:fresh(rng)
  local sp = self.space
  for _ = 1, 64 do
    local c = sp:sample(rng)
    if c and not self:has(c) then return c end
  end
  if self.n >= sp.size then return nil end
  local start = rng:int(sp.size)
  for i = 0, sp.size - 1 do
    local c = sp.configs[(start + i - 1) % sp.size + 1]
    if not self:has(c) then return c end
  end
  return nil
end

-- A strategy that tries space.configs in the given order (a list of
-- indices; nil: enumeration order), at most limit of them, ignoring results.
local Walk = {}
Walk.__index = Walk
function Space:walk(order, limit)
  return setmetatable({ space = self, order = order, next = 1,
                        limit = math.min(self.size, limit or self.size) }, Walk)
end
function Walk:ask(n)
  local out = {}
  while #out < n and self.next <= self.limit do
    local i = self.order and self.order[self.next] or self.next
    out[#out + 1] = self.space.configs[i]
    self.next = self.next + 1
  end
  return out
end
function Walk:tell(cfg, result) end

-- A seeded generator (splitmix64): the same seed gives the same sequence on
-- every machine, so strategies are deterministic.
local Rng = {}
Rng.__index = Rng
function Space.rng(seed) return setmetatable({ s = seed }, Rng) end
function Rng:next64()
  self.s = self.s + 0x9E3779B97F4A7C15
  local z = self.s
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return z ~ (z >> 31)
end
-- An integer in 1..n.
function Rng:int(n) return (self:next64() >> 11) % n + 1 end
-- A float in [0, 1).
function Rng:float() return (self:next64() >> 11) / 9007199254740992.0 end

return Space
