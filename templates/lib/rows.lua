-- Row-wise kernels over a rows x cols row-major tensor: reductions (sum, max),
-- softmax, layernorm and rmsnorm share one thread mapping and one set of
-- reductions. A group of `tpr` threads owns a row (tpr <= 32: a slice of a
-- warp, reduced with shuffles; tpr > 32: several warps, reduced through shared
-- memory), a block holds block/tpr such groups, and blocks walk the row groups
-- with a grid stride so that a persistent grid works too.
--
-- Two modes:
--   hold:   the row is loaded once into registers (nv vectors of `vec`
--           elements per thread, all loads issued before the first use), then
--           reduced and written from registers: one read of HBM.
--   stream: the row is walked in steps of tpr*vec*nv elements, once to gather
--           statistics and once more to write (softmax: online or max-then-sum).
--
-- Every kernel is correct for every shape: a uniform run-time test picks the
-- vector path only when cols and every pointer allow vectors of `vec`
-- elements (and, in hold mode, when the row fits); otherwise the same kernel
-- runs the streaming path with scalar accesses. Constraints only steer the
-- search toward configs whose fast path runs for the task's shape.
--
-- peel (softmax, layernorm, rmsnorm): rows that start off a 16-byte boundary
-- (row r starts at r * cols elements, so at an odd width most do) still move
-- their bulk in 16-byte vectors. The row's elements are laid on the grid of
-- aligned vectors: a row starting pm elements past a boundary covers grid
-- positions pm .. pm + cols; the whole vectors inside go through the same
-- loads, passes and stores as an aligned row, and the head (before the first
-- whole vector) and tail (after the last), at most V - 1 elements each, are
-- read as scalars in every pass (they stay in L1) and written as scalars.
-- y's rows start as far off a boundary as x's when x and y are (x and y have
-- one element type), which the kernel checks; the weights are indexed by
-- column, so their vectors are read with a shift (ldu). A peel kernel
-- serves aligned rows through the same path (pm = 0, no head).
local dtype = lib("dtype")
local kernel = lib("kernel")
local M = {}

-- Device helpers shared by the row kernels, the whole-tensor reduction and the
-- transpose: typed vectors, loads with an optional cache hint, reductions of a
-- small state across a warp or a group of warps.
M.common = [[
#define FULL_MASK 0xffffffffu
#define NEG_INF (-__int_as_float(0x7f800000))
#define L2E 1.4426950408889634f

template<int V> struct __align__(V * sizeof(T)) VecT { T e[V]; };

// 2^x on the SFU (relative error about 2^-22; results below 2^-126 flush to 0).
AIT_DEV float fex2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }

// Loads of V elements. LD_HINT 1 reads through the non-coherent path without
// allocating in L1 (the data is read once) and asks L2 to fetch 256-byte
// blocks.
#define LDQ "ld.global.nc.L1::no_allocate.L2::256B"
template<int V> AIT_DEV VecT<V> ldv(const T* p) {
#if LD_HINT
  constexpr int B = V * (int)sizeof(T);
  if constexpr (B == 16 || B == 8 || B == 4) {
    union { VecT<V> v; unsigned u[B / 4]; } r;
    if constexpr (B == 16)
      asm(LDQ ".v4.u32 {%0,%1,%2,%3}, [%4];"
          : "=r"(r.u[0]), "=r"(r.u[1]), "=r"(r.u[2]), "=r"(r.u[3]) : "l"(p));
    else if constexpr (B == 8)
      asm(LDQ ".v2.u32 {%0,%1}, [%2];" : "=r"(r.u[0]), "=r"(r.u[1]) : "l"(p));
    else
      asm(LDQ ".u32 %0, [%1];" : "=r"(r.u[0]) : "l"(p));
    return r.v;
  } else {
    return *reinterpret_cast<const VecT<V>*>(p);
  }
#else
  return *reinterpret_cast<const VecT<V>*>(p);
#endif
}
template<int V> AIT_DEV void stv(T* p, const VecT<V>& v) { *reinterpret_cast<VecT<V>*>(p) = v; }
// The shared-memory address of a generic pointer into shared memory.
AIT_DEV unsigned smaddr(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// A reduction state of N floats and the ways to combine two of them. Every
// combine is commutative bit for bit, so a butterfly leaves all lanes equal.
template<int N> struct St { float v[N]; };
struct CSum {
  template<int N> __device__ __forceinline__ static void f(St<N>& a, const St<N>& b) {
#pragma unroll
    for (int i = 0; i < N; ++i) a.v[i] += b.v[i];
  }
};
struct CMax {
  template<int N> __device__ __forceinline__ static void f(St<N>& a, const St<N>& b) {
#pragma unroll
    for (int i = 0; i < N; ++i) a.v[i] = fmaxf(a.v[i], b.v[i]);
  }
};
// Online softmax: (running max in log2 units, sum of 2^(x - max)).
struct COnl {
  template<int N> __device__ __forceinline__ static void f(St<N>& a, const St<N>& b) {
    float m = fmaxf(a.v[0], b.v[0]);
    float sa = a.v[0] == m ? a.v[1] : a.v[1] * fex2(a.v[0] - m);
    float sb = b.v[0] == m ? b.v[1] : b.v[1] * fex2(b.v[0] - m);
    a.v[0] = m;
    a.v[1] = sa + sb;
  }
};

// Chan's combine of (count, mean, sum of squared deviations), written so
// that swapping a and b gives the same bits.
struct CChan {
  template<int N> __device__ __forceinline__ static void f(St<N>& a, const St<N>& b) {
    const float n = a.v[0] + b.v[0];
    if (n == 0.f) return;
    const float d = b.v[1] - a.v[1];
    const float mean = (a.v[0] * a.v[1] + b.v[0] * b.v[1]) / n;
    a.v[2] = (a.v[2] + b.v[2]) + d * d * (a.v[0] * b.v[0] / n);
    a.v[1] = mean;
    a.v[0] = n;
  }
};

template<class C, int W, int N> AIT_DEV void warp_all(St<N>& s) {
#pragma unroll
  for (int o = W / 2; o > 0; o >>= 1) {
    St<N> u;
#pragma unroll
    for (int i = 0; i < N; ++i) u.v[i] = __shfl_xor_sync(FULL_MASK, s.v[i], o);
    C::f(s, u);
  }
}

// All-reduce of s over the G threads of group g (thread t of G in the group);
// every thread of the block must call it. RED_SMEM 0: shuffles in each warp,
// one barrier, then every thread combines the warps' partials; RED_SMEM 1: a
// tree in shared memory down to one warp, which finishes with shuffles. buf
// holds (G <= 32 ? 0 : RED_SMEM ? G : G / 32) * N floats per group.
template<class C, int G, int N> AIT_DEV void group_all(St<N>& s, float* buf, int g, int t) {
  if constexpr (G <= 32) {
    warp_all<C, G, N>(s);
  } else if constexpr (RED_SMEM == 0) {
    constexpr int NW = G / 32;
    warp_all<C, 32, N>(s);
    float* b = buf + g * (NW * N);
    if ((t & 31) == 0) {
#pragma unroll
      for (int i = 0; i < N; ++i) b[(t >> 5) * N + i] = s.v[i];
    }
    __syncthreads();
    St<N> r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.v[i] = b[i];
#pragma unroll 4
    for (int w = 1; w < NW; ++w) {
      St<N> u;
#pragma unroll
      for (int i = 0; i < N; ++i) u.v[i] = b[w * N + i];
      C::f(r, u);
    }
    s = r;
  } else {
    float* b = buf + g * (G * N);
#pragma unroll
    for (int i = 0; i < N; ++i) b[i * G + t] = s.v[i];
    __syncthreads();
#pragma unroll
    for (int h = G / 2; h >= 32; h >>= 1) {
      if (t < h) {
        St<N> a, u;
#pragma unroll
        for (int i = 0; i < N; ++i) { a.v[i] = b[i * G + t]; u.v[i] = b[i * G + t + h]; }
        C::f(a, u);
#pragma unroll
        for (int i = 0; i < N; ++i) b[i * G + t] = a.v[i];
      }
      __syncthreads();
    }
    if (t < 32) {
      St<N> a;
#pragma unroll
      for (int i = 0; i < N; ++i) a.v[i] = b[i * G + t];
      warp_all<C, 32, N>(a);
      if (t == 0) {
#pragma unroll
        for (int i = 0; i < N; ++i) b[i * G] = a.v[i];
      }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < N; ++i) s.v[i] = b[i * G];
  }
}
]]

