-- The space a strategy searches: one template's params for one task, with
-- the template's constraints applied up front. Strategies see only this.
--   space.size            number of valid configs
--   space.configs         the valid configs, in enumeration order
--   space.rejected        { {cfg, why, kind}, ... } kind: "constraint" | "error"
--   space:valid(cfg)      true if cfg is one of the valid configs
--   space:sample(rng)     a uniformly chosen valid config
--   space:neighbors(cfg)  valid configs one param step away
--   space:encode(cfg)     numeric vector: each param's value index, 0-based
--   space:key(cfg)        a string that identifies cfg
--   space:walk(order, n)  a strategy trying configs in a fixed order
local Space = {}
Space.__index = Space

local function key(names, cfg)
  local parts = {}
  for i, n in ipairs(names) do parts[i] = tostring(cfg[n]) end
  return table.concat(parts, ",")
end

function Space.new(t, shape, dtype, dev)
  local self = setmetatable({ names = {}, values = {}, configs = {}, rejected = {}, index = {} }, Space)
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
