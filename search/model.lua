-- Model-guided search: a cheap surrogate of log(time) fitted to what was
-- measured, and an acquisition rule that trades its prediction against how
-- little is known near a config.
--
-- The surrogate has two parts. A ridge regression over one-hot params and
-- pairs of params carries the global trend: each param value has its own
-- effect (block 256 is this much faster than 128) and so does each pair of
-- values of two params (split-K 4 pays off with one column group per warp,
-- not with four), the pairs shrunk harder (opts.lpair = 2 x lambda) so the
-- single effects speak first. The residuals of the k nearest measured
-- configs correct it locally (what pairs do not explain). Distances are
-- over space:encode() vectors, each param scaled to [0, 1]. Failures
-- (compile, runtime, wrong, timeout) are not timed; the share of failures
-- among a config's nearest measured neighbours is a penalty. Under a
-- template's prior (space.lua), the prior weight rounded to a power of two
-- is one more one-hot param, so the fit learns how much it says. Pairs are
-- left out when they would make more than opts.maxf (1024) features: the
-- fit keeps (G + lambda)^-1 up to date one measurement at a time
-- (Sherman-Morrison), features^2 work per tell.
--
-- Acquisition (lower is better): predicted log time + pfail - kappa *
-- sigma * u - beta * sdy * rarity, where sigma is the residual spread of the
-- fit, u in [0, 1] the distance to the nearest measured (or already chosen)
-- config, sdy the spread of the measured log times, and rarity the sum over
-- params of 1 / sqrt(1 + how often the config's value was asked for). The
-- last term keeps a param value the first measurements happened to meet in
-- bad company (one slow split_k = 1 config) from being written off. A batch
-- first takes (up to half of it, opts.nloc) the untried neighbours of the
-- best config measured, the most promising first: the top of a landscape
-- is a cluster of configs one step apart, which a global fit resolves
-- worst. Then it takes the best candidates one at a time, treating each
-- chosen one as measured, so a batch spreads out. Candidates: every untried
-- config when there are at most opts.pool of them, else the untried
-- neighbours and near jumps of the best configs plus a random sample. A few
-- configs come first (opts.init; warm-start configs count), each the draw
-- that covers the least-seen param values, and a small share of asks
-- (opts.explore) is random throughout. Deterministic for a seed.
local M = {}
M.__index = M

local PRIOR_LEVELS = 8   -- prior weights 1, 1/2, ..., 1/128 and below

function M.new(space, opts)
  local np = #space.names
  local m, off, F = {}, {}, 0
  for i = 1, np do
    m[i] = #space.values[i]
    off[i] = F
    F = F + m[i]
  end
  local nsingle = F
  local prior
  if space.weigh then
    prior = F
    F = F + PRIOR_LEVELS
  end
  local npair = 0
  for i = 1, np do
    for j = i + 1, np do npair = npair + m[i] * m[j] end
  end
  local poff
  if F + npair <= (opts.maxf or 1024) then
    poff = {}
    for i = 1, np do
      poff[i] = {}
      for j = i + 1, np do
        poff[i][j] = F
        F = F + m[i] * m[j]
      end
    end
  end
  local led = space:ledger(opts)
  local lambda = opts.lambda or 1.0
  local self = setmetatable({
    space = space, rng = opts.rng, led = led, np = np, m = m, off = off, poff = poff, prior = prior, F = F,
    init = math.min(opts.init or math.max(8, np), led.limit),
    k = opts.k or 5, kappa = opts.kappa or 2.0, explore = opts.explore or 0.05,
    pool = opts.pool or 600, nloc = opts.nloc,
    lam = {},                 -- the ridge penalty of each feature
    inv = {},                 -- rows of (G + diag(lam))^-1, G = sum of phi phi^T over ok points
    gy = {}, g1 = {},         -- sums of phi y and phi over ok points
    pts = {},                 -- every told config: { x = scaled vector, v = codes, f = features, ok, y = log time }
    nok = 0, sy = 0,
    w = nil, ybar = 0, sigma = 1,
    xcache = {}, nd = {}, nr = {}, nf = {},
    seen = {},                -- configs asked per param value
    beta = opts.beta or 1.0, sdy = 1,
  }, M)
  local lpair = opts.lpair or 2 * lambda
  for a = 1, F do
    self.lam[a] = a <= nsingle + (prior and PRIOR_LEVELS or 0) and lambda or lpair
    self.gy[a], self.g1[a] = 0, 0
  end
  for a = 1, nsingle do self.seen[a] = 0 end
  return self
end

-- Codes, the scaled vector and the features of cfg (cached by key).
function M:vec(cfg)
  local k = self.space:key(cfg)
  local e = self.xcache[k]
  if e then return e end
  local np, m, off, poff = self.np, self.m, self.off, self.poff
  local v = self.space:encode(cfg)
  local x, f = {}, {}
  for i = 1, np do
    x[i] = m[i] > 1 and v[i] / (m[i] - 1) or 0
    f[i] = off[i] + v[i] + 1
  end
  if self.prior then
    local w = self.space:prior(cfg) or 1
    f[#f + 1] = self.prior + math.min(PRIOR_LEVELS - 1, math.floor(-math.log(w, 2) + 0.5)) + 1
  end
  if poff then
    for i = 1, np do
      for j = i + 1, np do f[#f + 1] = poff[i][j] + v[i] * m[j] + v[j] + 1 end
    end
  end
  e = { v = v, x = x, f = f }
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

-- Row a of the inverse; a row no measurement touched is still the prior's.
function M:row(a)
  local r = self.inv[a]
  if not r then
    r = {}
    for b = 1, self.F do r[b] = 0 end
    r[a] = 1 / self.lam[a]
    self.inv[a] = r
  end
  return r
end

-- One ok measurement with features f: the inverse takes phi phi^T
-- (Sherman-Morrison: A^-1 - u u^T / (1 + phi^T u), u = A^-1 phi).
function M:observe(f)
  local F = self.F
  local u = {}
  for b = 1, F do u[b] = 0 end
  for _, a in ipairs(f) do
    local r = self:row(a)     -- symmetric: column a is row a
    for b = 1, F do u[b] = u[b] + r[b] end
  end
  local d = 1
  for _, a in ipairs(f) do d = d + u[a] end
  for a = 1, F do
    local ua = u[a]
    if ua ~= 0 then
      local r = self:row(a)
      ua = ua / d
      for b = 1, F do r[b] = r[b] - ua * u[b] end
    end
  end
end

-- The ridge solution w = A^-1 (gy - ybar g1), its residuals and spreads.
function M:fit()
  if self.nok == 0 then self.w = nil return end
  self.ybar = self.sy / self.nok
  local F = self.F
  local r = {}
  for a = 1, F do r[a] = self.gy[a] - self.ybar * self.g1[a] end
  local w = {}
  for a = 1, F do
    local row = self.inv[a]
    if row then
      local s = 0
      for b = 1, F do s = s + row[b] * r[b] end
      w[a] = s
    else
      w[a] = r[a] / self.lam[a]
    end
  end
  self.w = w
  -- Residuals of the ridge part, for the local correction and sigma.
  local ss, vy = 0, 0
  for _, p in ipairs(self.pts) do
    if p.ok then
      p.r = p.y - self:trend(p.f)
      ss = ss + p.r * p.r
      vy = vy + (p.y - self.ybar) ^ 2
    end
  end
  self.sigma = math.max(0.02, math.sqrt(ss / self.nok))
  self.sdy = math.max(0.02, math.sqrt(vy / self.nok))
end

function M:trend(f)
  if not self.w then return self.ybar end
  local s, w = self.ybar, self.w
  for _, a in ipairs(f) do s = s + w[a] end
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
  local mu = self:trend(e.f)
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

-- Count cfg's param values as asked for.
function M:count_seen(c)
  local v = self:vec(c).v
  for i = 1, self.np do
    local a = self.off[i] + v[i] + 1
    self.seen[a] = self.seen[a] + 1
  end
end

-- Take cfg into out, counting its param values as seen.
function M:take(c, out)
  if not self.led:take(c, out) then return false end
  self:count_seen(c)
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

-- The measured ok points, fastest first.
function M:ranked()
  local best = {}
  for _, p in ipairs(self.pts) do
    if p.ok then best[#best + 1] = p end
  end
  table.sort(best, function(a, b) return a.y < b.y end)
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
  local best = self:ranked()
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
  for _, c in ipairs(out) do self:count_seen(c) end
  while #out < n and led.n < self.init do
    local c = self:spread_pick()
    if not c then break end
    self:take(c, out)
  end
  if #out >= n or led:full() then return out end
  self:fit()
  local cands = self:candidates()
  local np = self.np
  local X, V, score, dmin, at = {}, {}, {}, {}, {}
  for i, c in ipairs(cands) do
    local e = self:vec(c)
    local mu, pf, d = self:predict(e)
    X[i], V[i], score[i], dmin[i] = e.x, e.v, mu + pf, d
    at[self.space:key(c)] = i
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
  -- The best config's untried neighbours, the most promising first.
  local best = self:ranked()[1]
  if best then
    local near = {}
    for _, c in ipairs(self.space:neighbors(best.cfg)) do
      local i = at[self.space:key(c)]
      if i then near[#near + 1] = i end
    end
    table.sort(near, function(a, b) return score[a] < score[b] end)
    local stop = #out + (self.nloc or n // 2)
    for _, i in ipairs(near) do
      if #out >= math.min(n, stop) or led:full() then break end
      if self:take(cands[i], out) then
        taken[i] = true
        chosen(X[i])
      end
    end
  end
  while #out < n and not led:full() do
    local c
    if rng:float() < self.explore then c = led:fresh(rng) end
    if c then
      self:take(c, out)
      local i = at[self.space:key(c)]
      if i then taken[i] = true end
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
  local p = { cfg = cfg, x = e.x, v = e.v, f = e.f, ok = ok }
  self.pts[#self.pts + 1] = p
  if not ok then return end
  local y = math.log(result.time)
  p.y = y
  self.nok = self.nok + 1
  self.sy = self.sy + y
  for _, a in ipairs(e.f) do
    self.gy[a] = self.gy[a] + y
    self.g1[a] = self.g1[a] + 1
  end
  self:observe(e.f)
end

return M
