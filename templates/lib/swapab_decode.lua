-- swapab's decode kernel (bn <= 64; lib/swapab.lua's header says how it
-- works) and its gated form (gemm_swiglu), and the device helpers the
-- mid-size kernels share with it (PEER_FN).
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local hopper = lib("hopper")
local gemv = lib("gemv")
local geom = lib("swapab_geom")
local sizes = geom.sizes
local M = {}

-- Device helpers both kernels use: a float to a peer CTA's shared memory
-- and an arrive on its mbarrier (distributed shared memory), a wait that
-- acquires at cluster scope, a box of B asked of L2.
local PEER_FN = [[
// A float into CTA `to`'s shared memory at this CTA's address a (mapa), and
// an arrive on CTA `to`'s mbarrier that releases this thread's earlier
// stores at cluster scope; the matching wait acquires at cluster scope.
AIT_DEV void st_peer(unsigned a, float v, unsigned to) {
  asm volatile("{ .reg .b32 r; mapa.shared::cluster.u32 r, %0, %1; st.shared::cluster.f32 [r], %2; }"
               :: "r"(a), "r"(to), "f"(v) : "memory");
}
AIT_DEV void arrive_peer(unsigned bar, unsigned to) {
  asm volatile("{ .reg .b32 r; mapa.shared::cluster.u32 r, %0, %1; mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r]; }"
               :: "r"(bar), "r"(to) : "memory");
}
AIT_DEV void mbar_wait_cluster(unsigned bar, unsigned parity) {
  unsigned ok;
  do {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(ok) : "r"(bar), "r"(parity) : "memory");
  } while (!ok);
}
AIT_DEV void l2_prefetch_box(const tmap_t* map, int x, int y) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];"
               :: "l"((unsigned long long)map), "r"(x), "r"(y) : "memory");
}
]]

-- The decode kernel's store of one thread's sums (after the split's
-- adding): a piece of decode_source's text that the gated product replaces.
local DECODE_STORE = [[
              for (int e = 0; e < 2; e++) {
                float v = acc[i][4 * j + 2 * h + e];
#if CS > 1
                const int q = i * (BN / 2) + 4 * j + 2 * h + e;
                for (int c = 1; c < CS; c++) v += r[(c - 1) * BM * BN + q * 128 + threadIdx.x];
#endif
                const long long row = r0 + 8 * j + 2 * t + e, col = (long long)tile * BM + 64 * i + 16 * warp + g + 8 * h;
                if (row < m && col < n) D[row * n + col] = st_out(v);
              }]]

-- The decode kernel's text for the gated product: B's loads and L2
-- prefetches by 16-row groups, and the store of SiLU(gate) * up. Each piece
-- replaces one exact piece of the GEMM's text.
local SWIGLU_PIECES = {
  { "tma_load_w(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * BM, bar);",
    "tma_load4(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * (BM / 16), bar);" },
  { "l2_prefetch_box(&tmB, b * 64, tile * BM);", "l2_prefetch_box4(&tmB, b * 64, tile * (BM / 16));" },
  { DECODE_STORE, [[
              for (int e = 0; e < 2 * (1 - h); e++) {
                // The gated product: row g of the warp's 16 is a gate row,
                // g + 8 its up row (h 1 is stored with h 0).
                float v = acc[i][4 * j + e], u = acc[i][4 * j + 2 + e];
#if CS > 1
                const int q = i * (BN / 2) + 4 * j + e;
                for (int c = 1; c < CS; c++) {
                  v += r[(c - 1) * BM * BN + q * 128 + threadIdx.x];
                  u += r[(c - 1) * BM * BN + (q + 2) * 128 + threadIdx.x];
                }
#endif
                const long long row = r0 + 8 * j + 2 * t + e, col = (long long)tile * (BM / 2) + 32 * i + 8 * warp + g;
                if (row < m && col < n) D[row * n + col] = st_out(swiglu(v, u));
              }]] },
}
local L2_PREFETCH4 = [[
AIT_DEV void l2_prefetch_box4(const tmap_t* map, int x, int g) {
  asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global.tile [%0, {%1, %2, %2, %3}];"
               :: "l"((unsigned long long)map), "r"(x), "r"(0), "r"(g) : "memory");
}
]]

