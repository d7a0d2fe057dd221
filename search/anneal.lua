-- Simulated annealing: a walk that moves to a proposed config when it is
-- faster, and to a slower one with probability exp(-(log t' - log t) / T),
-- so early on it crosses ridges and later it settles. Proposals are
-- untried neighbours of the current config (one param one step away) or,
-- now and then, a jump of two params. The temperature falls geometrically
-- over a horizon (the budget, or a tenth of the space as estimated); when
-- it has found nothing better for a while, the walk goes back to the best
-- config and warms up again. The walk begins among a few random configs (8), or the
-- warm-start configs (opts.warm) instead. Deterministic for a seed.
--
-- Times are compared in log space, so T is a relative slowdown: at the
-- starting T = 0.06 a 5% slower config is accepted with probability 0.44.
local A = {}
A.__index = A

function A.new(space, opts)
  local led = space:ledger(opts)
  return setmetatable({
    space = space, rng = opts.rng, led = led,
    starts = #led.warm > 0 and 0 or math.min(opts.starts or 8, led.limit),
    t0 = opts.t0 or 0.06, t1 = opts.t1 or 0.005,
    horizon = opts.max_evals and math.max(1, math.min(opts.max_evals, led.limit)),
    patience = opts.patience or math.max(12, 3 * #space.names),
    heat = 0, stale = 0,
    cur = nil, cur_t = math.huge, best = nil, best_t = math.huge,
  }, A)
end

function A:temperature()
  if not self.horizon then
    -- No budget: a tenth of the space, its size estimated once the walk
    -- has met some of it (a lazy space's size is only a bound at first).
    local n = self.space:estimate()
    self.horizon = math.max(1, math.min(math.max(40, n // 10), n))
  end
  local f = math.min(1, self.heat / self.horizon)
  return self.t0 * (self.t1 / self.t0) ^ f
end

-- One proposal from the current config: an untried neighbour (most of the
-- time), a two-param jump, or a fresh random config when both fail.
function A:propose(out)
  local sp, rng, led = self.space, self.rng, self.led
  if self.cur then
    if rng:float() < 0.8 then
      local nb, open = sp:neighbors(self.cur), {}
      for _, c in ipairs(nb) do
        if not led:has(c) then open[#open + 1] = c end
      end
      if #open > 0 and led:take(open[rng:int(#open)], out) then return true end
    end
    for _ = 1, 4 do
      local c = sp:mutate(self.cur, rng, 2)
      if c and led:take(c, out) then return true end
    end
  end
  local c = led:fresh(rng)
  return c ~= nil and led:take(c, out)
end

function A:ask(n)
  local out = {}
  self.led:take_warm(out, n)
  if #out > 0 then return out end
  while #out < n and self.starts > 0 and not self.led:full() do
    local c = self.led:fresh(self.rng)
    if not c then break end
    self.led:take(c, out)
    self.starts = self.starts - 1
  end
  if #out > 0 then return out end
  while #out < n and not self.led:full() do
    if not self:propose(out) then break end
  end
  return out
end

function A:tell(cfg, result)
  self.heat = self.heat + 1
  self.stale = self.stale + 1
  if result.status ~= "ok" or not result.time or result.time <= 0 then return end
  local t = result.time
  if t < self.best_t then
    self.best, self.best_t, self.stale = cfg, t, 0
  end
  if not self.cur then
    self.cur, self.cur_t = cfg, t
    return
  end
  local d = math.log(t) - math.log(self.cur_t)
  if d <= 0 or self.rng:float() < math.exp(-d / self:temperature()) then
    self.cur, self.cur_t = cfg, t
  end
  if self.stale >= self.patience then
    -- Stuck: back to the best, somewhat warmer than where the schedule is.
    self.cur, self.cur_t, self.stale = self.best, self.best_t, 0
    self.heat = self.heat // 2
  end
end

return A
