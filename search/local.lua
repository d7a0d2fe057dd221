-- Greedy local search with random restarts: a few random configs first,
-- then the untried neighbours (one param step away) of the best config seen,
-- and when the best has no untried neighbour, a fresh random start. Stops at
-- opts.max_evals or when the space is exhausted. Warm-start configs
-- (opts.warm) take the place of the random first ones. Deterministic for a
-- seed.
--
-- Once every neighbour of a base config (the best when its ring was begun)
-- has been told, the config that takes, along each param, the value of the
-- neighbour that beat the base most there (the moves that paid, all at
-- once) is asked next, where two moves or more paid: gains of separate
-- params often add up, and a walk of one step at a time spends a ring on
-- each. On an H200 (bench/results/2026-11-30/s28/kbox) swapab's mid-size
-- kernel at 14336 x 4096, m = 136, ran 0.985x cuBLASLt with 5 slots, the
-- weight evict-first and multicast, 0.998x with the L2 prefetch of 2 boxes
-- too; the sweep's parts had stopped at 0.92x, each move one ring away.
local S = {}
S.__index = S

function S.new(space, opts)
  local led = space:ledger(opts)
  return setmetatable({
    space = space, rng = opts.rng, led = led, best = nil, best_time = math.huge,
    starts = #led.warm > 0 and 0 or math.min(opts.starts or 4, led.limit),
    times = {},       -- key -> time, of the configs told ok
    ring = nil,       -- the base whose neighbours are asked: { cfg, time, keys, combined }
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

-- Whether every neighbour of the ring's base that was asked has been told.
function S:ring_told(r)
  for k in pairs(r.keys) do
    if self.times[k] == nil then return false end
  end
  return true
end

-- The ring of neighbours of r's base into out (their keys kept), then, that
-- ring told, its combination; true when out got a config.
function S:ring_ask(r, out, n)
  for _, c in ipairs(self.space:neighbors(r.cfg)) do
    if #out >= n then break end
    if self.led:take(c, out) then r.keys[self.space:key(c)] = true end
  end
  if #out == 0 and not r.combined and self:ring_told(r) then
    r.combined = true
    local c = self.space:combine(r.cfg, r.time, self.times)
    if c then self.led:take(c, out) end
  end
  return #out > 0
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
  -- The best's ring; a ring combined (told, or pending when the sweep asks
  -- ahead: combined later) gives way to the best's when that moved.
  for _ = 1, 2 do
    if #out > 0 or not self.best then break end
    local r = self.ring
    if not r or (r.combined and self.space:key(r.cfg) ~= self.space:key(self.best)) then
      self.ring = { cfg = self.best, time = self.best_time, keys = {}, combined = false }
    end
    self:ring_ask(self.ring, out, n)
  end
  if #out == 0 and not led:full() then
    local c = self:fresh()
    if c then led:take(c, out) end
  end
  return out
end

function S:tell(cfg, result)
  if result.status == "ok" then
    self.times[self.space:key(cfg)] = result.time
    if result.time < self.best_time then self.best, self.best_time = cfg, result.time end
  else
    self.times[self.space:key(cfg)] = math.huge
  end
end

return S