-- Floats of shared memory group_all needs per group and per state float.
function M.red_floats(G, red_smem)
  if G <= 32 then return 0 end
  if red_smem == 1 then return G end
  return G // 32
end

-- Header for a dtype: the conversions, the storage type T, TO_F / FROM_F.
function M.header(dt, ld_hint, red_smem)
  return dtype.prelude .. string.format([[
typedef %s T;
#define TO_F(v) ld_%s(v)
#define FROM_F(v) st_%s(v)
#define LD_HINT %d
#define RED_SMEM %d
]], dtype.ctype(dt), dt, dt, ld_hint or 0, red_smem or 0) .. M.common
end

-- V elements from p, which need only be element-aligned (a weight read at a
-- peeled row's columns): the one or two aligned vectors that hold them,
-- shifted into place; element by element where the second vector would
-- reach past [lo, hi) (the last vector of a row whose weights end
-- mid-vector), so nothing outside the buffer is read. The shift is uniform
-- over a row, so the branch does not diverge. Words are picked by unrolled
-- selects (no register array indexed at run time).
M.LDU = [[
template<int V> AIT_DEV VecT<V> ldu(const T* p, const T* lo, const T* hi) {
  constexpr int B = V * (int)sizeof(T);
  const unsigned mis = (unsigned)((unsigned long long)p % B);
  if (B < 4 || mis == 0) return ldv<V>(p);
  const T* a = p - mis / sizeof(T);
  VecT<V> r;
  if (a < lo || a + 2 * V > hi) {
#pragma unroll
    for (int e = 0; e < V; ++e) r.e[e] = p[e];
    return r;
  }
  if constexpr (B >= 4) {
    constexpr int NW = B / 4;
    union { VecT<V> v; unsigned u[NW]; } u0, u1, o;
    u0.v = ldv<V>(a);
    u1.v = ldv<V>(a + V);
    unsigned w[2 * NW];
#pragma unroll
    for (int k = 0; k < NW; ++k) { w[k] = u0.u[k]; w[NW + k] = u1.u[k]; }
    const int q = (int)(mis >> 2);
    const unsigned sh = (mis & 3u) * 8u;
    unsigned s[NW + 1];
#pragma unroll
    for (int k = 0; k <= NW; ++k) {
      unsigned v = w[k];
#pragma unroll
      for (int qq = 1; qq < NW; ++qq) if (q == qq) v = w[k + qq];
      s[k] = v;
    }
#pragma unroll
    for (int k = 0; k < NW; ++k) o.u[k] = __funnelshift_r(s[k], s[k + 1], sh);
    return o.v;
  }
  return r;
}
]]

-- What each op's rows compute lives in its op.lua as `op.rows`: `sig` and
-- `call`, the argument list the device bodies take and pass (the kernel's
-- own names), `ptrs` the pointers checked for vector alignment, `nred` the
-- reductions per row and `nst` the widest state (they size the
-- shared-memory buffers), `hold` whether it has a hold body, `has_b` a bias
-- (layernorm), and `build(R)`, which returns the hold and stream bodies'
-- text made of the pieces in R: M.classic (aligned rows, or scalars) or
-- M.peel (rows off a vector boundary, see the top). An op writes its bodies
-- once, in pieces, and gets both paths.

-- The row loop every body shares: row groups with a grid stride; the loop
-- count is uniform over the block, so every barrier is reached by all threads.
-- rv says whether this group's row exists; a group past the end computes on
-- nothing (no loads, no stores) but joins the reductions.
local ROWLOOP_OPEN = [[
  const long long nrb = (rows + RPB - 1) / RPB;
  int it = 0;
  for (long long rb = blockIdx.x; rb < nrb; rb += gridDim.x, ++it) {
    const long long row = rb * RPB + g;
    const bool rv = row < rows;
    const T* xr = x + (rv ? row : 0) * cols;
    float* buf = redbuf + (it & 1) * (NRED * SLOT);
    (void)buf;
]]
local ROWLOOP_CLOSE = "  }\n"

-- Loads of step s (hold: the only step) into r[NV], with ok[j] saying which
-- vectors lie inside the row. Column of vector j: c0 + (j*TPR + t)*V.
local LOAD_STEP = [[
    VecT<V> r[NV];
    bool ok[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int c = c0 + (j * TPR + t) * V;
      ok[j] = rv && c < cols;
      if (ok[j]) r[j] = ldv<V>(xr + c);
    }
]]

local function body(kind, mode, text)
  return string.format([[
template<int V> AIT_DEV void body_%s(%s, float* redbuf, int g, int t) {
%s%s%s}
]], mode, kind.sig, ROWLOOP_OPEN, text, ROWLOOP_CLOSE)
end

-- For each vector j that is inside the row, run `code` with e over its V
-- elements and xe = its element as a float.
local function each(code)
  return string.format([[
#pragma unroll
    for (int j = 0; j < NV; ++j) if (ok[j]) {
#pragma unroll
      for (int e = 0; e < V; ++e) { const float xe = TO_F(r[j].e[e]); %s }
    }
]], code)
end

-- Same over the elements, writing the output vector o = f(xe) to y.
-- `pre` runs once per vector (c is its column) before the elements.
local function each_out(pre, code)
  return string.format([[
#pragma unroll
    for (int j = 0; j < NV; ++j) if (ok[j]) {
      const int c = c0 + (j * TPR + t) * V;
      %s
      VecT<V> o;
#pragma unroll
      for (int e = 0; e < V; ++e) { const float xe = TO_F(r[j].e[e]); float ye; %s o.e[e] = FROM_F(ye); }
      stv<V>(yr + c, o);
    }
]], pre, code)
end

local STEP = "(TPR * V * NV)"
local function steps(inner)
  return "    for (int c0 = 0; c0 < cols; c0 += " .. STEP .. ") {\n" .. inner .. "    }\n"
end
local function reindent(s) return (s:gsub("\n    ", "\n      ")) end

-- reduce_rows (sum) and reduce_rows_max: one streaming pass.
local function reduce_kind(comb, id)
  local k = {
    sig = "const T* __restrict__ x, T* __restrict__ y, long long rows, long long cols",
    call = "x, y, rows, cols",
    ptrs = { "x", "y" },
    nred = 1, nst = 1, hold = false,
  }
  local op = comb == "CSum" and "acc[e] += xe;" or "acc[e] = fmaxf(acc[e], xe);"
  k.stream = body(k, "stream", string.format([[
    float acc[V];
#pragma unroll
    for (int e = 0; e < V; ++e) acc[e] = %s;
]], id) .. steps(reindent(LOAD_STEP .. string.format([[
#pragma unroll
    for (int j = 0; j < NV; ++j) if (ok[j]) {
#pragma unroll
      for (int e = 0; e < V; ++e) { const float xe = TO_F(r[j].e[e]); %s }
    }
]], op))) .. string.format([[
    St<1> s;
    s.v[0] = acc[0];
#pragma unroll
    for (int e = 1; e < V; ++e) { St<1> u; u.v[0] = acc[e]; %s::f(s, u); }
    group_all<%s, TPR, 1>(s, buf, g, t);
    if (rv && t == 0) y[row] = FROM_F(s.v[0]);
]], comb, comb))
  return k
end
M.reduce_kind = reduce_kind

-- A thread's softmax state St<2> st = (max in log2 units, sum of 2^(x -
-- max)) over the elements `each` visits: their max first, then the sum.
function M.softmax_pair(each)
  return "    float cm = NEG_INF;\n" .. each("cm = fmaxf(cm, xe);") .. [[
    St<2> st;
    st.v[0] = cm * L2E;
    st.v[1] = 0.f;
    if (cm != NEG_INF) {
]] .. each("st.v[1] += fex2(fmaf(xe, L2E, -st.v[0]));") .. "    }\n"
end

-- The weight (and bias) vectors of column c: from registers held across rows
-- (WREG, hold mode) or loaded per row (they stay in L1/L2).
local function wload(has_b, hold)
  local s = hold and "VecT<V> wv, bv; if constexpr (WREG) { wv = wr[j]; " .. (has_b and "bv = br[j]; " or "") .. "} else { wv = ldv<V>(w + c); " .. (has_b and "bv = ldv<V>(b + c); " or "") .. "}"
    or ("VecT<V> wv = ldv<V>(w + c); " .. (has_b and "VecT<V> bv = ldv<V>(b + c);" or ""))
  return s
end
local WREG_LOAD = [[
  VecT<V> wr[WREG ? NV : 1], br[WREG && HAS_B ? NV : 1];
  if constexpr (WREG) {
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int c = (j * TPR + t) * V;
      if (c < cols) { wr[j] = ldv<V>(w + c); LOAD_B }
    }
  }
]]
local function with_wreg(text, has_b)
  -- insert the register copy of w (and b) before the row loop
  local load = WREG_LOAD:gsub("LOAD_B", has_b and "br[j] = ldv<V>(b + c);" or "")
  return (text:gsub("(  const long long nrb)", function(s) return load .. s end, 1))
