-- Greedy local search with random restarts: a few random configs first,
-- then the untried neighbours (one param step away) of the best config seen,
-- and when the best has no untried neighbour, a fresh random start. Stops at
-- opts.max_evals or when the space is exhausted. Warm-start configs
-- (opts.warm) take the place of the random first ones. Deterministic for a
-- seed.
local S = {}
S.__index = S

function S.new(space, opts)
  local led = space:ledger(opts)
  return setmetatable({
    space = space, rng = opts.rng, led = led, best = nil, best_time = math.huge,
    starts = #led.warm > 0 and 0 or math.min(opts.starts or 4, led.limit),
  }, S)
end

-- A random untried config, or nil once all are tried: a few samples, then
-- the first untried one in enumeration order.
function S:fresh()
  for _ = 1, 64 do
    local c = self.space:sample(self.rng)
    if c and not self.led:has(c) then return c end
  end
  for c in self.space:each() do
    if not self.led:has(c) then return c end
  end
  return nil
end

function S:ask(n)
  local out, led = {}, self.led
  led:take_warm(out, n)
  if #out > 0 then return out end
  while #out < self.starts and not led:full() do
    local c = self:fresh()
    if not c then break end
    led:take(c, out)
  end
  self.starts = 0
  if #out > 0 then return out end
  if self.best then
    for _, c in ipairs(self.space:neighbors(self.best)) do
      if #out >= n then break end
      led:take(c, out)
    end
  end
  if #out == 0 and not led:full() then
    local c = self:fresh()
    if c then led:take(c, out) end
  end
  return out
end

function S:tell(cfg, result)
  if result.status == "ok" and result.time < self.best_time then
    self.best, self.best_time = cfg, result.time
  end
end

return S
