-- One polish of a config, not a search of a space: the first warm-start
-- config (opts.warm[1]), then its neighbours one param step away
-- (space:neighbors, with repair: a step the constraints refuse as it stands
-- comes with one other param moved to the nearest value that takes it, so
-- a wider tile is tried with the ring of stages that fits), then, once the start and every neighbour were told, the
-- config that takes every move that paid at once (space:combine), then
-- nothing more. ask returns nothing while replies it waits for are pending,
-- and nothing once done; without a warm config it is done at once. The
-- sweep drives it outside a search's flow (sweep_part.c: a part's winner
-- polished over the part's sizes, each config told its time relative to
-- the start's there); a spec may not name it (src/search.h: search_for_spec).
local P = {}
P.__index = P

function P.new(space, opts)
  local led = space:ledger(opts)
  return setmetatable({ space = space, led = led, base = led.warm[1], times = {}, keys = {}, stage = 0 }, P)
end

function P:ask(n)
  local out, sp = {}, self.space
  if not self.base then return out end
  if self.stage == 0 then
    self.stage = 1
    if self.led:take(self.base, out) then self.keys[sp:key(self.base)] = true end
  end
  if self.stage == 1 then
    for _, c in ipairs(sp:neighbors(self.base, true)) do
      if #out >= n then return out end
      if self.led:take(c, out) then self.keys[sp:key(c)] = true end
    end
    self.stage = 2
    if #out > 0 then return out end
  end
  if self.stage == 2 then
    for k in pairs(self.keys) do
      if self.times[k] == nil then return out end
    end
    self.stage = 3
    local t = self.times[sp:key(self.base)]
    local c = t and t < math.huge and sp:combine(self.base, t, self.times)
    if c then self.led:take(c, out) end
  end
  return out
end

function P:tell(cfg, result)
  self.times[self.space:key(cfg)] = result.status == "ok" and result.time or math.huge
end

return P
