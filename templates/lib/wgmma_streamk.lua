-- The wgmma family's work schedule (lib/wgmma.lua): data-parallel units
-- and, with `streamk`, the split pieces of the last ones.
--
-- Stream-K (persistent grids): when the units do not divide evenly among the
-- G resident workers, the last sk = `units mod G` units are not given whole
-- to a few workers (a mostly empty last wave): their k loops are split into
-- s = G / sk pieces (when s >= 2) over the idle workers, worker p * sk + u
-- taking piece p of unit u. Pieces are aligned in k across units, so the
-- workers that run together read the same k-slices of shared A and B panels,
-- as a data-parallel wave does. (A first version gave each worker an equal
-- contiguous range of the units' k-iterations, true stream-K: measured on
-- the H100 it lost up to 45% against data-parallel when every unit was
-- split, since workers at unrelated k positions share no panel slices in
-- L2.) Each piece's fp32 accumulators go to the workspace (one slot per
-- worker) with a ticket; the last piece of a unit to arrive adds the pieces
-- in k order (so the sum never depends on who came last) and stores D, then
-- resets the ticket for the next launch. No spinning, no float atomics:
-- deterministic.
--
-- `streamk` 2, the even split (built, not in lib/wgmma.lua's space:
-- measured slower there): the last sk units' k loops, as one line of sk *
-- kiters k-tiles in unit order, are cut into G equal ranges, one a worker,
-- so every resident worker streams the same share. sk < G, so a range is
-- shorter than a unit's loop and holds at most two pieces (the end of one
-- unit, the start of the next): two slots a worker. Its pieces are not
-- aligned in k across units. The fix-up is the same: the last piece in
-- adds its unit's pieces in k order (their workers in order, sk_piece).
-- A narrowed space (bench/narrow.py) can name it.

local M = {}

-- sched_t, sched_init, item_at and each worker's accumulator slot. Part of
-- the source's host-testable region (tests/host/staging.cpp).
M.device = [[
// This CTA's work, as items: unit u, k-tiles [k0, k1). Worker w (of G, a
// cluster counting once) takes the data-parallel units w, w + G, ... below
// dp, then (STREAMK 1, w < s * sk) piece w / sk of the k loop of unit
// dp + w mod sk, one of s equal pieces, or (STREAMK 2) its G-th of the
// last sk units' k-tiles in unit order: at most two pieces.
struct sched_t {
  int G, w, dp, ndp, kiters, sk, s;
  long long T;    // STREAMK 2: the split units' k-tiles, sk * kiters
};
AIT_DEV void sched_init(sched_t& S, int nunits, int kiters) {
  S.G = gridDim.x / CLUSTER; S.w = blockIdx.x / CLUSTER; S.kiters = kiters;
  S.sk = STREAMK ? nunits % S.G : 0;
#if STREAMK == 2
  S.s = S.sk && kiters >= 2 ? 2 : 0;    // the pieces a worker has at most
#else
  S.s = S.sk ? min(S.G / S.sk, kiters) : 0;
#endif
  if (S.s < 2) S.sk = S.s = 0;    // nothing to split: the tail stays data-parallel
  S.T = (long long)S.sk * kiters;
  S.dp = nunits - S.sk;
  S.ndp = S.w < S.dp ? (S.dp - S.w + S.G - 1) / S.G : 0;
}
// STREAMK 2: where worker w's range of the split k-tiles starts (w = G:
// their end), and the worker whose range holds k-tile i.
AIT_DEV long long sk_start(const sched_t& S, int w) { return (long long)w * S.T / S.G; }
AIT_DEV int sk_owner(const sched_t& S, long long i) { return (int)(((i + 1) * S.G - 1) / S.T); }
AIT_DEV bool item_at(const sched_t& S, int it, int& u, int& k0, int& k1) {
  if (it < S.ndp) { u = S.w + it * S.G; k0 = 0; k1 = S.kiters; return true; }
#if STREAMK == 2
  const long long a = sk_start(S, S.w), b = sk_start(S, S.w + 1), uu = a / S.kiters + (it - S.ndp);
  if (S.sk == 0 || it - S.ndp > 1 || a >= b) return false;
  const long long lo = max(a, uu * S.kiters), hi = min(b, (uu + 1) * S.kiters);
  if (lo >= hi) return false;
  u = S.dp + (int)uu;
  k0 = (int)(lo - uu * S.kiters);
  k1 = (int)(hi - uu * S.kiters);
  return true;
#else
  if (!STREAMK || it > S.ndp || S.w >= S.s * S.sk) return false;
  const int p = S.w / S.sk;
  u = S.dp + S.w % S.sk;
  k0 = (int)((long long)p * S.kiters / S.s);
  k1 = (int)((long long)(p + 1) * S.kiters / S.s);
  return true;
#endif
}
// The slot of this worker's item it (a stream-K piece): the worker's own
// (STREAMK 1: one piece a worker), or one of its two (STREAMK 2).
AIT_DEV int sk_mine(const sched_t& S, int it) { return STREAMK == 2 ? 2 * S.w + (it - S.ndp) : S.w; }
// Split unit u0's pieces in k order: the slot of piece pc, or (pc < 0)
// how many there are (what its ticket counts to).
AIT_DEV int sk_piece(const sched_t& S, int u0, int pc) {
#if STREAMK == 2
  const long long K = S.kiters;
  int n = 0;
  for (long long i = u0 * K; i < (u0 + 1) * K; n++) {
    const int w = sk_owner(S, i);
    if (n == pc) return 2 * w + (sk_start(S, w) / K == u0 ? 0 : 1);
    i = sk_start(S, w + 1);
  }
  return n;
#else
  return pc < 0 ? S.s : pc * S.sk + u0;
#endif
}
// Accumulator slot `slot` (sk_mine's numbering).
AIT_DEV float* sk_slot(unsigned char* ws, int slot, int rank, int part) {
  return (float*)(ws + SLOT_OFF) + (((long long)slot * CLUSTER + rank) * NPARTS + part) * (long long)(WM * BN);
}
]]

