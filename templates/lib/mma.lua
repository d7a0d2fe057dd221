-- The portable GEMM family (sm_80 and up) for both layouts of lib/gemm.lua,
-- and the path for shapes TMA cannot take (leading dimensions that are not
-- multiples of 8 elements, pointers not 16-byte aligned).
--
-- A CTA computes a BM x BN tile of D with wm x wn warps; a warp owns a
-- (BM/wm) x (BN/wn) sub-tile as mma.sync m16n8k16 fragments (fp32
-- accumulators), fed by ldmatrix (.trans for nn's k x n tiles of B) from
-- shared memory. Tiles of A (BM x BK) and B (BN x BK for nt, BK x BN for nn)
-- go through a ring of `stages` shared-memory slots; 16-byte units of a row
-- are XOR-swizzled so that the 8 row addresses of each ldmatrix hit 8
-- different bank groups.
--
-- Loads, chosen per operand by a uniform test at run time:
--   fast: both operands' rows 16-byte aligned (k, and n for nn's B, multiples
--         of 8; base pointers 16-byte aligned): cp.async of 16 bytes, chunk
--         counts known at compile time;
--   else: cp.async of 8 or 4 bytes where that alignment holds; where it does
--         not (odd leading dimension), pairs of 2-byte loads into registers,
--         issued before the tile's math and written to shared memory after
--         it, so their latency hides behind the mma's like cp.async's.
-- Each path is a main loop of its own, and the two were most of a kernel's
-- compile (bench/RESULTS.md, "Compile cost per GEMM candidate"). The
-- `aligned` param, fixed by the shape's rows as wgmma's `stage` is (so by
-- the bucket's alignment class: src/align.h), decides which a kernel holds:
--   aligned 1 (k, and n for nn, multiples of 8): the fast loop alone. A
--         call whose rows or base pointers are not 16-byte aligned after all
--         (buffers at an offset, which aitune.h's rule for TMA kernels
--         forbids but nothing enforces for these; a shape of a lower class
--         answered from this bucket because no bucket of its class was
--         tuned) takes plain_tile: right for any alignment, and slow.
--   aligned 0 (any other rows): both loops, chosen as above; the source is
--         what it was before the param (configs kept from then, which lack
--         the param, instantiate to it too).
-- Out-of-range chunks are zero-filled (cp.async src-size 0; zeros for the
-- register path), so M, N and K tails need no other code. The epilogue
-- converts and stores straight from the accumulators, masked, in pairs when
-- D's rows allow.
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local M = {}

M.params = {
  { "bm", { 64, 128, 256 } },
  { "bn", { 64, 128, 256 } },
  { "bk", { 32, 64 } },
  { "wm", { 1, 2, 4 } },
  { "wn", { 1, 2, 4 } },
  { "stages", { 2, 3, 4, 5 } },
  { "group", { 1, 8 } },
  { "aligned", { 0, 1 } },
}

-- 1 where both operands' rows are 16-byte aligned at shape (A's are k
-- long; B's k for nt, n for nn): what `aligned` must be there.
local function rows_aligned(layout, shape)
  return (shape.k % 8 == 0 and (layout == "nt" or shape.n % 8 == 0)) and 1 or 0
end

local function smem_bytes(p) return p.stages * (p.bm * p.bk + p.bk * p.bn) * 2 end

local function shape_of(p)
  local threads = 32 * p.wm * p.wn
  local wtm, wtn = p.bm // p.wm, p.bn // p.wn
  return threads, wtm, wtn, wtm // 16, wtn // 8
end

-- Registers per thread: accumulators, one k-step of fragments, the
-- register-staged tile pairs of the unaligned path, addressing. Kept for
-- aligned 1 kernels too, which have no staged pairs and need fewer (the
-- space is the same at both values; a cap of its own would want ptxas's
-- spill reports on the configs it lets in).
local function reg_estimate(p)
  local threads, _, _, mi, ni = shape_of(p)
  local staged = (p.bm * p.bk + p.bk * p.bn) // 2 // threads
  -- (calibrated on ptxas 13: 128 x 256 x 32 with 2 x 4 warps, estimated
  -- 240, uses 234)
  return mi * ni * 4 + 2 * (mi * 4 + ni * 2) + staged + 24
end

function M.constraints(layout, p, shape, dt, dev)
  local want = rows_aligned(layout, shape)
  if p.aligned ~= want then
    if want == 1 then return false, "rows are 16-byte aligned: the 16-byte main loop alone serves (aligned 1)" end
    return false, "rows are not 16-byte aligned: the any-alignment main loop is needed (aligned 0)"
  end
  local threads, wtm, wtn, mi, ni = shape_of(p)
  if wtm < 32 or wtn < 32 then return false, "warp tile under 32 x 32: too little reuse per ldmatrix" end
  -- Two-warp CTAs (one per SM under the launch bounds) are too few warps to
  -- hide anything, and their register-staged tiles cost ~240 registers.
  if threads < 128 then return false, "fewer than four warps" end
  local brow = layout == "nn" and p.bn or p.bk
  if threads % (p.bk // 2) ~= 0 or threads % (brow // 2) ~= 0 then
    return false, "threads not a multiple of a tile row's element pairs"
  end
  if mi * ni * 4 > 128 then return false, string.format("%d accumulators per thread", mi * ni * 4) end
  -- 240: 128 x 128 x 32 with 2 x 2 warps, estimated 248, spilled 24 bytes
  -- at 255 registers; estimates of 240 compiled without spills.
  -- sm_80's ptxas allocates more for the same source (128 x 256 x 32: 254
  -- against 234), so it gets less room.
  local cap = math.min((dev.cc or 90) >= 90 and 240 or 224, 65536 // threads)
  local est = reg_estimate(p)
  if est > cap then return false, string.format("about %d registers per thread (at most %d)", est, cap) end
  local smem = smem_bytes(p)
  local optin = dev.smem_optin or 232448
  if smem > optin then return false, string.format("%d bytes of shared memory (at most %d)", smem, optin) end
  local tiles = ((shape.m + p.bm - 1) // p.bm) * ((shape.n + p.bn - 1) // p.bn)
  if p.group > 1 and tiles <= (dev.sms or 132) then return false, "one wave: raster order does not matter" end
  local kt = (shape.k + p.bk - 1) // p.bk
  if p.stages > 2 and kt < p.stages then return false, "more stages than k tiles" end
  return true
end

function M.supports(shape, dt, dev)
  if (dev.cc or 0) < 80 then return false, "mma.sync bf16 and cp.async need sm_80" end
  return true
end

local function mma_fn(intype)
  return string.format([[
AIT_DEV void mma16816(float (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, {%%0, %%1, %%2, %%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
]], intype, intype)
end

-- The kernel's text by concern, in the order the source puts it.
-- Inline PTX: shared-memory addresses, cp.async and ldmatrix.
local PTX = [[

AIT_DEV u32 smem_u32(const void* p) { return (u32)__cvta_generic_to_shared(p); }

// Element offset of (row, col) in a tile whose rows hold `len` elements:
// 16-byte unit col/8 of the row is XORed with bits of the row so that eight
// consecutive rows put one unit in eight different bank groups.
template<int LEN> AIT_DEV int swz(int row, int col) {
  const int f = LEN == 32 ? ((row >> 1) & 3) : (row & 7);
  return row * LEN + ((((col >> 3) ^ f)) << 3) + (col & 7);
}

template<int BYTES> AIT_DEV void cp_async(u32 dst, const void* src, bool ok) {
  const int n = ok ? BYTES : 0;   // 0: nothing is read, the slot is zero-filled
  if (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(dst), "l"(src), "r"(n) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" :: "r"(dst), "l"(src), "n"(BYTES), "r"(n) : "memory");
}
AIT_DEV void cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template<int N> AIT_DEV void cp_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }

AIT_DEV void ldsm_x4(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
AIT_DEV void ldsm_x4_t(u32 (&r)[4], u32 addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

]]

-- Operand tiles into shared memory: swizzled cp.async (fixed or run-time
-- widths) and the 2-byte register path.
local LOADS = [[
// A ROWS x COLS tile of a row-major matrix g (leading dimension ld; rows
// below rmax and columns below cmax are in range) at (r0, c0) into the
// shared-memory tile s, by cp.async of BYTES per chunk. The caller picks
// BYTES dividing the row length, so a chunk is wholly in range or wholly
// out (zero-filled). A thread keeps one column and steps down the rows with
// one pointer: few registers, whatever the tile. FIXED: unrolled (the fast
// path); otherwise a plain loop (the 8- and 4-byte paths).
template<int ROWS, int COLS, int BYTES, bool FIXED> AIT_DEV void tile_async(
    u16* s, const u16* __restrict__ g, long long ld, long long r0, long long c0, long long rmax, long long cmax) {
  constexpr int V = BYTES / 2, PER_ROW = COLS / V, CHUNKS = ROWS * PER_ROW;
  const u32 base = smem_u32(s);
  if (THREADS % PER_ROW == 0) {
    constexpr int RSTEP = THREADS / PER_ROW, ITERS = (ROWS + RSTEP - 1) / RSTEP;
    const int row0 = threadIdx.x / PER_ROW, col = (threadIdx.x % PER_ROW) * V;
    const bool colok = c0 + col < cmax;
    long long gr = r0 + row0;
    const u16* q = g + gr * ld + c0 + col;   // dereferenced only in range
    if (FIXED) {
#pragma unroll
      for (int i = 0; i < ITERS; i++) {
        const int row = row0 + i * RSTEP;
        const bool ok = colok && gr < rmax;
        if (ITERS * RSTEP == ROWS || row < ROWS) cp_async<BYTES>(base + 2 * swz<COLS>(row, col), ok ? (const void*)q : (const void*)g, ok);
        gr += RSTEP; q += RSTEP * ld;
      }
    } else {
#pragma unroll 1
      for (int i = 0; i < ITERS; i++) {
        const int row = row0 + i * RSTEP;
        const bool ok = colok && gr < rmax;
        if (row < ROWS) cp_async<BYTES>(base + 2 * swz<COLS>(row, col), ok ? (const void*)q : (const void*)g, ok);
        gr += RSTEP; q += RSTEP * ld;
      }
    }
  } else {
#pragma unroll 1
    for (int c = threadIdx.x; c < CHUNKS; c += THREADS) {
      const int row = c / PER_ROW, col = (c % PER_ROW) * V;
      const bool ok = r0 + row < rmax && c0 + col < cmax;
      cp_async<BYTES>(base + 2 * swz<COLS>(row, col), ok ? (const void*)(g + (r0 + row) * ld + c0 + col) : (const void*)g, ok);
    }
  }
}

// The same tile through registers (rows not even 4-byte aligned): pairs of
// 2-byte loads, issued before a tile's math and stored after it. Needs
// THREADS to be a multiple of the pairs in a row (constraints check it).
template<int ROWS, int COLS> struct staged {
  static constexpr int PR = COLS / 2, RSTEP = THREADS / PR, PER = (ROWS + RSTEP - 1) / RSTEP;
  u32 v[PER];
  AIT_DEV void load(const u16* __restrict__ g, long long ld, long long r0, long long c0, long long rmax, long long cmax) {
    const int row0 = threadIdx.x / PR, col = (threadIdx.x % PR) * 2;
    const long long gc = c0 + col;
    const bool lo_ok = gc < cmax, hi_ok = gc + 1 < cmax;
    long long gr = r0 + row0;
    const u16* q = g + gr * ld + gc;   // dereferenced only in range
#pragma unroll
    for (int i = 0; i < PER; i++) {
      u32 lo = 0u, hi = 0u;
      if ((PER * RSTEP == ROWS || row0 + i * RSTEP < ROWS) && gr < rmax) {
        if (lo_ok) lo = q[0];
        if (hi_ok) hi = q[1];
      }
      v[i] = lo | (hi << 16);
      gr += RSTEP; q += RSTEP * ld;
    }
  }
  AIT_DEV void store(u16* s) const {
    const int row0 = threadIdx.x / PR, col = (threadIdx.x % PR) * 2;
#pragma unroll
    for (int i = 0; i < PER; i++) {
      const int row = row0 + i * RSTEP;
      if (PER * RSTEP == ROWS || row < ROWS) *reinterpret_cast<u32*>(s + swz<COLS>(row, col)) = v[i];
    }
  }
};

// Issue the cp.async part of one operand's tile: width in bytes w (16, 8 or
// 4; 2 means the register path, handled by the caller).
template<int ROWS, int COLS> AIT_DEV void tile_any(int w, u16* s, const u16* __restrict__ g, long long ld, long long r0,
                                                  long long c0, long long rmax, long long cmax) {
  if (w == 16) tile_async<ROWS, COLS, 16, false>(s, g, ld, r0, c0, rmax, cmax);
  else if (w == 8) tile_async<ROWS, COLS, 8, false>(s, g, ld, r0, c0, rmax, cmax);
  else if (w == 4) tile_async<ROWS, COLS, 4, false>(s, g, ld, r0, c0, rmax, cmax);
}

]]

-- The warps' fragments and mma.sync, and the pipelined main loop.
local MAINLOOP = [[
// The fragments of k-step kk (16 k) of the warp's tile from slot (sa, sb).
AIT_DEV void frags(u32 (&af)[MI][4], u32 (&bf)[NI][2], u32 a0, u32 b0, int kk, int wm0, int wn0, int lane) {
#pragma unroll
  for (int i = 0; i < MI; i++)
    ldsm_x4(af[i], a0 + 2 * swz<BK>(wm0 + i * 16 + (lane & 15), kk * 16 + (lane >> 4) * 8));
#pragma unroll
  for (int j = 0; j < NI / 2; j++) {
    u32 r[4];
    if (NN) ldsm_x4_t(r, b0 + 2 * swz<BN>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, wn0 + j * 16 + (lane >> 4) * 8));
    else ldsm_x4(r, b0 + 2 * swz<BK>(wn0 + j * 16 + (lane & 7) + (lane >> 4) * 8, kk * 16 + ((lane >> 3) & 1) * 8));
    bf[2 * j][0] = r[0]; bf[2 * j][1] = r[1]; bf[2 * j + 1][0] = r[2]; bf[2 * j + 1][1] = r[3];
  }
}

// One BK slice of the warp's tile from slot (sa, sb). The asm statements are
// volatile, so they keep this order: fragments of step kk + 1 are loaded
// before the mma's of step kk (two sets live, not BK/16).
AIT_DEV void tile_math(float (&acc)[MI][NI][4], const u16* sa, const u16* sb, int wm0, int wn0, int lane) {
  const u32 a0 = smem_u32(sa), b0 = smem_u32(sb);
  u32 af[2][MI][4], bf[2][NI][2];
  __syncwarp();   // ldmatrix and mma.sync are .aligned; the staged loads may diverge
  frags(af[0], bf[0], a0, b0, 0, wm0, wn0, lane);
#pragma unroll
  for (int kk = 0; kk < BK / 16; kk++) {
    if (kk + 1 < BK / 16) frags(af[(kk + 1) & 1], bf[(kk + 1) & 1], a0, b0, kk + 1, wm0, wn0, lane);
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
      for (int j = 0; j < NI; j++) mma16816(acc[i][j], af[kk & 1][i], bf[kk & 1][j][0], bf[kk & 1][j][1]);
  }
}

// The main loop. FAST: both operands by 16-byte cp.async with fixed chunk
// counts; otherwise widths wa, wb (bytes) chosen at run time.
template<bool FAST> AIT_DEV void mainloop(float (&acc)[MI][NI][4], u16* smem, const u16* __restrict__ A,
                                          const u16* __restrict__ B, long long m, long long n, long long k,
                                          long long bm0, long long bn0, int wa, int wb, int wm0, int wn0, int lane) {
  u16* sA = smem;
  u16* sB = smem + STAGES * A_TILE;
  const int kt = (int)((k + BK - 1) / BK);
  staged<BM, BK> ra;
  staged<NN ? BK : BN, NN ? BN : BK> rb;
  // Tile kb into slot s: A rows bm0.., k columns kb*BK..; B likewise.
  auto issue = [&](int kb, int s) {
    if (kb >= kt) return;
    const long long k0 = (long long)kb * BK;
    if (FAST) {
      tile_async<BM, BK, 16, true>(sA + s * A_TILE, A, k, bm0, k0, m, k);
      if (NN) tile_async<BK, BN, 16, true>(sB + s * B_TILE, B, n, k0, bn0, k, n);
      else tile_async<BN, BK, 16, true>(sB + s * B_TILE, B, k, bn0, k0, n, k);
    } else {
      if (wa > 2) tile_any<BM, BK>(wa, sA + s * A_TILE, A, k, bm0, k0, m, k);
      else ra.load(A, k, bm0, k0, m, k);
      if (NN) {
        if (wb > 2) tile_any<BK, BN>(wb, sB + s * B_TILE, B, n, k0, bn0, k, n);
        else rb.load(B, n, k0, bn0, k, n);
      } else {
        if (wb > 2) tile_any<BN, BK>(wb, sB + s * B_TILE, B, k, bn0, k0, n, k);
        else rb.load(B, k, bn0, k0, n, k);
      }
    }
  };
  auto land = [&](int kb, int s) {   // the register path's stores
    if (FAST || kb >= kt) return;
    if (wa == 2) ra.store(sA + s * A_TILE);
    if (wb == 2) rb.store(sB + s * B_TILE);
  };
#pragma unroll 1
  for (int s = 0; s < STAGES - 1; s++) {
    issue(s, s);
    land(s, s);
    cp_commit();
  }
#pragma unroll 1
  for (int kb = 0; kb < kt; kb++) {
    cp_wait<STAGES - 2>();
    __syncthreads();   // tile kb landed for all; slot (kb - 1) % STAGES is free
    const int next = kb + STAGES - 1, ns = next % STAGES, s = kb % STAGES;
    issue(next, ns);
    cp_commit();
    tile_math(acc, sA + s * A_TILE, sB + s * B_TILE, wm0, wn0, lane);
    land(next, ns);
  }
  cp_wait<0>();
}

]]

-- The widest load a leading dimension and base pointer allow: the kernel's
-- choice between the two main loops.
local WIDTH = [[
AIT_DEV int width(long long ld_elems, unsigned long long base) {
  const unsigned long long bytes = (unsigned long long)ld_elems * 2u;
  if (bytes % 16u == 0 && base % 16u == 0) return 16;
  if (bytes % 8u == 0 && base % 8u == 0) return 8;
  if (bytes % 4u == 0 && base % 4u == 0) return 4;
  return 2;
}
]]

-- The kernel's choice of main loop (the header: `aligned`).
local DISPATCH_ANY = [[
  if (wa == 16 && wb == 16) mainloop<true>(acc, smem, A, B, m, n, k, bm0, bn0, wa, wb, wm0, wn0, lane);
  else mainloop<false>(acc, smem, A, B, m, n, k, bm0, bn0, wa, wb, wm0, wn0, lane);
]]
local DISPATCH_ALIGNED = [[
  if (wa == 16 && wb == 16) mainloop<true>(acc, smem, A, B, m, n, k, bm0, bn0, wa, wb, wm0, wn0, lane);
  else { plain_tile(D, A, B, m, n, k, bm0, bn0); return; }
]]

-- aligned 1's way for operands its one main loop cannot load: element by
-- element, so it costs little to compile (it is not meant to be fast).
local function plain_fn(intype)
  return string.format([[
// Operands the 16-byte main loop cannot load (rows or base pointers not
// 16-byte aligned: a call this kernel's bucket does not hold). Each thread
// takes outputs of the CTA's tile in turn and sums a row of A against a
// column of B in fp32. Right for any alignment and shape; slow (no tensor
// cores, no reuse through shared memory).
AIT_DEV void plain_tile(OUT_T* D, const u16* __restrict__ A, const u16* __restrict__ B, long long m, long long n,
                        long long k, long long bm0, long long bn0) {
#pragma unroll 1
  for (int e = threadIdx.x; e < BM * BN; e += THREADS) {
    const long long row = bm0 + e / BN, col = bn0 + e %% BN;
    if (row >= m || col >= n) continue;
    const u16* a = A + row * k;
    float s = 0.0f;
#pragma unroll 4
    for (long long kk = 0; kk < k; kk++) s += ld_%s(a[kk]) * ld_%s(B[NN ? kk * n + col : col * k + kk]);
    store_one(D, row * n + col, s);
  }
}
]], intype, intype)
end

function M.source(layout, p, dt, dev, name, op)
  local t = gemm.types(dt)
  local threads, wtm, wtn, mi, ni = shape_of(p)
  local store
  if t.Out == "f32" then
    store = [[
#define PAIR_BYTES 8
AIT_DEV void store_pair(float* D, long long at, float x, float y) { *reinterpret_cast<float2*>(D + at) = make_float2(x, y); }
AIT_DEV void store_one(float* D, long long at, float x) { D[at] = x; }
]]
  else
    store = string.format([[
#define PAIR_BYTES 4
AIT_DEV void store_pair(unsigned short* D, long long at, float x, float y) {
  unsigned v; asm("cvt.rn.%sx2.f32 %%0, %%2, %%1;" : "=r"(v) : "f"(x), "f"(y));
  *reinterpret_cast<unsigned*>(D + at) = v;
}
AIT_DEV void store_one(unsigned short* D, long long at, float x) { D[at] = st_%s(x); }
]], t.Out, t.Out)
  end
  return dtype.prelude .. string.format([[
#define BM %d
#define BN %d
#define BK %d
#define WM %d
#define WN %d
#define STAGES %d
#define GROUP %d
#define NN %d
#define THREADS %d
#define WTM %d
#define WTN %d
#define MI %d
#define NI %d
#define OUT_T %s
typedef unsigned int u32;
typedef unsigned short u16;
// Shared-memory tiles, in elements: A is BM rows of BK; B is BN rows of BK
// (nt) or BK rows of BN (nn).
#define A_TILE (BM * BK)
#define B_TILE (BK * BN)
#define B_ROW (NN ? BN : BK)
]], p.bm, p.bn, p.bk, p.wm, p.wn, p.stages, p.group, layout == "nn" and 1 or 0, threads, wtm, wtn, mi, ni,
    dtype.ctype(t.Out)) .. store .. mma_fn(t.In) .. PTX .. LOADS .. MAINLOOP .. WIDTH ..
    (p.aligned == 1 and plain_fn(t.In) or "") .. string.format([[

extern "C" __global__ void __launch_bounds__(THREADS, 1) %s(%s) {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  u16* smem = reinterpret_cast<u16*>(smem_raw);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int wm0 = (warp / WN) * WTM, wn0 = (warp %% WN) * WTN;
  // Tiles in groups of GROUP tile-rows, so CTAs running together share B.
  const long long tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  const long long tile = blockIdx.x, per = (long long)GROUP * tiles_n, grp = tile / per, first = grp * GROUP;
  const long long rows = min(tiles_m - first, (long long)GROUP), r = tile - grp * per;
  const long long tm = first + r %% rows, tn = r / rows;
  const long long bm0 = tm * BM, bn0 = tn * BN;
  const int wa = width(k, (unsigned long long)A);
  const int wb = width(NN ? n : k, (unsigned long long)B);
  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < NI; j++)
#pragma unroll
      for (int e = 0; e < 4; e++) acc[i][j][e] = 0.0f;
%s  // Thread (g, t) holds rows g and g + 8 and columns 2t, 2t + 1 of each
  // 16 x 8 fragment.
  const int g = lane >> 2, t = lane & 3;
  const bool pairs = (n %% 2 == 0) && ((unsigned long long)D %% PAIR_BYTES == 0);
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const long long row = bm0 + wm0 + i * 16 + g + 8 * h;
      if (row >= m) continue;
#pragma unroll
      for (int j = 0; j < NI; j++) {
        const long long col = bn0 + wn0 + j * 8 + 2 * t;
        const float x = acc[i][j][2 * h], y = acc[i][j][2 * h + 1];
        if (pairs) {
          if (col < n) store_pair(D, row * n + col, x, y);   // n even: col + 1 < n too
        } else {
          if (col < n) store_one(D, row * n + col, x);
          if (col + 1 < n) store_one(D, row * n + col + 1, y);
        }
      }
    }
}
]], name, kernel.params(op, dt), p.aligned == 1 and DISPATCH_ALIGNED or DISPATCH_ANY)
end

-- The family table for an op of lib/gemm.lua.
function M.family(op)
  local layout = op.layout
  local t = {
    op = op.name,
    name = "mma",
    min_cc = 80,
    dtypes = op.dtypes,
    params = M.params,
    fit = { "stages" },   -- a polish's step that no longer fits is tried with fewer stages first (search/space.lua)
    constraints = function(p, shape, dt, dev) return M.constraints(layout, p, shape, dt, dev) end,
    supports = M.supports,
    -- The one `aligned` the shape's rows allow (constraints refuse the
    -- other): the space never draws the dead half (search/space.lua).
    narrow = function(shape) return { aligned = { rows_aligned(layout, shape) } } end,
  }
  t.launch = function(p, dt, dev)
    return { grid = { string.format("cdiv(m, %d) * cdiv(n, %d)", p.bm, p.bn), 1, 1 },
             block = { 32 * p.wm * p.wn, 1, 1 }, smem = smem_bytes(p) }
  end
  t.source = function(p, dt, dev, name) return M.source(layout, p, dt, dev, name, op) end
  t.default = function(shape, dt, dev)
    return kernel.first_valid(t, shape, dt, dev, { bk = 32, aligned = rows_aligned(layout, shape) },
      { { "bm", { 128, 64, 256 } }, { "bn", { 256, 128, 64 } }, { "wm", { 2, 4, 1 } }, { "wn", { 4, 2, 1 } },
        { "stages", { 4, 3, 5, 2 } }, { "group", { 8, 1 } } })
  end
  return t
end

return M
