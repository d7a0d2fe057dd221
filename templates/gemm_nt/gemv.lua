-- The decode GEMV of gemm_nt (m <= 64; templates/lib/gemv.lua holds what
-- both layouts share, the family table among it).
--
-- nt (B is n x k, F.linear's weight): a warp owns 8*cpw output columns (cpw
-- groups of 8 weight rows) and walks its share of k: the block's k range,
-- or with kw > 1 every kw-th step of it, the kw warps of a column slot
-- adding their sums in shared memory in warp order (so a block of 8 rows
-- needs no split-K to put 512 blocks on a 4096-wide weight). Each lane loads `vec`
-- consecutive k of one weight row (16 or 8 bytes); the 16 rows of A (rows
-- past m read as zeros) and the 8 weight rows of a group then go through
-- tensor cores as one mma.sync m16n8k16 per 16 k, fp32 accumulation. The
-- lanes' loads are contiguous, so the k order inside a chunk of 4*vec is
-- permuted: the mma sums over k, and A's fragment uses the same permutation,
-- so the product is the same sum in another order. Tensor cores keep the
-- arithmetic off the FMA pipe, which at m = 16 would need as long as the
-- weight stream itself.
--
-- nt, lean 1: whole steps by vector loads without tests (rows past n or m
-- read row 0 and are never stored), the rest of k (all of it when the
-- vector path cannot run) on the FMA pipe, k by k; few registers, and
-- minb asks ptxas for blocks per SM (4 x 8 warps: 64 registers, the whole
-- 16 x 4096^2 grid in one wave). seg 2 (lean only): a warp load is 4 rows
-- x 8*vec k instead of 8 rows x 4*vec k (128 contiguous bytes of a row
-- instead of 64): lane (g, t) loads half g % 2 of row g / 2, and the mma
-- of each half takes only that half's columns (the other lanes pass
-- zeros), so a row's two columns are added at the end; twice the mma and
-- A's loads. At 16 x 4096^2: 13.15-13.17 us against 13.34-13.38 for the
-- seg 1 kernel without lean; m = 8: 12.84 against 13.07 (lean, minb 1;
-- bench/archive/RESULTS-2026.md, "gemv nt gains `lean`, `seg` and `minb`").
--
-- nt, mt 2..4: a pass holds mt tiles of 16 rows of A, and each weight
-- fragment loaded goes through mt mma (one a tile), so one stream of the
-- weight serves m up to 16 mt: m = 17 costs one pass, not two. A pass's
-- halves of 8 rows wholly past m load nothing (a warp-uniform test). The
-- constraints offer a bucket the fewest tiles that hold its m in one pass
-- (a range's bucket is tuned at its upper edge, so every m of it is one
-- pass), and ask ptxas for blocks per SM with the registers the tiles' sums
-- need (mt_regs below). mt 1's source is the one before mt, byte for byte.
--
-- nt, pdl 1 (sm_90): programmatic dependent launch. The kernel lets the
-- next launch on the stream start at once (griddepcontrol.launch_dependents)
-- and waits for the previous one's writes (griddepcontrol.wait) before it
-- reads A or writes anything, so back to back, as in a decode loop, one
-- launch's start-up hides under the previous one's tail. It reads nothing
-- before the wait, not even the weights: a caller's B may be written by the
-- kernel before it on the stream. The plan asks for
-- the launch attribute (plan.h `pdl`); launched without it the wait returns
-- at once. Only without split-K: a workspace zeroed before every launch
-- would put a memset between the kernels.
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local gemv = lib("gemv")

