-- The wgmma family's kernel (lib/wgmma.lua): its entry, the producer's TMA
-- loop and the consumers' wgmma loop, around the fragments of the other
-- concerns (lib/wgmma_stage.lua, lib/wgmma_streamk.lua,
-- lib/wgmma_epilogue.lua). The CTA's structure, schedules and clusters: lib/wgmma.lua's header.
local kernel = lib("kernel")
local M = {}

-- The host-testable region of the source starts here (tile_at, the tile
-- walk) and ends with `host_last`; tests/host/staging.cpp compiles what lies
-- between them on the CPU.
M.host_first = [[
// ==== host-testable from here: tests/host/staging.cpp compiles this part
// of the source on the CPU, its CUDA built-ins emulated with threads. ====
// Tile t of a tiles_m x tiles_n grid, walked in groups of GROUP rows (or
// columns) so that CTAs running together share their A (or B) tiles in L2.
AIT_DEV void tile_at(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
#if RASTER_N
  const int per = GROUP * tiles_m, g = t / per, first = g * GROUP;
  const int cols = min(tiles_n - first, GROUP), r = t - g * per;
  tn = first + r % cols; tm = r / cols;
#else
  const int per = GROUP * tiles_n, g = t / per, first = g * GROUP;
  const int rows = min(tiles_m - first, GROUP), r = t - g * per;
  tm = first + r % rows; tn = r / rows;
#endif
}

]]
M.host_last = [[
// ==== end host-testable ====
]]

