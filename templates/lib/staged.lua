-- Row kernels staged in shared memory by the Tensor Memory Accelerator
-- (sm_90): softmax, layernorm and rmsnorm for long rows.
--
-- A cluster of CL blocks owns a row; block r of the cluster owns the r-th
-- slice of it (slices are whole 16-byte chunks). One thread arms an mbarrier
-- and issues a single bulk copy (cp.async.bulk) of the slice into shared
-- memory; the block waits on the barrier, then makes its passes over shared
-- memory instead of registers, so a row of any length up to the shared
-- memory of CL SMs is read from HBM once, and several blocks per SM keep
-- their copies in flight while others compute. Reductions run over the block
-- (warp shuffles, or a shared-memory tree) and then, with CL > 1, across the
-- cluster: each block puts its partial in its own shared memory, and after a
-- cluster barrier every block reads all CL partials through distributed
-- shared memory (mapa + ld.shared::cluster) and combines them in rank order,
-- so every block gets the same bits. The output goes to global memory either
-- as vector stores from registers or, written back into the staged slice, as
-- one bulk copy out (cp.async.bulk global <- shared).
--
-- The kernel is right for every row length: when the row's bytes or the
-- pointers are not 16-byte aligned, the slice is copied in by plain loads,
-- one element at a time, and written the same way.
--
-- peel = 1 (rows off a 16-byte boundary: an odd width, say): the slice goes
-- into shared memory as far past a 16-byte boundary as it starts in global
-- memory, so the whole 16-byte chunks inside it are copied in by one bulk
-- copy and read as vectors; the head before the first chunk and the tail
-- after the last (under 16 bytes each) are copied and read as scalars. The
-- output leaves the same way (y's rows start as far off a boundary as x's
-- when x and y do; the kernel checks it, else the plain path runs). The
-- weights are indexed by column, so their vectors are read with a shift
-- (lib/rows.lua's ldu). Aligned rows take the same path with no head.
local dtype = lib("dtype")
local kernel = lib("kernel")
local rows = lib("rows")
local M = {}

-- PTX wrappers: the mbarrier, bulk copies, and (lib/cluster.lua) the
-- cluster barrier and reads of a peer block's shared memory.
M.ptx = lib("cluster").ptx .. [[
AIT_DEV void mbar_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
AIT_DEV bool mbar_done(unsigned bar, unsigned parity) {
  unsigned ok;
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  return ok != 0;
}
// One bulk copy of `bytes` (a multiple of 16, both addresses 16-byte
// aligned) from global memory into this block's shared memory; the barrier
// completes when all the bytes have landed.
AIT_DEV void bulk_in(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
// One bulk copy out of shared memory, waited for until its writes are done
// (the block's shared memory must outlive the read of it).
AIT_DEV void bulk_out(void* dst, unsigned src, unsigned bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" :: "l"(dst), "r"(src), "r"(bytes) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
// Generic-proxy writes to shared memory made visible to the bulk copy engine.
AIT_DEV void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

// All-reduce of s over the block, then over the cluster. red: this
// reduction's block buffer; part: this reduction's N floats of partials
// (each reduction of a row has its own, so no barrier is needed between
// them). Every thread of every block of the cluster must call it.
template<class C, int N> AIT_DEV void all_reduce(St<N>& s, float* red, float* part) {
  group_all<C, BLOCK, N>(s, red, 0, threadIdx.x);
  if constexpr (CL > 1) {
    if (threadIdx.x == 0) {
#pragma unroll
      for (int i = 0; i < N; ++i) part[i] = s.v[i];
    }
    cluster_arrive();
    cluster_wait();
    const unsigned pa = smaddr(part);
    St<N> a;
#pragma unroll
    for (int i = 0; i < N; ++i) a.v[i] = ld_peer(pa + 4 * i, 0);
#pragma unroll
    for (unsigned r = 1; r < CL; ++r) {
      St<N> u;
#pragma unroll
      for (int i = 0; i < N; ++i) u.v[i] = ld_peer(pa + 4 * i, r);
      C::f(a, u);
    }
    s = a;
  }
}
]]

-- Per op, its op.lua's `op.staged`: the passes over the staged slice. Each
-- pass is a loop over this thread's vectors of the slice (EACH: xe is the
-- element as a float); OUT writes the output vector o (ye per element) for
-- each of them, with the weights' vectors of its column loaded as <w>v
-- (wv, bv). cols is the whole row, cb the slice's first column, n its
-- length. `args`: the kernel's arguments as the body passes them;
-- `weights`: the vectors read per column; `nst`: the widest state.

-- Where a weight's slice is read: `base` its column 0 (the slice's first
-- column), `lo` and `hi` the buffer it lies in, `at(c)` its element at
-- column c. From global memory, or (rpb > 1) from the block's copy in
-- shared memory, s_<name>.
local function global_w(w)
  return { base = w .. " + cb", lo = w, hi = w .. " + cols", at = function(c) return string.format("%s[cb + %s]", w, c) end }
end
local function shared_w(w)
  local sw = "s_" .. w
  return { base = sw, lo = sw, hi = sw .. " + n", at = function(c) return string.format("%s[%s]", sw, c) end }
end

-- The loads of the weights' vectors at column c of the slice.
local function wpre(weights, where)
  if #weights == 0 then return "" end
  local l = {}
  for _, w in ipairs(weights) do l[#l + 1] = string.format("%sv = ldv<V>(%s + c)", w, (where or global_w)(w).base) end
  return "const VecT<V> " .. table.concat(l, ", ") .. ";"
end

local function each(code)
  return string.format([[
#pragma unroll 4
  for (int i = threadIdx.x; i < n / V; i += BLOCK) {
    const VecT<V> r = *reinterpret_cast<const VecT<V>*>(sx + i * V);
#pragma unroll
    for (int e = 0; e < V; ++e) { const float xe = TO_F(r.e[e]); %s }
  }
]], code)
end

-- With STORE_BULK (and the aligned path) the output overwrites the staged
-- slice in place (each thread rewrites the vectors it read) and leaves in one
-- bulk copy.
local function out(pre, code)
  return string.format([[
#pragma unroll 4
  for (int i = threadIdx.x; i < n / V; i += BLOCK) {
    const int c = i * V;
    const VecT<V> r = *reinterpret_cast<const VecT<V>*>(sx + c);
    %s
    VecT<V> o;
#pragma unroll
    for (int e = 0; e < V; ++e) { const float xe = TO_F(r.e[e]); float ye; %s o.e[e] = FROM_F(ye); }
    if (STORE_BULK && V > 1) *reinterpret_cast<VecT<V>*>(sx + c) = o;
    else stv<V>(yr + c, o);
  }
  if (STORE_BULK && V > 1) {
    fence_async_smem();
    __syncthreads();
    if (threadIdx.x == 0 && n > 0) bulk_out(yr, smaddr(sx), (unsigned)n * sizeof(T));
  }
]], pre, code)
end

-- The peel passes (see the top): sp[k] is element k of the slice, sp + ph
-- is 16-byte aligned, nb whole chunks follow it, then the tail from pt; nsc
-- head and tail elements in all.
local function each_p(code)
  return string.format([[
#pragma unroll 4
  for (int i = threadIdx.x; i < nb; i += BLOCK) {
    const VecT<V> r = *reinterpret_cast<const VecT<V>*>(sp + ph + i * V);
#pragma unroll
    for (int e = 0; e < V; ++e) { const float xe = TO_F(r.e[e]); %s }
  }
  for (int i = threadIdx.x; i < nsc; i += BLOCK) {
    const float xe = TO_F(sp[i < ph ? i : i - ph + pt]);
    %s
  }
]], code, code)
end

local function out_p(weights, code, where)
  local v, sc = {}, {}
  for _, w in ipairs(weights) do
    local ws = (where or global_w)(w)
    v[#v + 1] = string.format("%sv = ldu<V>(%s + c, %s, %s)", w, ws.base, ws.lo, ws.hi)
    sc[#sc + 1] = string.format("VecT<1> %sv; %sv.e[0] = %s;", w, w, ws.at("c"))
  end
  local vpre = #v > 0 and "const VecT<V> " .. table.concat(v, ", ") .. ";" or ""
  return string.format([[
#pragma unroll 4
  for (int i = threadIdx.x; i < nb; i += BLOCK) {
    const int c = ph + i * V;
    const VecT<V> r = *reinterpret_cast<const VecT<V>*>(sp + c);
    %s
    VecT<V> o;
#pragma unroll
    for (int e = 0; e < V; ++e) { const float xe = TO_F(r.e[e]); float ye; %s o.e[e] = FROM_F(ye); }
    if (STORE_BULK) *reinterpret_cast<VecT<V>*>(sp + c) = o;
    else stv<V>(yr + c, o);
  }
  for (int i = threadIdx.x; i < nsc; i += BLOCK) {
    const int c = i < ph ? i : i - ph + pt;
    %s
    const int e = 0;
    (void)e;
    const float xe = TO_F(sp[c]); float ye; %s yr[c] = FROM_F(ye);
  }
  if (STORE_BULK) {
    fence_async_smem();
    __syncthreads();
    if (threadIdx.x == 0 && nb > 0) bulk_out(yr + ph, smaddr(sp + ph), (unsigned)nb * 16);
  }
]], vpre, code, table.concat(sc, " "), code)
end

-- Elements per 16-byte chunk.
local function chunk(dt) return 16 // dtype.size(dt) end

-- Elements of a cluster block's slice: whole chunks.
local function slice_of(cols, dt, cl)
  local ve = chunk(dt)
  return ((cols + cl * ve - 1) // (cl * ve)) * ve
end

-- Shared memory of a block besides its slice: the reduction buffers, the
-- partials and the barrier, plus the 1 KB the driver reserves per block.
local function static_bytes(k, p)
  return 4 * 2 * k.nst * rows.red_floats(p.block, p.red) + 64 + 1024
end
-- Dynamic shared memory of a block whose slice takes slice_bytes: the
-- slice, with rpb > 1 each weight's slice after it, and 16 bytes more where
-- peel shifts the slice (rpb > 1 keeps them always: the weights start
-- after them).
local function rpb_of(p) return p.rpb or 1 end
local function dyn_bytes(k, p, slice_bytes)
  local nw = rpb_of(p) > 1 and #k.weights or 0
  local pad = ((p.peel or 0) == 1 or nw > 0) and 16 or 0
  return slice_bytes * (1 + nw) + pad
end
-- Whether cols's rows start on 16-byte boundaries (x aligned).
local function aligned(cols, dt) return cols * dtype.size(dt) % 16 == 0 end

-- rpb > 1 (ops with weights): a block (or cluster) takes rpb rows one after
-- another, with its slice of each weight copied into shared memory once,
-- after the row's slice (and its 16 bytes of peel shift), so a row reads
-- its weights from shared memory instead of L2 (rmsnorm and layernorm read
-- as many weight bytes per row as x bytes). One mbarrier serves the rows,
-- its phase flipping with each bulk copy; the cluster partials alternate
-- between two halves of part, so a row's partials never overwrite those a
-- peer may still be reading from the row before.
local function source_rpb(op, p, dt, name)
  local k = op.staged
  local ve = chunk(dt)
  local slot = k.nst * rows.red_floats(p.block, p.red)
  local peel = (p.peel or 0) == 1
  local wparams, wargs, wslices, wcopy = {}, {}, {}, {}
  for i, w in ipairs(k.weights) do
    wparams[#wparams + 1] = ", const T* __restrict__ s_" .. w
    wargs[#wargs + 1] = ", s_" .. w
    wslices[#wslices + 1] = string.format("  T* s_%s = sx + slice + 16 / sizeof(T) + %d * slice;\n", w, i - 1)
    wcopy[#wcopy + 1] = string.format([[
  if ((unsigned long long)(%s + cb) %% 16 == 0) {
    for (int i = threadIdx.x; i < n / VE; i += BLOCK) stv<VE>(s_%s + i * VE, ldv<VE>(%s + cb + i * VE));
    for (int i = n / VE * VE + threadIdx.x; i < n; i += BLOCK) s_%s[i] = %s[cb + i];
  } else {
    for (int i = threadIdx.x; i < n; i += BLOCK) s_%s[i] = %s[cb + i];
  }
]], w, w, w, w, w, w, w)
  end
  wparams, wargs = table.concat(wparams), table.concat(wargs)
  local params = kernel.params(op, dt)
  local bodies = string.format([[

template<int V> AIT_DEV void row_body(%s, T* __restrict__ sx, T* __restrict__ yr,
                                     long long cb, int n, float* red, float* part%s) {
%s}
]], params, wparams, k.passes(each, function(code) return out(wpre(k.weights, shared_w), code) end))
  local copy
  if peel then
    bodies = bodies .. string.format([[

template<int V> AIT_DEV void row_body_peel(%s, T* __restrict__ sp, T* __restrict__ yr,
                                          long long cb, int n, int ph, int nb, float* red, float* part%s) {
  const int pt = ph + nb * V, nsc = n - nb * V;
%s}
]], params, wparams, k.passes(each_p, function(code) return out_p(k.weights, code, shared_w) end))
    copy = string.format([[
    if ((((unsigned long long)x ^ (unsigned long long)y) %% 16) == 0) {
      const int m = (int)(((unsigned long long)xr %% 16) / sizeof(T));
      const int ph = min((VE - m) %% VE, n);
      const int nb = (n - ph) / VE;
      const int pt = ph + nb * VE;
      T* sp = sx + m;
      if (threadIdx.x == 0 && nb > 0) bulk_in(smaddr(sp + ph), xr + ph, (unsigned)nb * 16, mb);
      for (int i = threadIdx.x; i < n - nb * VE; i += BLOCK) {
        const int k = i < ph ? i : i - ph + pt;
        sp[k] = xr[k];
      }
      __syncthreads();
      if (nb > 0) { while (!mbar_done(mb, phase)) {} phase ^= 1; }
      row_body_peel<VE>(%s, sp, yr, cb, n, ph, nb, red, pr%s);
    } else {]], k.args, wargs)
  else
    copy = string.format([[
    if (cols %% VE == 0 && (((unsigned long long)x | (unsigned long long)y) %% 16) == 0) {
      if (threadIdx.x == 0 && n > 0) bulk_in(smaddr(sx), xr, (unsigned)n * sizeof(T), mb);
      if (n > 0) { while (!mbar_done(mb, phase)) {} phase ^= 1; }
      row_body<VE>(%s, sx, yr, cb, n, red, pr%s);
    } else {]], k.args, wargs)
  end
  return rows.header(dt, 0, p.red) .. (peel and rows.LDU or "") .. string.format([[
#define BLOCK %d
#define CL %d
#define VE %d
#define SLOT %d
#define STORE_BULK %d
#define SROWS %d
]], p.block, p.cluster, ve, slot, p.store, p.rpb) .. M.ptx .. bodies .. string.format([[

extern "C" __global__ void %s __launch_bounds__(BLOCK, %d) %s(%s) {
  extern __shared__ __align__(128) unsigned char smraw[];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ float red[2 * SLOT > 0 ? 2 * SLOT : 1];
  __shared__ float part[8];
  T* sx = reinterpret_cast<T*>(smraw);
  const unsigned rank = CL > 1 ? cta_rank() : 0;
  const long long slice = (cols + CL * VE - 1) / (CL * VE) * VE;
  const long long cb = rank * slice;
  const int n = (int)max(0LL, min(slice, cols - cb));
%s%s  const unsigned mb = smaddr(&bar);
  if (threadIdx.x == 0) mbar_init(mb);
  __syncthreads();
  unsigned phase = 0;
  const long long r0 = (long long)(blockIdx.x / CL) * SROWS;
  for (int rr = 0; rr < SROWS && r0 + rr < rows; ++rr) {
    const long long row = r0 + rr;
    const T* xr = x + row * cols + cb;
    T* yr = y + row * cols + cb;
    float* pr = part + (rr & 1) * 4;
%s
      for (int i = threadIdx.x; i < n; i += BLOCK) sx[i] = xr[i];
      __syncthreads();
      row_body<1>(%s, sx, yr, cb, n, red, pr%s);
    }
    // the slice is free for the next row's copy once every thread is done
    // with it (the copy writes through the async proxy)
    fence_async_smem();
    __syncthreads();
  }
  // no block leaves while a peer may still read its partials
  if constexpr (CL > 1) { cluster_arrive(); cluster_wait(); }
}
]], p.cluster > 1 and string.format("__cluster_dims__(%d, 1, 1)", p.cluster) or "",
    p.occ, name, params, table.concat(wslices), table.concat(wcopy), copy, k.args, wargs)
end

function M.source(op, kind, p, dt, name)
  if (p.rpb or 1) > 1 then return source_rpb(op, p, dt, name) end
  local k = op.staged
  local ve = chunk(dt)
  local slot = k.nst * rows.red_floats(p.block, p.red)
  local align = { "(unsigned long long)x", "(unsigned long long)y" }
  for _, w in ipairs(k.weights) do align[#align + 1] = "(unsigned long long)" .. w end
  local peel = (p.peel or 0) == 1
  local passes = k.passes(each, function(code) return out(wpre(k.weights), code) end)
  local body_p, copy = "", nil
  if peel then
    body_p = string.format([[

template<int V> AIT_DEV void row_body_peel(%s, T* __restrict__ sp, T* __restrict__ yr,
                                          long long cb, int n, int ph, int nb, float* red, float* part) {
  const int pt = ph + nb * V, nsc = n - nb * V;
%s}
]], kernel.params(op, dt), k.passes(each_p, function(code) return out_p(k.weights, code) end))
    copy = string.format([[
  const bool pok = (((unsigned long long)x ^ (unsigned long long)y) %% 16) == 0;
  if (pok) {
    // the slice sits in shared memory as far past 16 bytes as in global memory
    const int m = (int)(((unsigned long long)xr %% 16) / sizeof(T));
    const int ph = min((VE - m) %% VE, n);
    const int nb = (n - ph) / VE;
    const int pt = ph + nb * VE;
    T* sp = sx + m;
    // the bulk copy first, the scalars while it flies; the others wait on
    // the barrier only after the block barrier (it is initialized by then)
    const unsigned mb = smaddr(&bar);
    if (threadIdx.x == 0) {
      mbar_init(mb);
      if (nb > 0) bulk_in(smaddr(sp + ph), xr + ph, (unsigned)nb * 16, mb);
    }
    for (int i = threadIdx.x; i < n - nb * VE; i += BLOCK) {
      const int k = i < ph ? i : i - ph + pt;
      sp[k] = xr[k];
    }
    __syncthreads();
    if (nb > 0) while (!mbar_done(mb, 0)) {}
    row_body_peel<VE>(%s, sp, yr, cb, n, ph, nb, red, part);
  } else {]], k.args)
  else
    copy = string.format([[
  const bool vok = cols %% VE == 0 && ((%s) %% 16) == 0;
  if (vok) {
    const unsigned mb = smaddr(&bar);
    if (threadIdx.x == 0) mbar_init(mb);
    __syncthreads();
    if (threadIdx.x == 0 && n > 0) bulk_in(smaddr(sx), xr, (unsigned)n * sizeof(T), mb);
    if (n > 0) while (!mbar_done(mb, 0)) {}
    row_body<VE>(%s, sx, yr, cb, n, red, part);
  } else {]], table.concat(align, " | "), k.args)
  end
  return rows.header(dt, 0, p.red) .. (peel and rows.LDU or "") .. string.format([[
#define BLOCK %d
#define CL %d
#define VE %d
#define SLOT %d
#define STORE_BULK %d
]], p.block, p.cluster, ve, slot, p.store) .. M.ptx .. string.format([[

template<int V> AIT_DEV void row_body(%s, T* __restrict__ sx, T* __restrict__ yr,
                                     long long cb, int n, float* red, float* part) {
%s}
%s
extern "C" __global__ void %s __launch_bounds__(BLOCK, %d) %s(%s) {
  extern __shared__ __align__(128) unsigned char smraw[];
  __shared__ __align__(8) unsigned long long bar;
  __shared__ float red[2 * SLOT > 0 ? 2 * SLOT : 1];
  __shared__ float part[4];
  T* sx = reinterpret_cast<T*>(smraw);
  const unsigned rank = CL > 1 ? cta_rank() : 0;
  const long long row = blockIdx.x / CL;
  const long long slice = (cols + CL * VE - 1) / (CL * VE) * VE;
  const long long cb = rank * slice;
  const int n = (int)max(0LL, min(slice, cols - cb));
  const T* xr = x + row * cols + cb;
  T* yr = y + row * cols + cb;
%s
    for (int i = threadIdx.x; i < n; i += BLOCK) sx[i] = xr[i];
    __syncthreads();
    row_body<1>(%s, sx, yr, cb, n, red, part);
  }
  // no block leaves while a peer may still read its partials
  if constexpr (CL > 1) { cluster_arrive(); cluster_wait(); }
}
]], kernel.params(op, dt), passes, body_p,
    p.cluster > 1 and string.format("__cluster_dims__(%d, 1, 1)", p.cluster) or "",
    p.occ, name, kernel.params(op, dt), copy, k.args)
end

-- The template table of a staged family for op (softmax, layernorm or
-- rmsnorm). Params: block (threads per block), cluster (blocks per row; 1:
-- no distributed shared memory), occ (blocks per SM the register cap is set
-- for: 1, or all the blocks that fit an SM), red (0: shuffles + one shared-memory exchange, 1: shared-memory
-- tree), store (0: vector stores from registers, 1: a bulk copy out), peel
-- (1: rows off a 16-byte boundary keep their bulk in bulk copies and
-- vectors, see the top; only where the task's rows are off one, and there
-- always), rpb (rmsnorm, layernorm: rows per block, their weights' slices
-- staged in shared memory once, see source_rpb).
function M.family(op, kind, name)
  local t = {
    op = op.name, name = name or "tma", min_cc = 90, dtypes = op.dtypes,
    params = {
      { "block", { 128, 256, 512, 1024 } },
      { "cluster", { 1, 2, 4, 8 } },
      { "occ", { 1, 2, 3, 4, 5, 6, 7, 8 } },
      { "red", { 0, 1 } },
      { "store", { 0, 1 } },
      { "peel", { 0, 1 } },
    },
  }
  if #op.staged.weights > 0 then t.params[#t.params + 1] = { "rpb", { 1, 2, 4, 8 } } end

  -- Blocks of a config that fit an SM's shared memory at this shape.
  local function smem_blocks(p, shape, dt, dev)
    local bytes = dyn_bytes(op.staged, p, slice_of(shape.cols, dt, p.cluster) * dtype.size(dt)) + static_bytes(op.staged, p)
    return dev.smem_per_sm // bytes
  end

  t.constraints = function(p, shape, dt, dev)
    local s = dtype.size(dt)
    local cols = shape.cols
    if cols * s < 2048 then return false, "rows under 2 KB: the register families hold them" end
    if (p.peel or 0) == 1 and aligned(cols, dt) then return false, "rows are 16-byte aligned: nothing to peel" end
    if (p.peel or 0) == 0 and not aligned(cols, dt) then
      return false, "rows off a 16-byte boundary: peel=1 copies their whole chunks in bulk"
    end
    local slice = slice_of(cols, dt, p.cluster)
    if dyn_bytes(op.staged, p, slice * s) + static_bytes(op.staged, p) - 1024 > dev.smem_optin then
      return false, rpb_of(p) > 1 and "the slice and the weights' do not fit a block's shared memory"
        or "the slice does not fit a block's shared memory"
    end
    if p.cluster > 1 and slice * s < 8192 then return false, "cluster slices under 8 KB: fewer blocks hold the row" end
    local nvec = slice // chunk(dt)
    if nvec < p.block then return false, "threads with no chunk of the slice" end
    if nvec > 64 * p.block then return false, "more than 64 chunks per thread" end
    if p.occ * p.block > 2048 then return false, "more threads than an SM holds" end
    local fit = smem_blocks(p, shape, dt, dev)
    if fit < 1 then return false, "a block does not fit an SM" end
    if p.occ > fit then return false, "shared memory holds fewer blocks than the register cap assumes" end
    if p.occ ~= 1 and p.occ ~= math.min(fit, 2048 // p.block, 8) then
      return false, "register cap for other than all the blocks that fit (or none)"
    end
    -- the passes over shared memory take 44 to 71 registers unbounded: a cap
    -- under 64 spills
    if p.occ > 1 and 65536 // (p.occ * p.block) < 64 then return false, "register cap under 64" end
    if p.red == 1 and p.block < 256 then return false, "shared-memory tree only for blocks of 8 warps or more" end
    if rpb_of(p) > 1 then
      -- a block's rows wait for their copies one after another: other
      -- blocks of the SM must keep copies in flight meanwhile
      if fit < 2 then return false, "rows per block with one block an SM: nothing overlaps a row's copy" end
      if (shape.rows + p.rpb - 1) // p.rpb * p.cluster < dev.sms * math.min(fit, 2048 // p.block) then
        return false, "rows per block leave SMs without a block"
      end
    end
    return true
  end

  t.default = function(shape, dt, dev)
    return kernel.first_valid(t, shape, dt, dev, { red = 0, store = 0, rpb = 1, peel = aligned(shape.cols, dt) and 0 or 1 },
      { { "block", { 256, 512, 128, 1024 } }, { "cluster", { 1, 2, 4, 8 } }, { "occ", { 8, 7, 6, 5, 4, 3, 2, 1 } } })
  end

  t.supports = function(shape, dt, dev)
    if shape.rows < 1 or shape.cols < 1 then return false, "empty tensor" end
    if (dev.cc or 0) < 90 then return false, "bulk copies and clusters need sm_90" end
    if shape.rows * 8 > (1 << 31) - 1 then return false, "more rows than a grid of clusters holds" end
    if t.default(shape, dt, dev) == nil then return false, "no staged config for this row length" end
    return true
  end

  t.launch = function(p, dt, dev)
    local ve = chunk(dt)
    local nw = rpb_of(p) > 1 and #op.staged.weights or 0
    local pad = dyn_bytes(op.staged, p, 0)
    return {
      grid = { rpb_of(p) > 1 and string.format("cdiv(rows, %d) * %d", p.rpb, p.cluster)
               or string.format("rows * %d", p.cluster), 1, 1 },
      block = { p.block, 1, 1 },
      smem = string.format("cdiv(cols, %d) * 16", p.cluster * ve) .. (nw > 0 and " * " .. (1 + nw) or "")
        .. (pad > 0 and " + " .. pad or ""),
    }
  end

  t.source = function(p, dt, dev, nm) return M.source(op, kind, p, dt, nm) end
  return t
end

return M
