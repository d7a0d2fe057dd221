-- Every valid config, in enumeration order (up to opts.max_evals).
local S = {}
S.__index = S

function S.new(space, opts)
  return setmetatable({ space = space, next = 1, limit = opts.max_evals or space.size }, S)
end

function S:ask(n)
  local out = {}
  while #out < n and self.next <= math.min(self.space.size, self.limit) do
    out[#out + 1] = self.space.configs[self.next]
    self.next = self.next + 1
  end
  return out
end

function S:tell(cfg, result) end

return S
