-- The space a strategy searches, enumerated lazily: one template's params
-- for one task (Space.new), the templates of one bucket (Space.union), or
-- the configs of a replayed landscape (Space.from_list). Strategies see
-- only this.
--
-- A config is addressed by an index over the space's domain, 1..N. For a
-- template the domain is the cartesian product of its params' values and
-- the index is the mixed-radix number of a config's value positions (the
-- last param fastest), so index order is the enumeration order. Nothing is
-- enumerated up front: a config's hard constraints (constraints() false:
-- illegal, would not compile, run or be right) are checked when its index
-- is first met, once.
--   space.names           param names; space.values[i]: the values of names[i], in order
--   space.N               the number of indices
--   space.size            an upper bound on the number of valid configs (N)
--                         until every index was checked, then the exact number
--   space.nvalid, space.nchecked   valid configs found and indices checked so far
--   space.complete        every index checked: size == nvalid
--   space.rejected        the configs rejected so far, in the order met:
--                         { {cfg, why, kind}, ... } kind: "constraint" | "error"
--   space:count()         the exact number of valid configs (checks the rest)
--   space:tally()         the same, keeping nothing of what it checks
--   space:estimate()      that number, exact when complete, else guessed from
--                         the share of valid configs among the indices checked
--   space:valid(cfg)      whether cfg is a valid config of the space
--   space:find(cfg)       the space's own table of cfg if it is valid, else nil
--   space:each()          an iterator over the valid configs, in index order
--   space:sample(rng)     a valid config drawn at random (see Sampling)
--   space:neighbors(cfg[, repair])  valid configs one param step away (only those are checked);
--                         with repair, a step refused as it stands in its nearest valid form
--                         (one other param moved the fewest steps)
--   space:combine(cfg, t, times)  cfg with every one-step move that beat t at once, or nil
--   space:encode(cfg)     numeric vector: each param's value index, 0-based
--   space:decode(v)       the config of an index vector (valid or not)
--   space:mutate(cfg, rng, k)  a valid config k params away, or nil
--   space:prior(cfg)      the template's prior weight of a valid cfg (see Priors)
--   space:key(cfg)        a string that identifies cfg
--   space:walk(limit)     a strategy trying the valid configs in index order
--   space:shuffled(rng, limit)  a strategy trying them in a seeded random order
--   space:ledger(opts)    the bookkeeping strategies share (asked, cap, warm start)
-- Space.from_list(configs) builds a space from given configs (a replayed
-- landscape): the params are their keys, each param's values sorted; its
-- indices are the list's positions, all valid, so it starts complete.
--
-- Sampling draws indices and rejects the invalid ones, at most Space.draws
-- draws per sample. When they all miss (a space where few configs are
-- legal), the walk is completed once (space:count()) and the sample drawn
-- from the valid list instead, so a sample is always uniform over the valid
-- configs (times their priors) and every index is checked at most once.
--
-- Priors apart from hard constraints. A template may also have
-- prior(p, shape, dtype, dev) returning a weight in (0, 1] (and a reason):
-- legal but probably slow. Such a config stays in the space with its
-- weight: sample draws it with probability proportional to the weight,
-- walk tries the configs of weight 1 first and the others after, heaviest
-- first, and model learns how much the weight says (the weight, rounded to
-- a power of two, is one more one-hot param of its fit). A template
-- without prior weighs every config 1.
--
-- Repairs. A template may name fit params (t.fit, e.g. { "stages" }: those
-- that size a resource). space:neighbors(cfg, true) offers a step the
-- constraints refuse as it stands with one other param moved to the nearest
-- value that takes it, a fit param first (search/polish.lua uses it).
--
-- A strategy is new(space, opts) with ask(n) and tell(cfg, result).
-- opts: rng (Space.rng), seed, max_evals (nil: the whole space), warm (a
-- list of configs to try first, e.g. the winners of neighbouring buckets,
-- carried to the task's shape by the template's carry where it has one
-- (src/sweep_warm.h, src/tmpl.h's tmpl_carry); one this space does not hold gives way to the nearest
-- config it holds with one param moved, or is skipped).
-- result: status ("ok" | "compile" | "runtime" | "timeout" | "wrong"),
-- and what is known: time (us, ok only), spread, min, max, registers,
-- spills, smem, compile_ms.
local Space = {}
Space.__index = Space
Space.draws = 4096

local function key(names, cfg)
  local parts = {}
  for i, n in ipairs(names) do parts[i] = tostring(cfg[n]) end
  return table.concat(parts, ",")
end

-- A space over indices 1..N: at(i) builds the config at i, judge(i, cfg)
-- says whether it is legal (ok, why, kind), locate(cfg) gives its index
-- (nil: not in the domain), weigh(cfg) its prior weight (nil: no priors).
local function domain(names, values, N, at, judge, weigh)
  local pos = {}
  for i, vals in ipairs(values) do
    pos[i] = {}
    for j, v in ipairs(vals) do pos[i][v] = j - 1 end
  end
  local self = setmetatable({ names = names, values = values, pos = pos, N = N, size = N,
                              nvalid = 0, nchecked = 0, complete = false,
                              memo = {},     -- index -> its config if valid, false if not
                              weights = {},  -- index -> prior weight, once asked
                              rejected = {}, at = at, judge = judge, weigh = weigh,
                              fit = {} },    -- names of the params a repair moves first (space:neighbors)
                             Space)
  if N == 0 then self:settle() end
  return self
end

-- Every index is checked: the valid ones in order, the exact size.
function Space:settle()
  local list = {}
  for i = 1, self.N do
    if self.memo[i] then list[#list + 1] = i end
  end
  self.list, self.complete, self.size = list, true, #list
end

-- The config at index i if it is valid, else nil (checked the first time).
function Space:check(i)
  local m = self.memo[i]
  if m ~= nil then return m or nil end
  local cfg = self.at(i)
  local ok, why, kind = self.judge(i, cfg)
  self.nchecked = self.nchecked + 1
  if ok then
    self.memo[i] = cfg
    self.nvalid = self.nvalid + 1
  else
    self.memo[i] = false
    self.rejected[#self.rejected + 1] = { cfg, why, kind }
  end
  if self.nchecked == self.N then self:settle() end
  return ok and cfg or nil
end

function Space:count()
  for i = 1, self.N do
    if self.complete then break end
    if self.memo[i] == nil then self:check(i) end
  end
  return self.size
end

-- The exact number of valid configs, as count(), without keeping what it
-- checks (memo, rejected): a plan counts a space of millions of indices
-- once, and the space stays as lazy as it was.
function Space:tally()
  if self.complete or not self.at or not self.judge then return self:count() end
  local n = 0
  for i = 1, self.N do
    local m = self.memo[i]
    if m == nil then
      if self.judge(i, self.at(i)) then n = n + 1 end
    elseif m then
      n = n + 1
    end
  end
  return n
end

function Space:estimate()
  if self.complete or self.nchecked == 0 then return self.size end
  return math.max(self.nvalid, math.ceil(self.N * self.nvalid / self.nchecked))
end

-- A template may narrow its params' values for a task: t.narrow(shape,
-- dtype, dev) gives { name = { values } }, each a subset of that param's
-- values (kept in the param's order), when its constraints refuse the
-- others at every config of the task. The space then never draws them: a
-- value that is dead for the task would otherwise dilute the samples.
local function narrowed(t, shape, dtype, dev)
  local keep = t.narrow and t.narrow(shape, dtype, dev) or {}
  local out = {}
  for i, p in ipairs(t.params) do
    out[i] = p[2]
    if keep[p[1]] then
      local set, sub = {}, {}
      for _, v in ipairs(keep[p[1]]) do set[v] = true end
      for _, v in ipairs(p[2]) do if set[v] then sub[#sub + 1] = v end end
      -- None left (a space narrowed by hand to values the task refuses):
      -- the constraints say why, config by config, as without narrow().
      if #sub > 0 then out[i] = sub end
    end
  end
  return out
end

function Space.new(t, shape, dtype, dev)
  local names, values = {}, narrowed(t, shape, dtype, dev)
  local N = 1
  for i, p in ipairs(t.params) do
    names[i] = p[1]
    N = N * #values[i]
  end
  local n = #names
  local function at(i)
    local cfg, d = {}, i - 1
    for k = n, 1, -1 do
      local m = #values[k]
      cfg[names[k]] = values[k][d % m + 1]
      d = d // m
    end
    return cfg
  end
  local function judge(_, cfg)
    local okcall, ok, why = pcall(t.constraints, cfg, shape, dtype, dev)
    if not okcall then return false, tostring(ok), "error" end
    if ok then return true end
    return false, why or "constraint", "constraint"
  end
  local weigh
  if t.prior then
    weigh = function(cfg)
      local w = t.prior(cfg, shape, dtype, dev)
      if type(w) ~= "number" or not (w > 0 and w <= 1) then
        error(string.format("template %s/%s: prior() gave %s, not a weight in (0, 1]", tostring(t.op),
                            tostring(t.name), tostring(w)), 0)
      end
      return w
    end
  end
  local self = domain(names, values, N, at, judge, weigh)
  for _, name in ipairs(t.fit or {}) do self.fit[name] = true end
  local pos = self.pos
  self.locate = function(cfg)
    local i = 0
    for k = 1, n do
      local j = pos[k][cfg[names[k]]]
      if j == nil then return nil end
      i = i * #values[k] + j
    end
    return i + 1
  end
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

local function sorted_values(set)
  local vals = {}
  for _, v in pairs(set) do vals[#vals + 1] = v end
  table.sort(vals, before)
  return vals
end

function Space.from_list(list)
  local names, seen = {}, {}
  for _, cfg in ipairs(list) do
    for name in pairs(cfg) do
      if not seen[name] then
        seen[name] = {}
        names[#names + 1] = name
      end
    end
  end
  table.sort(names)
  local values = {}
  for i, name in ipairs(names) do
    local have = seen[name]
    for j, cfg in ipairs(list) do
      local v = cfg[name]
      if v == nil then error(string.format("config %d has no '%s'", j, name)) end
      if have[tostring(v)] == nil then have[tostring(v)] = v end
    end
    values[i] = sorted_values(have)
  end
  local configs, at_key = {}, {}
  for _, cfg in ipairs(list) do
    local k = key(names, cfg)
    if not at_key[k] then
      configs[#configs + 1] = cfg
      at_key[k] = #configs
    end
  end
  local self = domain(names, values, #configs, function(i) return configs[i] end, function() return true end)
  self.locate = function(cfg) return at_key[key(names, cfg)] end
  for i, c in ipairs(configs) do self.memo[i] = c end
  self.nvalid, self.nchecked = #configs, #configs
  self:settle()
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
-- templates names[i], still lazy: its indices are those of spaces[1], then
-- those of spaces[2], and so on; its configs are joined (Space.joined), its
-- params every template's, values sorted; its rejected configs carry their
-- template.
function Space.union(spaces, tnames)
  local sets, off, mine, which = {}, {}, {}, {}
  local N = 0
  for j, sp in ipairs(spaces) do
    off[j], which[tnames[j]], mine[j] = N, j, {}
    N = N + sp.N
    for i, name in ipairs(sp.names) do
      mine[j][name] = true
      sets[name] = sets[name] or {}
      for _, v in ipairs(sp.values[i]) do sets[name][tostring(v)] = v end
    end
  end
  local names = {}
  for name, set in pairs(sets) do
    names[#names + 1] = name
    for j = 1, #spaces do
      if not mine[j][name] then set["-"] = "-" end
    end
  end
  local tset = {}
  for _, t in ipairs(tnames) do tset[t] = t end
  sets.template = tset
  names[#names + 1] = "template"
  table.sort(names)
  local values = {}
  for i, name in ipairs(names) do values[i] = sorted_values(sets[name]) end
  -- The template of index i, and i in its space.
  local function part(i)
    for j = #spaces, 1, -1 do
      if i > off[j] then return j, i - off[j] end
    end
  end
  local function at(i)
    local j, li = part(i)
    local c = { template = tnames[j] }
    for _, name in ipairs(names) do
      if name ~= "template" and not mine[j][name] then c[name] = "-" end
    end
    for k, v in pairs(spaces[j].at(li)) do c[k] = v end
    return c
  end
  local function judge(i)
    local j, li = part(i)
    return spaces[j].judge(li, spaces[j].at(li))
  end
  local weigh
  for _, sp in ipairs(spaces) do
    if sp.weigh then
      weigh = function(cfg)
        local sp_ = spaces[which[cfg.template]]
        if not sp_.weigh then return 1 end
        local _, own = Space.split(cfg)
        return sp_.weigh(own)
      end
    end
  end
  local self = domain(names, values, N, at, judge, weigh)
  self.locate = function(cfg)
    local j = which[cfg.template]
    if not j then return nil end
    for _, name in ipairs(names) do
      if name ~= "template" and not mine[j][name] and cfg[name] ~= "-" then return nil end
    end
    local li = spaces[j].locate(cfg)
    return li and off[j] + li
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

function Space:find(cfg)
  local i = self.locate(cfg)
  return i and self:check(i) or nil
end
function Space:valid(cfg) return self:find(cfg) ~= nil end

function Space:each()
  local i = 0
  return function()
    while i < self.N do
      i = i + 1
      local c = self:check(i)
      if c then return c end
    end
  end
end

function Space:weight(i, cfg)
  if not self.weigh then return 1 end
  local w = self.weights[i]
  if not w then
    w = self.weigh(cfg)
    self.weights[i] = w
  end
  return w
end

function Space:prior(cfg)
  local i = self.locate(cfg)
  local c = i and self:check(i)
  return c and self:weight(i, c) or nil
end

-- Whether a drawn index i (config c, nil if invalid) is kept: valid, and
-- under priors with probability its weight.
local function keep(self, i, c, rng)
  return c ~= nil and (not self.weigh or rng:float() < self:weight(i, c))
end

function Space:sample(rng)
  if not self.complete then
    for _ = 1, Space.draws do
      local i = rng:int(self.N)
      local c = self:check(i)
      if keep(self, i, c, rng) then return c end
      if self.complete then break end
    end
    self:count()
  end
  local list = self.list
  if #list == 0 then return nil end
  while true do
    local i = list[rng:int(#list)]
    local c = self.memo[i]
    if keep(self, i, c, rng) then return c end
  end
end

function Space:encode(cfg)
  local v = {}
  for i, name in ipairs(self.names) do v[i] = self.pos[i][cfg[name]] end
  return v
end

-- A copy of cfg with param name set to v.
local function with(cfg, name, v)
  local c = {}
  for k, x in pairs(cfg) do c[k] = x end
  c[name] = v
  return c
end

-- moved, a one-param step (param i) the constraints refuse as it stands,
-- with one other param moved to the nearest value at which the space holds
-- it (a wider tile whose ring of stages no longer fits shared memory,
-- offered in its nearest valid form). The template's fit params (t.fit:
-- those that size a resource, such as stages) are moved first; among the
-- params of a group the fewest steps win (the first param, then the lower
-- value, on a tie). nil when none does.
local function repaired(self, moved, i)
  for _, fit in ipairs({ true, false }) do
    local best, best_d
    for j, name in ipairs(self.names) do
      local vals, at = self.values[j], self.pos[j][moved[name]]
      if j ~= i and at and (self.fit[name] == true) == fit then
        for k = 1, #vals do
          local d = math.abs(k - 1 - at)
          if d > 0 and (not best_d or d < best_d) then
            local r = self:find(with(moved, name, vals[k]))
            if r then best, best_d = r, d end
          end
        end
      end
    end
    if best then return best end
  end
  return nil
end

-- The steps held as they stand first, in param order; with repair, the
-- refused steps' nearest valid forms after them (a caller that takes the
-- first n loses repaired steps before plain ones).
function Space:neighbors(cfg, repair)
  local out, refused = {}, {}
  for i, name in ipairs(self.names) do
    local vals, j = self.values[i], self.pos[i][cfg[name]]
    if j then
      for _, d in ipairs({ -1, 1 }) do
        local v = vals[j + 1 + d]
        if v ~= nil then
          local moved = with(cfg, name, v)
          local c = self:find(moved)
          if c then
            out[#out + 1] = c
          elseif repair then
            refused[#refused + 1] = { i = i, moved = moved }
          end
        end
      end
    end
  end
  for _, r in ipairs(refused) do
    local c = repaired(self, r.moved, r.i)
    if c then out[#out + 1] = c end
  end
  return out
end

-- base with, along each param where a neighbour of it (one step away) was
-- faster (times: space:key -> time of the configs told), the fastest such
-- neighbour's value: the moves that paid, all at once. nil where fewer than
-- two paid (one is that neighbour itself) or the space lacks the result.
function Space:combine(base, base_time, times)
  local pick, moved = {}, 0
  for _, c in ipairs(self:neighbors(base)) do
    local t = times[self:key(c)]
    for _, name in ipairs(self.names) do
      if c[name] ~= base[name] and t and t < base_time and (not pick[name] or t < pick[name].t) then
        if not pick[name] then moved = moved + 1 end
        pick[name] = { v = c[name], t = t }
      end
    end
  end
  if moved < 2 then return nil end
  local c = {}
  for k, v in pairs(base) do c[k] = v end
  for name, p in pairs(pick) do c[name] = p.v end
  return self:find(c)
end

-- cfg if this space holds it, else the nearest config it holds with one param
-- moved, else nil: a warm-start config from a bucket of another alignment
-- class or size (its peel or cluster invalid here), or from a space that lists
-- other values (a landscape's, an older template's). Params in order; a
-- param's values nearest first: by position from cfg's value where the space
-- lists it, else by numeric distance to it, else in the space's order. Params
-- cfg lacks are not filled in.
local function by_nearness(vals, j, v)
  local order = {}
  for k = 1, #vals do order[k] = k end
  local function d(k)
    if j then return math.abs(k - 1 - j) end
    if type(v) == "number" and type(vals[k]) == "number" then return math.abs(vals[k] - v) end
    return k
  end
  table.sort(order, function(a, b)
    local da, db = d(a), d(b)
    if da ~= db then return da < db end
    return a < b
  end)
  return order
end
function Space:nearest(cfg)
  local f = self:find(cfg)
  if f then return f end
  for i, name in ipairs(self.names) do
    local vals, v = self.values[i], cfg[name]
    if v ~= nil then
      local j = self.pos[i][v]
      for _, k in ipairs(by_nearness(vals, j, v)) do
        local c = k - 1 ~= j and self:find(with(cfg, name, vals[k]))
        if c then return c end
      end
    end
  end
  return nil
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
  local own = key(self.names, cfg)
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
    local c = self:find(self:decode(v))
    if c and key(self.names, c) ~= own then return c end
  end
  return nil
end

-- The bookkeeping strategies share: configs already asked (never twice),
-- the cap (opts.max_evals), and the warm-start queue (opts.warm: configs
-- to try first, in order; one this space lacks gives way to its nearest,
-- Space:nearest, or is skipped). limit is
-- what the ledger may hand out at most as known at the start: the cap, or
-- the space's size when that is smaller; full() also knows when a space
-- turns out smaller than its bound.
local Ledger = {}
Ledger.__index = Ledger
function Space:ledger(opts)
  local warm = {}
  local cap = opts.max_evals or math.huge
  -- At most a quarter of a capped search (at least one) goes to them: the
  -- strategy's own start keeps the rest (replayed on rmsnorm's H100 landscapes,
  -- warm configs filling a 4- to 11-evaluation budget lost what they gained).
  local most = cap < math.huge and math.max(1, cap // 4) or math.huge
  for _, c in ipairs(opts.warm or {}) do
    if #warm >= most then break end
    local f = self:nearest(c)
    if f then warm[#warm + 1] = f end
  end
  return setmetatable({ space = self, tried = {}, n = 0, warm = warm, wi = 1, cap = cap,
                        limit = math.min(self.size, cap) }, Ledger)
end
function Ledger:has(cfg) return self.tried[self.space:key(cfg)] ~= nil end
function Ledger:full() return self.n >= self.cap or self.n >= self.space.size end
-- Append cfg to out unless it was asked before or the cap is reached.
function Ledger:take(cfg, out)
  local k = self.space:key(cfg)
  if self.tried[k] or self:full() then return false end
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
-- A random config not yet asked, or nil once every one was: a few samples,
-- then (most of the space asked) a scan of the valid list from a random start.
function Ledger:fresh(rng)
  local sp = self.space
  for _ = 1, 64 do
    local c = sp:sample(rng)
    if not c then return nil end
    if not self:has(c) then return c end
  end
  if self.n >= sp:count() then return nil end
  local list = sp.list
  local start = rng:int(#list)
  for i = 0, #list - 1 do
    local c = sp.memo[list[(start + i - 1) % #list + 1]]
    if not self:has(c) then return c end
  end
  return nil
end

-- A strategy that tries the valid configs in index order, at most limit of
-- them (nil: all), ignoring results. Under priors, the configs of weight 1
-- come first, then the others, heaviest first.
local Walk = {}
Walk.__index = Walk
function Space:walk(limit)
  return setmetatable({ space = self, i = 0, n = 0, limit = limit or math.huge }, Walk)
end
function Walk:next()
  local sp = self.space
  while not self.later and self.i < sp.N do
    self.i = self.i + 1
    local c = sp:check(self.i)
    if c and sp:weight(self.i, c) >= 1 then return c end
  end
  if not self.later then
    -- The walk is complete: the lighter configs, heaviest first.
    local later = {}
    for _, i in ipairs(sp.list) do
      if sp:weight(i, sp.memo[i]) < 1 then later[#later + 1] = i end
    end
    table.sort(later, function(a, b)
      local wa, wb = sp.weights[a], sp.weights[b]
      if wa ~= wb then return wa > wb end
      return a < b
    end)
    self.later, self.j = later, 0
  end
  self.j = self.j + 1
  local i = self.later[self.j]
  return i and sp.memo[i]
end
function Walk:ask(n)
  local out = {}
  while #out < n and self.n < self.limit do
    local c = self:next()
    if not c then break end
    out[#out + 1] = c
    self.n = self.n + 1
  end
  return out
end
function Walk:tell(cfg, result) end

-- A strategy that tries the valid configs in a seeded random order, at
-- most limit of them: a Fisher-Yates shuffle of the indices done one step
-- at a time (only the positions it has moved are stored), so each index
-- is checked once, when its turn comes.
local Shuffle = {}
Shuffle.__index = Shuffle
function Space:shuffled(rng, limit)
  return setmetatable({ space = self, rng = rng, moved = {}, k = 0, n = 0, limit = limit or math.huge }, Shuffle)
end
function Shuffle:ask(n)
  local sp, moved, out = self.space, self.moved, {}
  while #out < n and self.n < self.limit and self.k < sp.N do
    local k = self.k + 1
    local j = k - 1 + self.rng:int(sp.N - k + 1)
    local i = moved[j] or j
    moved[j], moved[k] = moved[k] or k, nil
    self.k = k
    local c = sp:check(i)
    if c then
      out[#out + 1] = c
      self.n = self.n + 1
    end
  end
  return out
end
function Shuffle:tell(cfg, result) end

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