end


-- Elements a thread's vectors of this step hold, added to cn (layernorm's
-- per-step statistics).
local COUNT = [[
#pragma unroll
    for (int j = 0; j < NV; ++j) cn += ok[j] ? V : 0;
]]

-- The pieces an op's bodies are made of (templates/<op>/op.lua's build).
M.classic = {
  body = body, LOAD_STEP = LOAD_STEP, each = each, each_out = each_out, steps = steps,
  reindent = reindent, wload = wload, with_wreg = with_wreg, softmax_pair = M.softmax_pair, COUNT = COUNT,
}

-- The peel pieces. Per row: pm (how far the row starts past a V-element
-- boundary), pend = pm + cols (the grid positions the row covers), ph the
-- head's elements, pt the tail's first element, nsc head plus tail. The
-- vector j of a step sits at grid position c = c0 + (j*TPR + t)*V, element
-- c - pm; ok[j] says it is whole inside the row. The scalars go with the
-- pass's first step (c0 == 0), thread t taking elements t, t + TPR, ...
local PEEL_ROW = [[
    const int pm = (int)(((unsigned long long)xr / sizeof(T)) % V);
    const int pend = pm + (int)cols;
    const int ph = min((V - pm) % V, (int)cols);
    const int pt = ph + ((int)cols - ph) / V * V;
    const int nsc = ph + (int)cols - pt;
]]
local LOAD_STEP_P = [[
    VecT<V> r[NV];
    bool ok[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int c = c0 + (j * TPR + t) * V;
      ok[j] = rv && c >= pm && c + V <= pend;
      if (ok[j]) r[j] = ldv<V>(xr + (c - pm));
    }
]]
-- The head and tail elements of a pass: k their column, xe their value.
local function scalars(code)
  return string.format([[
    if (c0 == 0 && rv) {
      for (int i = t; i < nsc; i += TPR) {
        const int k = i < ph ? i : i - ph + pt;
        const float xe = TO_F(xr[k]);
        %s
      }
    }
]], code)
end
local function each_p(code) return each(code) .. scalars(code) end
-- wload's token for peel bodies: which weights each_out reads at a column.
local function wload_p(has_b) return { b = has_b } end
local function each_out_p(pre, code)
  local vpre, spre = "", ""
  if type(pre) == "table" then
    vpre = "const VecT<V> wv = ldu<V>(w + c, w, w + cols)" .. (pre.b and ", bv = ldu<V>(b + c, b, b + cols)" or "") .. ";"
    spre = "VecT<1> wv; wv.e[0] = w[k];" .. (pre.b and " VecT<1> bv; bv.e[0] = b[k];" or "")
  elseif pre ~= "" then
    error("peel each_out: the weights' loads come from R.wload", 2)
  end
  return string.format([[
#pragma unroll
    for (int j = 0; j < NV; ++j) if (ok[j]) {
      const int c = c0 + (j * TPR + t) * V - pm;
      %s
      VecT<V> o;
#pragma unroll
      for (int e = 0; e < V; ++e) { const float xe = TO_F(r[j].e[e]); float ye; %s o.e[e] = FROM_F(ye); }
      stv<V>(yr + c, o);
    }
]], vpre, code) .. scalars(string.format([[%s
        const int e = 0;
        (void)e;
        float ye; %s yr[k] = FROM_F(ye);]], spre, code))