local function swiglu_text(src)
  local head = "\n// Threads 0-127"
  return kernel.replace(src, { { head, "\n" .. gemm.swiglu_device .. hopper.tma_load4 .. L2_PREFETCH4 .. head:sub(2) },
                               table.unpack(SWIGLU_PIECES) }, "swapab")
end

local function decode_source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  local slot = sizes(p)
  return dtype.prelude .. gemv.store_fn(t) .. string.format([[
#define BM %d
#define BN %d
#define STAGES %d
#define CS %d
#define PDL %d
#define L2PRE %d
#define INFLIGHT %d
#define KBOX %d
#define W_BYTES (BM * 128)
#define A_BYTES (BN * 128)
#define SLOT %d
#define MI (BM / 64)
#define OUT_T %s
#define EVICT %d
]], p.bm, p.bn, p.stages, p.csplit, p.pdl, p.l2pre, p.inflight, p.kbox, slot, dtype.ctype(t.Out), p.evict or 0) ..
    hopper.ptx .. hopper.tma_load_w .. lib("cluster").ptx .. gemv.pdl_fn .. hopper.wgmma_fn(p.bn, t.In, 0) .. PEER_FN .. string.format([[

// Threads 0-127: the consumer warpgroup; 128-159: the producer warp.
extern "C" __global__ void __launch_bounds__(160) %s(const __grid_constant__ tmap_t tmB,
    const __grid_constant__ tmap_t tmA, OUT_T* __restrict__ D, long long m, long long n, long long k)
{
  extern __shared__ unsigned char smem_raw[];
  pdl_launch();
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned red = base + STAGES * SLOT;            // float [CS - 1][BM * BN]
  const unsigned full = red + 4 * BN * BM * (CS - 1), empty = full + 8 * STAGES, rbar = empty + 8 * STAGES;
  const int tile = blockIdx.x, rank = CS > 1 ? (int)cta_rank() : 0;
  // k in slots of KBOX boxes of 64 (the last slot's boxes past k are zeros).
  const int kiters = (int)((k + 64 * KBOX - 1) / (64 * KBOX)), per = (kiters + CS - 1) / CS;
  const int kboxes = (int)((k + 63) / 64);
  const int kb0 = min(kiters, rank * per), kb1 = min(kiters, kb0 + per);
  const bool producer = threadIdx.x >= 128;
  const unsigned slot_bytes = KBOX * (W_BYTES + 128u * (unsigned)min((long long)BN, (m + 7) / 8 * 8));
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) { mbar_init(full + 8 * s, 1); mbar_init(empty + 8 * s, 4); }
    if (CS > 1) mbar_init(rbar, 128 * (CS - 1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (threadIdx.x == 128) {
    asm volatile("prefetch.tensormap [%%0];" :: "l"((unsigned long long)&tmB) : "memory");
    asm volatile("prefetch.tensormap [%%0];" :: "l"((unsigned long long)&tmA) : "memory");
#if L2PRE
    for (int b = kb0 * KBOX; b < min(kb1 * KBOX, min(kboxes, kb0 * KBOX + L2PRE)); b++) l2_prefetch_box(&tmB, b * 64, tile * BM);
#endif
  }
  __syncthreads();
  // rbar is initialized: the cluster may learn it (waited for before the
  // first remote store, long after).
  if (CS > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
  pdl_wait();
  int s = 0;
  unsigned ph = 0;
  for (long long r0 = 0, pass = 0; r0 < m; r0 += BN, pass++) {
    if (producer) {
      if (threadIdx.x == 128) {
        for (int kb = kb0; kb < kb1; kb++) {
          mbar_wait(empty + 8 * s, ph ^ 1);
          const unsigned bar = full + 8 * s, sB = base + s * SLOT, sA = sB + KBOX * W_BYTES;
          // Boxes past k (the last slot's) are zero-filled by TMA: every
          // slot is whole, so the consumer's wgmma never sit under a branch
          // (ptxas serializes wgmma in a divergent path).
          mbar_expect(bar, slot_bytes);
          for (int b = 0; b < KBOX; b++) {
            tma_load_w(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * BM, bar);
            tma_load(sA + b * A_BYTES, &tmA, (kb * KBOX + b) * 64, (int)r0, bar);
          }
          if (++s == STAGES) { s = 0; ph ^= 1; }
        }
      }
      if (CS > 1 && pass == 0) cluster_wait();
    } else {
      const int lane = threadIdx.x %% 32, warp = threadIdx.x / 32;
      float acc[MI][BN / 2];
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < BN / 2; j++) acc[i][j] = 0.0f;
      int prev = -1;
      for (int kb = kb0; kb < kb1; kb++) {
        mbar_wait(full + 8 * s, ph);
        const unsigned sB = base + s * SLOT, sA = sB + KBOX * W_BYTES;
        wg_fence();
#pragma unroll
        for (int b = 0; b < KBOX; b++)
#pragma unroll
          for (int kk = 0; kk < 4; kk++)
#pragma unroll
            for (int i = 0; i < MI; i++)
              wgmma_tile(acc[i], desc(sB + b * W_BYTES + i * 64 * 128 + kk * 32, 1, 1024), desc(sA + b * A_BYTES + kk * 32, 1, 1024));
        wg_commit();
        // INFLIGHT 1: this group keeps running; the previous one's slot is
        // released once it retires. 0: this slot, as soon as its group is done.
        wg_wait<INFLIGHT>();
        if (INFLIGHT == 0) {
          if (lane == 0) mbar_arrive(empty + 8 * s);
        } else {
          if (prev >= 0 && lane == 0) mbar_arrive(empty + 8 * prev);
          prev = s;
        }
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
      wg_wait<0>();
      if (prev >= 0 && lane == 0) mbar_arrive(empty + 8 * prev);
      if (CS > 1 && pass == 0) cluster_wait();
      // Accumulator (i, 4j + 2h + e): row 64i + 16 warp + g + 8h of the
      // tile (a column of D), column 8j + 2t + e (a row of A, of D). In red,
      // a thread's q-th value is word q * 128 + tid of its rank's slice.
      const int g = lane / 4, t = lane %% 4;
      // (CS 1 leaves the remote half out: NVRTC 13.0 crashes on it, dead,
      // at BM >= 128.)
#if CS > 1
      if (rank > 0) {
        const unsigned mine = red + 4u * (unsigned)((rank - 1) * BM * BN + threadIdx.x);
#pragma unroll
        for (int q = 0; q < MI * BN / 2; q++) st_peer(mine + 512u * q, acc[q / (BN / 2)][q %% (BN / 2)], 0u);
        arrive_peer(rbar, 0u);
      } else
#endif
      {
#if CS > 1
        mbar_wait_cluster(rbar, (unsigned)(pass & 1));
        const float* r = (const float*)(smem_raw + (red - smem_u32(smem_raw)));
#endif
#pragma unroll
        for (int i = 0; i < MI; i++)
#pragma unroll
          for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
]] .. DECODE_STORE .. "\n" .. [[      }
    }
    // Another pass rewrites red: CTA 0 must have read it first.
    if (CS > 1 && r0 + BN < m) { cluster_arrive(); cluster_wait(); }
  }
}
]], name)
end

local function source(op, p, dt, dev, name)
  local src = decode_source(op, p, dt, dev, name)
  if op.swiglu then return swiglu_text(src) end
  return src
end

M.PEER_FN, M.source = PEER_FN, source

return M
