// The swapped wgmma kernel's stores (templates/lib/wgmma_epilogue.lua's
// trans_tile, as a generated source holds it) run on the CPU, so a tile
// whose elements land in the wrong place, twice, past D, or not at all is
// caught without a GPU.
//
// Built by tests/cli/trans_store_host.sh from a generated swapped kernel:
// DEFS names a file with the source's #defines (BM .. A_BOX_ROWS), TILE one
// with its store block, ACC_N the accumulators' second dimension the
// kernel declares (BN / 2, or BN / 4 when two consumers split a tile by
// columns: COLS 1).
//   g++ -std=c++17 -DDEFS='"defs.h"' -DTILE='"tile.cuh"' -DACC_N='BN / 2' -DCOLS=0 trans_store.cpp
//   ./a.out M N TW    (the kernel's m and n; TW: the tile width, bw)
//
// The accumulators are filled as wgmma leaves them (the PTX ISA's m64nNk16
// f32 fragment: register r of thread (warp, lane) holds row warp * 16 +
// lane / 4 + 8 * ((r / 2) % 2), column 8 * (r / 4) + 2 * (lane % 4) + r % 2
// of the consumer's m64 block), for the part of each tile the main loop
// gives each consumer: coop, rows c * WM on; ping-pong, the whole tile;
// COLS, all rows and columns c * TW / 2 on. Each holds the code of the
// element of D it computed (row * 4096 + col, exact in a float), and every
// accumulator past the tile width a poison. Then, over every tile,
// consumer, warp and lane, the store block runs; D's cells count their
// writes. It checks that each element of D (D[col][row], rows m long) is
// written once with its own code, and that nothing is written before or
// after D. Prints one line, "ok ..." or "FAIL ..." lines; exits 1 on any
// failure.
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <vector>

#define AIT_DEV static inline
#include DEFS
#undef D_T
// A cell of D that counts its writes.
struct cell {
  float v = NAN;
  int n = 0;
  cell& operator=(float x) { v = x; n++; return *this; }
};
#define D_T cell
#define ST_D(x) (x)

static const float POISON = -1.0f;

static void store(int tm, int tn, int c, int lane, int warp, long long m, long long n, long long bw,
                  float (&acc)[MI][ACC_N], cell* D) {
  (void)bw;
#include TILE
}

int main(int argc, char** argv) {
  if (argc != 4) { fprintf(stderr, "usage: trans_store M N TW\n"); return 2; }
  const long long m = atoll(argv[1]), n = atoll(argv[2]), tw = atoll(argv[3]);
  if (m < 1 || n < 1 || m >= 4096 || n >= 4096 || tw < 8 || tw > BN) { fprintf(stderr, "bad M N TW\n"); return 2; }
  const long long guard = 4096;
  std::vector<cell> mem((size_t)(m * n + 2 * guard));
  cell* D = mem.data() + guard;
  const int consumers = PINGPONG ? 1 : CONSUMERS;
  const int cw = COLS ? (int)tw / 2 : (int)tw;    // a consumer's columns of the tile
  static float acc[MI][ACC_N];
  const int tiles_m = (int)((m + BM - 1) / BM), tiles_n = (int)((n + tw - 1) / tw);
  for (int tm = 0; tm < tiles_m; tm++)
    for (int tn = 0; tn < tiles_n; tn++)
      for (int c = 0; c < consumers; c++)
        for (int warp = 0; warp < 4; warp++)
          for (int lane = 0; lane < 32; lane++) {
            const long long r0 = (long long)tm * BM + (PINGPONG || COLS ? 0 : c * WM);
            const long long c0 = (long long)tn * tw + (COLS ? c * cw : 0);
            for (int i = 0; i < MI; i++)
              for (int r = 0; r < ACC_N; r++) {
                const int fc = 8 * (r / 4) + 2 * (lane % 4) + r % 2;
                const long long row = r0 + i * 64 + warp * 16 + lane / 4 + 8 * ((r / 2) % 2), col = c0 + fc;
                acc[i][r] = fc < cw ? (float)(row * 4096 + col) : POISON;
              }
            store(tm, tn, c, lane, warp, m, n, tw, acc, D);
          }
  long long bad = 0, twice = 0, missing = 0, outside = 0;
  for (long long col = 0; col < n; col++)
    for (long long row = 0; row < m; row++) {
      const cell& e = D[col * m + row];
      if (e.n == 0) missing++;
      else if (e.n > 1) twice++;
      else if (e.v != (float)(row * 4096 + col)) {
        if (++bad <= 5) printf("FAIL D[%lld][%lld] = %.0f, not %lld\n", col, row, e.v, row * 4096 + col);
      }
    }
  for (long long i = 0; i < guard; i++) outside += mem[(size_t)i].n + mem[(size_t)(guard + m * n + i)].n;
  if (missing) printf("FAIL %lld elements never written\n", missing);
  if (twice) printf("FAIL %lld elements written more than once\n", twice);
  if (outside) printf("FAIL %lld writes outside D\n", outside);
  if (bad || missing || twice || outside) return 1;
  printf("ok m %lld n %lld width %lld: %lld elements, each written once with its value, none outside (%d x %d tiles)\n",
         m, n, tw, m * n, tiles_m, tiles_n);
  return 0;
}
