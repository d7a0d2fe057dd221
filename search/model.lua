-- Model-guided search: a cheap surrogate of log(time) fitted to what was
-- measured, and an acquisition rule that trades its prediction against how
-- little is known near a config.
--
-- The surrogate has two parts. A ridge regression over one-hot params (each
-- param value has its own effect: block 256 is this much faster than 128)
-- carries the global trend; the residuals of the k nearest measured
-- configs correct it locally (the interactions: a tile shape that only pays
-- off with enough pipeline stages). Distances are over space:encode()
-- vectors, each param scaled to [0, 1]. Failures (compile, runtime, wrong,
-- timeout) are not timed; the share of failures among a config's nearest
-- measured neighbours is a penalty.
--
-- Acquisition (lower is better): predicted log time + pfail - kappa *
-- sigma * u - beta * sdy * rarity, where sigma is the residual spread of the
-- fit, u in [0, 1] the distance to the nearest measured (or already chosen)
-- config, sdy the spread of the measured log times, and rarity the sum over
-- params of 1 / sqrt(1 + how often the config's value was asked for). The
-- last term keeps a param value the first measurements happened to meet in
-- bad company (one slow split_k = 1 config) from being written off. A batch
-- takes the best candidates one at a time, treating each chosen one as
-- measured, so a batch spreads out. Candidates: every untried config
-- when there are at most opts.pool of them, else the untried neighbours
-- and near jumps of the best configs plus a random sample. A few configs
-- come first (opts.init; warm-start configs count), each the draw that
-- covers the least-seen param values, and a small share of asks
-- (opts.explore) is random throughout. Deterministic for a seed.
local M = {}
M.__index = M

function M.new(space, opts)
  local np = #space.names
  local off, F = {}, 0
  for i = 1, np do
    off[i] = F
    F = F + #space.values[i]
  end
  local led = space:ledger(opts)
  local self = setmetatable({
    space = space, rng = opts.rng, led = led, np = np, off = off, F = F,
    init = math.min(opts.init or math.max(8, np), led.limit),
    k = opts.k or 5, kappa = opts.kappa or 2.0, explore = opts.explore or 0.05,
    pool = opts.pool or 600, lambda = opts.lambda or 1.0,
    pts = {},                 -- every told config: { x = scaled vector, v = codes, ok, y = log time }
    nok = 0, sy = 0,
    G = {}, gy = {}, g1 = {}, -- sums of phi phi^T, phi y, phi over ok points
    w = nil, ybar = 0, sigma = 1,
    xcache = {}, nd = {}, nr = {}, nf = {},
    seen = {},                -- configs asked per param value (feature)
    beta = opts.beta or 1.0, sdy = 1,
  }, M)
  for a = 1, F do
    self.gy[a], self.g1[a], self.seen[a] = 0, 0, 0
    for b = 1, F do self.G[(a - 1) * F + b] = 0 end
  end
  return self
end

-- Codes and the scaled vector of cfg (cached by key).
function M:vec(cfg)
  local k = self.space:key(cfg)
  local e = self.xcache[k]
  if e then return e end
  local v = self.space:encode(cfg)
  local x = {}
  for i = 1, self.np do
    local m = #self.space.values[i]
    x[i] = m > 1 and v[i] / (m - 1) or 0
  end
  e = { v = v, x = x }
  self.xcache[k] = e
  return e
end

local function dist(a, b, n)
  local d = 0
  for i = 1, n do
    local t = a[i] - b[i]
    d = d + (t < 0 and -t or t)
  end
  return d
end

-- Solve the ridge system (G + lambda I) w = gy - ybar * g1 by Gaussian
-- elimination with partial pivoting; F is a few dozen.
function M:fit()
  local F, G = self.F, self.G
  if self.nok == 0 then self.w = nil return end
  self.ybar = self.sy / self.nok
  local A, r = {}, {}
  for a = 1, F do
    A[a] = {}
    for b = 1, F do A[a][b] = G[(a - 1) * F + b] end
    A[a][a] = A[a][a] + self.lambda
    r[a] = self.gy[a] - self.ybar * self.g1[a]
  end
  for c = 1, F do
    local p = c
    for a = c + 1, F do
      if math.abs(A[a][c]) > math.abs(A[p][c]) then p = a end
    end
    A[c], A[p] = A[p], A[c]
    r[c], r[p] = r[p], r[c]
    local piv = A[c][c]
    for a = c + 1, F do
      local f = A[a][c] / piv
      if f ~= 0 then
        local Aa, Ac = A[a], A[c]
        for b = c, F do Aa[b] = Aa[b] - f * Ac[b] end
        r[a] = r[a] - f * r[c]
      end
    end
  end
  local w = {}
  for c = F, 1, -1 do
    local s = r[c]
    for b = c + 1, F do s = s - A[c][b] * w[b] end
    w[c] = s / A[c][c]
  end
  self.w = w
  -- Residuals of the ridge part, for the local correction and sigma.
  local ss = 0
  for _, p in ipairs(self.pts) do
    if p.ok then
      p.r = p.y - self:trend(p.v)
      ss = ss + p.r * p.r
    end
  end
  self.sigma = math.max(0.02, math.sqrt(ss / self.nok))
  local vy = 0
  for _, p in ipairs(self.pts) do
    if p.ok then vy = vy + (p.y - self.ybar) ^ 2 end
  end
  self.sdy = math.max(0.02, math.sqrt(vy / self.nok))
end

function M:trend(v)
  if not self.w then return self.ybar end
  local s = self.ybar
  for i = 1, self.np do s = s + self.w[self.off[i] + v[i] + 1] end
  return s
end

-- Predicted log time, share of failures nearby, distance to the nearest
-- measured config.
function M:predict(e)
  local k, n, x = self.k, self.np, e.x
  local nd, nr, nf = self.nd, self.nr, self.nf   -- the k nearest: distance, residual, failed
  local m = 0
  local dmin = math.huge
  for _, p in ipairs(self.pts) do
    local d = dist(x, p.x, n)
    if d < dmin then dmin = d end
    if m < k or d < nd[m] then
      local i = m < k and m + 1 or k
      if m < k then m = m + 1 end
      while i > 1 and nd[i - 1] > d do
        nd[i], nr[i], nf[i] = nd[i - 1], nr[i - 1], nf[i - 1]
        i = i - 1
      end
      nd[i], nr[i], nf[i] = d, p.r or 0, not p.ok
    end
  end
  local mu = self:trend(e.v)
  local sw, swr, swok, swf = 0, 0, 0, 0
  for i = 1, m do
    local wt = 1 / (nd[i] + 0.05)
    sw = sw + wt
    if nf[i] then
      swf = swf + wt
    else
      swr = swr + wt * nr[i]
      swok = swok + wt
    end
  end
  if swok > 0 then mu = mu + swr / sw end
  return mu, sw > 0 and swf / sw or 0, dmin
end

-- Take cfg into out, counting its param values as seen.
function M:take(c, out)
  if not self.led:take(c, out) then return false end
  local v = self:vec(c).v
  for i = 1, self.np do
    local a = self.off[i] + v[i] + 1
    self.seen[a] = self.seen[a] + 1
  end
  return true
end

-- How little is known of cfg's param values: the sum over params of
-- 1 / sqrt(1 + times the value was asked for).
function M:rarity(v)
  local s = 0
  for i = 1, self.np do s = s + 1 / math.sqrt(1 + self.seen[self.off[i] + v[i] + 1]) end
  return s
end

-- The first configs: random ones, each the one of a few draws whose param
-- values were asked least, so every value of every param is seen early.
function M:spread_pick()
  local best, bs
  for _ = 1, 16 do
    local c = self.led:fresh(self.rng)
    if not c then break end
    local r = self:rarity(self:vec(c).v)
    if not best or r > bs then best, bs = c, r end
  end
  return best
end

function M:candidates()
  local sp, led, rng = self.space, self.led, self.rng
  local out, seen = {}, {}
  local function add(c)
    if c and not led:has(c) then
      local key = sp:key(c)
      if not seen[key] then
        seen[key] = true
        out[#out + 1] = c
      end
    end
  end
  if sp.size - led.n <= self.pool then
    for c in sp:each() do add(c) end
    return out
  end
  local best = {}
  for _, p in ipairs(self.pts) do
    if p.ok then best[#best + 1] = p end
  end
  table.sort(best, function(a, b) return a.y < b.y end)
  for i = 1, math.min(4, #best) do
    for _, c in ipairs(sp:neighbors(best[i].cfg)) do add(c) end
    for _ = 1, 24 do add(sp:mutate(best[i].cfg, rng, 2)) end
  end
  while #out < self.pool do
    local before = #out
    for _ = 1, 8 do add(sp:sample(rng)) end
    if #out == before then break end
  end
  return out
end

function M:ask(n)
  local out, led, rng = {}, self.led, self.rng
  led:take_warm(out, n)
  for _, c in ipairs(out) do
    local v = self:vec(c).v
    for i = 1, self.np do
      local a = self.off[i] + v[i] + 1
      self.seen[a] = self.seen[a] + 1
    end
  end
  while #out < n and led.n < self.init do
    local c = self:spread_pick()
    if not c then break end
    self:take(c, out)
  end
  if #out >= n or led:full() then return out end
  self:fit()
  local cands = self:candidates()
  local np = self.np
  local X, V, score, dmin = {}, {}, {}, {}
  for i, c in ipairs(cands) do
    local e = self:vec(c)
    local mu, pf, d = self:predict(e)
    X[i], V[i], score[i], dmin[i] = e.x, e.v, mu + pf, d
  end
  -- A config chosen for this batch counts as measured for the distances.
  local function chosen(x)
    for i = 1, #cands do
      local d = dist(x, X[i], np)
      if d < dmin[i] then dmin[i] = d end
    end
  end
  for _, c in ipairs(out) do chosen(self:vec(c).x) end   -- warm or random picks
  local taken = {}
  while #out < n and not led:full() do
    local c
    if rng:float() < self.explore then c = led:fresh(rng) end
    if c then
      self:take(c, out)
    else
      local bi, bs = nil, math.huge
      local ks, kb = self.kappa * self.sigma, self.beta * self.sdy
      for i = 1, #cands do
        if not taken[i] then
          local d = dmin[i]
          local s = score[i] - ks * (d < 1 and d or 1) - kb * self:rarity(V[i])
          if s < bs then bi, bs = i, s end
        end
      end
      if not bi then break end
      taken[bi] = true
      c = cands[bi]
      self:take(c, out)
    end
    chosen(self:vec(c).x)
  end
  return out
end

function M:tell(cfg, result)
  local e = self:vec(cfg)
  local ok = result.status == "ok" and result.time and result.time > 0
  local p = { cfg = cfg, x = e.x, v = e.v, ok = ok }
  self.pts[#self.pts + 1] = p
  if not ok then return end
  local y = math.log(result.time)
  p.y = y
  self.nok = self.nok + 1
  self.sy = self.sy + y
  local F, G = self.F, self.G
  local idx = {}
  for i = 1, self.np do idx[i] = self.off[i] + e.v[i] + 1 end
  for _, a in ipairs(idx) do
    self.gy[a] = self.gy[a] + y
    self.g1[a] = self.g1[a] + 1
    for _, b in ipairs(idx) do G[(a - 1) * F + b] = G[(a - 1) * F + b] + 1 end
  end
end

return M
