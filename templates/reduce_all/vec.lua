-- Whole-tensor sum in one kernel: a persistent grid of `bps` blocks per SM,
-- each thread keeping `ilp` vector loads of `vbytes` in flight per step; each
-- block reduces its threads (shuffles, then shared memory) into one partial in
-- the workspace, and the last block to finish (a ticket counter) adds the
-- partials in a fixed order and writes y. Deterministic for a given grid.
local dtype = lib("dtype")
local kernel = lib("kernel")
local rows = lib("rows")

local function vec_of(p, dt) return math.max(1, p.vbytes // dtype.size(dt)) end

local function grid_cap(p, dev) return dev.sms * p.bps end

local t = {
  op = OP.name, name = "vec", min_cc = 80, dtypes = OP.dtypes,
  params = {
    { "vbytes", { 2, 4, 8, 16 } },
    { "block", { 256, 512, 1024 } },
    { "ilp", { 2, 4, 8, 16 } },
    { "bps", { 1, 2, 4, 8 } },
    { "ld", { 0, 1 } },
  },
}

t.constraints = function(p, shape, dt, dev)
  local s = dtype.size(dt)
  if p.vbytes < s then return false, "vector narrower than an element" end
  if p.vbytes < 8 then return false, "narrow vectors: the tail is handled, 16 bytes fit any n" end
  if p.block * p.bps > dev.max_threads_per_sm then return false, "more threads than an SM holds" end
  local V = vec_of(p, dt)
  local per_block = p.block * p.ilp * V
  if per_block * p.bps * dev.sms > 4 * shape.n and p.bps > 1 then
    return false, "grid larger than the work"
  end
  if p.ilp * p.vbytes > 256 then return false, "more than 256 bytes in flight per thread" end
  if p.ilp * p.vbytes < 32 then return false, "fewer than 32 bytes in flight per thread" end
  local need = p.ilp * p.vbytes // 4 * (s == 2 and 2 or 1) + 24
  if need > math.min(255, 65536 // p.block) then return false, "loads in flight exceed the register cap" end
  return true
end

t.supports = function(shape, dt, dev)
  if shape.n < 1 then return false, "empty tensor" end
  return true
end

t.default = function(shape, dt, dev)
  return { vbytes = 16, block = 512, ilp = 4, bps = 1, ld = 0 }
end

t.workspace = function(p, shape, dt, dev)
  return 16 + 4 * grid_cap(p, dev)
end

t.launch = function(p, dt, dev)
  local chunk = p.block * p.ilp * vec_of(p, dt)
  return {
    grid = { string.format("max(1, min(cdiv(n, %d), %d))", chunk, grid_cap(p, dev)), 1, 1 },
    block = { p.block, 1, 1 }, smem = 0,
  }
end

t.source = function(p, dt, dev, name)
  local V = vec_of(p, dt)
  return rows.header(dt, p.ld, 0) .. string.format([[
#define BLOCK %d
#define ILP %d
#define VEC %d

// This thread's share of x: vectors of V in steps of BLOCK*ILP vectors per
// block, then the n %% V leftover elements.
template<int V> AIT_DEV float part(const T* __restrict__ x, long long n) {
  const long long nvec = n / V;
  const long long step = (long long)gridDim.x * BLOCK * ILP;
  float acc[V];
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = 0.f;
  for (long long base = (long long)blockIdx.x * BLOCK * ILP; base < nvec; base += step) {
    VecT<V> r[ILP];
#pragma unroll
    for (int u = 0; u < ILP; ++u) {
      const long long v = base + u * BLOCK + threadIdx.x;
      if (v < nvec) r[u] = ldv<V>(x + v * V);
    }
#pragma unroll
    for (int u = 0; u < ILP; ++u) {
      const long long v = base + u * BLOCK + threadIdx.x;
      if (v < nvec) {
#pragma unroll
        for (int e = 0; e < V; ++e) acc[e] += TO_F(r[u].e[e]);
      }
    }
  }
  for (long long i = nvec * V + (long long)blockIdx.x * BLOCK + threadIdx.x; i < n;
       i += (long long)gridDim.x * BLOCK)
    acc[0] += TO_F(x[i]);
  float s = 0.f;
#pragma unroll
  for (int e = 0; e < V; ++e) s += acc[e];
  return s;
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1) %s(%s) {
  __shared__ float red[2][BLOCK / 32];
  __shared__ bool last;
  unsigned* ticket = (unsigned*)ws;
  float* partial = (float*)((char*)ws + 16);
  const bool vok = ((unsigned long long)x %% (VEC * sizeof(T))) == 0;
  St<1> s;
  if (VEC > 1 && vok) s.v[0] = part<VEC>(x, n);
  else s.v[0] = part<1>(x, n);
  group_all<CSum, BLOCK, 1>(s, &red[0][0], 0, threadIdx.x);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s.v[0];
    __threadfence();
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  St<1> a;
  a.v[0] = 0.f;
  for (unsigned i = threadIdx.x; i < gridDim.x; i += BLOCK) a.v[0] += __ldcg(partial + i);
  group_all<CSum, BLOCK, 1>(a, &red[1][0], 0, threadIdx.x);
  if (threadIdx.x == 0) y[0] = a.v[0];
}
]], p.block, p.ilp, V, name, kernel.params(OP, dt, true))
end

return t