local nt_params = {
  { "warps", { 2, 4, 8 } },        -- warps per block
  { "kw", { 1, 2, 4, 8 } },        -- warps of a block sharing columns, splitting k
  { "cpw", { 1, 2, 4 } },          -- column groups of 8 per warp
  { "vec", { 8, 4 } },             -- k elements per lane per load (16 or 8 bytes)
  -- Pieces of a weight row per warp load: 1: 8 rows x 4 vec k (each lane
  -- its fragment's row); 2: 4 rows x 8 vec k, each mma taking one segment's
  -- columns (twice the mma and A's loads, longer runs of a row per load).
  { "seg", { 1, 2 } },
  -- lean 1: whole steps by vector loads without tests, the rest of k on
  -- the FMA pipe (few registers; seg 2 and minb need it).
  { "lean", { 0, 1 } },
  -- Blocks per SM asked of ptxas (__launch_bounds__'s second value; 0:
  -- none). Not asking is not asking for 1: ptxas then allots fewer
  -- registers (lean seg 1 at 8 warps, unroll 4: 61 against 110), and the
  -- decode GEMV's speed follows the registers. 4 x 8 warps leave 64; 2
  -- leave 128 (16 x 4096^2's fastest, with cpw 4, l2pre 2 and apf).
  { "minb", { 0, 1, 2, 4 } },
  { "unroll", { 1, 2, 4 } },       -- k chunks loaded before the first mma of a step
  { "splitk", { 1, 2, 4, 8, 16 } },
  -- Weight loads ask L2 for the whole 256-byte block around each 64-byte
  -- piece (.L2::256B): the warp reads the rest of it within its next steps.
  { "l2pf", { 0, 256 } },
  { "pdl", { 0, 1 } },             -- programmatic dependent launch (sm_90, no split-K)
  -- pdl: the weights of the first l2pre steps prefetched into L2 before
  -- the wait (at 16 x 4096^2, unroll 2, kw 8: 4 steps are a warp's whole
  -- share; 6 and 8 measured slower than 2 and 4).
  { "l2pre", { 0, 1, 2, 4 } },
  -- A's rows asked of L2 right after the wait, spread over the blocks: each
  -- block reads all of A, and its later steps then find it there.
  { "apf", { 0, 1 } },
  -- Tiles of 16 rows of A per pass, each weight fragment loaded going
  -- through mt mma: the one pass over the weight serves m up to 16 mt.
  { "mt", { 1, 2, 3, 4 } },
}

-- The tiles of 16 rows of A a pass holds (a config stored before mt, or a
-- space narrowed without it, is mt 1), and the fewest that hold m.
local function mt_of(p) return p.mt or 1 end
local function mt_for(m) return math.max(1, (m + 15) // 16) end

local function cols_per_block(p) return p.warps // p.kw * (8 // p.seg) * p.cpw end

-- Registers a config needs beyond the compiler's own (a rough upper bound
-- that keeps ptxas away from spills).
local function reg_estimate(p)
  return p.unroll * p.cpw * p.vec // 2 + p.unroll * p.seg * p.vec + 4 * p.cpw + 40
end

-- Registers an mt > 1 kernel needs: its sums (4 cpw a tile), a step's
-- weights, A's fragments in flight (lean: a chunk's, every tile and
-- segment, twice over; the tested path: ptxas hoists every chunk's of a
-- step), and the rest. Fitted to ptxas 13.0 on three seeded samples of the
-- mt 2-4 space (304 kernels at minb 1, 2 and 4): none of the 244 it keeps
-- within its blocks' share of the registers spilled, and 19 of the 60 it
-- refuses did not (tests/cli/gemv_mt.sh holds a sample to it).
local function mt_regs(p)
  local nw, mt = p.vec // 2, mt_of(p)
  local a = p.lean == 1 and 4 * nw * mt * p.seg or 3 * nw * mt * p.unroll
  return 4 * p.cpw * mt + p.unroll * p.cpw * nw + a + 48
end

local function check(p, shape, dt, dev)
  -- One pass over the weight for every m the config is offered at (a
  -- range's bucket is tuned at its upper edge), and no tile without rows.
  local mt, need = mt_of(p), mt_for(shape.m)
  if mt < need then
    return false, string.format("m = %d takes %d passes over the weight at mt %d", shape.m, (shape.m + 16 * mt - 1) // (16 * mt), mt)
  end
  if mt > need then return false, string.format("m = %d fills %d tiles of 16 rows, not %d", shape.m, need, mt) end
  -- 8 warps with 4 column groups, unroll 1 and 16-byte loads: ptxas
  -- 13.0 holds it to 128 registers (139 at 2 or 4 warps), and with split-K
  -- it spills (every such config of the H100 GEMV landscape,
  -- tests/sim/landscapes/memory-gemm_nt.tsv).
  if p.warps == 8 and p.cpw == 4 and p.unroll == 1 and p.vec == 8 and p.splitk > 1 then
    return false, "ptxas holds it to 128 registers and spills"
  end
  if p.kw > p.warps or p.warps % p.kw ~= 0 then return false, "kw must divide warps" end
  if mt > 1 then
    -- Asked for no blocks per SM, ptxas aims low at mt > 1 and spills a
    -- few bytes (56 registers and 8 bytes spilled where minb 1 gives 78
    -- and none), the tested path's too; asked for blocks, it spills once
    -- what mt_regs counts passes their share of the SM's registers.
    if p.minb == 0 then return false, "mt > 1 needs minb (asked for no blocks per SM, ptxas spills)" end
    local cap = math.min(255, 65536 // (p.minb * p.warps * 32) // 8 * 8)
    if mt_regs(p) > cap then
      return false, string.format("about %d registers at mt %d; %d blocks of %d warps leave %d", mt_regs(p), mt, p.minb,
        p.warps, cap)
    end
  elseif p.minb > 0 and p.lean == 0 then
    return false, "minb needs lean (the tested path's registers would spill or double)"
  end
  if p.seg > 1 and p.lean == 0 then return false, "seg 2 needs lean (measured slower without it)" end
  if p.l2pre > 1 and (p.l2pre - 1) * p.kw * p.unroll * 4 * p.vec * p.seg >= shape.k // p.splitk then
    return false, "l2pre steps past a warp's share of k (the same as fewer)"
  end
  if p.kw > 1 and shape.k // p.splitk < p.kw * p.unroll * 4 * p.vec * p.seg then
    return false, "warps along k with no step of their own"
  end
  return nil
end

-- The kernel's source, in pieces that source() joins (every byte of it is
-- in the cubin cache key: tests/cli/tmpl_sources.sh).
local head_src = [[
#define WARPS %d
#define KW %d
#define CPW %d
#define VEC %d
#define SEG %d
#define UNROLL %d
#define SPLITK %d
#define PDL %d
#define L2PRE %d
#define APF %d
#define LEAN %d
#define MINB %d
]]

local defs_src = [[
#define LD_IN ld_%s
#define NW (VEC / 2)
#define CHUNK (4 * VEC * SEG)
#define GROUP (8 / SEG)
#define COLS (WARPS / KW * GROUP * CPW)
#define OUT_T %s
typedef unsigned int u32;
typedef unsigned short u16;

%s
AIT_DEV void mma16816(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.%s.%s.f32 {%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, {%%0, %%1, %%2, %%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Lane (g, t) loads k [8t, 8t + 8) of a 32-k chunk (VEC 8; [4t, 4t + 4) of
// 16 for VEC 4) of weight row g of each group and of A rows g and g + 8.
// mma step s takes words 2s and 2s + 1: as the fragments' k pairs (2t, 2t+1)
// and (2t+8, 2t+9) they stand for physical k 8t+4s+{0,1} and 8t+4s+{2,3}, in
// A and B alike.
// The weights of one step (UNROLL chunks of each of the CPW rows).
template<bool V> AIT_DEV void load_w(u32 (&bw)[UNROLL][CPW][NW], const u16* const (&brow)[CPW], const bool (&bok)[CPW],
                                     long long k0, long long ke, int t) {
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    const long long kk = k0 + u * CHUNK + VEC * t;
#pragma unroll
    for (int c = 0; c < CPW; c++) ld_piece<V, true>(bw[u][c], brow[c], kk, ke, bok[c]);
  }
}

]]

local steps_mt1 = [[
// One step: A's pieces of it, then the mma.
template<bool V> AIT_DEV void step(float (&acc)[CPW][4], const u32 (&bw)[UNROLL][CPW][NW], const u16* __restrict__ alo,
                                   const u16* __restrict__ ahi, bool oklo, bool okhi, bool hi_rows, long long k0,
                                   long long ke, int t) {
  u32 aw[UNROLL][2][NW];
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    const long long kk = k0 + u * CHUNK + VEC * t;
    ld_piece<V, false>(aw[u][0], alo, kk, ke, oklo);
    if (hi_rows) ld_piece<V, false>(aw[u][1], ahi, kk, ke, okhi);
    else {
#pragma unroll
      for (int i = 0; i < NW; i++) aw[u][1][i] = 0u;
    }
  }
  __syncwarp();   // mma.sync is .aligned: the predicated loads above may diverge
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int s = 0; s < VEC / 4; s++)
#pragma unroll
      for (int c = 0; c < CPW; c++)
        mma16816(acc[c], aw[u][0][2 * s], aw[u][1][2 * s], aw[u][0][2 * s + 1], aw[u][1][2 * s + 1],
                 bw[u][c][2 * s], bw[u][c][2 * s + 1]);
}

// This warp's steps of [kb, ke): every KW-th from its own. (Requesting the
// next step's weights before this step's mma, in a second register set, was
// measured no faster on the H100 and spilled at unroll 4: bench/RESULTS.md.)
template<bool V> AIT_DEV void mainloop(float (&acc)[CPW][4], const u16* __restrict__ alo, const u16* __restrict__ ahi,
                                       bool oklo, bool okhi, bool hi_rows, const u16* const (&brow)[CPW],
                                       const bool (&bok)[CPW], long long kb, long long ke, int t, int wk) {
  const long long stride = (long long)KW * UNROLL * CHUNK;
  long long k0 = kb + (long long)wk * UNROLL * CHUNK;
  for (; k0 < ke; k0 += stride) {
    u32 bw[UNROLL][CPW][NW];
    load_w<V>(bw, brow, bok, k0, ke, t);
    step<V>(acc, bw, alo, ahi, oklo, okhi, hi_rows, k0, ke, t);
  }
}
#if LEAN
// A segment is 4 VEC k: lane (g, t) loads k [VEC t, VEC t + VEC) of it (16
// or 8 bytes), for A rows g and g + 8. mma step s takes words 2s and 2s + 1:
// as the fragments' k pairs (2t, 2t+1) and (2t+8, 2t+9) they stand for
// physical k VEC t+4s+{0,1} and VEC t+4s+{2,3}, in A and B alike.
// A group is GROUP weight rows, a load SEG segments of each: lane (g, t)
// loads segment g %% SEG of row g / SEG (SEG 1: row g; SEG 2: a warp load is
// 4 rows x 8 VEC k). Column g of a group's mma is then "segment g %% SEG of
// row g / SEG": the mma of segment s takes A's fragment of s and, as B, the
// words of the lanes of segment s only (zeros from the others), so the
// other columns add nothing and one accumulator serves every segment; a
// row's SEG columns are added at the end.
// The mma of segment q of one chunk: A's fragment a, the chunk's weights.
AIT_DEV void mma_seg(float (&acc)[CPW][4], const u32 (&a)[2][NW], const u32 (&bw)[CPW][NW], int q, int sl) {
  const u32 keep = (SEG == 1 || sl == q) ? 0xffffffffu : 0u;
#pragma unroll
  for (int s = 0; s < VEC / 4; s++)
#pragma unroll
    for (int c = 0; c < CPW; c++)
      mma16816(acc[c], a[0][2 * s], a[1][2 * s], a[0][2 * s + 1], a[1][2 * s + 1], bw[c][2 * s] & keep,
               bw[c][2 * s + 1] & keep);
}

// lean: a step wholly inside the vector range, loads without tests (rows
// past n or m read row 0, and their sums are never stored) from the
// lane's pointers wp (weights) and pl, ph (A's rows g and g + 8); each
// segment's A loaded just before its mma (fewer registers live).
AIT_DEV void step_full(float (&acc)[CPW][4], const u16* const (&wp)[CPW], const u16* __restrict__ pl,
                       const u16* __restrict__ ph, bool hi_rows, int sl) {
  u32 bw[UNROLL][CPW][NW];
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int c = 0; c < CPW; c++) vld_w(bw[u][c], wp[c] + u * CHUNK);
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int q = 0; q < SEG; q++) {
      u32 a[2][NW];
      vld_a(a[0], pl + u * CHUNK + q * 4 * VEC);
      if (hi_rows) vld_a(a[1], ph + u * CHUNK + q * 4 * VEC);
      else {
#pragma unroll
        for (int i = 0; i < NW; i++) a[1][i] = 0u;
      }
      mma_seg(acc, a, bw[u], q, sl);
    }
}

// lean: whole steps of [kb, ke) by vector loads without tests (rows past n
// or m read row 0; their sums are never stored), then the rest (all of it
// when !vec) on the FMA pipe, k by k, each lane adding its own fragment
// entries: few registers, so minb 4 leaves 64 a thread at 8 warps (4
// blocks an SM). Column j of group c is weight row GROUP c + j / SEG
// (SEG 2: the rest goes to the even columns, added to the odd at the end).
AIT_DEV void lean_loop(float (&acc)[CPW][4], const u16* __restrict__ A, long long r0, long long m, bool hi_rows,
                       const u16* const (&brow)[CPW], const u16* __restrict__ B, long long col0, long long n, long long k,
                       long long kb, long long ke, int t, int wk, int lk, int sl, bool vec) {
  // A's rows g and g + 8 (row 0 past m) are derived where they are used,
  // not kept across the mainloop: at minb 4 that is what keeps seg 2 at
  // unroll 2 from spilling.
  long long kv = kb;
  const int g = (threadIdx.x & 31) >> 2;
  if (vec) {
    const u16* alo = A + (r0 + g < m ? (r0 + g) * k : 0);
    const u16* ahi = A + (r0 + g + 8 < m ? (r0 + g + 8) * k : 0);
    // Pointers walk the steps; a 32-bit count ends the loop.
    const long long stride = (long long)KW * UNROLL * CHUNK, k0 = kb + (long long)wk * UNROLL * CHUNK;
    kv = kb + (ke - kb) / (UNROLL * CHUNK) * (UNROLL * CHUNK);
    const int steps = k0 < kv ? (int)((kv - k0 + stride - 1) / stride) : 0;
    const u16* wp[CPW];
#pragma unroll
    for (int c = 0; c < CPW; c++) wp[c] = brow[c] + k0 + VEC * lk;
    const u16* pl = alo + k0 + VEC * t;
    const u16* ph = ahi + k0 + VEC * t;
#pragma unroll 1
    for (int i = 0; i < steps; i++) {
      step_full(acc, wp, pl, ph, hi_rows, sl);
#pragma unroll
      for (int c = 0; c < CPW; c++) wp[c] += stride;
      pl += stride;
      ph += stride;
    }
  }
  const u16* alo = A + (r0 + g < m ? (r0 + g) * k : 0);
  const u16* ahi = A + (r0 + g + 8 < m ? (r0 + g + 8) * k : 0);
#pragma unroll 1
  for (long long kk = kv + wk; kk < ke; kk += KW) {
    const float xlo = LD_IN(alo[kk]), xhi = hi_rows ? LD_IN(ahi[kk]) : 0.0f;
#pragma unroll
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int j = 0; j < 2 / SEG; j++) {
        const long long col = min(col0 + GROUP * c + (2 * t + j) / SEG, n - 1);
        const float w = LD_IN(B[col * k + kk]);
        acc[c][j] = fmaf(xlo, w, acc[c][j]);
        acc[c][2 + j] = fmaf(xhi, w, acc[c][2 + j]);
      }
  }
}
#endif
]]

local kernel_head = [[
%s
extern "C" __global__ void __launch_bounds__(WARPS * 32%s) %s(%s) {
  pdl_launch();
#if APF
  // A asked of L2 at once, a 128-byte line a lane of each block's first
  // warp, the blocks in turn (and the line of A's last byte, whatever its
  // alignment). Before the wait, as l2pre's weights: L2 is where the
  // previous kernel's writes land, so no later load can be stale; first
  // thing, while nothing else is live (after the pointers, ptxas spilled).
  if (threadIdx.x < 32) {
    const unsigned long long bytes = (unsigned long long)(m * k) * sizeof(u16);
    const unsigned long long step = 4096ull * gridDim.x * gridDim.y;
    for (unsigned long long off = 128ull * (threadIdx.x + 32ull * (blockIdx.x + blockIdx.y * gridDim.x));
         off < bytes + 128; off += step)
      l2_prefetch((const char*)A + (off < bytes ? off : bytes - 1));
  }
#endif
#if KW > 1
  __shared__ float red[WARPS][CPW * 4][32];
#endif
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
  const int wc = warp / KW, wk = warp %% KW, lk = lane %% (4 * SEG), sl = g %% SEG;
  const long long cb = (long long)blockIdx.x * COLS;
  const long long col0 = cb + wc * (GROUP * CPW);
  // This block's k range: whole chunks, SPLITK ways.
  const long long nch = (k + CHUNK - 1) / CHUNK, per = (nch + SPLITK - 1) / SPLITK;
  const long long kb = min(k, (long long)blockIdx.y * per * CHUNK), ke = min(k, kb + per * CHUNK);
  const bool vec = (k %% VEC == 0) && ((((unsigned long long)A) | ((unsigned long long)B)) %% (2 * VEC) == 0);
  const u16* brow[CPW];
  bool bok[CPW];
#pragma unroll
  for (int c = 0; c < CPW; c++) {
    const long long col = col0 + GROUP * c + g / SEG;
    bok[c] = col < n;
    brow[c] = B + (bok[c] ? col * k : 0);
  }
#if L2PRE
  // The first L2PRE steps' weights asked of L2 before the wait: L2 is where
  // the previous kernel's writes land, so nothing stale can be read later,
  // and nothing is read into this SM before the wait.
  if (col0 < n) {
#pragma unroll
    for (int s = 0; s < L2PRE; s++)
#pragma unroll
      for (int u = 0; u < UNROLL; u++)
#pragma unroll
        for (int c = 0; c < CPW; c++) {
          const long long kk = kb + ((long long)s * KW + wk) * UNROLL * CHUNK + u * CHUNK + VEC * lk;
          if (bok[c] && kk < ke) l2_prefetch(brow[c] + kk);
        }
  }
#endif
  pdl_wait();
  unsigned* ticket = (unsigned*)ws;
  float* part = (float*)((char*)ws + 4 * n + 64);
]]

local passes_mt1 = [[
  // Sixteen rows of A per pass (one pass for decode shapes; more only when a
  // larger m reaches this kernel through its bucket).
  for (long long r0 = 0; r0 < m; r0 += 16) {
    float acc[CPW][4];
#pragma unroll
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int i = 0; i < 4; i++) acc[c][i] = 0.0f;
    const bool oklo = r0 + g < m, okhi = r0 + g + 8 < m;
    const u16* alo = A + (oklo ? (r0 + g) * k : 0);
    const u16* ahi = A + (okhi ? (r0 + g + 8) * k : 0);
    if (col0 < n) {   // warp-uniform: warps wholly past n skip the stream
#if LEAN
      lean_loop(acc, A, r0, m, m - r0 > 8, brow, B, col0, n, k, kb, ke, t, wk, lk, sl, vec);
#else
      if (vec) mainloop<true>(acc, alo, ahi, oklo, okhi, m - r0 > 8, brow, bok, kb, ke, t, wk);
      else mainloop<false>(acc, alo, ahi, oklo, okhi, m - r0 > 8, brow, bok, kb, ke, t, wk);
#endif
    }
#if KW > 1
    // The kw warps of a column slot: their sums in warp order, by the first.
#pragma unroll
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int i = 0; i < 4; i++) red[warp][4 * c + i][lane] = acc[c][i];
    __syncthreads();
    if (wk == 0) {
#pragma unroll
      for (int c = 0; c < CPW; c++)
#pragma unroll
        for (int i = 0; i < 4; i++)
          for (int j = 1; j < KW; j++) acc[c][i] += red[warp + j][4 * c + i][lane];
    }
    __syncthreads();   // red is reused by the next pass of 16 rows
    if (wk != 0) continue;
#endif
#if SEG == 1
    // Fragment of D: rows g and g + 8, columns 2t and 2t + 1 of each group.
#pragma unroll
    for (int c = 0; c < CPW; c++) {
      const long long col = col0 + 8 * c + 2 * t;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const long long row = r0 + g + 8 * h;
        if (row < m) {
          if (SPLITK == 1) {
            if (col < n) D[row * n + col] = st_out(acc[c][2 * h]);
            if (col + 1 < n) D[row * n + col + 1] = st_out(acc[c][2 * h + 1]);
          } else {
            float* q = part + ((long long)blockIdx.y * m + row) * n;
            if (col < n) q[col] = acc[c][2 * h];
            if (col + 1 < n) q[col + 1] = acc[c][2 * h + 1];
          }
        }
      }
    }
#else
    // Fragment of D: rows g and g + 8, columns 2t and 2t + 1 of each group,
    // the two segments of weight row t: added, then stored.
#pragma unroll
    for (int c = 0; c < CPW; c++) {
      const long long col = col0 + GROUP * c + t;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const long long row = r0 + g + 8 * h;
        const float v = acc[c][2 * h] + acc[c][2 * h + 1];
        if (row < m && col < n) {
          if (SPLITK == 1) D[row * n + col] = st_out(v);
          else part[((long long)blockIdx.y * m + row) * n + col] = v;
        }
      }
    }
#endif
  }
]]

