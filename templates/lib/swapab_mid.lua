-- swapab's mid-size kernels (bn > 64; lib/swapab.lua's header says how
-- the first works, the comment above MID2_HOST the second).
local gemm = lib("gemm")
local dtype = lib("dtype")
local hopper = lib("hopper")
local gemv = lib("gemv")
local geom = lib("swapab_geom")
local mid_sizes, widths = geom.mid_sizes, geom.widths
local PEER_FN = lib("swapab_decode").PEER_FN
local M = {}

-- The mid-size kernel's own helper: four floats into CTA `to`'s shared
-- memory at this CTA's address a (16-byte aligned).
local PEER4_FN = [[
AIT_DEV void st_peer4(unsigned a, float x, float y, float z, float w, unsigned to) {
  asm volatile("{ .reg .b32 r; mapa.shared::cluster.u32 r, %0, %1; st.shared::cluster.v4.f32 [r], {%2, %3, %4, %5}; }"
               :: "r"(a), "r"(to), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}
]]

-- The mid-size kernels' mainloop, shared by both: warpgroup wg waits for
-- each slot, multiplies its 64 rows of B by the slot's rows of A into acc
-- ($N columns: the kernel's width) and releases the slot ($ARRIVE(bar$TO):
-- to this CTA's producer, or to every producer of a multicast group).
local MAINLOOP = [[
  const int wg = threadIdx.x / 128, lane = threadIdx.x % 32, warp = (threadIdx.x / 32) % 4;
  float acc[$N / 2];
#pragma unroll
  for (int j = 0; j < $N / 2; j++) acc[j] = 0.0f;
  int s = 0, prev = -1;
  unsigned ph = 0;
  for (int kb = kb0; kb < kb1; kb++) {
    mbar_wait(full + 8 * s, ph);
    const unsigned sB = base + s * SLOT + wg * 64 * 128, sA = base + s * SLOT + KBOX * W_BYTES;
    wg_fence();
#pragma unroll
    for (int b = 0; b < KBOX; b++)
#pragma unroll
      for (int kk = 0; kk < 4; kk++)
        wgmma_tile(acc, desc(sB + b * W_BYTES + kk * 32, 1, 1024), desc(sA + b * A_BYTES + kk * 32, 1, 1024));
    wg_commit();
    // INFLIGHT 1: this group keeps running; the previous one's slot is
    // released once it retires. 0: this slot, as soon as its group is done.
    wg_wait<INFLIGHT>();
    if (INFLIGHT == 0) {
      if (lane == 0) $ARRIVE(empty + 8 * s$TO);
    } else {
      if (prev >= 0 && lane == 0) $ARRIVE(empty + 8 * prev$TO);
      prev = s;
    }
    if (++s == STAGES) { s = 0; ph ^= 1; }
  }
  wg_wait<0>();
  // Sum 4c + 2h + e: row 16 warp + g + 8h of the warpgroup's 64 (a column
  // of D), column 8c + 2t + e (a row of A, of D); chunk c is sums 4c..4c+3.
]]
local function mainloop(n, arrive, to)
  return (MAINLOOP:gsub("%$(%u+)", { N = n, ARRIVE = arrive, TO = to }))
end

-- The mid-size kernels' last step, shared by both: each slice of k adds the
-- parts of the columns it owns in slice order (deterministic), then stores
-- them. $NC and $CPR name the kernel's column counts, $ME its slice index
-- ($WORD the word its comment uses for one).
local SUM_STORE = [[
#endif
#pragma unroll
  for (int c = 0; c < $NC; c++) {
    if (CS > 1 && c / $CPR != $ME) continue;
    float v[4] = { acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3] };
#if CS > 1
    // The parts in $WORD order, whichever $WORD adds them: deterministic.
    float sum[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    for (int from = 0; from < CS; from++) {
      float4 q = make_float4(v[0], v[1], v[2], v[3]);
      if (from != $ME) q = red[((from < $ME ? from : from - 1) * $CPR + c - $ME * $CPR) * 128 * WGS + threadIdx.x];
      sum[0] += q.x; sum[1] += q.y; sum[2] += q.z; sum[3] += q.w;
    }
#pragma unroll
    for (int x = 0; x < 4; x++) v[x] = sum[x];
#endif
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
      for (int e = 0; e < 2; e++) {
        const long long row = r0 + 8 * c + 2 * t + e, cl = col + 8 * h;
        if (row < $MEND && cl < n) D[row * n + cl] = st_out(v[2 * h + e]);
      }
  }
]]
local function sum_store(nc, cpr, me, word, mend)
  local names = { NC = nc, CPR = cpr, ME = me, WORD = word, MEND = mend }
  return (SUM_STORE:gsub("%$(%u+)", names))
end

-- The mid-size kernel's body, after its signature (see the header).
local MID_BODY = [[
{
  extern __shared__ unsigned char smem_raw[];
  pdl_launch();
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned full = base + STAGES * SLOT, empty = full + 8 * STAGES, rbar = empty + 8 * STAGES;
  // The rows of A split evenly over zt = cdiv(m, BN) tiles of rows, each
  // zr rows (m / zt rounded up to 8, at most BN): A's box (mid_box), the
  // bytes each slot expects, and the rows this tile stores. The zt tiles of
  // rows of one column tile are neighbours along x, so they run together
  // and stream the same boxes of the weight: all but the first read them
  // from L2, also when the weight is larger than L2.
  const long long zt = (m + BN - 1) / BN;
  const int tile = (int)(blockIdx.x / zt), rank = CS > 1 ? (int)cta_rank() : 0;
  const long long zr = min((long long)BN, ((m + zt - 1) / zt + 7) / 8 * 8);
  const long long r0 = (long long)(blockIdx.x % zt) * zr, mend = min(m, r0 + zr);
  // k in slots of KBOX boxes of 64 (the last slot's boxes past k are zeros).
  const int kiters = (int)((k + 64 * KBOX - 1) / (64 * KBOX)), per = (kiters + CS - 1) / CS;
  const int kb0 = min(kiters, rank * per), kb1 = min(kiters, kb0 + per);
  const unsigned slot_bytes = KBOX * (W_BYTES + 128u * (unsigned)zr);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) { mbar_init(full + 8 * s, 1); mbar_init(empty + 8 * s, 4 * WGS); }
    if (CS > 1) mbar_init(rbar, 128 * WGS * (CS - 1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (threadIdx.x == 128 * WGS) {
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tmB) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tmA) : "memory");
#if L2PRE
    const int kboxes = (int)((k + 63) / 64);
    for (int b = kb0 * KBOX; b < min(kb1 * KBOX, min(kboxes, kb0 * KBOX + L2PRE)); b++) l2_prefetch_box(&tmB, b * 64, tile * BM);
#endif
  }
  __syncthreads();
  pdl_wait();
  if (threadIdx.x >= 128 * WGS) {
    if (threadIdx.x == 128 * WGS) {
      int s = 0;
      unsigned ph = 0;
      for (int kb = kb0; kb < kb1; kb++) {
        mbar_wait(empty + 8 * s, ph ^ 1);
        const unsigned bar = full + 8 * s, sB = base + s * SLOT, sA = sB + KBOX * W_BYTES;
        // Every slot whole (TMA zero-fills boxes past k): no wgmma under a branch.
        mbar_expect(bar, slot_bytes);
        for (int b = 0; b < KBOX; b++) {
          tma_load_w(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * BM, bar);
          tma_load(sA + b * A_BYTES, &tmA, (kb * KBOX + b) * 64, (int)r0, bar);
        }
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
    }
    // The cluster barrier counts every thread not exited: the producer
    // warp's part, before it leaves (its loads complete on the mbarriers).
#if CS > 1
    cluster_arrive();
#endif
    return;
  }
  // The consumer warpgroups, at the narrowest width that holds zr rows.
]] .. "  switch (width_for((int)zr)) {\n$CASES  }\n}\n"

-- The first mid-size kernel's consumer warpgroup wg at width N (one of the
-- widths compiled in, the narrowest that holds the tile's zr rows): the
-- mainloop over slots kb0 .. kb1 - 1, the split's adding, the stores of
-- rows r0 .. mend - 1.
local MID_CONSUME = [[
template<int N> AIT_DEV void consume1(unsigned base, const unsigned char* smem_raw, unsigned full, unsigned empty,
                                      unsigned rbar, int kb0, int kb1, int rank, int tile, long long r0,
                                      long long mend, OUT_T* __restrict__ D, long long n)
{
  // Warpgroup wg: rows 64 wg .. 64 wg + 63 of the tile.
]] .. mainloop("N", "mbar_arrive", "") .. [[
  constexpr int NCV = N / 8, CPRV = (NCV + CS - 1) / CS;
  const int g = lane / 4, t = lane % 4;
  const long long col = (long long)tile * BM + 64 * wg + 16 * warp + g;
#if CS > 1
  // Past this barrier no ring of the cluster is read (every wgmma retired)
  // or written (every load landed: its full mbarrier was waited on).
  cluster_arrive();
  cluster_wait();
  // Rank `to` adds chunks to * CPRV ..: this CTA's parts of them go to its
  // red, at (this rank among the others, the chunk among its owner's, thread).
#pragma unroll
  for (int c = 0; c < NCV; c++) {
    const int to = c / CPRV;
    if (to != rank) {
      const unsigned at = (unsigned)(((rank < to ? rank : rank - 1) * CPRV + c - to * CPRV) * 128 * WGS) + threadIdx.x;
      st_peer4(base + 16u * at, acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3], (unsigned)to);
    }
  }
  for (int to = 0; to < CS; to++)
    if (to != rank) arrive_peer(rbar, (unsigned)to);
  // Every rank waits for its parts, so none exits while others write to it.
  mbar_wait_cluster(rbar, 0u);
  const float4* red = (const float4*)(smem_raw + (base - smem_u32(smem_raw)));
]] .. sum_store("NCV", "CPRV", "rank", "rank", "mend") .. [[
}
]]

-- The widths' part of a mid-size kernel's source: a wgmma_tile for each,
-- WIDTH_FOR's chain (the narrowest width that holds `rows`), and the
-- consumers' switch cases calling consume(ARGS) at each width.
local function width_parts(p, intype, consume, args)
  local ws = widths(p)
  local fns, chain, cases = {}, {}, {}
  for i, w in ipairs(ws) do
    fns[#fns + 1] = hopper.wgmma_fn(w, intype, 0)
    chain[#chain + 1] = i < #ws and string.format("rows > %d ? %d : ", ws[i + 1], w) or tostring(w)
    cases[#cases + 1] = string.format("  case %d: %s<%d>(%s); break;\n", w, consume, w, args)
  end
  return table.concat(fns), table.concat(chain), table.concat(cases)
end

-- width_for(rows): the narrowest of the widths compiled in that holds rows.
local WIDTH_FN = "AIT_DEV int width_for(int rows) { return WIDTH_FOR; }\n"

-- The #define block both mid-size kernels' sources start with (MC, the
-- multicast group, in the second's only): p's params, z = mid_sizes(p), the
-- output type of t = gemm.types(dt), chain = the widths' WIDTH_FOR.
local function defines(p, t, z, chain, with_mc)
  return string.format("#define BM %d\n#define BN %d\n#define STAGES %d\n#define CS %d\n", p.bm, p.bn, p.stages, p.csplit) ..
    (with_mc and string.format("#define MC %d\n", p.mc) or "") .. string.format([[
#define PDL %d
#define L2PRE %d
#define INFLIGHT %d
#define KBOX %d
#define WGS %d
#define W_BYTES (BM * 128)
#define A_BYTES (BN * 128)
#define SLOT %d
#define OUT_T %s
#define WIDTH_FOR %s
#define EVICT %d
]], p.pdl, p.l2pre, p.inflight, p.kbox, z.wgs, z.slot, dtype.ctype(t.Out), chain, p.evict or 0)
end

-- The mid-size kernel's source (bn > 64).
local function mid_source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  local z = mid_sizes(p)
  local fns, chain, cases = width_parts(p, t.In, "consume1", "base, smem_raw, full, empty, rbar, kb0, kb1, rank, tile, r0, mend, D, n")
  return dtype.prelude .. gemv.store_fn(t) .. defines(p, t, z, chain, false) ..
    hopper.ptx .. hopper.tma_load_w .. lib("cluster").ptx .. gemv.pdl_fn .. fns .. PEER_FN .. PEER4_FN .. WIDTH_FN .. MID_CONSUME ..
    string.format([[

// Threads 0 .. 128 WGS - 1: the consumer warpgroups; the last warp: the producer.
extern "C" __global__ void __launch_bounds__(%d, 1) %s(const __grid_constant__ tmap_t tmB,
    const __grid_constant__ tmap_t tmA, OUT_T* __restrict__ D, long long m, long long n, long long k)
]], z.threads, name) .. (MID_BODY:gsub("%$CASES", function() return cases end))
end

-- The second mid-size kernel (mc >= 1), for m 65..256, where the first one
-- lost to cuBLAS (bench/RESULTS.md, "gemv mt and swapab's mid-size kernel";
-- at 4096^2, m = 128..255, 0.53-0.98x). The same ring, producer warp,
-- warpgroups and split-K adding through the rings; three changes, each
-- against a cost the first kernel's measurements show:
--
-- Rows of A past m are not loaded. The first kernel's box of BN rows has
-- TMA zero-fill those past m, and its time grows with them: one config at
-- 4096^2 ran 22.6 us at m = 233..255 and 33.0 at m = 131 (bn 256), about
-- 0.1 us a zero-filled row, the same slope in every bucket of that run.
-- Here A comes in boxes of 64 rows and then of 8 (a second tensor map),
-- only over this pass's rows: at most 7 rows past m are filled. The sums
-- of the rows never loaded (whatever shared memory held) go to rows of D
-- that are not stored: column j of a wgmma's product reads row j of A only.
--
-- The wgmma width follows m at run time (nvar > 1, as the first kernel's
-- may): the kernel holds the
-- consumer's mainloop and adding at nvar widths (widths() above) and takes
-- the narrowest that holds the pass's rows, so a config tuned at m = 255
-- does not multiply 256 columns at m = 129 (at 4096^2 and m = 256 the
-- tensor cores' share, 8.6 GFLOP, is about the weight's stream, ~11 us).
--
-- A is multicast (mc > 1): mc CTAs of a cluster along n (column tiles
-- side by side, the same slice of k) each load 1/mc of A's boxes and TMA
-- writes each box into all of them. A CTA's A is read from L2 n/BM times
-- over the grid without it (a 256 x 4096 A at bm 128 and n = 4096: 64 MB
-- of L2 reads beside the weight's 32 MB; the first kernel's times at
-- 4096^2, 16.2 us at bn 128 and 22.6 at bn 256, are both about 4 TB/s of
-- such traffic if they were bm 128 configs: that run's configs were not
-- kept), 1/mc of that with it. A slot is refilled only when the
-- consumers of every CTA of the group released it (each warp arrives on
-- the empty mbarrier of all mc CTAs, through distributed shared memory),
-- and each CTA's full mbarrier expects its own weight box and all of A's
-- boxes (TMA completes the peers' bytes on it, before or after its own
-- producer's expect). The cluster is mc x csplit (x: the group, y: the
-- slices of k, whose adding is the first kernel's among CTAs of one x);
-- the grid's column tiles are padded to a multiple of mc, and a CTA past n
-- loads no weight (its sums are never stored) but still its share of A.
-- A cluster barrier after the mbarriers are initialized (its wait just
-- before the mainloop) makes them known to the peers; one after the
-- mainloop keeps every CTA until no peer arrives on its barriers any more.
-- mc 1: the same kernel without the cluster along n.

-- The part of the second kernel's source that tests/host/swapab_boxes.cpp
-- compiles on the CPU (between its two marker lines): A's boxes and the
-- width a pass takes. WIDTH_FOR is the widths' chain of comparisons.
local MID2_HOST = [[
// ==== host-testable from here: tests/host/swapab_boxes.cpp ====
// A pass of `rows` rows of A in boxes: nbig of 64 rows, then of 8 rows up
// to the first multiple of 8 at or past rows (TMA zero-fills the rows past
// m in the last one). Box j starts at row a_row(j); a_bytes is what all
// of them write into each CTA (every box counts whole).
AIT_DEV int a_boxes(int rows, int& nbig) { nbig = rows / 64; return nbig + (rows - 64 * nbig + 7) / 8; }
AIT_DEV int a_row(int j, int nbig) { return j < nbig ? 64 * j : 64 * nbig + 8 * (j - nbig); }
AIT_DEV unsigned a_bytes(int rows) { int nbig; const int nbox = a_boxes(rows, nbig); return 128u * (unsigned)(64 * nbig + 8 * (nbox - nbig)); }
// The narrowest of the widths compiled in that holds `rows` rows.
]] .. WIDTH_FN .. [[
// ==== end host-testable ====
]]

local MID2_FN = [[
// A box into the same offset of the shared memory of every CTA in mask.
AIT_DEV void tma_load_mc(unsigned dst, const tmap_t* map, int x, int y, unsigned bar, unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
               " [%0], [%1, {%2, %3}], [%4], %5;"
               :: "r"(dst), "l"((unsigned long long)map), "r"(x), "r"(y), "r"(bar), "h"(mask) : "memory");
}
// CTA (x, y) of the cluster: x along n (the multicast group), y the slice of k.
AIT_DEV unsigned peer(int x, int y) { return (unsigned)(x + y * MC); }
// A consumer warp is done with a slot: its producer and, with multicast,
// every producer of the group that writes into it may refill it. The arrive
// releases at CTA scope, not the cluster's: what it must order are the
// wgmma's reads of the slot, done at wgmma.wait_group, before TMA (the
// async proxy, which no generic fence orders) writes it again. At cluster
// scope ptxas 13.0 puts MEMBAR.ALL.GPU before each arrive (mc of them a
// warp a slot, in the consumers' path: tests/cli/swapab_mid2.sh).
AIT_DEV void arrive_group(unsigned bar, unsigned to) {
  asm volatile("{ .reg .b32 r; mapa.shared::cluster.u32 r, %0, %1; mbarrier.arrive.release.cta.shared::cluster.b64 _, [r]; }"
               :: "r"(bar), "r"(to) : "memory");
}
AIT_DEV void release(unsigned bar, int split) {
#if MC > 1
  for (int x = 0; x < MC; x++) arrive_group(bar, peer(x, split));
#else
  mbar_arrive(bar);
#endif
}

// Consumer warpgroup wg for a pass of at most N rows of A (N one of the
// widths compiled in): the mainloop over slots kb0 .. kb1 - 1, the split's
// adding, the stores.
template<int N> AIT_DEV void consume(unsigned base, const float4* red, unsigned full, unsigned empty, unsigned rbar,
                                     int kb0, int kb1, int split, int cx, int tile, long long r0,
                                     OUT_T* __restrict__ D, long long m, long long n)
{
]] .. mainloop("N", "release", ", split") .. [[
  constexpr int NCV = N / 8, CPRV = (NCV + CS - 1) / CS;
  const int g = lane / 4, t = lane % 4;
  const long long col = (long long)tile * BM + 64 * wg + 16 * warp + g;
#if CS > 1
  // Past this barrier no ring of the cluster is read or written (every
  // wgmma retired, every load, a peer's multicast too, landed on a full
  // mbarrier that was waited on). Rank `to` of this column tile's slices
  // adds chunks to * CPRV ..: this CTA's parts of them go to its ring.
  cluster_arrive();
  cluster_wait();
#pragma unroll
  for (int c = 0; c < NCV; c++) {
    const int to = c / CPRV;
    if (to != split) {
      const unsigned at = (unsigned)(((split < to ? split : split - 1) * CPRV + c - to * CPRV) * 128 * WGS) + threadIdx.x;
      st_peer4(base + 16u * at, acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3], peer(cx, to));
    }
  }
  for (int to = 0; to < CS; to++)
    if (to != split) arrive_peer(rbar, peer(cx, to));
  // Every slice waits for its parts, so none exits while others write to it.
  mbar_wait_cluster(rbar, 0u);
]] .. sum_store("NCV", "CPRV", "split", "slice", "m") .. [[
#if CS == 1 && MC > 1
  // No CTA of the group leaves while a peer may still release its slots.
  cluster_arrive();
  cluster_wait();
#endif
}
]]

-- The second mid-size kernel's body up to the consumers' choice of width
-- (mid2_source writes that), after its signature.
local MID2_BODY = [[
{
  extern __shared__ unsigned char smem_raw[];
  pdl_launch();
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned full = base + STAGES * SLOT, empty = full + 8 * STAGES, rbar = empty + 8 * STAGES;
  const int tile = blockIdx.x, split = (int)blockIdx.y, cx = (int)(blockIdx.x % MC);
  const long long r0 = (long long)blockIdx.z * BN;
  // This pass's rows of A: boxes of 64, then boxes of 8; TMA zero-fills at
  // most 7 rows past m, and rows past those are not loaded at all.
  int nbig;
  const int rows = (int)min((long long)BN, m - r0), nbox = a_boxes(rows, nbig);
  // A CTA past n (the grid padded to whole multicast groups) loads no weight.
  const bool wok = (long long)tile * BM < n;
  const unsigned bytes = KBOX * ((wok ? W_BYTES : 0u) + a_bytes(rows));
  // k in slots of KBOX boxes of 64 (the last slot's boxes past k are zeros).
  const int kiters = (int)((k + 64 * KBOX - 1) / (64 * KBOX)), per = (kiters + CS - 1) / CS;
  const int kb0 = min(kiters, split * per), kb1 = min(kiters, kb0 + per);
  if (threadIdx.x == 0) {
#if MC > 1 || CS > 1
    // The peers' ranks assume x fastest in the cluster's linear rank.
    if (cta_rank() != peer(cx, split)) __trap();
#endif
    for (int s = 0; s < STAGES; s++) { mbar_init(full + 8 * s, 1); mbar_init(empty + 8 * s, 4 * WGS * MC); }
    if (CS > 1) mbar_init(rbar, 128 * WGS * (CS - 1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (threadIdx.x == 128 * WGS) {
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tmB) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tmA) : "memory");
    asm volatile("prefetch.tensormap [%0];" :: "l"((unsigned long long)&tmA8) : "memory");
#if L2PRE
    const int kboxes = (int)((k + 63) / 64);
    if (wok)
      for (int b = kb0 * KBOX; b < min(kb1 * KBOX, min(kboxes, kb0 * KBOX + L2PRE)); b++) l2_prefetch_box(&tmB, b * 64, tile * BM);
#endif
  }
  __syncthreads();
#if MC > 1
  cluster_arrive();
#endif
  pdl_wait();
#if MC > 1
  cluster_wait();
#endif
  if (threadIdx.x >= 128 * WGS) {
    if (threadIdx.x == 128 * WGS) {
#if MC > 1
      const unsigned short mask = (unsigned short)(((1u << MC) - 1u) << (split * MC));
#endif
      int s = 0;
      unsigned ph = 0;
      for (int kb = kb0; kb < kb1; kb++) {
        // With multicast the releases come from the group's CTAs too; the
        // wait acquires at CTA scope all the same (what follows is TMA, and
        // acquire.cluster adds an L1 invalidate, CCTL.IVALL, each slot).
        mbar_wait(empty + 8 * s, ph ^ 1);
        const unsigned bar = full + 8 * s, sB = base + s * SLOT, sA = sB + KBOX * W_BYTES;
        mbar_expect(bar, bytes);
        for (int b = 0; b < KBOX; b++) {
          const int x = (kb * KBOX + b) * 64;
          if (wok) tma_load_w(sB + b * W_BYTES, &tmB, x, tile * BM, bar);
          // This CTA's share of A's boxes: every MC-th, from its place in the group.
          for (int j = cx; j < nbox; j += MC) {
            const int row = a_row(j, nbig);
            const tmap_t* map = j < nbig ? &tmA : &tmA8;
#if MC > 1
            tma_load_mc(sA + b * A_BYTES + 128u * row, map, x, (int)r0 + row, bar, mask);
#else
            tma_load(sA + b * A_BYTES + 128u * row, map, x, (int)r0 + row, bar);
#endif
          }
        }
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
    }
    // The cluster barrier after the mainloop counts every thread not
    // exited: the producer warp's part, before it leaves.
#if MC > 1 || CS > 1
    cluster_arrive();
#endif
    return;
  }
  // The ring, as the split's adding reads it.
  const float4* red = (const float4*)(smem_raw + (base - smem_u32(smem_raw)));
]]

-- The second mid-size kernel's source (bn > 64, mc >= 1).
local function mid2_source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  local z = mid_sizes(p)
  -- width_for(rows): the narrowest width that holds the pass's rows; the
  -- consumers' switch on it.
  local fns, chain, cases = width_parts(p, t.In, "consume", "base, red, full, empty, rbar, kb0, kb1, split, cx, tile, r0, D, m, n")
  return dtype.prelude .. gemv.store_fn(t) .. defines(p, t, z, chain, true) ..
    hopper.ptx .. hopper.tma_load_w .. lib("cluster").ptx .. gemv.pdl_fn .. fns .. PEER_FN .. PEER4_FN .. MID2_HOST .. MID2_FN ..
    string.format([[

// Threads 0 .. 128 WGS - 1: the consumer warpgroups; the last warp: the producer.
extern "C" __global__ void __launch_bounds__(%d, 1) %s(const __grid_constant__ tmap_t tmB,
    const __grid_constant__ tmap_t tmA, const __grid_constant__ tmap_t tmA8, OUT_T* __restrict__ D,
    long long m, long long n, long long k)
]], z.threads, name) .. MID2_BODY .. "  switch (width_for(rows)) {\n" .. cases .. "  }\n}\n"
end

M.mid_source, M.mid2_source = mid_source, mid2_source

return M