-- The kernel, as one string.format over (name, D's tensor map parameter,
-- D's C type, the workspace parameter, the staged operands' parameters,
-- the producer's registers, A's load, B's load, the consumers' registers,
-- B's descriptor). Its fragments: "%%" is "%".
local HEAD = [[
extern "C" __global__ void __launch_bounds__(THREADS, 1)
%s(const __grid_constant__ tmap_t tmA, const __grid_constant__ tmap_t tmB,%s %s* __restrict__ D,
   long long m, long long n, long long k%s%s)
{
  extern __shared__ unsigned char smem_raw[];
#if PDL
  // Programmatic dependent launch (the plan's pdl; without the launch
  // attribute both instructions return at once): the next launch on the
  // stream may start now, its CTAs taking SMs as this grid's leave; this
  // one sets up its barriers and fetches its tensor maps under the previous
  // launch's tail, and reads or writes global memory only after the wait.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%%0];" :: "l"((unsigned long long)&tmA) : "memory");
    asm volatile("prefetch.tensormap [%%0];" :: "l"((unsigned long long)&tmB) : "memory");
  }
#endif
  const int tiles_m = (int)((m + BM - 1) / BM), tiles_n = (int)((n + BN - 1) / BN);
  // Units of work: tiles, or pairs of tiles for a cluster (a pair past the
  // edge still loads its half of the shared operand; its stores are masked).
  const int units_m = SHARE == 1 ? (tiles_m + 1) / 2 : tiles_m, units_n = SHARE == 2 ? (tiles_n + 1) / 2 : tiles_n;
#if OVERLAP
  const long long band_rows = (long long)((tiles_m + NBANDS - 1) / NBANDS) * BM;
  const long long a_pre = first_rows(m, k, units_m, units_n, gridDim.x / CLUSTER, band_rows);
  const long long kband_rows = kband_rows_of(k), b_pre = NT ? n : first_krows(n, k);
#else
  const long long a_pre = m, b_pre = NT ? n : k;
#endif
#if STAGE_A || STAGE_B
  stage_all(As, Bs, ws, m, n, k, a_pre, b_pre);
#endif
  const unsigned base = (smem_u32(smem_raw) + 1023u) & ~1023u;
  const unsigned ebase = base + STAGES * (A_BYTES + B_BYTES);
  const unsigned full = ebase + EPI_BYTES, empty = full + 8 * STAGES, order = empty + 8 * STAGES;
  // The warpgroup, through a shuffle from lane 0 so that the compiler knows
  // it warp-uniform: the consumers' descriptors (c) then live in uniform
  // registers, not in vector ones moved over (R2UR) before each wgmma.
  const int wg = __shfl_sync(0xffffffffu, (int)(threadIdx.x / 128), 0);
  const int nunits = units_m * units_n, kiters = (int)((k + 63) / 64);
  const int rank = CLUSTER > 1 ? (int)cluster_rank() : 0;
  sched_t S;
  sched_init(S, nunits, kiters);
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; s++) { mbar_init(full + 8 * s, 1); mbar_init(empty + 8 * s, (PINGPONG ? 4 : CONSUMERS * 4) * CLUSTER); }
    if (PINGPONG) { mbar_init(order, 4); mbar_init(order + 8, 4); }
#if EPI_WS
    ws_ready[0] = ws_ready[1] = 0;
#endif
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if (CLUSTER > 1) cluster_sync(); else __syncthreads();
#if PDL
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %d;");
    if (threadIdx.x == 0) {
      int s = 0; unsigned ph = 0;
      // Rows of A's box (A_BOX_ROWS: lib/wgmma.lua's a_box, the expression
      // the launch's tensor map holds): BM, or m rounded up to 8 where one
      // tile row holds all of m. Under SHARE 2 each CTA of the pair loads
      // a_rows of them into both. The slot's rows past the box keep stale
      // data; their sums go to rows past m, never stored. With A_TAIL the
      // last row of tiles loads through the tail map (tmAt), whose box is
      // the rows of m that row holds, rounded up to 8 (A_TAIL_ROWS, half of
      // them under SHARE 2): TMA's zero-filled rows past m cost time.
      int u, k0, k1;
#if OVERLAP_B
      long long kready = b_pre;
#endif
      for (int it = 0; item_at(S, it, u, k0, k1); it++) {
        int tm, tn;
        tile_at(u, units_m, units_n, tm, tn);
        if (SHARE == 1) tm = 2 * tm + rank;
        if (SHARE == 2) tn = 2 * tn + rank;
        const bool a_tail = A_TAIL && tm == tiles_m - 1;
        const int a_rows = a_tail ? A_TAIL_ROWS(m) : A_BOX_ROWS(m);
        const unsigned a_bytes = 128u * (unsigned)(SHARE == 2 ? 2 * a_rows : a_rows);
        // B_TAIL (the swapped kernel at a fixed width): the last column of
        // tiles loads B through tmBt, the rows of n it holds rounded up to 8.
        const bool b_tail = B_TAIL && tn == tiles_n - 1;
        const unsigned b_bytes = b_tail ? 128u * (unsigned)B_TAIL_ROWS(n) : B_BYTES;
#if OVERLAP
        wait_band(ws, tm, m, a_pre, band_rows);
#endif
        for (int kb = k0; kb < k1; kb++) {
#if OVERLAP_B
          wait_kband(ws, kb, k, b_pre, kband_rows, kready);
#endif
          mbar_wait(empty + 8 * s, ph ^ 1);
          const unsigned bar = full + 8 * s;
          mbar_expect(bar, a_bytes + b_bytes);
          const unsigned sA = base + s * A_BYTES, sB = base + STAGES * A_BYTES + s * B_BYTES;
          %s
          %s
          if (++s == STAGES) { s = 0; ph ^= 1; }
        }
      }
    }
#if OVERLAP
    if (threadIdx.x >= 32) stage_late(As, Bs, ws, m, n, k, a_pre, band_rows, b_pre, kband_rows);
#endif
#if EPI_WS
    if (threadIdx.x >= 32) ws_copy(S, D, ws, m, n, k, units_m, units_n, rank);
#endif
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %d;");
    const int c = wg - 1, lane = threadIdx.x %% 32, warp = (threadIdx.x %% 128) / 32;
    int s = 0; unsigned ph = 0, mine = 0;
#if EPI_TMA || EPI_ROWS
    unsigned pieces = 0;      // epilogue pieces stored: picks the buffer
#endif
    int u, k0, k1;
#if STREAMK
    __shared__ unsigned sk_last[2];
#endif
#if EPI_WS
    int ws_tm = 0, ws_tn = 0;
    unsigned ws_tiles = 0;    // this CTA's tiles: the last is (ws_tm, ws_tn)
#endif
    for (int it = 0; item_at(S, it, u, k0, k1); it++, mine++) {
      if (PINGPONG && (int)(mine & 1) != c) {
        // The other consumer's tile: skip its slots in the ring.
        const int to = s + (k1 - k0);
        ph ^= (unsigned)((to / STAGES) & 1);
        s = to %% STAGES;
        continue;
      }
      int tm, tn;
      tile_at(u, units_m, units_n, tm, tn);
      if (SHARE == 1) tm = 2 * tm + rank;
      if (SHARE == 2) tn = 2 * tn + rank;
#if EPI_WS
      ws_tm = tm; ws_tn = tn; ws_tiles = (unsigned)it + 1;
#endif
      // Ping-pong: wait for the other consumer's mainloop of the previous tile.
      const unsigned j = mine >> 1;
      if (PINGPONG && (c == 1 || j > 0)) mbar_wait(order + 8 * c, c == 1 ? (j & 1) : ((j - 1) & 1));
      float acc[MI][BN / 2];
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < BN / 2; j++) acc[i][j] = 0.0f;
      int prev = -1;
      for (int kb = k0; kb < k1; kb++) {
        mbar_wait(full + 8 * s, ph);
        const unsigned sA = base + s * A_BYTES + (PINGPONG ? 0 : c * WM * 128);
        const unsigned sB = base + STAGES * A_BYTES + s * B_BYTES;
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
#pragma unroll
          for (int i = 0; i < MI; i++) wgmma_tile(acc[i], desc(sA + i * 64 * 128 + kk * 32, 1, 1024), %s);
        }
        wg_commit();
#if EPI_WS
        // The previous tile's TMA stores into the copy are long issued:
        // once complete, it is the copy warps' (ws_copy).
        if (it > 0 && kb == min(k0 + 2, k1 - 1) && (threadIdx.x %% 128) == 0) ws_mark_ready(c, (unsigned)it);
#endif
        // Keep INFLIGHT groups running; release the slot of the one retired.
        wg_wait<INFLIGHT>();
        if (INFLIGHT == 0) {
          if (lane == 0) release(empty + 8 * s, rank);
        } else {
          if (prev >= 0 && lane == 0) release(empty + 8 * prev, rank);
          prev = s;
        }
        if (++s == STAGES) { s = 0; ph ^= 1; }
      }
      if (PINGPONG && lane == 0) mbar_arrive(order + 8 * (c ^ 1));
      wg_wait<0>();
      if (prev >= 0 && lane == 0) release(empty + 8 * prev, rank);
]]
local LOOP_END = [[
    }
]]
local TAIL = [[
  }
  // Shared memory must outlive the TMA stores reading it.
  if (EPI_TMA && wg > 0 && (threadIdx.x %% 128) == 0) bulk_wait_all();
  // No CTA of a pair leaves while its peer may still arrive on its barriers.
  if (CLUSTER > 1) cluster_sync();
]]
local END = [[
}
]]

