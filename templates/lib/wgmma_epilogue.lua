-- The wgmma family's epilogues (lib/wgmma.lua, `epilogue`): how a
-- consumer's accumulators reach D.
--
-- The epilogue converts the accumulators and either stores them straight
-- from registers ("direct", masked at the M/N edges) or ("tma") writes 64-row x 128-byte pieces into two swizzled
-- shared-memory buffers per consumer that TMA stores to D (the tensor map
-- clips the edges): full 128-byte lines instead of 4-byte scattered stores.
-- Where D's rows are not 16-byte aligned (n not a multiple of 8), TMA cannot
-- store them; "rows" writes the same pieces and the consumer's warps store
-- them a row at a time, each lane one aligned 4-byte word of the row (an
-- odd row start shifts the pairs by one element: the word straddling two
-- smem words is put together with a shuffle, the row's two end elements
-- stored alone), so each store instruction is one contiguous 128-byte line
-- where "direct" scatters 16 bytes over 8 rows. Storing D themselves holds
-- the consumers between tiles (at 4000^3 "rows" costs 26 us over a TMA
-- store, bench/archive/RESULTS-2026.md), so "tma_ws" (persistent, coop) TMA-stores the
-- pieces into a copy of D in the workspace whose rows are padded to 128
-- bytes, and the producer's idle warps copy each tile from there to D
-- (ws_copy: 16-byte loads, odd row starts stored as shifted pairs) while
-- the consumers run the next one: a consumer marks a tile ready
-- (ws_ready) a few k tiles into the next, once its TMA stores are
-- complete. The CTA's last tile has nothing after it to hide a copy under:
-- the consumers' warps, done, copy it with the copy warps.
local M = {}

