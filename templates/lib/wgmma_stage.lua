-- The wgmma family's staging (lib/wgmma.lua, `stage`): device code that
-- copies an operand TMA cannot read in place into the workspace.
--
-- Staging (`stage`): TMA needs 16-byte strides, so an operand whose rows
-- are not (k, or n for nn's B, not a multiple of 8 elements) is first copied
-- by the whole grid into the workspace with rows padded to 128 bytes, and
-- the tensor map reads the copy (the plan's `at`). Copy work is handed out
-- in claims of rows through a counter, and every CTA waits until all claims
-- are done before its first load: a CTA that is not yet resident never holds
-- a claim, so the wait cannot deadlock whatever the grid. Each thread builds
-- a 16-byte chunk of a padded row from two aligned 16-byte loads and funnel
-- shifts; the last CTA through resets the counters for the next launch. The
-- copy costs a read and a write of the operand; the product then runs at
-- the aligned speed (a TMA box cannot start at an unaligned row: see
-- bench/gemm/tma_coords.cu).
--
-- Overlapped staging (`stage` "a_overlap", "ab_overlap"; persistent grids in
-- raster m): only the rows of A that the first wave of tiles reads are
-- copied before the wait (with B when it is staged); the rest of A is
-- copied behind it by the producer warpgroup's three idle warps while the
-- consumers multiply. They claim a few rows at a time (about 8 KB) and
-- count each claim into its band's counter (a band: cdiv(tiles_m, 256)
-- tile rows), and the TMA thread waits for a tile row's band before its
-- first load. The copy then costs only B and the first wave's rows up
-- front.
local M = {}

-- funnel, stage_rows, stage_all and, under OVERLAP, the late copy and the
-- TMA thread's band waits. Part of the source's host-testable region
-- (tests/host/staging.cpp).
M.device = [[
#if STAGE_A || STAGE_B
// 16 bytes from two aligned 16-byte pieces lo:hi, starting sh bytes into lo.
AIT_DEV uint4 funnel(const uint4& lo, const uint4& hi, unsigned sh) {
  const unsigned w[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
  const unsigned q = sh >> 2, b = 8 * (sh & 3);
  unsigned t[5];
#pragma unroll
  for (int i = 0; i < 5; i++) t[i] = q == 0 ? w[i] : q == 1 ? w[i + 1] : q == 2 ? w[i + 2] : w[min(i + 3, 7)];
  return make_uint4(__funnelshift_r(t[0], t[1], b), __funnelshift_r(t[1], t[2], b),
                    __funnelshift_r(t[2], t[3], b), __funnelshift_r(t[3], t[4], b));
}
// Rows [r0, r0 + nr) of a rows x cols matrix into rows padded to pad
// elements at dst, by one warp: the 16-byte chunks that hold the cols valid
// elements (the padding past them is never read: the tensor map's dims stop
// at cols). A chunk is two aligned 16-byte loads and funnel shifts (a row
// has one shift), all STAGE_UNROLL chunks' loads of a lane issued before
// any is used; at the buffer's ends, element by element (nothing outside
// it is read). Measured on the H100 (bench/stage_copy.sh, A and B of
// 4001 x 4001): 2.5 TB/s read + written with 16 chunks in flight, 1.8 with
// 8 (cudaMemcpy2DAsync: 1.35); taking the second piece from the
// neighbouring lane instead was slower (1.5).
#define STAGE_UNROLL 16
AIT_DEV void stage_rows(const unsigned char* src, long long rows, long long cols, unsigned char* dst, long long pad,
                        long long r0, long long nr) {
  const int qc = (int)((cols + 7) / 8), lane = threadIdx.x % 32;
  const unsigned long long lo_end = (unsigned long long)src, hi_end = lo_end + (unsigned long long)rows * cols * 2;
  for (long long r = r0; r < r0 + nr; r++) {
    const unsigned long long at = lo_end + (unsigned long long)r * cols * 2;
    const unsigned sh = (unsigned)(at & 15ull);
    const unsigned long long al = at - sh, need = sh ? 32ull : 16ull;
    uint4* to = (uint4*)(dst + r * pad * 2);
    for (int q0 = lane; q0 < qc; q0 += 32 * STAGE_UNROLL) {
      uint4 lo[STAGE_UNROLL], hi[STAGE_UNROLL];
#pragma unroll
      for (int u = 0; u < STAGE_UNROLL; u++) {
        const unsigned long long p = al + 16ull * (q0 + 32 * u);
        lo[u] = hi[u] = make_uint4(0, 0, 0, 0);
        if (q0 + 32 * u < qc && p >= lo_end && p + need <= hi_end) {
          lo[u] = __ldg((const uint4*)p);
          if (sh) hi[u] = __ldg((const uint4*)p + 1);
        }
      }
#pragma unroll
      for (int u = 0; u < STAGE_UNROLL; u++) {
        const int q = q0 + 32 * u;
        if (q >= qc) continue;
        const unsigned long long p = al + 16ull * q;
        if (p >= lo_end && p + need <= hi_end) {
          to[q] = funnel(lo[u], hi[u], sh);
        } else {
          union { uint4 v; unsigned short e[8]; } x;
          const unsigned short* e = (const unsigned short*)(at + 16ull * q);
#pragma unroll
          for (int j = 0; j < 8; j++) x.e[j] = (unsigned long long)(e + j) + 2 <= hi_end ? e[j] : (unsigned short)0;
          to[q] = x.v;
        }
      }
    }
  }
}
// Stage the operands TMA cannot read in place, then wait until every claim
// of the grid is copied. Each warp claims rows on its own: claims of at
// least 4 KB of A's first a_pre rows (of k; all m unless OVERLAP), then of
// B's first b_pre rows (nt: n of k; nn: k of n; all of them unless
// OVERLAP_B), then (when a_pre < m) A's last row and (when b_pre < k) B's,
// which the overlapped copy leaves out (its pieces past A and B need the
// bounds checks).
// Counters: ctl[0] claims handed out, ctl[1] claims done, ctl[2] CTAs
// through (the last one resets all three for the next launch).
AIT_DEV void stage_all(const unsigned char* As, const unsigned char* Bs, unsigned char* ws, long long m, long long n, long long k,
                       long long a_pre, long long b_pre) {
  unsigned* ctl = (unsigned*)(ws + CTL_OFF);
  const long long ar = STAGE_A ? a_pre : 0, bn_ = STAGE_B ? (NT ? n : k) : 0, br = min(bn_, b_pre), bc = NT ? k : n;
  const long long ap = (k + 63) / 64 * 64, bp = (bc + 63) / 64 * 64;
  unsigned char* sa = ws + SA_OFF;
  unsigned char* sb = sa + (STAGE_A ? m * ap * 2 : 0);
  const long long acr = max(1ll, 2048 / max(k, 1ll)), bcr = max(1ll, 2048 / max(bc, 1ll));
  const unsigned ca = (unsigned)((ar + acr - 1) / acr), cb = (unsigned)((br + bcr - 1) / bcr);
  const unsigned a_last = ca + cb + (STAGE_A && a_pre < m ? 1u : 0u), total = a_last + (br < bn_ ? 1u : 0u);
  const int lane = threadIdx.x % 32;
  unsigned mine = 0, c = __shfl_sync(~0u, lane == 0 ? atomicAdd(&ctl[0], 1u) : 0u, 0);
  while (c < total) {
    const unsigned next = lane == 0 ? atomicAdd(&ctl[0], 1u) : 0u;   // lands while this claim is copied
    // Claim c: rows [r0, r0 + nr) of A (its first ar, or its last) or of B
    // (its first br, or its last), through one copy loop.
    const bool b = (c >= ca && c < ca + cb) || c >= a_last;
    const long long r0 = c < ca ? c * acr : c < ca + cb ? (c - ca) * bcr : c < a_last ? m - 1 : bn_ - 1;
    const long long nr = c < ca ? min(acr, ar - r0) : c < ca + cb ? min(bcr, br - r0) : 1;
    stage_rows(b ? Bs : As, b ? bn_ : m, b ? bc : k, b ? sb : sa, b ? bp : ap, r0, nr);
    mine++;
    c = __shfl_sync(~0u, next, 0);
  }
  // The copies are read by TMA (the async proxy), in other CTAs.
  fence_proxy_global();
  __syncwarp();
  if (lane == 0 && mine) { __threadfence(); atomicAdd(&ctl[1], mine); }
  __syncthreads();
  if (threadIdx.x == 0) {
    while (ld_acquire(&ctl[1]) < total) __nanosleep(128);
    if (atomicAdd(&ctl[2], 1u) == gridDim.x - 1) { ctl[0] = 0; ctl[1] = 0; ctl[2] = 0; }
  }
  __syncthreads();
  fence_proxy_global();
}
#endif

#if OVERLAP
// Overlapped staging. A band is bt = cdiv(tiles_m, NBANDS) tile rows of A;
// its counter (ctl[32 + band]) counts the rows copied. ctl[3]: late claims
// handed out, ctl[4]: CTAs done (the last one resets them and the bands).
#define LATE_UNROLL 2
AIT_DEV unsigned* band_ctr(unsigned char* ws) { return (unsigned*)(ws + CTL_OFF) + 32; }
// The rows of A the first wave of units reads, in whole bands (raster m:
// the first G units fill whole groups of GROUP unit rows, then the first
// rows of the next group); the grid stages them before its product.
AIT_DEV long long first_rows(long long m, long long k, int units_m, int units_n, int G, long long band_rows) {
  if (k < 16) return m;     // late_row's pieces would reach past the next row
  const int t1 = min(G, units_m * units_n) - 1, per = GROUP * units_n, g = t1 / per, first = g * GROUP;
  int tm = first + min(t1 - g * per, min(units_m - first, GROUP) - 1);
  if (SHARE == 1) tm = 2 * tm + 1;
  return min(m, ((long long)tm * BM / band_rows + 1) * band_rows);
}
// B's k rows in bands of whole k tiles (cdiv(k tiles, NBANDS) each), and
// how many of them the grid stages up front under OVERLAP_B: the first
// B_PRE8 eighths of the k tiles (the copy warps' head start on the first
// wave's k loops), or all when B's rows are too short for late_row.
AIT_DEV long long kband_rows_of(long long k) { return ((k + 63) / 64 + NBANDS - 1) / NBANDS * 64; }
AIT_DEV long long first_krows(long long n, long long k) {
  return OVERLAP_B && n >= 16 ? min(k, ((k + 63) / 64 * B_PRE8 + 7) / 8 * 64) : k;
}
// Row r of a matrix at src (rows of cols >= 16 elements: A's, or B's under
// OVERLAP_B) into its padded row `to`, by one warp, for a row with a row
// before and after it (every 16-byte piece around it lies in the matrix):
// no bounds checks and 32-bit offsets, to fit the producer's registers.
AIT_DEV void late_row(const unsigned char* src, long long r, long long cols, uint4* to) {
  const unsigned long long at = (unsigned long long)src + (unsigned long long)r * cols * 2;
  const unsigned sh = (unsigned)(at & 15ull);
  const uint4* al = (const uint4*)(at - sh);
  const int qc = (int)((cols + 7) / 8), lane = threadIdx.x % 32;
  for (int q0 = lane; q0 < qc; q0 += 32 * LATE_UNROLL) {
    uint4 lo[LATE_UNROLL], hi[LATE_UNROLL];
#pragma unroll
    for (int u = 0; u < LATE_UNROLL; u++) {
      const int q = min(q0 + 32 * u, qc - 1);
      lo[u] = __ldg(al + q);
      hi[u] = __ldg(al + q + 1);
    }
#pragma unroll
    for (int u = 0; u < LATE_UNROLL; u++)
      if (q0 + 32 * u < qc) to[q0 + 32 * u] = funnel(lo[u], hi[u], sh);
  }
}
// Rows per claim of the overlapped copy for rows `cols` long: a power of
// two, about 8 KB, at most 64 (a claim never straddles a band: bands are
// whole multiples of 64 rows past where the claims start).
AIT_DEV int claim_rows(long long cols) {
  int cr = 1;
  while (cr < 64 && 2ll * cr * cols * 2 <= 8192) cr *= 2;
  return cr;
}
// Rows [r0, r0 + nr) of a matrix of rows `cols` long into its rows padded
// to pad elements at dst, by one warp, then counted into their band (of
// band_rows, at ctr) once the stores are visible to TMA.
AIT_DEV void late_claim(const unsigned char* src, long long cols, unsigned char* dst, long long pad, long long r0, long long nr,
                        long long band_rows, unsigned* ctr) {
  for (long long r = r0; r < r0 + nr; r++) late_row(src, r, cols, (uint4*)(dst + r * pad * 2));
  fence_proxy_global();
  __syncwarp();
  if (threadIdx.x % 32 == 0) { __threadfence(); atomicAdd(&ctr[(unsigned)(r0 / band_rows)], (unsigned)nr); }
}
// By one warp of the producer warpgroup: (OVERLAP_B) B's k rows [b_pre,
// k - 1) in k order, counted into B's bands of kband_rows, then A's rows
// [a_pre, m - 1) (into A's bands), in claims of about 8 KB. Small claims
// keep the bands in flight few (about 400 rows over the grid's copy warps
// at k = 4001, three bands), so they complete in the order the tiles need
// them rather than all at once.
AIT_DEV void stage_late(const unsigned char* As, const unsigned char* Bs, unsigned char* ws, long long m, long long n, long long k,
                        long long a_pre, long long band_rows, long long b_pre, long long kband_rows) {
  unsigned* ctl = (unsigned*)(ws + CTL_OFF);
  unsigned* band = band_ctr(ws);
  const long long ap = (k + 63) / 64 * 64;
  unsigned char* sa = ws + SA_OFF;
  const int cra = claim_rows(k);
  const unsigned ta = (unsigned)((max(0ll, m - 1 - a_pre) + cra - 1) / cra);   // none when the first wave reads all of A
#if OVERLAP_B
  const int crb = claim_rows(n);
  const unsigned tb = (unsigned)((max(0ll, k - 1 - b_pre) + crb - 1) / crb);
#else
  const unsigned tb = 0;
#endif
  const int lane = threadIdx.x % 32;
  unsigned c = __shfl_sync(~0u, lane == 0 ? atomicAdd(&ctl[3], 1u) : 0u, 0);
  while (c < ta + tb) {
    const unsigned next = lane == 0 ? atomicAdd(&ctl[3], 1u) : 0u;
#if OVERLAP_B
    if (c < tb) {
      const long long r0 = b_pre + (long long)c * crb;
      late_claim(Bs, n, sa + m * ap * 2, (n + 63) / 64 * 64, r0, min((long long)crb, k - 1 - r0), kband_rows, band + NBANDS);
    } else
#endif
    {
      const long long r0 = a_pre + (long long)(c - tb) * cra;
      late_claim(As, k, sa, ap, r0, min((long long)cra, m - 1 - r0), band_rows, band);
    }
    c = __shfl_sync(~0u, next, 0);
  }
}
// The TMA thread, before tile row tm's first load: wait until its band is
// copied (bands of the first wave are, and so is A's last row).
AIT_DEV void wait_band(unsigned char* ws, int tm, long long m, long long a_pre, long long band_rows) {
  const long long r = (long long)tm * BM;
  if (r < a_pre || r >= m) return;
  const unsigned b = (unsigned)(r / band_rows);
  const unsigned need = (unsigned)(min(m - 1, (long long)(b + 1) * band_rows) - (long long)b * band_rows);
  const unsigned* ctr = band_ctr(ws) + b;
  while (ld_acquire(ctr) < need) __nanosleep(256);
  fence_proxy_global();
}
// The TMA thread, before k tile kb's loads: wait until B's k rows through
// the tile's are copied. ready: the rows below it are known copied (b_pre
// at first, k - 1 once all are: B's last row is staged up front), so each
// band is waited for once per CTA.
AIT_DEV void wait_kband(unsigned char* ws, int kb, long long k, long long b_pre, long long kband_rows, long long& ready) {
  const long long end = min(k - 1, (long long)kb * 64 + 64);
  while (ready < end) {
    const unsigned b = (unsigned)(ready / kband_rows);
    const long long hi = min(k - 1, (long long)(b + 1) * kband_rows);
    const unsigned need = (unsigned)(hi - max(b_pre, (long long)b * kband_rows));
    const unsigned* ctr = band_ctr(ws) + NBANDS + b;
    while (ld_acquire(ctr) < need) __nanosleep(128);
    fence_proxy_global();
    ready = hi;
  }
}
#endif


]]

-- The kernel's last lines under OVERLAP: the last CTA out zeroes the late
-- counters. A fragment of lib/wgmma_mainloop.lua's kernel format ("%%" is
-- "%").
M.reset = [[
#if OVERLAP
  // Every warp of this CTA is past its claims and waits: the last CTA out
  // leaves the late counters zero for the next launch.
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* ctl = (unsigned*)(ws + CTL_OFF);
    __threadfence();
    if (atomicAdd(&ctl[4], 1u) == gridDim.x - 1) {
      ctl[3] = 0; ctl[4] = 0;
      for (int b = 0; b < NBANDS * (1 + OVERLAP_B); b++) band_ctr(ws)[b] = 0;
    }
  }
#endif
]]

return M