-- The gated product (lib/wgmma.lua) tiles 2n accumulator columns and
-- stores with epilogue.swiglu_tile, the swapped kernel stores Dᵀ's tiles
-- with epilogue.trans_tile; every other kernel's text is as it was.
local TILES_N = "tiles_n = (int)((n + BN - 1) / BN);"
local TILES_2N = "tiles_n = (int)((2 * n + BN - 1) / BN);    // the gated product: 2n accumulator columns"

-- A tile width chosen at run time (`widths`, lib/wgmma_swap.lua's wstep: every
-- width the launch may pass, BN the widest): the kernel takes it as bw, its
-- tiles are bw columns wide, the producer expects bw rows of B a slot (the
-- launch's tensor map box), and the consumers run a copy of the mainloop
-- (MAINLOOP, up to its last wgmma drained, so that ptxas keeps each copy's
-- wgmma pipelined) for each width, on the first W/2 of BN/2 accumulators;
-- the store skips columns from bw on. The copies name B's descriptor
-- B_DESC, defined where they start (the kernel format's last argument).
local MAINLOOP_FROM, MAINLOOP_TO = "      for (int kb = k0; kb < k1; kb++) {\n        mbar_wait(full", "      wg_wait<0>();\n"
local WIDTH_PIECES = {
  { "long long m, long long n, long long k%s%s)", "long long m, long long n, long long k, long long bw%s%s)" },
  { TILES_N, "tiles_n = (int)((n + bw - 1) / bw);    // bw: the launch's tile width" },
  { "const unsigned b_bytes = b_tail ? 128u * (unsigned)B_TAIL_ROWS(n) : B_BYTES;", "const unsigned b_bytes = 128u * (unsigned)bw;" },
}
local WIDTH_STORE = {
  { "const int tw = BN;", "const int tw = (int)bw;" },
  { "const int cw = BN;", "const int cw = (int)bw;" },
}
-- The declaration the widths' wgmma specialize, over the accumulators'
-- second dimension (BN / 2, or BN / 4 under cols).
M.width_device = [[
template<int N> AIT_DEV void wgmma_w(float (&d)[%s], unsigned long long da, unsigned long long db);
]]

-- Tiles of 192 rows in the swapped kernel (lib/wgmma.lua's cols): each
-- consumer takes all BM rows and half the tile's columns, BN/2 (its wgmma
-- m64 n(BN/2), three of them a k step, 3/4 BN accumulators: 132 at bn 176),
-- so the two coop consumers split a tile by columns where 96 rows each would
-- not be whole m64 steps. Both read all of A's slot, each its half of B's
-- (B_DESC's offset: lib/wgmma.lua). cuBLASLt's kernels at row 2's sizes
-- tile 192 x 176 so (twenty-first session).
local COLS_PIECES = {
  { "float acc[MI][BN / 2];", "float acc[MI][BN / 4];    // half the tile's columns (cols)" },
  { "for (int j = 0; j < BN / 2; j++) acc[i][j] = 0.0f;", "for (int j = 0; j < BN / 4; j++) acc[i][j] = 0.0f;" },
  { "(PINGPONG ? 0 : c * WM * 128)", "0" },
}
local COLS_STORE = {
  { "(PINGPONG ? 0 : c * WM)", "0" },
  { "const int cw = BN;", "const int cw = BN / 2;" },
  { "constexpr int JN = BN / 8;", "constexpr int JN = BN / 16;" },
  { "(long long)tn * tw + 2", "(long long)tn * tw + c * cw + 2" },
}
-- A run-time width under cols: each consumer's columns start at bw / 2,
-- its copies of the mainloop run wgmma_w<w / 2>.
local COLS_WIDTH_STORE = {
  { "const int tw = BN;", "const int tw = (int)bw;" },
  { "const int cw = BN / 2;", "const int cw = (int)bw / 2;" },
}
local function width_switch(head, widths, div)
  local from = head:find(MAINLOOP_FROM, 1, true)
  local to = from and head:find(MAINLOOP_TO, from, true)
  if not to then error("wgmma_mainloop: the mainloop a width copies moved", 2) end
  local loop = head:sub(from, to + #MAINLOOP_TO - 1)
  loop = kernel.replace(loop, { { "%s);", "B_DESC);" } }, "wgmma_mainloop")
  local out = { "#define B_DESC %s\n      switch ((int)bw) {\n" }
  for _, w in ipairs(widths) do
    out[#out + 1] = string.format("      case %d: {\n", w) ..
      kernel.replace(loop, { { "wgmma_tile(acc[i], ", "wgmma_w<" .. w // div .. ">(acc[i], " } }, "wgmma_mainloop") .. "      } break;\n"
  end
  out[#out + 1] = "      default: __trap();\n      }\n#undef B_DESC\n"
  return head:sub(1, from - 1) .. table.concat(out) .. head:sub(to + #MAINLOOP_TO)
end

function M.kernel(stage, streamk, epilogue, swiglu, swap, widths, cols)
  local head, tile = HEAD, swap and epilogue.trans_tile or epilogue.tile
  if swiglu then
    head = kernel.replace(head, { { TILES_N, TILES_2N } }, "wgmma_mainloop")
    tile = epilogue.swiglu_tile
  end
  if cols then
    head = kernel.replace(head, COLS_PIECES, "wgmma_mainloop")
    tile = kernel.replace(tile, COLS_STORE, "wgmma_mainloop")
  end
  if widths then
    head = width_switch(kernel.replace(head, WIDTH_PIECES, "wgmma_mainloop"), widths, cols and 2 or 1)
    tile = kernel.replace(tile, cols and COLS_WIDTH_STORE or WIDTH_STORE, "wgmma_mainloop")
  end
  return head .. streamk.fixup .. tile .. LOOP_END .. epilogue.last_tile .. TAIL .. stage.reset .. END
end

return M
