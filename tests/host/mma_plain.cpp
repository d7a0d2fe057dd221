// An aligned mma kernel's plain_tile (templates/lib/mma.lua, `aligned` 1:
// the way it takes operands its 16-byte main loop cannot load) run on the
// CPU, so the path no sweep on a GPU reaches (cudaMalloc's buffers are
// aligned, and the bucket's sizes are) is still checked: every output of
// every CTA's tile written once with the exact product, nothing past A, B
// or D read or written, at shapes with ragged tiles and operands at odd
// element offsets.
//
// Built by tests/cli/mma_aligned.sh from a generated kernel: DEFS names a
// file with its #defines (BM, BN, THREADS, NN, OUT_T), PART the source's
// plain_tile. The kernel is made for bf16 in, f32 out, so a store is a
// plain float store and the conversions need no inline PTX.
//   g++ -std=c++17 [-fsanitize=address] -DDEFS='"defs.h"' -DPART='"part.cuh"' mma_plain.cpp
//   ./mma_plain M N K AOFF BOFF   (prints "ok ..." or "FAIL ..." and exits 1)
// AOFF, BOFF: A's and B's first elements that many elements past the start
// of their allocations, which hold exactly the operand after that (so an
// AddressSanitizer build catches a read past either).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define AIT_DEV static inline
#define __restrict__
typedef unsigned short u16;
static struct { int x; } threadIdx;
static inline float ld_bf16(u16 h) {
  unsigned u = (unsigned)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static int* writes;   // per output of D: how many stores it took
static inline void store_one(float* D, long long at, float x) { D[at] = x; writes[at]++; }

#include DEFS
#include PART

// Small integers are exact in bf16, and their sums in fp32 (|sum| < 2^24):
// the product must equal the reference exactly.
static u16 bf16_of(int v) {
  float f = (float)v;
  unsigned u;
  memcpy(&u, &f, sizeof u);
  return (u16)(u >> 16);
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: mma_plain M N K AOFF BOFF\n");
    return 2;
  }
  const long long m = atoll(argv[1]), n = atoll(argv[2]), k = atoll(argv[3]);
  const int aoff = atoi(argv[4]), boff = atoi(argv[5]);
  if (m < 1 || n < 1 || k < 1 || aoff < 0 || boff < 0) {
    fprintf(stderr, "mma_plain: want M N K >= 1 and offsets >= 0\n");
    return 2;
  }
  u16* abuf = new u16[aoff + m * k];
  u16* bbuf = new u16[boff + k * n];
  float* D = new float[m * n];
  writes = new int[m * n]();
  u16* A = abuf + aoff;
  u16* B = bbuf + boff;
  unsigned s = 12345u;
  auto next = [&]() { s = s * 1664525u + 1013904223u; return (int)((s >> 16) % 9) - 4; };
  std::vector<int> a(m * k), b(k * n);   // b in the layout's order: nt n x k, nn k x n
  for (long long i = 0; i < m * k; i++) { a[i] = next(); A[i] = bf16_of(a[i]); }
  for (long long i = 0; i < k * n; i++) { b[i] = next(); B[i] = bf16_of(b[i]); }
  for (long long i = 0; i < m * n; i++) D[i] = NAN;

  const long long tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  for (long long tm = 0; tm < tiles_m; tm++)
    for (long long tn = 0; tn < tiles_n; tn++)
      for (int t = 0; t < THREADS; t++) {
        threadIdx.x = t;
        plain_tile(D, A, B, m, n, k, tm * BM, tn * BN);
      }

  long long bad = 0, unwritten = 0, twice = 0;
  for (long long r = 0; r < m; r++)
    for (long long c = 0; c < n; c++) {
      long long want = 0;
      for (long long kk = 0; kk < k; kk++) want += (long long)a[r * k + kk] * (NN ? b[kk * n + c] : b[c * k + kk]);
      const float got = D[r * n + c];
      if (writes[r * n + c] != 1) {
        if (writes[r * n + c] == 0) unwritten++;
        else twice++;
      } else if (got != (float)want) {
        if (bad < 3) fprintf(stderr, "D[%lld][%lld] = %g, want %lld\n", r, c, got, want);
        bad++;
      }
    }
  delete[] abuf;
  delete[] bbuf;
  delete[] D;
  delete[] writes;
  if (bad || unwritten || twice) {
    printf("FAIL %s %lldx%lldx%lld, A +%d, B +%d elements: %lld outputs wrong, %lld never written, %lld written twice\n",
           NN ? "nn" : "nt", m, n, k, aoff, boff, bad, unwritten, twice);
    return 1;
  }
  printf("ok %s %lldx%lldx%lld, A +%d, B +%d elements: all %lld outputs exact (tiles %d x %d, %d threads)\n",
         NN ? "nn" : "nt", m, n, k, aoff, boff, m * n, BM, BN, THREADS);
  return 0;
}