-- "tma_ws": the copy of D in the workspace and the copy warps' work
-- (ws_copy, ws_copy_tile). Part of the source's host-testable region
-- (tests/host/staging.cpp).
M.ws_device = [[
#if EPI_WS
// "tma_ws": D's copy in the workspace (rows padded to 128 bytes) after the
// staged operands, and the tiles each consumer has there (ws_ready[c]:
// the CTA's first ws_ready[c] tiles are complete in the copy).
__shared__ unsigned ws_ready[2];
AIT_DEV long long ws_d_pitch(long long n) { return (n * (long long)sizeof(D_T) + 127) / 128 * 128 / (long long)sizeof(D_T); }
AIT_DEV long long ws_d_off(long long m, long long n, long long k) {
  const long long kp = (k + 63) / 64 * 128;
  return SA_OFF + (STAGE_A ? m * kp : 0) + (STAGE_B ? (NT ? n * kp : k * ((n + 63) / 64 * 128)) : 0);
}
// A 16-byte chunk of a tile row (v: 8 elements, f32 4) into D at d, where
// the row has `left` (> 0) elements from d on. f32, or a chunk that starts
// on an even element: 16-, 4- or 2-byte stores as d allows. One that
// starts on an odd element stores the aligned pairs one element on (the
// last with nxt, the next chunk's first word, when `more`: the row goes on
// in this tile) and its first element alone when `first` (the tile's
// row starts here; otherwise the chunk before stored it).
AIT_DEV void ws_store_chunk(D_T* d, const uint4& v, unsigned nxt, int left, bool first, bool more) {
  const unsigned w[5] = { v.x, v.y, v.z, v.w, nxt };
  const size_t at = (size_t)d;
#if EPI_F32
  if ((at & 15) == 0 && left >= 4) { *reinterpret_cast<uint4*>(d) = v; return; }
#pragma unroll
  for (int e = 0; e < 4; e++) if (e < left) reinterpret_cast<unsigned*>(d)[e] = w[e];
#else
  unsigned short* h = reinterpret_cast<unsigned short*>(d);
  if ((at & 15) == 0 && left >= 8) { *reinterpret_cast<uint4*>(d) = v; return; }
  if ((at & 3) == 0) {
#pragma unroll
    for (int j = 0; j < 4; j++) {
      if (2 * j + 1 < left) *reinterpret_cast<unsigned*>(h + 2 * j) = w[j];
      else if (2 * j < left) h[2 * j] = (unsigned short)w[j];
    }
    return;
  }
  if (first) h[0] = (unsigned short)w[0];
#pragma unroll
  for (int j = 0; j < 4; j++) {
    const int e = 2 * j + 1;
    if (e + 1 < left && (j < 3 || more)) *reinterpret_cast<unsigned*>(h + e) = __byte_perm(w[j], w[j + 1], 0x5432);
    else if (e < left) h[e] = (unsigned short)(w[j] >> 16);
  }
#endif
}
// Tile (tm, tn) from the copy to D, by warp cw of ncw. A tile row is CPR
// 16-byte chunks; L lanes take a row (a power of two, lanes past CPR idle),
// so a warp step covers 32 / L rows, or a row takes CPR / 32 steps (f32).
// A warp loads 8 steps' chunks (16 bytes a lane each, read through L2: the
// copy was just written there), then stores them, and takes every ncw-th 8
// steps. The chunk after a lane's in its row is the next lane's.
#define WS_CPR (BN * (int)sizeof(D_T) / 16)
#define WS_L (WS_CPR <= 8 ? 8 : WS_CPR <= 16 ? 16 : 32)
#define WS_H ((WS_CPR + 31) / 32)
#define WS_CE (16 / (int)sizeof(D_T))
AIT_DEV void ws_copy_tile(D_T* D, const unsigned char* ws, long long m, long long n, long long k, int tm, int tn,
                          int cw, int ncw) {
  const D_T* W = (const D_T*)(ws + ws_d_off(m, n, k));
  const long long dp = ws_d_pitch(n);
  const int lane = threadIdx.x % 32;
  const long long r0 = (long long)tm * BM, c0 = (long long)tn * BN;
  if (r0 >= m || c0 >= n) return;     // a pair's tile past the edge
  const int rows = (int)min(m - r0, (long long)BM), cols = (int)min(n - c0, (long long)BN);
  const int steps = (rows + 32 / WS_L - 1) / (32 / WS_L) * WS_H;
  // Step s's row and chunk for this lane; false past the tile.
  auto at = [&](int s, int& row, int& ch) {
    row = s / WS_H * (32 / WS_L) + lane / WS_L;
    ch = s % WS_H * WS_L + lane % WS_L;
    return s < steps && row < rows && ch * WS_CE < cols;
  };
  for (int s0 = cw * 8; s0 < steps; s0 += ncw * 8) {
    uint4 v[8];
    int row, ch;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      v[j] = make_uint4(0u, 0u, 0u, 0u);
      if (at(s0 + j, row, ch)) v[j] = ld_cg_v4(W + (r0 + row) * dp + c0 + ch * WS_CE);
    }
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const unsigned nxt = __shfl_down_sync(~0u, v[j].x, 1);
      if (at(s0 + j, row, ch))
        ws_store_chunk(D + (r0 + row) * n + c0 + ch * WS_CE, v[j], nxt, cols - ch * WS_CE, ch == 0,
                       ch + 1 < WS_CPR && lane % WS_L + 1 < WS_L);
    }
  }
}
// Whether both consumers have the CTA's first `tiles` tiles in the copy.
AIT_DEV bool ws_ready_for(unsigned tiles) {
  return ld_acquire_cta(&ws_ready[0]) >= tiles && (CONSUMERS == 1 || ld_acquire_cta(&ws_ready[1]) >= tiles);
}
// The copy warps (the producer's warps 1-3): each tile of the CTA once
// both consumers have it in the copy; the last tile with the consumers'
// warps too (WS_WARPS in all), which have nothing left to do.
#define WS_WARPS (3 + 4 * CONSUMERS)
AIT_DEV void ws_copy(const sched_t& S, D_T* D, const unsigned char* ws, long long m, long long n, long long k,
                     int units_m, int units_n, int rank) {
  int u, k0, k1, un, k0n, k1n;
  for (int it = 0; item_at(S, it, u, k0, k1); it++) {
    int tm, tn;
    tile_at(u, units_m, units_n, tm, tn);
    if (SHARE == 1) tm = 2 * tm + rank;
    if (SHARE == 2) tn = 2 * tn + rank;
    while (!ws_ready_for((unsigned)it + 1)) __nanosleep(256);
    const bool last = !item_at(S, it + 1, un, k0n, k1n);
    ws_copy_tile(D, ws, m, n, k, tm, tn, threadIdx.x / 32 - 1, last ? WS_WARPS : 3);
  }
}
#endif

]]

