-- A steady-state genetic algorithm. The population is the fastest configs
-- measured so far (elitist: a good config is never lost). Each child takes
-- two parents by tournament, mixes their params (uniform crossover), and
-- mutates each param with probability 1/params (one step, or any value);
-- a child the space does not hold, or one already tried, is bred again, and
-- after a few misses a random config stands in, so the search keeps moving.
-- The first `population` configs asked are the warm-start configs, then
-- random ones. Deterministic for a seed.
local G = {}
G.__index = G

function G.new(space, opts)
  local np = #space.names
  return setmetatable({
    space = space, rng = opts.rng, led = space:ledger(opts),
    size = opts.population or math.max(8, math.min(16, np + 4)),
    pm = opts.mutation or 1 / math.max(1, np),
    pop = {},          -- { {cfg, v, t}, ... } fastest first, at most size
  }, G)
end

function G:tournament()
  local a = self.pop[self.rng:int(#self.pop)]
  local b = self.pop[self.rng:int(#self.pop)]
  local c = self.pop[self.rng:int(#self.pop)]
  local w = a
  if b.t < w.t then w = b end
  if c.t < w.t then w = c end
  return w
end

function G:child()
  local sp, rng = self.space, self.rng
  for _ = 1, 24 do
    local p, q = self:tournament(), self:tournament()
    local v = {}
    for i = 1, #sp.names do
      v[i] = (rng:float() < 0.5) and p.v[i] or q.v[i]
      if rng:float() < self.pm then
        local m = #sp.values[i]
        if rng:float() < 0.6 then
          v[i] = math.max(0, math.min(m - 1, v[i] + (rng:float() < 0.5 and -1 or 1)))
        else
          v[i] = rng:int(m) - 1
        end
      end
    end
    local c = sp:find(sp:decode(v))
    if c and not self.led:has(c) then return c end
  end
  return nil
end

function G:ask(n)
  local out, led = {}, self.led
  led:take_warm(out, n)
  while #out < n and not led:full() do
    local c
    if #self.pop >= 2 and led.n >= self.size then c = self:child() end
    c = c or led:fresh(self.rng)
    if not c then break end
    led:take(c, out)
  end
  return out
end

function G:tell(cfg, result)
  if result.status ~= "ok" or not result.time or result.time <= 0 then return end
  local pop = self.pop
  if #pop >= self.size and result.time >= pop[#pop].t then return end
  local e = { cfg = cfg, v = self.space:encode(cfg), t = result.time }
  local i = #pop + 1
  while i > 1 and pop[i - 1].t > e.t do
    pop[i] = pop[i - 1]
    i = i - 1
  end
  pop[i] = e
  if #pop > self.size then pop[#pop] = nil end
end

return G