local tail_src = [[
  if (SPLITK > 1) splitk_finish(part, ticket, D, m, n, cb, COLS);
}
]]

-- mt > 1: MT tiles of 16 rows of A per pass, in the pieces of steps and
-- passes below (the rest of the kernel is mt 1's). Each weight fragment
-- loaded goes through MT mma, one per tile, so a pass of 16 MT rows streams
-- the weight once. Tile i of a pass holds rows r0 + 16 i + g and + 8 (the
-- fragment's rows g and g + 8); `rows`, the pass's rows of A (at most
-- 16 MT), tells which halves of which tiles hold any: a half wholly past m
-- loads nothing (zeros, a warp-uniform test), as mt 1's rows g + 8 when
-- m <= 8. Rows past m inside a half read as zeros (tested loads) or as row 0
-- (lean), never stored.
local steps_mt = [[
// One step: for each chunk, every tile's A pieces of it, then the mma (the
// chunk's weights once, MT mma each).
template<bool V> AIT_DEV void step(float (&acc)[MT][CPW][4], const u32 (&bw)[UNROLL][CPW][NW],
                                   const u16* const (&arow)[MT][2], const bool (&aok)[MT][2], int rows, long long k0,
                                   long long ke, int t) {
#pragma unroll
  for (int u = 0; u < UNROLL; u++) {
    const long long kk = k0 + u * CHUNK + VEC * t;
    u32 aw[MT][2][NW];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        if (rows > 16 * i + 8 * h) ld_piece<V, false>(aw[i][h], arow[i][h], kk, ke, aok[i][h]);
        else {
#pragma unroll
          for (int j = 0; j < NW; j++) aw[i][h][j] = 0u;
        }
      }
    __syncwarp();   // mma.sync is .aligned: the predicated loads above may diverge
#pragma unroll
    for (int s = 0; s < VEC / 4; s++)
#pragma unroll
      for (int c = 0; c < CPW; c++)
#pragma unroll
        for (int i = 0; i < MT; i++)
          mma16816(acc[i][c], aw[i][0][2 * s], aw[i][1][2 * s], aw[i][0][2 * s + 1], aw[i][1][2 * s + 1],
                   bw[u][c][2 * s], bw[u][c][2 * s + 1]);
  }
}

// This warp's steps of [kb, ke): every KW-th from its own.
template<bool V> AIT_DEV void mainloop(float (&acc)[MT][CPW][4], const u16* const (&arow)[MT][2],
                                       const bool (&aok)[MT][2], int rows, const u16* const (&brow)[CPW],
                                       const bool (&bok)[CPW], long long kb, long long ke, int t, int wk) {
  const long long stride = (long long)KW * UNROLL * CHUNK;
  for (long long k0 = kb + (long long)wk * UNROLL * CHUNK; k0 < ke; k0 += stride) {
    u32 bw[UNROLL][CPW][NW];
    load_w<V>(bw, brow, bok, k0, ke, t);
    step<V>(acc, bw, arow, aok, rows, k0, ke, t);
  }
}
#if LEAN
// lean as at mt 1 (segments, a row's SEG columns added at the end), each
// segment's weights through MT mma. The mma of segment q of one chunk:
// every tile's A fragment a[i], the chunk's weights.
AIT_DEV void mma_seg(float (&acc)[CPW][4], const u32 (&a)[2][NW], const u32 (&bw)[CPW][NW], int q, int sl) {
  const u32 keep = (SEG == 1 || sl == q) ? 0xffffffffu : 0u;
#pragma unroll
  for (int s = 0; s < VEC / 4; s++)
#pragma unroll
    for (int c = 0; c < CPW; c++)
      mma16816(acc[c], a[0][2 * s], a[1][2 * s], a[0][2 * s + 1], a[1][2 * s + 1], bw[c][2 * s] & keep,
               bw[c][2 * s + 1] & keep);
}

// lean: a step wholly inside the vector range, loads without tests from
// the lane's pointers wp (weights) and pa[i][h] (tile i's row g + 8 h; row
// 0 past m); each segment's A loaded just before its mma.
AIT_DEV void step_full(float (&acc)[MT][CPW][4], const u16* const (&wp)[CPW], const u16* const (&pa)[MT][2], int rows,
                       int sl) {
  u32 bw[UNROLL][CPW][NW];
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int c = 0; c < CPW; c++) vld_w(bw[u][c], wp[c] + u * CHUNK);
#pragma unroll
  for (int u = 0; u < UNROLL; u++)
#pragma unroll
    for (int q = 0; q < SEG; q++) {
#pragma unroll
      for (int i = 0; i < MT; i++) {
        u32 a[2][NW];
#pragma unroll
        for (int h = 0; h < 2; h++) {
          if (i + h == 0 || rows > 16 * i + 8 * h) vld_a(a[h], pa[i][h] + u * CHUNK + q * 4 * VEC);
          else {
#pragma unroll
            for (int j = 0; j < NW; j++) a[h][j] = 0u;
          }
        }
        mma_seg(acc[i], a, bw[u], q, sl);
      }
    }
}

// lean: whole steps of [kb, ke) by vector loads without tests, then the
// rest (all of it when !vec) on the FMA pipe, k by k (as mt 1's).
AIT_DEV void lean_loop(float (&acc)[MT][CPW][4], const u16* __restrict__ A, long long r0, long long m, int rows,
                       const u16* __restrict__ B, long long col0, long long n, long long k, long long kb, long long ke,
                       int t, int wk, int lk, int sl, bool vec) {
  long long kv = kb;
  const int g = (threadIdx.x & 31) >> 2;
  if (vec) {
    // Pointers walk the steps; a 32-bit count ends the loop.
    const long long stride = (long long)KW * UNROLL * CHUNK, k0 = kb + (long long)wk * UNROLL * CHUNK;
    kv = kb + (ke - kb) / (UNROLL * CHUNK) * (UNROLL * CHUNK);
    const int steps = k0 < kv ? (int)((kv - k0 + stride - 1) / stride) : 0;
    const u16* wp[CPW];
#pragma unroll
    for (int c = 0; c < CPW; c++) {
      const long long col = col0 + GROUP * c + g / SEG;
      wp[c] = B + (col < n ? col * k : 0) + k0 + VEC * lk;
    }
    const u16* pa[MT][2];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int h = 0; h < 2; h++) {
        const long long row = r0 + 16 * i + 8 * h + g;
        pa[i][h] = A + (row < m ? row * k : 0) + k0 + VEC * t;
      }
#pragma unroll 1
    for (int st = 0; st < steps; st++) {
      step_full(acc, wp, pa, rows, sl);
#pragma unroll
      for (int c = 0; c < CPW; c++) wp[c] += stride;
#pragma unroll
      for (int i = 0; i < MT; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) pa[i][h] += stride;
    }
  }
  if (kv + wk >= ke) return;
  const u16* ar[MT][2];
#pragma unroll
  for (int i = 0; i < MT; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const long long row = r0 + 16 * i + 8 * h + g;
      ar[i][h] = A + (row < m ? row * k : 0);
    }
#pragma unroll 1
  for (long long kk = kv + wk; kk < ke; kk += KW) {
    float x[MT][2];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int h = 0; h < 2; h++) x[i][h] = (i + h == 0 || rows > 16 * i + 8 * h) ? LD_IN(ar[i][h][kk]) : 0.0f;
#pragma unroll
    for (int c = 0; c < CPW; c++)
#pragma unroll
      for (int j = 0; j < 2 / SEG; j++) {
        const long long col = min(col0 + GROUP * c + (2 * t + j) / SEG, n - 1);
        const float w = LD_IN(B[col * k + kk]);
#pragma unroll
        for (int i = 0; i < MT; i++) {
          acc[i][c][j] = fmaf(x[i][0], w, acc[i][c][j]);
          acc[i][c][2 + j] = fmaf(x[i][1], w, acc[i][c][2 + j]);
        }
      }
  }
}
#endif
]]