end
local function body_p(kind, mode, text)
  return string.format([[
template<int V> AIT_DEV void body_%s_peel(%s, float* redbuf, int g, int t) {
%s%s%s%s}
]], mode, kind.sig, ROWLOOP_OPEN, PEEL_ROW, text, ROWLOOP_CLOSE)
end
M.peel = {
  body = body_p, LOAD_STEP = LOAD_STEP_P, each = each_p, each_out = each_out_p,
  steps = function(inner) return "    for (int c0 = 0; c0 < pend; c0 += " .. STEP .. ") {\n" .. inner .. "    }\n" end,
  reindent = reindent, wload = wload_p,
  -- weights held in registers across rows would need each row's shift
  with_wreg = function(text) return text end,
  softmax_pair = M.softmax_pair,
  COUNT = COUNT .. "    if (c0 == 0 && rv && t < nsc) cn += (nsc - 1 - t) / TPR + 1;\n",
}

-- An op's hold and stream texts from its build, per set of pieces.
local built = setmetatable({}, { __mode = "k" })
local function texts(k, R)
  built[k] = built[k] or {}
  local b = built[k][R]
  if not b then
    local hold, stream = k.build(R)
    b = { hold = hold, stream = stream }
    built[k][R] = b
  end
  return b
end

-- Elements per vector for a config (vbytes over the element size, at least 1).
local function vec_of(p, dt) return math.max(1, p.vbytes // dtype.size(dt)) end
M.vec_of = vec_of

-- Largest vector (bytes, <= 16) whose fast path runs for cols.
local function best_vbytes(cols, dt)
  local s = dtype.size(dt)
  local vb = 16
  while vb > s and (cols * s) % vb ~= 0 do vb = vb // 2 end
  return vb
end
M.best_vbytes = best_vbytes

-- The kernel source of a row family config.
function M.source(op, kindname, mode, p, dt, name)
  local k = op.rows
  local V = vec_of(p, dt)
  local tpr, block = p.tpr, p.block
  local rpb = block // tpr
  local slot = rpb * k.nst * M.red_floats(tpr, p.red)
  -- NVRTC caps registers for two blocks per SM when the bound names no
  -- minimum: say 1 unless the config asks for an occupancy
  local minb = ", 1"
  if (p.occ or 0) > 0 then minb = ", " .. math.max(1, p.occ // block) end
  local align = {}
  for _, a in ipairs(k.ptrs) do align[#align + 1] = "(unsigned long long)" .. a end
  local hold = mode == "hold"
  local peel = (p.peel or 0) == 1
  local cl = k.build and texts(k, M.classic) or k
  local out = { M.header(dt, p.ld or 0, p.red or 0) }
  if peel then out[#out + 1] = M.LDU end
  out[#out + 1] = string.format([[
#define TPR %d
#define BLOCK %d
#define RPB %d
#define NV %d
#define VEC %d
#define NRED %d
#define SLOT %d
#define SM_PASSES %d
#define WREG %d
#define HAS_B %d
]], tpr, block, rpb, p.nv, V, k.nred, slot, p.passes or 2, p.wreg or 0, k.has_b and 1 or 0)
  out[#out + 1] = cl.stream
  local dispatch
  if peel then
    -- the peel bodies serve aligned rows too; scalars only where x and y
    -- start at different offsets from a vector boundary
    local pb = texts(k, M.peel)
    out[#out + 1] = pb.stream
    if hold then out[#out + 1] = pb.hold end
    local first = hold and string.format(
      "  if (pok && cols + VEC - 1 <= (long long)TPR * VEC * NV) body_hold_peel<VEC>(%s, redbuf, g, t);\n  else ", k.call) or "  "
    dispatch = string.format([[
  const bool pok = (((unsigned long long)x ^ (unsigned long long)y) %% (VEC * sizeof(T))) == 0 && cols <= (1LL << 30);
%sif (pok) body_stream_peel<VEC>(%s, redbuf, g, t);
  else body_stream<1>(%s, redbuf, g, t);]], first, k.call, k.call)
  elseif hold then
    out[#out + 1] = cl.hold
    dispatch = string.format([[
  if (vok && cols <= (long long)TPR * VEC * NV) body_hold<VEC>(%s, redbuf, g, t);
  else if (vok) body_stream<VEC>(%s, redbuf, g, t);
  else body_stream<1>(%s, redbuf, g, t);]], k.call, k.call, k.call)
  else
    dispatch = string.format([[
  if (VEC > 1 && vok) body_stream<VEC>(%s, redbuf, g, t);
  else body_stream<1>(%s, redbuf, g, t);]], k.call, k.call)
  end
  out[#out + 1] = string.format([[
extern "C" __global__ void __launch_bounds__(BLOCK%s) %s(%s) {
  __shared__ float redbuf[2 * NRED * SLOT > 0 ? 2 * NRED * SLOT : 1];
  const int g = threadIdx.x / TPR, t = threadIdx.x %% TPR;
%s
}
]], minb, name, kernel.params(op, dt), peel and dispatch or string.format([[
  const unsigned long long al = %s;
  const bool vok = (cols %% VEC == 0) && (al %% (VEC * sizeof(T)) == 0) && cols <= (1LL << 30);
%s]], table.concat(align, " | "), dispatch))
  return table.concat(out, "\n")
end

-- Registers a config's row data needs per thread (packed storage), a rough
-- guide for register caps.
local function data_regs(p, dt, k, mode)
  local V = vec_of(p, dt)
  local per = p.nv * V * dtype.size(dt) // 4
  local n = per
  if mode == "hold" and (p.wreg or 0) == 1 then n = n + per * (k.has_b and 2 or 1) end
  return math.max(1, n)
end

-- The template table of a row family: kind is one of kinds, mode "hold" or
-- "stream" ("stream" alone for the reductions, which read each element once).
-- Params: vbytes (bytes per vector access), tpr (threads per row), block
-- (threads per block; block/tpr rows per block), nv (vectors in flight per
-- thread per step; in hold mode the whole row), red (0: shuffles + one
-- shared-memory exchange, 1: shared-memory tree), persist (grid capped at one
-- wave, rows walked with a grid stride), occ (0: no register cap beyond the
-- block; else a cap for occ threads per SM), plus passes (softmax stream: 2 =
-- online max/sum, 3 = max then sum), wreg (norms, hold: weights kept in
-- registers across rows), ld (reductions: 1 = non-coherent loads with no
-- L1 allocation and 256-byte L2 fetches) and peel (softmax, layernorm,
-- rmsnorm: 1 = the peeled path, see the top; only where the task's rows are
-- off a 16-byte boundary, and there always for rows of 256 bytes or more).
function M.family(op, kindname, mode, name)
  local k = op.rows
  local params = {
    { "vbytes", { 2, 4, 8, 16 } },
    { "tpr", { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024 } },
    { "block", { 32, 64, 128, 256, 512, 1024 } },
    { "nv", { 1, 2, 4, 8, 16 } },
    { "red", { 0, 1 } },
    { "persist", { 0, 1 } },
    { "occ", { 0, 1024, 2048 } },
  }
  if kindname == "softmax" and mode == "stream" then params[#params + 1] = { "passes", { 2, 3 } } end
  if kindname == "softmax" and mode == "hold" then params[#params + 1] = { "passes", { 1, 2 } } end
  if mode == "hold" and (kindname == "layernorm" or kindname == "rmsnorm") then
    params[#params + 1] = { "wreg", { 0, 1 } }
  end
  if kindname == "sum" or kindname == "max" then params[#params + 1] = { "ld", { 0, 1 } } end
  local has_peel = kindname == "softmax" or kindname == "layernorm" or kindname == "rmsnorm"
  if has_peel then params[#params + 1] = { "peel", { 0, 1 } } end

  local t = {
    op = op.name, name = name or mode, min_cc = 80, dtypes = op.dtypes, params = params,
  }

  t.constraints = function(p, shape, dt, dev)
    local s = dtype.size(dt)
    local rows, cols = shape.rows, shape.cols
    if p.vbytes < s then return false, "vector narrower than an element" end
    local V = vec_of(p, dt)
    local bv = best_vbytes(cols, dt)
    -- peel: the row's grid positions run to cols + V - 1 (a row starts up to
    -- V - 1 elements past a vector boundary)
    local peel = (p.peel or 0) == 1
    local span = peel and cols + V - 1 or cols
    if peel then
      if p.vbytes ~= 16 then return false, "the peeled path moves 16-byte vectors" end
      if bv >= 16 then return false, "rows are 16-byte aligned: nothing to peel" end
      if (p.wreg or 0) == 1 then return false, "weights held in registers would need each row's shift" end
    else
      if p.vbytes > bv then return false, "cols do not allow this vector: the scalar path would run" end
      if p.vbytes < bv and p.vbytes < 8 then return false, "narrow vector where a wider one fits" end
      if has_peel and bv < 16 and cols * s >= 256 then
        return false, "rows of 256 bytes or more off a 16-byte boundary: peel=1 moves them in 16-byte vectors"
      end
    end
    if p.tpr > p.block then return false, "group larger than the block" end
    local rpb = p.block // p.tpr
    if p.block < 128 and rpb > 1 then return false, "small blocks only for one row each" end
    if p.block < 128 and p.tpr < p.block then return false, "small blocks only for one row each" end
    if p.block < 128 and rows * p.tpr >= 256 then return false, "small blocks only when rows are too few to fill 128 threads" end
    if rpb > 1 and rpb // 2 >= rows then return false, "more than half the block has no row" end
    if p.red == 1 and p.tpr <= 32 then return false, "shared-memory tree only across warps" end
    if p.red == 1 and rpb > 1 then return false, "shared-memory tree only for a block per row" end
    if p.nv > 8 and p.tpr < 1024 then return false, "16 vectors per thread only when a block row needs them" end
    if p.nv > 4 and p.tpr < 32 then return false, "sub-warp groups take at most 4 vectors" end
    local step = p.tpr * V * p.nv
    if mode == "hold" or step >= span then
      if mode == "hold" and step < span then return false, "row does not fit the registers" end
      if p.nv > 1 and step // 2 >= span then return false, "half the vectors would be empty" end
      if p.tpr > 32 and step // 2 >= span then return false, "idle warps in every row" end
    end
    if mode == "stream" and kindname ~= "sum" and kindname ~= "max" then
      if step >= span then return false, "the row fits one step: the hold family covers it" end
      if p.red == 1 then return false, "one reduction per long row: shuffles suffice" end
    end
    if step < span then
      -- rows walked in several steps: a warp or a whole block per row, the
      -- widest vector, 2 to 8 loads in flight
      if p.tpr < 32 then return false, "long rows take at least a warp each" end
      if p.tpr > 32 and p.tpr ~= p.block then return false, "long rows: a warp or a whole block per row" end
      if p.nv < 2 or p.nv > 8 then return false, "long rows keep 2 to 8 loads in flight" end
      if p.vbytes ~= bv and not peel then return false, "long rows use the widest vector" end
    end
    if p.persist == 1 then
      local nrb = (rows + rpb - 1) // rpb
      if nrb <= dev.sms * (2048 // p.block) then return false, "grid already fits one wave" end
    end
    if (p.wreg or 0) == 1 and p.persist == 0 then return false, "weights in registers pay off only across rows" end
    if p.occ > 0 and p.occ // p.block < 2 then return false, "one block per SM: the block size already caps registers" end
    if (kindname == "sum" or kindname == "max") and p.persist == 1 then
      return false, "row reductions have no per-block setup to amortize"
    end
    if (kindname == "sum" or kindname == "max") and p.occ == 2048 then
      return false, "a 32-register cap starves reductions of loads in flight"
    end
    -- the row's data as floats plus addressing must fit the register cap
    -- (the block size alone caps 1024-thread blocks at 64)
    local cap = math.min(255, 65536 // p.block, p.occ > 0 and 65536 // p.occ or 255)
    -- (a rough fit to ptxas: softmax in sub-block groups and its three-pass
    -- stream need more, layernorm a little more)
    local need = 2 * data_regs(p, dt, k, mode) + 24 + p.nv
    if kindname == "softmax" and p.tpr <= 128 then need = need + 16 end
    if kindname == "softmax" and p.nv >= 8 then need = need + 8 end
    if kindname == "softmax" and mode == "stream" and p.passes == 3 then need = need + 16 end
    if kindname == "layernorm" then need = need + 4 end
    -- peel: the row's offsets, the scalar head and tail, the shifted weight
    -- reads (fitted on NVRTC compiles of the peel spaces at odd widths: a
    -- one-reduction softmax hold, near its cap already, spills first)
    if peel and kindname == "softmax" and mode == "hold" and p.passes == 1 then
      need = need + (p.red == 1 and 28 or 24)
    end
    if peel and kindname == "layernorm" then need = need + 8 end
    if need > cap then return false, "register cap below the row's data" end
    return true
  end

  -- The first valid config in a plain order: widest vector, a warp per row
  -- for short rows, a block per row for long ones, no caps.
  -- (rows of 256 bytes or more off a 16-byte boundary: peeled 16-byte vectors)
  local function default(shape, dt, dev)
    local bv = best_vbytes(shape.cols, dt)
    local peel = has_peel and bv < 16 and shape.cols * dtype.size(dt) >= 256
    return kernel.first_valid(t, shape, dt, dev,
      { vbytes = peel and 16 or bv, red = 0, persist = 0, occ = 0, passes = 2, wreg = 0, ld = 0, peel = peel and 1 or 0 },
      { { "nv", { 4, 2, 1, 8, 16 } }, { "tpr", { 32, 64, 128, 256, 512, 1024, 16, 8, 4, 2, 1 } },
        { "block", { 256, 128, 512, 1024, 64, 32 } } })
  end
  t.default = default

  t.supports = function(shape, dt, dev)
    if shape.rows < 1 or shape.cols < 1 then return false, "empty tensor" end
    if shape.cols > (1 << 30) then return false, "rows longer than 2^30 elements" end
    if default(shape, dt, dev) == nil then
      return false, mode == "hold" and "row too long to hold in registers" or "no config for this shape"
    end
    return true
  end

  t.launch = function(p, dt, dev)
    local rpb = p.block // p.tpr
    local grid = string.format("cdiv(rows, %d)", rpb)
    if p.persist == 1 then
      grid = string.format("min(cdiv(rows, %d), %d)", rpb, dev.sms * math.max(1, 2048 // p.block))
    end
    return { grid = { grid, 1, 1 }, block = { p.block, 1, 1 }, smem = 0 }
  end

  t.source = function(p, dt, dev, nm) return M.source(op, kindname, mode, p, dt, nm) end
  return t
end

-- References: one block of 256 threads per row, fp64 accumulation, a plain
-- tree in shared memory. Slow and obviously right.
M.REF_THREADS = 256
M.ref_common = [[
#define RT 256
static __device__ double ref_block(double v, double* sh, bool is_max) {
  __syncthreads();
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int h = RT / 2; h > 0; h >>= 1) {
    if ((int)threadIdx.x < h) {
      double a = sh[threadIdx.x], b = sh[threadIdx.x + h];
      sh[threadIdx.x] = is_max ? (a > b ? a : b) : a + b;
    }
    __syncthreads();
  }
  return sh[0];
}
]]

-- A reference whose body (C++ over row, xr, cols, sh, threadIdx.x) runs in a
-- block per row.
function M.reference(op, body)
  return {
    source = function(dt, name)
      return dtype.prelude .. M.ref_common .. string.format([[
extern "C" __global__ void __launch_bounds__(RT) %s(%s) {
  __shared__ double sh[RT];
  const long long row = blockIdx.x;
  const %s* xr = x + row * cols;
  (void)xr;
%s
}
]], name, kernel.params(op, dt), dtype.ctype(dt), body(dt))
    end,
    launch = function(dt) return { grid = { "rows", 1, 1 }, block = { M.REF_THREADS, 1, 1 }, smem = 0 } end,
  }
end

-- Row reductions split across `splits` blocks per row, for few long rows:
-- each block reduces its slice of the row, writes a partial to the workspace,
-- and the last block of the row (a ticket counter per row) combines the
-- partials in a fixed order and writes y. comb: "CSum" or "CMax".
function M.split_family(op, comb, name)
  local id = comb == "CSum" and "0.f" or "NEG_INF"
  local fop = comb == "CSum" and "acc[e] += xe;" or "acc[e] = fmaxf(acc[e], xe);"
  local t = {
    op = op.name, name = name or "split", min_cc = 80, dtypes = op.dtypes,
    params = {
      { "vbytes", { 2, 4, 8, 16 } },
      { "block", { 128, 256, 512, 1024 } },
      { "nv", { 2, 4, 8 } },
      { "splits", { 2, 4, 8, 16, 32, 64, 128 } },
      { "ld", { 0, 1 } },
    },
  }
  t.constraints = function(p, shape, dt, dev)
    local s = dtype.size(dt)
    if p.vbytes < s then return false, "vector narrower than an element" end
    local bv = best_vbytes(shape.cols, dt)
    if p.vbytes > bv then return false, "cols do not allow this vector: the scalar path would run" end
    if p.vbytes < bv and p.vbytes < 8 then return false, "narrow vector where a wider one fits" end
    local V = vec_of(p, dt)
    local slice = (shape.cols + p.splits - 1) // p.splits
    if slice < p.block * V * p.nv then return false, "slice shorter than one step of the block" end
    if shape.rows * p.splits > 8 * dev.sms then return false, "more than 8 blocks per SM" end
    local need = p.nv * p.vbytes // 4 * (s == 2 and 2 or 1) + 24
    if need > math.min(255, 65536 // p.block) then return false, "loads in flight exceed the register cap" end
    if shape.rows * p.splits < dev.sms and p.splits < 128 then
      return false, "too few blocks to fill the GPU"
    end
    return true
  end
  t.supports = function(shape, dt, dev)
    if shape.rows < 1 or shape.cols < 1 then return false, "empty tensor" end
    if shape.cols > (1 << 30) then return false, "rows longer than 2^30 elements" end
    if shape.rows > 4096 then return false, "many rows: a row per group is better" end
    if t.default(shape, dt, dev) == nil then return false, "rows too short to split" end
    return true
  end
  t.default = function(shape, dt, dev)
    return kernel.first_valid(t, shape, dt, dev, { vbytes = best_vbytes(shape.cols, dt), ld = 0 },
      { { "splits", { 8, 4, 16, 2, 32, 64, 128 } }, { "block", { 256, 128, 512, 1024 } }, { "nv", { 4, 2, 8 } } })
  end
  t.workspace = function(p, shape, dt, dev)
    return 4 * shape.rows + 16 + 4 * shape.rows * p.splits
  end
  t.launch = function(p, dt, dev)
    return { grid = { string.format("rows * %d", p.splits), 1, 1 }, block = { p.block, 1, 1 }, smem = 0 }
  end
  t.source = function(p, dt, dev, nm)
    local V = vec_of(p, dt)
    return M.header(dt, p.ld, 0) .. string.format([[
#define BLOCK %d
#define NV %d
#define VEC %d
#define SPLITS %d
#define TPR BLOCK

template<int V> AIT_DEV float slice_part(const T* __restrict__ xr, int c_begin, int c_end) {
  const int t = threadIdx.x;
  float acc[V];
#pragma unroll
  for (int e = 0; e < V; ++e) acc[e] = %s;
  for (int c0 = c_begin; c0 < c_end; c0 += BLOCK * V * NV) {
    VecT<V> r[NV];
    bool ok[NV];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int c = c0 + (j * TPR + t) * V;
      ok[j] = c < c_end;
      if (ok[j]) r[j] = ldv<V>(xr + c);
    }
#pragma unroll
    for (int j = 0; j < NV; ++j) if (ok[j]) {
#pragma unroll
      for (int e = 0; e < V; ++e) { const float xe = TO_F(r[j].e[e]); %s }
    }
  }
  float s = acc[0];
#pragma unroll
  for (int e = 1; e < V; ++e) { St<1> a, u; a.v[0] = s; u.v[0] = acc[e]; %s::f(a, u); s = a.v[0]; }
  return s;
}

extern "C" __global__ void __launch_bounds__(BLOCK, 1) %s(%s) {
  __shared__ float red[BLOCK / 32];
  __shared__ bool last;
  const long long row = blockIdx.x / SPLITS;
  const int part = blockIdx.x %% SPLITS;
  unsigned* ticket = (unsigned*)ws;
  float* partial = (float*)((char*)ws + ((4 * rows + 15) / 16) * 16);
  const T* xr = x + row * cols;
  const bool vok = (cols %% VEC == 0) && ((unsigned long long)x %% (VEC * sizeof(T)) == 0);
  St<1> s;
  if (VEC > 1 && vok) {
    const int slice = (int)(((cols + SPLITS - 1) / SPLITS + VEC - 1) / VEC) * VEC;
    const int b = part * slice;
    const int e = (int)min((long long)b + slice, cols);
    s.v[0] = slice_part<VEC>(xr, b, e);
  } else {
    const int slice = (int)((cols + SPLITS - 1) / SPLITS);
    const int b = part * slice;
    const int e = (int)min((long long)b + slice, cols);
    s.v[0] = slice_part<1>(xr, b, e);
  }
  group_all<%s, BLOCK, 1>(s, red, 0, threadIdx.x);
  if (threadIdx.x == 0) {
    partial[row * SPLITS + part] = s.v[0];
    __threadfence();
    last = atomicAdd(ticket + row, 1u) == SPLITS - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    __threadfence();
    St<1> a;
    a.v[0] = __ldcg(partial + row * SPLITS);
    for (int i = 1; i < SPLITS; ++i) { St<1> u; u.v[0] = __ldcg(partial + row * SPLITS + i); %s::f(a, u); }
    y[row] = FROM_F(a.v[0]);
  }
}
]], p.block, p.nv, V, p.splits, id, fop, comb, nm, kernel.params(op, dt, true), comb, comb)
  end
  return t
end

return M
