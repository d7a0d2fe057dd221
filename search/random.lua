-- Valid configs in a seeded random order, without repeats, up to
-- opts.max_evals: a fair sample when the space is too large to try whole.
local S = {}
S.__index = S

function S.new(space, opts)
  local order = {}
  for i = 1, space.size do order[i] = i end
  for i = space.size, 2, -1 do
    local j = opts.rng:int(i)
    order[i], order[j] = order[j], order[i]
  end
  return setmetatable({ space = space, order = order, next = 1,
                        limit = math.min(space.size, opts.max_evals or space.size) }, S)
end

function S:ask(n)
  local out = {}
  while #out < n and self.next <= self.limit do
    out[#out + 1] = self.space.configs[self.order[self.next]]
    self.next = self.next + 1
  end
  return out
end

function S:tell(cfg, result) end

return S