local passes_mt = [[
  // MT tiles of 16 rows of A per pass: one pass up to m = 16 MT (the sizes
  // this config is offered at); more only when a larger m reaches this
  // kernel through its bucket.
  for (long long r0 = 0; r0 < m; r0 += 16 * MT) {
    const int rows = (int)min(m - r0, 16ll * MT);
    float acc[MT][CPW][4];
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
      for (int c = 0; c < CPW; c++)
#pragma unroll
        for (int j = 0; j < 4; j++) acc[i][c][j] = 0.0f;
    if (col0 < n) {   // warp-uniform: warps wholly past n skip the stream
#if LEAN
      lean_loop(acc, A, r0, m, rows, B, col0, n, k, kb, ke, t, wk, lk, sl, vec);
#else
      const u16* arow[MT][2];
      bool aok[MT][2];
#pragma unroll
      for (int i = 0; i < MT; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const long long row = r0 + 16 * i + 8 * h + g;
          aok[i][h] = row < m;
          arow[i][h] = A + (aok[i][h] ? row * k : 0);
        }
      if (vec) mainloop<true>(acc, arow, aok, rows, brow, bok, kb, ke, t, wk);
      else mainloop<false>(acc, arow, aok, rows, brow, bok, kb, ke, t, wk);
#endif
    }
#if KW > 1
    // The kw warps of a column slot: their sums in warp order, by the
    // first, a tile at a time (red holds one tile's sums).
#pragma unroll
    for (int i = 0; i < MT; i++) {
#pragma unroll
      for (int c = 0; c < CPW; c++)
#pragma unroll
        for (int j = 0; j < 4; j++) red[warp][4 * c + j][lane] = acc[i][c][j];
      __syncthreads();
      if (wk == 0) {
#pragma unroll
        for (int c = 0; c < CPW; c++)
#pragma unroll
          for (int j = 0; j < 4; j++)
            for (int w = 1; w < KW; w++) acc[i][c][j] += red[warp + w][4 * c + j][lane];
      }
      __syncthreads();   // red is reused by the next tile
    }
    if (wk != 0) continue;
#endif
#pragma unroll
    for (int i = 0; i < MT; i++) {
#if SEG == 1
      // Fragment of D: rows g and g + 8 of the tile, columns 2t and 2t + 1
      // of each group.
#pragma unroll
      for (int c = 0; c < CPW; c++) {
        const long long col = col0 + 8 * c + 2 * t;
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const long long row = r0 + 16 * i + g + 8 * h;
          if (row < m) {
            if (SPLITK == 1) {
              if (col < n) D[row * n + col] = st_out(acc[i][c][2 * h]);
              if (col + 1 < n) D[row * n + col + 1] = st_out(acc[i][c][2 * h + 1]);
            } else {
              float* q = part + ((long long)blockIdx.y * m + row) * n;
              if (col < n) q[col] = acc[i][c][2 * h];
              if (col + 1 < n) q[col + 1] = acc[i][c][2 * h + 1];
            }
          }
        }
      }
#else
      // Fragment of D: rows g and g + 8 of the tile, columns 2t and 2t + 1
      // of each group, the two segments of weight row t: added, then stored.
#pragma unroll
      for (int c = 0; c < CPW; c++) {
        const long long col = col0 + GROUP * c + t;
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const long long row = r0 + 16 * i + g + 8 * h;
          const float v = acc[i][c][2 * h] + acc[i][c][2 * h + 1];
          if (row < m && col < n) {
            if (SPLITK == 1) D[row * n + col] = st_out(v);
            else part[((long long)blockIdx.y * m + row) * n + col] = v;
          }
        }
      }
#endif
    }
  }
]]