-- store2: two converted accumulators to D at `at` in one store.
function M.store2(out)
  local store
  if out == "f32" then
    store = [[
AIT_DEV void store2(float* D, long long at, float x, float y) {
  *reinterpret_cast<float2*>(D + at) = make_float2(x, y);
}]]
  else
    store = string.format([[
AIT_DEV void store2(unsigned short* D, long long at, float x, float y) {
  unsigned v; asm("cvt.rn.%s.f32 %%0, %%2, %%1;" : "=r"(v) : "f"(x), "f"(y));
  *reinterpret_cast<unsigned*>(D + at) = v;
}]], out .. "x2")
  end
  return store
end

-- store2m: a pair masked at n (formatted with D's C type and D's dtype twice).
M.store2m = [[
// A masked pair at (row, col < n): one 2-element store where the pair is
// aligned (always for an even n; every other row for an odd one, col being
// even), else element by element.
AIT_DEV void store2m(%s* D, long long row, long long col, long long n, float x, float y) {
  if (((row * n + col) & 1) == 0 && col + 1 < n) { store2(D, row * n + col, x, y); return; }
  D[row * n + col] = st_%s(x);
  if (col + 1 < n) D[row * n + col + 1] = st_%s(y);
}]]

-- "rows": a piece's row stored by one warp; "tma_ws": a tile marked ready.
M.device = [[
#if EPI_ROWS
// Row pr of a swizzled 64-row x 128-byte epilogue piece: lane's word at
// piece_word(pr, lane), read into w and stored by store_word_row, by one
// warp, into D's row `row` from column col, masked at n. Word `lane` of
// the piece's row holds elements 2*lane and 2*lane + 1 (f32: element lane).
// A row that starts on an odd element has its aligned pairs one element on:
// lane l stores elements 2l+1 and 2l+2 (its word's upper half and the next
// lane's lower half), lane 31 element 63 alone and lane 0 element 0 too.
AIT_DEV unsigned piece_word(int pr, int lane) { return pr * 128 + ((((unsigned)lane >> 2) ^ (unsigned)(pr & 7)) << 4) + 4 * (lane & 3); }
AIT_DEV unsigned ld_shared_u32(unsigned a) {
  unsigned w;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(w) : "r"(a) : "memory");
  return w;
}
AIT_DEV void store_word_row(D_T* D, unsigned w, long long row, long long col, long long n, int lane) {
  D_T* d = D + row * n + col;
  const int left = (int)min(n - col, 64ll);     // columns of the row in D: > 0 (the caller's)
#if EPI_F32
  if (lane < left) reinterpret_cast<unsigned*>(d)[lane] = w;
#else
  const unsigned next = __shfl_down_sync(~0u, w, 1);
  const int e = 2 * lane + (int)((size_t)d >> 1 & 1);     // the first element of this lane's aligned pair
  if (e + 1 < left) *reinterpret_cast<unsigned*>(d + e) = e == 2 * lane ? w : __byte_perm(w, next, 0x5432);
  else if (e < left) d[e] = (unsigned short)(e == 2 * lane ? w : w >> 16);
  if (e != 2 * lane && lane == 0) d[0] = (unsigned short)w;
#endif
}
#endif
#if EPI_WS
// Consumer c's first `tiles` tiles are in the copy: its TMA stores of them
// complete, made visible to the copy warps' loads (one thread).
AIT_DEV void ws_mark_ready(int c, unsigned tiles) {
  bulk_wait_all();
  asm volatile("fence.proxy.async.global;" ::: "memory");
  asm volatile("st.release.cta.shared.u32 [%0], %1;" :: "r"(smem_u32(&ws_ready[c])), "r"(tiles) : "memory");
}
#endif]]

-- In a consumer, per tile: the accumulators out through shared memory and
-- TMA ("tma", "tma_ws"), shared memory and row stores ("rows"), or straight
-- from registers ("direct"). A fragment of lib/wgmma_mainloop.lua's kernel
-- format ("%%" is "%").
M.tile = [[
      // Epilogue: thread (warp, lane) holds rows 16*warp + lane/4 (+8) and
      // column pairs 8*j + 2*(lane%%4) of each 64-row slab.
#if EPI_TMA || EPI_ROWS
      // Piece (i, jc): rows 64*i.. of this consumer's slab, CW columns from
      // CW*jc, written swizzled (16-byte chunk q of row r at q ^ (r %% 8)).
      // Warp w writes (and, for "rows", stores) rows 16*w .. 16*w + 15.
      {
        const int r = warp * 16 + lane / 4, q4 = lane %% 4;
#pragma unroll
        for (int i = 0; i < MI; i++) {
#pragma unroll
          for (int jc = 0; jc < BN / CW; jc++, pieces++) {
#if EPI_TMA
            const unsigned buf = ebase + c * 16384 + (pieces & 1) * 8192;
            if ((threadIdx.x %% 128) == 0) bulk_wait_read<1>();
            wg_sync(1 + c);
#else
            const unsigned buf = ebase + c * 8192;
#endif
#pragma unroll
            for (int jj = 0; jj < CW / 8; jj++) {
              const int j8 = jc * (CW / 8) + jj;
#if EPI_F32
              const unsigned off = ((((unsigned)(2 * jj + (q4 >> 1))) ^ (unsigned)(r & 7)) << 4) + 8 * (q4 & 1);
#else
              const unsigned off = (((unsigned)jj ^ (unsigned)(r & 7)) << 4) + 4 * q4;
#endif
              st_shared(buf + r * 128 + off, acc[i][4 * j8], acc[i][4 * j8 + 1]);
              st_shared(buf + (r + 8) * 128 + off, acc[i][4 * j8 + 2], acc[i][4 * j8 + 3]);
            }
#if EPI_TMA
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            wg_sync(1 + c);
            if ((threadIdx.x %% 128) == 0)
              tma_store(&tmD, buf, tn * BN + jc * CW, tm * BM + (PINGPONG ? 0 : c * WM) + i * 64);
#else
            __syncwarp();
            const long long grow = (long long)tm * BM + (PINGPONG ? 0 : c * WM) + i * 64 + warp * 16;
            const long long gcol = (long long)tn * BN + jc * CW;
            if (gcol < n) {
              // All 16 rows' words read first, so the reads overlap.
              unsigned w[16];
#pragma unroll
              for (int rr = 0; rr < 16; rr++) w[rr] = ld_shared_u32(buf + piece_word(warp * 16 + rr, lane));
#pragma unroll
              for (int rr = 0; rr < 16; rr++)
                if (grow + rr < m) store_word_row(D, w[rr], grow + rr, gcol, n, lane);
            }
            __syncwarp();
#endif
          }
        }
      }
#else
      const long long row0 = (long long)tm * BM + (PINGPONG ? 0 : c * WM) + warp * 16 + lane / 4;
      const long long col0 = (long long)tn * BN + 2 * (lane %% 4);
      if ((long long)(tm + 1) * BM <= m && (long long)(tn + 1) * BN <= n && (n & 1) == 0) {
        // An interior tile: no masks, straight-line stores.
#pragma unroll
        for (int i = 0; i < MI; i++) {
          D_T* p = D + (row0 + i * 64) * n + col0;
#pragma unroll
          for (int j = 0; j < BN / 8; j++) {
            store2(p, j * 8, acc[i][4 * j], acc[i][4 * j + 1]);
            store2(p, 8 * n + j * 8, acc[i][4 * j + 2], acc[i][4 * j + 3]);
          }
        }
      } else {
#pragma unroll
        for (int i = 0; i < MI; i++) {
          const long long r0 = row0 + i * 64;
#pragma unroll
          for (int j = 0; j < BN / 8; j++) {
            const long long col = col0 + j * 8;
            if (col < n) {
              if (r0 < m) store2m(D, r0, col, n, acc[i][4 * j], acc[i][4 * j + 1]);
              if (r0 + 8 < m) store2m(D, r0 + 8, col, n, acc[i][4 * j + 2], acc[i][4 * j + 3]);
            }
          }
        }
      }
#endif
]]

-- The gated product's epilogue, in place of M.tile (lib/wgmma.lua: its
-- shapes take direct stores only): accumulator columns 16g.. hold the gate's
-- 8 columns 8g.. of the tile's BN/2, 16g+8.. the up's same 8, so a thread's
-- chunks 2g and 2g+1 pair up and D gets SiLU(gate) * up (lib/hopper.lua).
M.swiglu_tile = [[
      {
        const long long row0 = (long long)tm * BM + (PINGPONG ? 0 : c * WM) + warp * 16 + lane / 4;
        const long long col0 = (long long)tn * (BN / 2) + 2 * (lane %% 4);
        const bool whole = (long long)(tm + 1) * BM <= m && (long long)(tn + 1) * (BN / 2) <= n;
#pragma unroll
        for (int i = 0; i < MI; i++) {
          const long long r0 = row0 + i * 64;
#pragma unroll
          for (int g = 0; g < BN / 16; g++) {
            const float* a = &acc[i][8 * g];
            const long long col = col0 + g * 8;
            if (whole) {
              store2(D, r0 * n + col, swiglu(a[0], a[4]), swiglu(a[1], a[5]));
              store2(D, (r0 + 8) * n + col, swiglu(a[2], a[6]), swiglu(a[3], a[7]));
            } else if (col < n) {
              if (r0 < m) store2m(D, r0, col, n, swiglu(a[0], a[4]), swiglu(a[1], a[5]));
              if (r0 + 8 < m) store2m(D, r0 + 8, col, n, swiglu(a[2], a[6]), swiglu(a[3], a[7]));
            }
          }
        }
      }
]]

