-- Decode attention by key slices. A CTA owns one sequence's kv head and the
-- grp query heads that share it (grouped-query attention reads each key and
-- value row once for all of them), over a slice of the keys; `cs` CTAs of a
-- cluster split the keys, and their partial results (each head's running
-- max, sum and unnormalized output) are combined through distributed shared
-- memory, every rank combining a slice of the outputs. No workspace, no
-- second kernel.
--
-- Lanes: a key row of hd elements is read by hd / 8 lanes (16 bytes each),
-- so a warp reads 32 / (hd / 8) rows at once; each warp loads kpw such rows
-- of keys and of values per tile, all in flight before the first use. A
-- lane keeps its 8 dims of each head's query (pre-scaled into log2 units)
-- and of each head's output sum in registers, for the whole slice. A tile's
-- scores go through shared memory once (the softmax's max and sum over the
-- tile, online across tiles: the output sums are rescaled by each new max).
--
-- Masked keys cost no reads: a key whose bias is -inf (a static cache's
-- unfilled positions) loads neither its key nor its value row; the tile's
-- biases are read one tile ahead, so the rows' loads wait on nothing.
--
-- hd and grp are compiled in (params the task's shape fixes: narrow keeps
-- the search at the shape's values); a launch at another head dim or group
-- size writes NaN to o, never a wrong number. The kernel vectorizes when q,
-- k, v and o are 16-byte aligned and reads element by element otherwise.
local dtype = lib("dtype")
local cluster = lib("cluster")

local HDS = { 64, 128, 256 }
local GRPS = { 1, 2, 4, 8 }

local t = {
  op = OP.name, name = "split", min_cc = 80, dtypes = OP.dtypes,
  params = {
    { "warps", { 2, 4, 8, 16 } },
    { "cs", { 1, 2, 4, 8 } },        -- CTAs of a cluster, each over a slice of the keys
    { "kpw", { 1, 2, 4, 8 } },       -- key and value rows a lane group loads per tile
    { "hd", HDS },                   -- the head dim (the task's d)
    { "grp", GRPS },                 -- query heads per kv head (the task's h / g)
  },
}

local VEC = 8   -- elements a lane reads per row (16 bytes of a 16-bit type)

local function geom(p)
  local lpk = p.hd // VEC
  local kps = 32 // lpk
  return { lpk = lpk, kps = kps, tk = p.warps * p.kpw * kps, nt = 32 * p.warps }
end

local function smem_bytes(p)
  local G = geom(p)
  return 4 * (p.grp * G.tk + p.warps * p.grp * p.hd + 3 * p.grp)
end

t.supports = function(shape, dt, dev)
  if shape.g < 1 or shape.h % shape.g ~= 0 then return false, "h must be a multiple of g (kv heads)" end
  local grp = shape.h // shape.g
  local ok = false
  for _, v in ipairs(GRPS) do ok = ok or v == grp end
  if not ok then return false, "query heads per kv head (h / g) must be 1, 2, 4 or 8" end
  ok = false
  for _, v in ipairs(HDS) do ok = ok or v == shape.d end
  if not ok then return false, "head dim d must be 64, 128 or 256" end
  if shape.b < 1 or shape.n < 1 then return false, "empty batch or cache" end
  return true
end

t.narrow = function(shape)
  return { hd = { shape.d }, grp = { shape.g > 0 and shape.h // shape.g or 0 } }
end

t.constraints = function(p, shape, dt, dev)
  if p.hd ~= shape.d then return false, "compiled for another head dim" end
  if shape.g < 1 or p.grp * shape.g ~= shape.h then return false, "compiled for another group size" end
  if p.cs > 1 and (dev.cc or 0) < 90 then return false, "clusters need sm_90" end
  local G = geom(p)
  if smem_bytes(p) > 48 * 1024 then return false, "over 48 KB of shared memory" end
  -- registers a thread holds: the group's query and output dims, the tile's
  -- rows (4 words each, and their floats while in use) and scores, and the
  -- addressing (ptxas gave 119-122 at kpw 1 and spilled at kpw 8 with grp 4)
  local regs = 2 * p.grp * VEC + p.kpw * (16 + p.grp) + 56
  if regs > math.min(255, 65536 // G.nt) then return false, "more registers than the block allows" end
  local per = (shape.n + p.cs - 1) // p.cs
  if p.cs > 1 and per < 16 then return false, "slices under 16 keys: the combine costs more" end
  if G.tk > 2 * per and (p.kpw > 1 or p.warps > 2) then return false, "a tile over twice a slice's keys" end
  if p.grp * p.hd % p.cs ~= 0 then return false, "outputs do not split over the cluster" end
  return true
end

t.default = function(shape, dt, dev)
  local sms = dev.sms or 132
  local p = { warps = 4, kpw = 2, hd = shape.d, grp = shape.g > 0 and shape.h // shape.g or 1, cs = 1 }
  for _, cs in ipairs({ 8, 4, 2 }) do
    if (dev.cc or 0) >= 90 and shape.b * shape.g * cs <= 2 * sms and (shape.n + cs - 1) // cs >= 64 then
      p.cs = cs
      break
    end
  end
  if t.constraints(p, shape, dt, dev) then return p end
  p.kpw, p.warps = 1, 2
  if t.constraints(p, shape, dt, dev) then return p end
  return nil
end

t.launch = function(p, dt, dev)
  return {
    grid = { string.format("g * %d", p.cs), "b", 1 },
    block = { geom(p).nt, 1, 1 },
    cluster = { p.cs, 1, 1 },
    smem = 0,
  }
end

t.source = function(p, dt, dev, name)
  local G = geom(p)
  return dtype.prelude .. cluster.ptx .. string.format([[
#define NW %d
#define CS %d
#define KPW %d
#define HD %d
#define GRP %d
#define VEC %d
#define LPK %d
#define KPS %d
#define TK %d
#define NT %d
typedef %s T;
#define LD(x) ld_%s(x)
#define ST(x) st_%s(x)
#define NEG_INF (-__int_as_float(0x7f800000))
#define L2E 1.4426950408889634f
#define FULL 0xffffffffu

struct __align__(16) Row { T e[VEC]; };

// VEC elements of a row: one 16-byte load where the tensors are aligned.
AIT_DEV Row ld_row(const T* p, bool al) {
  Row r;
  if (al) {
    r = *reinterpret_cast<const Row*>(p);
  } else {
#pragma unroll
    for (int e = 0; e < VEC; e++) r.e[e] = p[e];
  }
  return r;
}

extern "C" __global__ void __launch_bounds__(NT) %s(const T* __restrict__ q, const T* __restrict__ k,
    const T* __restrict__ v, const T* __restrict__ bias, T* __restrict__ o, float scale, long long b, long long h,
    long long g, long long n, long long d) {
  if (h != g * GRP || d != HD) {   // not the shape this kernel was built for
    if (blockIdx.x == 0 && blockIdx.y == 0)
      for (long long i = threadIdx.x; i < b * h * d; i += NT) o[i] = ST(__int_as_float(0x7fc00000));
    return;
  }
  __shared__ float sp[GRP][TK];
  __shared__ float so[NW][GRP][HD];
  __shared__ float sm[GRP], sl[GRP], sc[GRP];
  const int tid = threadIdx.x, w = tid / 32, lane = tid %% 32, ks = lane / LPK, dc = lane %% LPK;
  const long long kh = blockIdx.x / CS, bi = blockIdx.y;
  const int rank = (int)(blockIdx.x %% CS);
  const long long per = (n + CS - 1) / CS, lo = rank * per, hi = min(n, lo + per);
  const bool al = (((unsigned long long)q | (unsigned long long)k | (unsigned long long)v |
                    (unsigned long long)o) & 15) == 0;
  float qf[GRP][VEC], acc[GRP][VEC];
#pragma unroll
  for (int r = 0; r < GRP; r++) {
    const Row t = ld_row(q + (bi * h + kh * GRP + r) * HD + dc * VEC, al);
#pragma unroll
    for (int e = 0; e < VEC; e++) { qf[r][e] = LD(t.e[e]) * scale * L2E; acc[r][e] = 0.f; }
  }
  if (tid < GRP) { sm[tid] = NEG_INF; sl[tid] = 0.f; }
  const T* kb = k + (bi * g + kh) * n * HD + dc * VEC;
  const T* vb = v + (bi * g + kh) * n * HD + dc * VEC;
  const T* bb = bias + bi * n;
  // this lane group's keys of a tile: t0 + (w * KPW + u) * KPS + ks
  float bn[KPW];
#pragma unroll
  for (int u = 0; u < KPW; u++) {
    const long long j = lo + (w * KPW + u) * KPS + ks;
    bn[u] = j < hi ? LD(bb[j]) : NEG_INF;
  }
  for (long long t0 = lo; t0 < hi; t0 += TK) {
    float bj[KPW];
    Row kr[KPW], vr[KPW];
#pragma unroll
    for (int u = 0; u < KPW; u++) {
      bj[u] = bn[u];
      const long long j = t0 + (w * KPW + u) * KPS + ks;
      if (bj[u] != NEG_INF) { kr[u] = ld_row(kb + j * HD, al); vr[u] = ld_row(vb + j * HD, al); }
      const long long jn = j + TK;
      bn[u] = jn < hi ? LD(bb[jn]) : NEG_INF;   // the next tile's bias, in flight meanwhile
    }
    float s[KPW][GRP];
#pragma unroll
    for (int u = 0; u < KPW; u++) {
#pragma unroll
      for (int r = 0; r < GRP; r++) {
        float a = 0.f;
        if (bj[u] != NEG_INF) {
#pragma unroll
          for (int e = 0; e < VEC; e++) a = fmaf(LD(kr[u].e[e]), qf[r][e], a);
        }
        s[u][r] = a;
      }
    }
#pragma unroll
    for (int off = LPK / 2; off > 0; off >>= 1) {
#pragma unroll
      for (int u = 0; u < KPW; u++) {
#pragma unroll
        for (int r = 0; r < GRP; r++) s[u][r] += __shfl_xor_sync(FULL, s[u][r], off);
      }
    }
    if (dc == 0) {
#pragma unroll
      for (int u = 0; u < KPW; u++) {
#pragma unroll
        for (int r = 0; r < GRP; r++)
          sp[r][(w * KPW + u) * KPS + ks] = bj[u] == NEG_INF ? NEG_INF : s[u][r] + bj[u] * L2E;
      }
    }
    __syncthreads();
    // the tile's max and sum per head, one warp a head; the output sums are
    // rescaled by exp2(old max - new max)
    for (int r = w; r < GRP; r += NW) {
      float mx = NEG_INF;
      for (int i = lane; i < TK; i += 32) mx = fmaxf(mx, sp[r][i]);
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(FULL, mx, off));
      const float mo = sm[r], mn = fmaxf(mo, mx), mu = mn == NEG_INF ? 0.f : mn;
      float ls = 0.f;
      for (int i = lane; i < TK; i += 32) {
        const float pr = exp2f(sp[r][i] - mu);
        sp[r][i] = pr;
        ls += pr;
      }
#pragma unroll
      for (int off = 16; off > 0; off >>= 1) ls += __shfl_xor_sync(FULL, ls, off);
      __syncwarp();
      if (lane == 0) {
        const float c = exp2f(mo - mu);
        sc[r] = c;
        sl[r] = sl[r] * c + ls;
        sm[r] = mn;
      }
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < GRP; r++) {
      const float c = sc[r];
#pragma unroll
      for (int e = 0; e < VEC; e++) acc[r][e] *= c;
    }
#pragma unroll
    for (int u = 0; u < KPW; u++) {
      if (bj[u] != NEG_INF) {
        const int jl = (w * KPW + u) * KPS + ks;
#pragma unroll
        for (int r = 0; r < GRP; r++) {
          const float pr = sp[r][jl];
#pragma unroll
          for (int e = 0; e < VEC; e++) acc[r][e] = fmaf(pr, LD(vr[u].e[e]), acc[r][e]);
        }
      }
    }
    __syncthreads();
  }
  // the lane groups' sums, then the warps'
#pragma unroll
  for (int off = LPK; off < 32; off <<= 1) {
#pragma unroll
    for (int r = 0; r < GRP; r++) {
#pragma unroll
      for (int e = 0; e < VEC; e++) acc[r][e] += __shfl_xor_sync(FULL, acc[r][e], off);
    }
  }
  if (ks == 0) {
#pragma unroll
    for (int r = 0; r < GRP; r++) {
#pragma unroll
      for (int e = 0; e < VEC; e++) so[w][r][dc * VEC + e] = acc[r][e];
    }
  }
  __syncthreads();
  for (int i = tid; i < GRP * HD; i += NT) {
    float a = 0.f;
#pragma unroll
    for (int ww = 0; ww < NW; ww++) a += so[ww][i / HD][i %% HD];
    so[0][i / HD][i %% HD] = a;
  }
  T* ob = o + (bi * h + kh * GRP) * HD;
#if CS == 1
  __syncthreads();
  for (int i = tid; i < GRP * HD; i += NT) {
    const float l = sl[i / HD];
    ob[i] = ST(l > 0.f ? so[0][i / HD][i %% HD] / l : 0.f);
  }
#else
  // every rank's partial is in its shared memory: each rank combines a slice
  // of the outputs from all of them, then all wait until no one reads a
  // peer's shared memory any more
  cluster_arrive();
  cluster_wait();
  const unsigned am = (unsigned)__cvta_generic_to_shared(&sm[0]), al_ = (unsigned)__cvta_generic_to_shared(&sl[0]),
                 ao = (unsigned)__cvta_generic_to_shared(&so[0][0][0]);
  const int slice = GRP * HD / CS;
  for (int i = rank * slice + tid; i < (rank + 1) * slice; i += NT) {
    const int r = i / HD;
    float mp[CS], mx = NEG_INF;
#pragma unroll
    for (int pr = 0; pr < CS; pr++) { mp[pr] = ld_peer(am + 4u * r, pr); mx = fmaxf(mx, mp[pr]); }
    const float mu = mx == NEG_INF ? 0.f : mx;
    float l = 0.f, a = 0.f;
#pragma unroll
    for (int pr = 0; pr < CS; pr++) {
      const float f = exp2f(mp[pr] - mu);
      l = fmaf(ld_peer(al_ + 4u * r, pr), f, l);
      a = fmaf(ld_peer(ao + 4u * i, pr), f, a);
    }
    ob[i] = ST(l > 0.f ? a / l : 0.f);
  }
  cluster_arrive();
  cluster_wait();
#endif
}
]], p.warps, p.cs, p.kpw, p.hd, p.grp, VEC, G.lpk, G.kps, G.tk, G.nt, dtype.ctype(dt), dt, dt, name)
end

return t