local function source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  local nw = p.vec // 2
  local vld_w, vld_a
  local pf = p.l2pf == 256 and ".L2::256B" or ""
  if nw == 4 then
    vld_w = [[asm volatile("ld.global.nc.L1::no_allocate]] .. pf .. [[.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));]]
    vld_a = [[asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]) : "l"(p));]]
  else
    vld_w = [[asm volatile("ld.global.nc.L1::no_allocate]] .. pf .. [[.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));]]
    vld_a = [[asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));]]
  end
  local mt = mt_of(p)
  local fmt = head_src .. (mt > 1 and ("#define MT " .. mt .. "\n") or "") .. defs_src ..
    (mt > 1 and steps_mt or steps_mt1) .. kernel_head .. (mt > 1 and passes_mt or passes_mt1) .. tail_src
  return dtype.prelude .. gemv.store_fn(t) .. string.format(fmt, p.warps, p.kw, p.cpw, p.vec, p.seg, p.unroll, p.splitk,
    p.pdl, p.l2pre, p.apf, p.lean, p.minb, t.In, dtype.ctype(t.Out),
    gemv.ld_piece_src(vld_w, vld_a) .. (p.lean == 1 and ("AIT_DEV void vld_w(u32 (&w)[NW], const u16* p) { " .. vld_w ..
    " }\nAIT_DEV void vld_a(u32 (&w)[NW], const u16* p) { " .. vld_a .. " }\n") or ""), t.In, t.In,
    gemv.pdl_fn .. gemv.finish_fn,
    p.minb > 0 and ", MINB" or "", name, kernel.params(op, dt, true))
end

local function default(t, shape, dt, dev)
  local mt = mt_for(shape.m)
  -- A weight wide enough for a block of 16 columns per SM, rows of
  -- whole vectors: the config measured fastest at 16 x 4096^2 as a
  -- stream (12.76-12.89 us, bench/archive/RESULTS-2026.md, "gemv nt: deeper `l2pre`,
  -- `apf`, `minb 2`, and a decode default"), so a search that misses it in
  -- a space this size still races it. mt > 1 (unmeasured): its tiles' sums
  -- take registers, so the first of 2 blocks an SM with fewer column
  -- groups, one segment, then 1 block an SM, that the registers hold.
  if (shape.n + 15) // 16 >= (dev.sms or 132) and shape.k % 8 == 0 then
    local axes = { { "pdl", { 1, 0 } }, { "l2pre", { 2, 1, 0 } }, { "kw", { 8, 4, 2, 1 } } }
    if mt > 1 then
      table.insert(axes, 1, { "seg", { 2, 1 } })
      table.insert(axes, 1, { "cpw", { 4, 2, 1 } })
      table.insert(axes, 1, { "minb", { 2, 1 } })
    end
    local q = kernel.first_valid(t, shape, dt, dev, { vec = 8, seg = 2, lean = 1, minb = 2, warps = 8, cpw = 4, l2pf = 0,
                                                      splitk = 1, unroll = 2, apf = 1, mt = mt }, axes)
    if q then return q end
  end
  -- 8 warps x 2 groups x 4 chunks: 4 KB of weights in flight per warp,
  -- two 256-thread blocks per SM at 8-way split-K of a 4096-wide weight
  -- (mt > 1 asks ptxas for one block an SM: asked for none, it spills).
  return kernel.first_valid(t, shape, dt, dev, { vec = 8, seg = 1, lean = 0, minb = mt > 1 and 1 or 0, warps = 8, l2pf = 256,
                                                 kw = 1, pdl = 0, l2pre = 0, apf = 0, mt = mt },
    { { "splitk", { 8, 4, 16, 2, 1 } }, { "cpw", { 2, 1, 4 } }, { "unroll", { 4, 2, 1 } } })
end

-- check() takes exactly mt_for(m) tiles: the search never draws another mt
-- (search/space.lua, narrow), a quarter of the domain to sample from.
local function narrow(shape) return { mt = { mt_for(shape.m) } } end

return gemv.family(OP, {
  params = nt_params, max_m = 64, cols_per_block = cols_per_block, reg_estimate = reg_estimate, reg_limit = 200,
  step = function(p) return p.unroll * 4 * p.vec * p.seg end,
  check = check, source = source, default = default, narrow = narrow,
})
