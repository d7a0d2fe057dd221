-- Greedy local search with random restarts: a few random configs first,
-- then the untried neighbours (one param step away) of the best config seen,
-- and when the best has no untried neighbour, a fresh random start. Stops at
-- opts.max_evals or when the space is exhausted. Warm-start configs
-- (opts.warm) take the place of the random first ones. Deterministic for a
-- seed.
local S = {}
S.__index = S

function S.new(space, opts)
  local warm = space:ledger(opts).warm
  return setmetatable({
    space = space, rng = opts.rng, limit = math.min(space.size, opts.max_evals or space.size),
    tried = {}, ntried = 0, best = nil, best_time = math.huge, warm = warm,
    starts = #warm > 0 and 0 or math.min(opts.starts or 4, space.size),
  }, S)
end

function S:take(cfg, out)
  local k = self.space:key(cfg)
  if self.tried[k] or self.ntried >= self.limit then return end
  self.tried[k] = true
  self.ntried = self.ntried + 1
  out[#out + 1] = cfg
end

-- A random untried config, or nil once all are tried.
function S:fresh()
  for _ = 1, 64 do
    local c = self.space:sample(self.rng)
    if c and not self.tried[self.space:key(c)] then return c end
  end
  for _, c in ipairs(self.space.configs) do
    if not self.tried[self.space:key(c)] then return c end
  end
  return nil
end

function S:ask(n)
  local out = {}
  while #out < n and #self.warm > 0 do self:take(table.remove(self.warm, 1), out) end
  if #out > 0 then return out end
  while #out < self.starts and self.ntried < self.limit do
    local c = self:fresh()
    if not c then break end
    self:take(c, out)
  end
  self.starts = 0
  if #out > 0 then return out end
  if self.best then
    for _, c in ipairs(self.space:neighbors(self.best)) do
      if #out >= n then break end
      self:take(c, out)
    end
  end
  if #out == 0 and self.ntried < self.limit then
    local c = self:fresh()
    if c then self:take(c, out) end
  end
  return out
end

function S:tell(cfg, result)
  if result.status == "ok" and result.time < self.best_time then
    self.best, self.best_time = cfg, result.time
  end
end

return S