-- In a consumer, after a unit's k loop: a stream-K piece's accumulators
-- meet the unit's other pieces in the workspace, and the last one in adds
-- them. A fragment of lib/wgmma_mainloop.lua's kernel format ("%%" is "%").
M.fixup = [[
#if STREAMK
      if (u >= S.dp) {
        // Part of a stream-K unit: its pieces meet in the workspace.
        const int u0 = u - S.dp, part = PINGPONG ? 0 : c, tid = threadIdx.x %% 128;
        {
          float4* mine4 = (float4*)sk_slot(ws, sk_mine(S, it), rank, part);
#pragma unroll
          for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < BN / 8; j++)
              __stcg(mine4 + (i * (BN / 8) + j) * 128 + tid,
                     make_float4(acc[i][4 * j], acc[i][4 * j + 1], acc[i][4 * j + 2], acc[i][4 * j + 3]));
          __threadfence();
          wg_sync(1 + c);
          unsigned* ticket = (unsigned*)ws + (u0 * CLUSTER + rank) * NPARTS + part;
          if (tid == 0) sk_last[c] = atomicAdd(ticket, 1u) == (unsigned)(sk_piece(S, u0, -1) - 1);
          wg_sync(1 + c);
          if (!sk_last[c]) continue;
          __threadfence();
          // The last piece in: add all of them in k order.
#pragma unroll
          for (int i = 0; i < MI; i++)
#pragma unroll
            for (int j = 0; j < BN / 2; j++) acc[i][j] = 0.0f;
          for (int pc = 0, np = sk_piece(S, u0, -1); pc < np; pc++) {
            const float4* q = (const float4*)sk_slot(ws, sk_piece(S, u0, pc), rank, part);
#pragma unroll
            for (int i = 0; i < MI; i++)
#pragma unroll
              for (int j = 0; j < BN / 8; j++) {
                const float4 v = __ldcg(q + (i * (BN / 8) + j) * 128 + tid);
                acc[i][4 * j] += v.x; acc[i][4 * j + 1] += v.y; acc[i][4 * j + 2] += v.z; acc[i][4 * j + 3] += v.w;
              }
          }
          if (tid == 0) *ticket = 0u;   // ready for the next launch
        }
      }
#endif
]]

return M