-- The swapped kernel's epilogue, in place of M.tile (lib/wgmma.lua's
-- family, op.swap: direct stores only): its tile is of Dᵀ (its m rows are
-- D's columns, its n columns D's rows), so element (r, col) goes to
-- D[col][r], D's rows this kernel's m long. A thread's four of each 8
-- columns are q[0], q[m] (the next column), q[8] and q[m + 8] (8 rows on).
-- ST_D(x) converts to D's type (the source defines it). tw is the tile's
-- width, cw this consumer's columns of it, JN its accumulators' groups of 8
-- columns (lib/wgmma_mainloop.lua's WIDTH_STORE and COLS_STORE change them:
-- a width chosen at run time, 192-row tiles split by columns). A tile that
-- lies inside D stores without bounds, through two pointers (the column
-- pair) stepped 8 columns at a time: ptxas 13.0 then writes each element
-- with an STG of constant offset instead of a 64-bit bound test and a
-- branch around it.
M.trans_tile = [[
      {
        const long long row0 = (long long)tm * BM + (PINGPONG ? 0 : c * WM) + warp * 16 + lane / 4;
        const int tw = BN;
        const int cw = BN;
        constexpr int JN = BN / 8;
        const long long col0 = (long long)tn * tw + 2 * (lane %% 4);
        const bool in_m = (long long)(tm + 1) * BM <= m;
        if (in_m && (long long)(tn + 1) * tw <= n) {
          D_T* q0 = D + col0 * m + row0;
          D_T* q1 = q0 + m;
#pragma unroll
          for (int j = 0; j < JN; j++, q0 += 8 * m, q1 += 8 * m) {
            if (j * 8 >= cw) break;
#pragma unroll
            for (int i = 0; i < MI; i++) {
              q0[i * 64] = ST_D(acc[i][4 * j]);
              q1[i * 64] = ST_D(acc[i][4 * j + 1]);
              q0[i * 64 + 8] = ST_D(acc[i][4 * j + 2]);
              q1[i * 64 + 8] = ST_D(acc[i][4 * j + 3]);
            }
          }
        } else {
#pragma unroll
          for (int j = 0; j < JN; j++) {
            const long long col = col0 + j * 8;
            if (col >= n || j * 8 >= cw) continue;
            const bool c1 = col + 1 < n;
#pragma unroll
            for (int i = 0; i < MI; i++) {
              D_T* q = D + col * m + row0 + i * 64;
              if (in_m || row0 + i * 64 < m) {
                q[0] = ST_D(acc[i][4 * j]);
                if (c1) q[m] = ST_D(acc[i][4 * j + 1]);
              }
              if (in_m || row0 + i * 64 + 8 < m) {
                q[8] = ST_D(acc[i][4 * j + 2]);
                if (c1) q[m + 8] = ST_D(acc[i][4 * j + 3]);
              }
            }
          }
        }
      }
]]

-- After a consumer's last tile ("tma_ws"): that tile copied to D by the
-- consumers' warps with the copy warps. A fragment of the kernel format.
M.last_tile = [[
#if EPI_WS
    // The last tile: in the copy once its stores are complete, then copied
    // to D by these warps and the copy warps together.
    if (ws_tiles > 0) {
      if ((threadIdx.x %% 128) == 0) ws_mark_ready(c, ws_tiles);
      while (!ws_ready_for(ws_tiles)) __nanosleep(64);
      ws_copy_tile(D, ws, m, n, k, ws_tm, ws_tn, 3 + 4 * c + warp, WS_WARPS);
    }
#endif
]]

return M
