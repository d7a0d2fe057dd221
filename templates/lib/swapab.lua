-- Swap-AB GEMM (nt, sm_90a): D = A·Bᵀ for small and mid-size m, with the
-- weight B in wgmma's M dimension and the m rows of A in its N dimension
-- (wgmma m64nBNk16, BN = 8..256), so a decode step's 1..64 rows fill the
-- narrow side of the tensor-core tile instead of 64-row tiles that are
-- mostly padding (lib/wgmma.lua), and up to 256 rows are served by one
-- stream of the weight. Three kernels: the decode kernel (bn <= 64, below),
-- the mid-size kernel (bn > 64, "The mid-size kernel" further down) and
-- the second mid-size kernel (bn > 64 and mc >= 1, "The second mid-size
-- kernel" further down; searched, not the default: see mid_default).
--
-- A CTA owns BM rows of B (BM columns of D) and, with csplit > 1, one of
-- csplit slices of k. One producer warp's elected lane streams BM x 64
-- boxes of B and the matching boxes of A (BN x 64, or fewer rows: a_box)
-- through TMA (128-byte swizzle; boxes past n or k are zero-filled), `kbox` of each per slot,
-- into a ring of `stages` slots, each with a `full` and an `empty`
-- mbarrier; one consumer warpgroup issues kbox x BM/64 x 4 wgmma per slot
-- and releases a slot once its group has retired, either at once (inflight
-- 0) or after the next slot's group is issued (inflight 1: one group in
-- flight). What TMA streams fastest is many bytes in flight per SM (about
-- 128 KB), not long runs of each row: boxes of 1 KB x 8 rows stream no
-- faster than 128 B x 64 rows (bench/tma_rows.sh, bench/archive/RESULTS-2026.md).
--
-- Split-K over a cluster (csplit, 1 x csplit CTAs along gridDim.y): CTA 0
-- of the cluster owns the tile's output. Every other CTA stores its fp32
-- sums into CTA 0's shared memory (red, one slice per rank, through
-- distributed shared memory) and arrives on CTA 0's `rbar` mbarrier with
-- release semantics at cluster scope, then exits; CTA 0 waits on rbar, adds
-- its own sums and the slices in rank order (deterministic) and stores D.
-- No workspace, so it goes with pdl. The only cluster-wide barrier is split
-- around the mainloop (arrive after the mbarriers are initialized, wait
-- before the first remote store), so nobody waits on it: a pair of full
-- cluster barriers at the end cost about 2 us per launch at 16 x 4096^2
-- (bench/archive/RESULTS-2026.md, "`swapab`: the weight in wgmma's M dimension").
--
-- pdl 1: programmatic dependent launch, as lib/gemv.lua's (nothing read or
-- written before griddepcontrol.wait). l2pre > 0 (with pdl): before the
-- wait, the producer asks L2 for its first l2pre boxes of B
-- (cp.async.bulk.prefetch.tensor), so their DRAM round trip overlaps the
-- previous kernel's tail; L2 is where that kernel's writes land, so no
-- later read can be stale.
--
-- m > BN takes passes of BN rows of A, each streaming B again: the kernel
-- runs any m of its bucket, and constraints keep the search at one pass.
-- TMA needs 16-byte row strides: k must be a multiple of 8 (supports), and
-- A and B 16-byte aligned (the launch plan checks at bind).
--
-- The mid-size kernel (bn 96..256, m up to 256): the same ring, producer
-- warp and params, with one consumer warpgroup per 64 rows of B (BM/64 of
-- them, each holding 64 x BN fp32 sums: BN/2 registers a thread, at most
-- 128, so bm 128 with bn 256 takes two warpgroups and bm 256 stops at bn
-- 128) and a split-K over the cluster that spreads the adding: chunk c of
-- every thread's sums (acc[4c .. 4c+3], rows 8c .. 8c+7 of A) belongs to
-- rank c / CPR. After its mainloop every CTA arrives on one cluster barrier
-- and waits for it: then no ring of the cluster is read or written any
-- more, and each rank's ring becomes `red`, where every other rank stores
-- (16-byte remote stores) the chunks that rank owns and arrives on the
-- owner's rbar. An owner adds the CS parts of its chunks in rank order
-- (deterministic) and stores them. The tile's whole sums never pass
-- through one SM and need no shared memory besides the ring (a 128 x 256
-- tile's sums are 128 KB). The barrier costs waiting for the slowest CTA
-- of the cluster, which the owner of a tile waits for anyway. m > BN: more
-- CTAs along gridDim.z (at most MAX_Z), the rows split evenly over them
-- (m / tiles rounded up to 8 each: mid_box), no passes.
--
-- The gated product (op.swiglu, gemm_swiglu: B = [G; U], 2n x k; see
-- lib/gemm.lua) runs the decode kernel over 2n rows of B loaded as 4-D
-- boxes (lib/hopper.lua: groups of 8 gate rows, each followed by the same
-- 8 up rows), so warp w's rows g and g + 8 of a 64-row slab are a gate row
-- and its up row: the thread that holds one sum holds its pair, and the
-- store (after the split-K adding) writes SiLU(gate) * up, BM/2 columns of
-- D a CTA. Only the decode kernel (bn <= 64, m <= 64) takes it.
local gemm = lib("gemm")
local dtype = lib("dtype")
local kernel = lib("kernel")
local hopper = lib("hopper")
local gemv = lib("gemv")
local M = {}

M.MAX_M = 256
local BK = 64   -- k per box: 128 bytes of bf16/f16, the swizzle span

M.params = {
  { "bm", { 64, 128, 256 } },     -- rows of B (columns of D) per CTA
  { "bn", { 8, 16, 24, 32, 40, 48, 64, 96, 128, 160, 192, 224, 256 } },  -- rows of A per pass (wgmma N); > 64: the mid-size kernel
  { "stages", { 2, 4, 6, 8, 12, 16 } },  -- slots in the TMA ring
  { "csplit", { 1, 2, 4, 8 } },   -- split-K over a cluster, added through distributed shared memory
  { "pdl", { 0, 1 } },            -- programmatic dependent launch
  { "l2pre", { 0, 1, 2, 4, 8 } },  -- pdl: boxes of B prefetched into L2 before the wait (16 and 32 measured slower)
  { "inflight", { 0, 1 } },       -- wgmma groups left running when a slot is released
  { "kbox", { 1, 2, 4 } },        -- 64-k boxes of B (and of A) per slot: one mbarrier round per kbox boxes
  { "mc", { 0, 1, 2, 4 } },       -- mid-size: 0 the first kernel; 1, 2, 4 the second, A multicast to mc column tiles
  { "nvar", { 1, 2, 3, 5 } },     -- second mid-size kernel: wgmma widths (bn down to bn/2) chosen among at run time
}

-- The decode kernel's red: the fp32 sums of a bm x bn tile from each of the
-- other csplit - 1 ranks.
local function red_bytes(bm, bn, csplit) return 4 * bn * bm * (csplit - 1) end

-- Shared memory: the ring (1024-aligned slots), red (the other ranks'
-- sums), the mbarriers, and the slack to align the base to 1024 bytes.
local function sizes(p)
  local slot = p.kbox * (p.bm * BK * 2 + p.bn * BK * 2)
  return slot, p.stages * slot + red_bytes(p.bm, p.bn, p.csplit) + 16 * p.stages + 16 + 1024
end

-- The mid-size kernel (bn > 64): its warpgroups, its threads, its chunks of
-- 4 sums a thread and the most a rank adds, the bytes of red (in the ring)
-- and of shared memory (the ring, the mbarriers, the alignment slack).
local function mid(p) return p.bn > 64 end
local function mid_sizes(p)
  local z = { slot = p.kbox * (p.bm * BK * 2 + p.bn * BK * 2), wgs = p.bm // 64 }
  z.ring = p.stages * z.slot
  z.smem = z.ring + 16 * p.stages + 16 + 1024
  z.threads = 128 * z.wgs + 32
  z.cpr = (p.bn // 8 + p.csplit - 1) // p.csplit
  z.red = (p.csplit - 1) * z.cpr * 128 * z.wgs * 16
  return z
end

-- Registers a thread of the mid-size kernel may have (one CTA an SM; a
-- warp's registers come in 256s) and about what it needs: its BN/2 sums
-- and some 40 more (ptxas 13.0: tests/cli/swapab_mid.sh).
local function mid_constraints(p, shape, dt, dev)
  local z = mid_sizes(p)
  local cap = math.min(255, 65536 // z.threads // 8 * 8)
  if p.bn // 2 + 40 > cap then
    return false, string.format("about %d registers a thread, %d threads have %d", p.bn // 2 + 40, z.threads, cap)
  end
  if z.red > z.ring then return false, string.format("the split's %d bytes of sums do not fit the ring", z.red) end
  local smax = dev.smem_optin or 232448
  if z.smem > smax then return false, string.format("%d bytes of shared memory (at most %d)", z.smem, smax) end
  return true
end

-- The second mid-size kernel (mc >= 1: its header above MID2_BODY) and
-- its wgmma widths, widest first: BN down to BN / 2 in nvar - 1 equal
-- steps (bn 256: nvar 3 is 256, 192, 128; nvar 5 is 256, 224, ..., 128), so
-- a BN tuned at a bucket's upper edge has a width for its lower edge, m =
-- BN / 2 (a batch of 128 in [128, 256)), and none more than a step too
-- wide in between. A config without mc or nvar (one kept from before they
-- were params) is the first kernel, one width.
local function mid2(p) return mid(p) and (p.mc or 0) >= 1 end
local function widths(p)
  local nv = p.nvar or 1
  if nv == 1 then return { p.bn } end
  local out, step = {}, p.bn // (2 * (nv - 1))
  for i = 0, nv - 1 do out[#out + 1] = p.bn - i * step end
  return out
end

-- The second kernel's own rules (nil when p keeps them): mc and nvar only
-- there; a cluster of at most 8 CTAs (mc column tiles x csplit slices of
-- k, the portable size); widths that wgmma has (multiples of 8); no
-- multicast group wider than the column tiles.
local function mid2_constraints(p, shape)
  local mc, nv = p.mc or 0, p.nvar or 1
  if not mid(p) and (mc ~= 0 or nv ~= 1) then return false, "mc and nvar are the mid-size kernel's (bn > 64)" end
  if mc == 0 and nv ~= 1 then return false, "nvar is the second mid-size kernel's (mc >= 1)" end
  if mc == 0 then return nil end
  if mc * p.csplit > 8 then return false, string.format("a cluster of %d CTAs (at most 8)", mc * p.csplit) end
  if nv > 1 and p.bn % (16 * (nv - 1)) ~= 0 then
    return false, string.format("bn %d in %d widths: not multiples of 8", p.bn, nv)
  end
  if mc > 1 and (shape.n + p.bm - 1) // p.bm < mc then return false, "fewer column tiles than the multicast group" end
  return nil
end

-- The first mid-size kernel serves m > bn with tiles of rows along z (at
-- most MAX_Z), each CTA streaming its weight tile again (from L2 when the
-- tiles of one column run together); the decode kernel would make passes,
-- each streaming the weight again, and the second mid-size kernel keeps m
-- within one pass.
local MAX_Z = 2

local function constraints(p, shape, dt, dev)
  local ok, why = gemv.pdl_constraints(p, dev)
  if ok == false then return false, why end
  ok, why = mid2_constraints(p, shape)
  if ok == false then return false, why end
  if shape.m > p.bn and not (mid(p) and not mid2(p)) then return false, "m is larger than the rows of one pass" end
  if shape.m > MAX_Z * p.bn then return false, string.format("more than %d tiles of rows along z", MAX_Z) end
  if p.bn >= 2 * shape.m and p.bn > 8 then return false, "twice the rows needed compiled in" end
  local kiters = (shape.k + BK * p.kbox - 1) // (BK * p.kbox)
  if p.csplit > kiters then return false, "a split of k shorter than one slot" end
  local tiles = (shape.n + p.bm - 1) // p.bm
  if p.csplit > 1 and tiles >= 2 * (dev.sms or 132) then
    return false, "enough column tiles to fill the GPU without split-K"
  end
  -- Fewer slots' worth of k per CTA than slots: the extra slots are never used.
  local per = (kiters + p.csplit - 1) // p.csplit
  if p.stages > 2 and p.stages // 2 >= per then return false, string.format("%d slots for %d slots' worth of k", p.stages, per) end
  if p.l2pre > per * p.kbox then return false, "more boxes prefetched than the CTA reads" end
  if mid(p) then return mid_constraints(p, shape, dt, dev) end
  local _, smem = sizes(p)
  local cap = dev.smem_optin or 232448
  if smem > cap then return false, string.format("%d bytes of shared memory (at most %d)", smem, cap) end
  return true
end

local function supports(shape, dt, dev)
  if (dev.cc or 0) ~= 90 then return false, "wgmma needs sm_90a" end
  if shape.m > M.MAX_M then return false, string.format("m > %d: wgmma's N ends at 256", M.MAX_M) end
  if shape.k % 8 ~= 0 then return false, "rows of k not a multiple of 8 elements: TMA needs 16-byte strides" end
  return true
end

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

-- The decode kernel's text for the gated product: B's loads and L2
-- prefetches by 16-row groups, and the store of SiLU(gate) * up. Each piece
-- replaces one exact piece of the GEMM's text.
local SWIGLU_PIECES = {
  { "tma_load(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * BM, bar);",
    "tma_load4(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * (BM / 16), bar);" },
  { "l2_prefetch_box(&tmB, b * 64, tile * BM);", "l2_prefetch_box4(&tmB, b * 64, tile * (BM / 16));" },
  { [[
              for (int e = 0; e < 2; e++) {
                float v = acc[i][4 * j + 2 * h + e];
#if CS > 1
                const int q = i * (BN / 2) + 4 * j + 2 * h + e;
                for (int c = 1; c < CS; c++) v += r[(c - 1) * BM * BN + q * 128 + threadIdx.x];
#endif
                const long long row = r0 + 8 * j + 2 * t + e, col = (long long)tile * BM + 64 * i + 16 * warp + g + 8 * h;
                if (row < m && col < n) D[row * n + col] = st_out(v);
              }]], [[
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
]], p.bm, p.bn, p.stages, p.csplit, p.pdl, p.l2pre, p.inflight, p.kbox, slot, dtype.ctype(t.Out)) ..
    hopper.ptx .. lib("cluster").ptx .. gemv.pdl_fn .. hopper.wgmma_fn(p.bn, t.In, 0) .. PEER_FN .. string.format([[

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
            tma_load(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * BM, bar);
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
              for (int e = 0; e < 2; e++) {
                float v = acc[i][4 * j + 2 * h + e];
#if CS > 1
                const int q = i * (BN / 2) + 4 * j + 2 * h + e;
                for (int c = 1; c < CS; c++) v += r[(c - 1) * BM * BN + q * 128 + threadIdx.x];
#endif
                const long long row = r0 + 8 * j + 2 * t + e, col = (long long)tile * BM + 64 * i + 16 * warp + g + 8 * h;
                if (row < m && col < n) D[row * n + col] = st_out(v);
              }
      }
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
  const int tile = blockIdx.x, rank = CS > 1 ? (int)cta_rank() : 0;
  // The rows of A split evenly over gridDim.z = cdiv(m, BN) tiles, each
  // zr rows (m / gridDim.z rounded up to 8, at most BN): A's box (mid_box),
  // the bytes each slot expects, and the rows this tile stores.
  const long long zr = min((long long)BN, ((m + gridDim.z - 1) / gridDim.z + 7) / 8 * 8);
  const long long r0 = (long long)blockIdx.z * zr, mend = min(m, r0 + zr);
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
          tma_load(sB + b * W_BYTES, &tmB, (kb * KBOX + b) * 64, tile * BM, bar);
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
  // Warpgroup wg: rows 64 wg .. 64 wg + 63 of the tile.
]] .. mainloop("BN", "mbar_arrive", "") .. [[
  const int g = lane / 4, t = lane % 4;
  const long long col = (long long)tile * BM + 64 * wg + 16 * warp + g;
#if CS > 1
  // Past this barrier no ring of the cluster is read (every wgmma retired)
  // or written (every load landed: its full mbarrier was waited on).
  cluster_arrive();
  cluster_wait();
  // Rank `to` adds chunks to * CPR ..: this CTA's parts of them go to its
  // red, at (this rank among the others, the chunk among its owner's, thread).
#pragma unroll
  for (int c = 0; c < NC; c++) {
    const int to = c / CPR;
    if (to != rank) {
      const unsigned at = (unsigned)(((rank < to ? rank : rank - 1) * CPR + c - to * CPR) * 128 * WGS) + threadIdx.x;
      st_peer4(base + 16u * at, acc[4 * c], acc[4 * c + 1], acc[4 * c + 2], acc[4 * c + 3], (unsigned)to);
    }
  }
  for (int to = 0; to < CS; to++)
    if (to != rank) arrive_peer(rbar, (unsigned)to);
  // Every rank waits for its parts, so none exits while others write to it.
  mbar_wait_cluster(rbar, 0u);
  const float4* red = (const float4*)(smem_raw + (base - smem_u32(smem_raw)));
]] .. sum_store("NC", "CPR", "rank", "rank", "mend") .. [[
}
]]

-- The mid-size kernel's source (bn > 64).
local function mid_source(op, p, dt, dev, name)
  local t = gemm.types(dt)
  local z = mid_sizes(p)
  return dtype.prelude .. gemv.store_fn(t) .. string.format([[
#define BM %d
#define BN %d
#define STAGES %d
#define CS %d
#define PDL %d
#define L2PRE %d
#define INFLIGHT %d
#define KBOX %d
#define WGS %d
#define W_BYTES (BM * 128)
#define A_BYTES (BN * 128)
#define SLOT %d
#define NC (BN / 8)
#define CPR %d
#define OUT_T %s
]], p.bm, p.bn, p.stages, p.csplit, p.pdl, p.l2pre, p.inflight, p.kbox, z.wgs, z.slot, z.cpr, dtype.ctype(t.Out)) ..
    hopper.ptx .. lib("cluster").ptx .. gemv.pdl_fn .. hopper.wgmma_fn(p.bn, t.In, 0) .. PEER_FN .. PEER4_FN ..
    string.format([[

// Threads 0 .. 128 WGS - 1: the consumer warpgroups; the last warp: the producer.
extern "C" __global__ void __launch_bounds__(%d, 1) %s(const __grid_constant__ tmap_t tmB,
    const __grid_constant__ tmap_t tmA, OUT_T* __restrict__ D, long long m, long long n, long long k)
]], z.threads, name) .. MID_BODY
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
-- The wgmma width follows m at run time (nvar > 1): the kernel holds the
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
AIT_DEV int width_for(int rows) { return WIDTH_FOR; }
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
          if (wok) tma_load(sB + b * W_BYTES, &tmB, x, tile * BM, bar);
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
  local ws = widths(p)
  local fns = {}
  for _, w in ipairs(ws) do fns[#fns + 1] = hopper.wgmma_fn(w, t.In, 0) end
  -- width_for(rows): the narrowest width that holds the pass's rows; the
  -- consumers' switch on it.
  local chain, cases = {}, {}
  for i, w in ipairs(ws) do
    chain[#chain + 1] = i < #ws and string.format("rows > %d ? %d : ", ws[i + 1], w) or tostring(w)
    cases[#cases + 1] = string.format(
      "  case %d: consume<%d>(base, red, full, empty, rbar, kb0, kb1, split, cx, tile, r0, D, m, n); break;\n", w, w)
  end
  return dtype.prelude .. gemv.store_fn(t) .. string.format([[
#define BM %d
#define BN %d
#define STAGES %d
#define CS %d
#define MC %d
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
]], p.bm, p.bn, p.stages, p.csplit, p.mc, p.pdl, p.l2pre, p.inflight, p.kbox, z.wgs, z.slot, dtype.ctype(t.Out),
    table.concat(chain)) ..
    hopper.ptx .. lib("cluster").ptx .. gemv.pdl_fn .. table.concat(fns) .. PEER_FN .. PEER4_FN .. MID2_HOST .. MID2_FN ..
    string.format([[

// Threads 0 .. 128 WGS - 1: the consumer warpgroups; the last warp: the producer.
extern "C" __global__ void __launch_bounds__(%d, 1) %s(const __grid_constant__ tmap_t tmB,
    const __grid_constant__ tmap_t tmA, const __grid_constant__ tmap_t tmA8, OUT_T* __restrict__ D,
    long long m, long long n, long long k)
]], z.threads, name) .. MID2_BODY .. "  switch (width_for(rows)) {\n" .. table.concat(cases) .. "  }\n}\n"
end

-- The default above m = 64: the first mid-size kernel (mc 0), one tile of
-- rows of the narrowest width above 64 that holds m (the widest where none
-- does) or two tiles along z of the narrowest that holds half of m (mid_z),
-- bm and csplit by fill (mid_default below). bm 64 first: on an H100 at 4096^2 (ninth
-- session, bench/results/2026-11-28/s9-mid) bm 64 with csplit 2 ran 16.0 us
-- at m = 128 and 17.4 at m = 192 (1.03x and 1.02x cuBLASLt), bm 128 with
-- csplit 2 18.3 and 23.2, csplit 4 28.0 and 33.5. The second kernel (mc >= 1) stays in the
-- space, not the default: on an H100 (bench/midm.sh, 2026-11-27 fourth
-- session) its multicast groups (mc 2, 4), which this default picked, ran
-- 1.5-7x slower than mc 1 at the same tuned size (a GPU-wide fence before each
-- cluster-scope slot release, gone since the sixth session: mc 2 and 4 now
-- run 0.97-0.99x their mc 1 twins, bench/mc_probe.sh), and its best against the
-- first kernel's best went either way (0.63-2.35x: 1024 x 4096, m = 255:
-- 20.9 us against 13.1; 4096^2, m = 121: 25.1 against 59.0).
-- The (bm, csplit) pairs over `rows` rows of B (n; 2n for the gated
-- product), in the order bm 64, 128, 256 and fewer splits first, each with
-- its CTAs and the bytes of sums a tile's split adds (bn rows of A a pass).
local function split_pairs(rows, bn)
  local pairs = {}
  for _, bm in ipairs({ 64, 128, 256 }) do
    for _, cs in ipairs({ 1, 2, 4, 8 }) do
      pairs[#pairs + 1] = { bm = bm, cs = cs, ctas = (rows + bm - 1) // bm * cs, red = red_bytes(bm, bn, cs),
                            order = #pairs }
    end
  end
  return pairs
end

-- The first valid config of bn rows of A a pass among pairs (in their order),
-- with the deepest ring that fits, launched with pdl: on an H200 (eleventh
-- session, bench/results/2026-11-28/s11-box-call3) the mid-size kernel's
-- best with pdl beat its best without at 8 of 12 sizes (4 weights, m = 65,
-- 129, 190), by 0.5-1.2 us at n = 1024 and 4096; at 14336 x 4096 it lost
-- by up to 1.2 us. The decode winners of the tenth session's range sweep
-- (s10-ranges-call2) had pdl in every bucket at m <= 64.
local function first_of(t, shape, dt, dev, bn, pairs)
  for _, pr in ipairs(pairs) do
    local q = kernel.first_valid(t, shape, dt, dev,
      { bm = pr.bm, bn = pr.bn or bn, csplit = pr.cs, mc = 0, nvar = 1, pdl = 1, l2pre = 0, inflight = 1, kbox = 1 },
      { { "stages", { 8, 6, 4, 2 } } })
    if q then return q end
  end
  return nil
end

-- The mid-size default's choice: of the pairs the one whose CTAs fill the
-- most of their waves (one CTA an SM), fewer splits and bm 64 first on a tie.
local function by_fill(t, shape, dt, dev, bn, rows)
  local sms, pairs = dev.sms or 132, split_pairs(rows, bn)
  for _, pr in ipairs(pairs) do pr.fill = pr.ctas / (((pr.ctas + sms - 1) // sms) * sms) end
  table.sort(pairs, function(a, b)
    if a.fill ~= b.fill then return a.fill > b.fill end
    return a.order < b.order
  end)
  return first_of(t, shape, dt, dev, bn, pairs)
end

-- The decode kernel's choice: it streams B and is bound by bytes in flight,
-- not by waves, so the fewest splits (bm 64 first) whose CTAs cover the SMs
-- once (at least 90% of them), among those whose split adds at most
-- DECODE_RED bytes of sums a tile (the adding grows with bn, and its buffer
-- takes ring slots); where none covers, the pair under that cap with the
-- most CTAs. On an H200 (tenth session, bench/results/2026-11-28/
-- s10-ranges-call2) these are the range sweep's swapab winners at m <= 64:
-- csplit 8 at n = 1024 with bn 8-16 and 4 with bn 48-64, 1-2 at 4096, 1 at
-- 14336 (filling waves instead picks 4 there).
local DECODE_RED = 48 * 1024
local function by_cover(t, shape, dt, dev, bn, rows)
  local sms, pairs, best = dev.sms or 132, split_pairs(rows, bn), {}
  for _, pr in ipairs(pairs) do
    if pr.red <= DECODE_RED then best[#best + 1] = pr end
  end
  table.sort(best, function(a, b)
    local ca, cb = a.ctas * 10 >= sms * 9, b.ctas * 10 >= sms * 9
    if ca ~= cb then return ca end
    if not ca and a.ctas ~= b.ctas then return a.ctas > b.ctas end
    return a.order < b.order
  end)
  return first_of(t, shape, dt, dev, bn, best) or by_fill(t, shape, dt, dev, bn, rows)
end

-- The mid-size default's choice. Its candidates: one tile of rows (z 1) of
-- the narrowest width above 64 holding m, and two (z 2) of the narrowest
-- holding half of m, each with bm 64, 128 or 256 and csplit with csplit x
-- z at most 4. Of those whose CTAs fit in one wave (one CTA an SM; all of
-- them where none does), the one that fills the most of it wins; on a tie
-- fewer splits (csplit x z), then z 2 first where the weight fits in a
-- quarter of L2 (its tiles read again from there) and z 1 first where it
-- does not, then bm 64 first. On an H200 (eleventh session, bench/results/
-- 2026-11-28/s11-z-call6, bm 64, pdl): at 1024 x 4096 and m = 255 two tiles
-- of 128 with csplit 2 ran 10.2 us, one of 256 with csplit 4 12.3 and with
-- csplit 8 (the fill rule's pick before) 19.6; at 4096^2 two tiles with
-- csplit 1 and one with csplit 2 ran 18.7 and 18.9 us at m = 255, 18.0 and
-- 14.3 at m = 190; csplit 4 (256 CTAs) ran 27-47 us there; at 14336 x 4096
-- and 4096 x 14336 two tiles ran 1.0-1.7x slower (weights past L2). At
-- 14336 x 4096 (224 column tiles of 64) bm 128 with csplit 1 (112 CTAs) was
-- the fastest at m = 65, 129 and 190 (s11-pdl-call2), where filling waves
-- took csplit 4 (896 CTAs).
local function mid_z(shape)
  local fit, half, widest
  for _, pv in ipairs(M.params) do
    for _, v in ipairs(pv[1] == "bn" and pv[2] or {}) do
      if v > 64 then
        if v >= shape.m and (not fit or v < fit) then fit = v end
        if v < shape.m and 2 * v >= shape.m and (not half or v < half) then half = v end
        if not widest or v > widest then widest = v end
      end
    end
  end
  return fit or widest, half
end

local function mid_default(t, shape, dt, dev)
  local one, two = mid_z(shape)
  if not one then return nil end
  local sms, cands = dev.sms or 132, {}
  local small = shape.n * shape.k * dtype.size(gemm.types(dt).In) * 4 <= (dev.l2 or 0)
  for z, bn in pairs({ one, two }) do
    for _, pr in ipairs(split_pairs(shape.n, bn)) do
      if pr.cs * z <= 4 then
        local ctas = pr.ctas * z
        pr.bn, pr.splits = bn, pr.cs * z
        pr.fill, pr.one_wave = ctas / (((ctas + sms - 1) // sms) * sms), ctas <= sms
        pr.first = (z == 2) == small
        cands[#cands + 1] = pr
      end
    end
  end
  table.sort(cands, function(a, b)
    if a.one_wave ~= b.one_wave then return a.one_wave end
    if a.fill ~= b.fill then return a.fill > b.fill end
    if a.splits ~= b.splits then return a.splits < b.splits end
    if a.first ~= b.first then return a.first end
    return a.order < b.order
  end)
  return first_of(t, shape, dt, dev, one, cands)
end

-- The second mid-size kernel's launch: column tiles padded to whole
-- multicast groups along x, the slices of k along y, passes of BN rows of A
-- along z; a cluster of mc x csplit; A's two tensor maps (boxes of 64 rows
-- and of 8).
local function mid2_launch(p, dt)
  local esize = dtype.size(gemm.types(dt).In)
  local z = mid_sizes(p)
  local x = string.format("cdiv(n, %d)", p.bm)
  if p.mc > 1 then x = string.format("cdiv(n, %d) * %d", p.bm * p.mc, p.mc) end
  local function amap(rows)
    return { kind = "tmap", arg = "A", dims = { "k", "m" }, strides = { "k*" .. esize }, box = { BK, rows },
             swizzle = 128, oob = "zero", l2 = 256 }
  end
  return {
    grid = { x, p.csplit, string.format("cdiv(m, %d)", p.bn) },
    block = { z.threads, 1, 1 },
    cluster = { p.mc, p.csplit, 1 },
    smem = z.smem,
    pdl = p.pdl == 1,
    params = {
      { kind = "tmap", arg = "B", dims = { "k", "n" }, strides = { "k*" .. esize }, box = { BK, p.bm },
        swizzle = 128, oob = "zero", l2 = 256 },
      amap(64), amap(8),
      { kind = "ptr", arg = "D" }, { kind = "dim", expr = "m" }, { kind = "dim", expr = "n" },
      { kind = "dim", expr = "k" },
    },
  }
end

-- The rows of A's box in the decode and first mid-size kernels: m rounded
-- up to 8, at most bn (an expression the launch plan evaluates at bind,
-- plan.h), so TMA zero-fills at most 7 rows past m. Each kernel's slots
-- expect the same bytes (slot_bytes); the slot's rows past the box keep
-- whatever they held, and their sums go to rows of D that are not stored
-- (column j of a wgmma's product reads row j of A only). With a box of bn
-- rows, time grew about 0.1 us for each row zero-filled past m: on an H200
-- at 4096^2 (tenth session, call 2) one bn 96 config ran 16.1 us at m = 65
-- and 13.3 at m = 87, one bn 128 config 17.8 at m = 88 and 13.9 at m = 127.
local function a_box(bn) return string.format("min(%d, cdiv(m, 8) * 8)", bn) end
-- The first mid-size kernel's: m > bn takes cdiv(m, bn) tiles of rows along
-- z, and the rows split evenly over them (each m / tiles rounded up to 8),
-- so no tile holds a box of rows mostly past m.
local function mid_box(bn)
  return string.format("min(%d, cdiv(cdiv(m, cdiv(m, %d)), 8) * 8)", bn, bn)
end

-- The gated product's rules over the GEMM's: the decode kernel, 2n rows
-- of B (a shape is the 2n-wide GEMM to constraints).
local function swiglu_constraints(p, shape, dt, dev)
  if mid(p) then return false, "the gated product runs the decode kernel (bn <= 64)" end
  return constraints(p, gemm.swiglu_gemm_shape(shape), dt, dev)
end
local function swiglu_supports(shape, dt, dev)
  local ok, why = hopper.swiglu_supports(shape)
  if not ok then return false, why end
  if shape.m > 64 then return false, "m > 64: the gated product runs the decode kernel" end
  return supports(shape, dt, dev)
end

-- The family table for gemm_nt or gemm_swiglu (lib/gemm.lua).
local function family(op)
  assert(op.layout == "nt", "swapab: the nt layout only")
  local sw = op.swiglu
  local t = {
    op = op.name,
    name = "swapab",
    min_cc = 90,
    max_cc = 90,
    arch = "sm_90a",
    dtypes = op.dtypes,
    params = M.params,
    constraints = sw and swiglu_constraints or constraints,
    supports = sw and swiglu_supports or supports,
  }
  -- The gated product's space is the decode kernel's: the search never draws
  -- the mid-size kernels' values (search/space.lua).
  if sw then
    t.narrow = function() return { bn = { 8, 16, 24, 32, 40, 48, 64 }, mc = { 0 }, nvar = { 1 } } end
  end
  t.launch = function(p, dt, dev)
    if mid2(p) then return mid2_launch(p, dt) end
    local _, smem = sizes(p)
    local esize = dtype.size(gemm.types(dt).In)
    local z, block, abox = 1, 160, a_box(p.bn)
    if mid(p) then
      local ms = mid_sizes(p)
      z, block, smem, abox = string.format("cdiv(m, %d)", p.bn), ms.threads, ms.smem, mid_box(p.bn)
    end
    return {
      grid = { string.format("cdiv(%sn, %d)", sw and "2 * " or "", p.bm), p.csplit, z },
      block = { block, 1, 1 },
      cluster = { 1, p.csplit, 1 },
      smem = smem,
      pdl = p.pdl == 1,
      params = {
        sw and hopper.swiglu_bmap(esize, p.bm // 16) or
        { kind = "tmap", arg = "B", dims = { "k", "n" }, strides = { "k*" .. esize }, box = { BK, p.bm },
          swizzle = 128, oob = "zero", l2 = 256 },
        { kind = "tmap", arg = "A", dims = { "k", "m" }, strides = { "k*" .. esize }, box = { BK, abox },
          swizzle = 128, oob = "zero", l2 = 256 },
        { kind = "ptr", arg = "D" }, { kind = "dim", expr = "m" }, { kind = "dim", expr = "n" },
        { kind = "dim", expr = "k" },
      },
    }
  end
  t.source = function(p, dt, dev, name)
    if mid2(p) then return mid2_source(op, p, dt, dev, name) end
    if mid(p) then return mid_source(op, p, dt, dev, name) end
    return source(op, p, dt, dev, name)
  end
  -- The decode kernel's default: a pass of the power of two of rows that
  -- holds m (8 .. 64), (bm, csplit) by_cover. On an H200 (tenth session,
  -- bench/results/2026-11-28/s10-ranges-call2) the range sweep's winners at
  -- m <= 64 were bm 64 in all 16 swapab buckets; the default before (bm 128
  -- first, csplit 4) ran 16-17 us at 4096^2, m = 31, against 11.5 for bm 64,
  -- and with 8 evaluations a bucket the search missed a deep-ring bm 64 at
  -- m = 63 (16.3 us; bm 64, bn 96 ran m = 87 in 13.4).
  t.default = function(shape, dt, dev)
    if shape.m > 64 and not sw then return mid_default(t, shape, dt, dev) end
    local bn = 8
    while bn < shape.m and bn < 64 do bn = bn * 2 end
    return by_cover(t, shape, dt, dev, bn, sw and 2 * shape.n or shape.n)
  end
  return t
end

M.family = family

return M
