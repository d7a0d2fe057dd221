// The second mid-size swapab kernel's plan of A's boxes and its choice of
// width (templates/gemm_nt/swapab.lua, MID2_HOST), run on the CPU over
// every pass height 1..BN, so what the GPU would load and multiply is
// checked without one.
//
// Built by tests/cli/swapab_mid2.sh from a generated kernel: DEFS names a
// file with the config's #defines (BN, MC, WIDTH_FOR), PART the source's
// host-testable part.
//   g++ -std=c++17 -DDEFS='"defs.h"' -DPART='"part.cuh"' swapab_boxes.cpp
//   ./swapab_boxes W1 W2 ...   (the widths the kernel's switch has cases for)
// Prints one "ok ..." line, or "FAIL ..." lines and exits 1. For each
// height rows and each CTA cx of a multicast group of MC, the boxes that
// CTA issues (j = cx, cx + MC, ...) together with the group's others must:
// start below rows (no box wholly past m) at a multiple of their own
// height (whole 1024-byte swizzle atoms: 64 rows or 8), each row below
// rows in exactly one box, end within the BN rows the slot has, fill at
// most 7 rows past rows, and write as many bytes as a_bytes(rows) says
// (what each CTA's full mbarrier expects). width_for(rows) must be one of
// the widths, hold rows, and be the narrowest that does.
#include <cstdio>
#include <cstdlib>
#include <vector>

#define AIT_DEV static inline
#include DEFS
#include PART

static int fails;
static void bad(const char* what, int rows, int x) {
  if (fails++ < 20) std::printf("FAIL rows %d (%d): %s\n", rows, x, what);
}

int main(int argc, char** argv) {
  std::vector<int> widths;
  for (int i = 1; i < argc; i++) widths.push_back(std::atoi(argv[i]));
  if (widths.empty()) { std::printf("FAIL no widths given\n"); return 1; }
  long checked = 0;
  for (int rows = 1; rows <= BN; rows++) {
    int nbig;
    const int nbox = a_boxes(rows, nbig);
    std::vector<int> cover(BN + 64, 0);
    long bytes = 0;
    int owners = 0;
    for (int cx = 0; cx < MC; cx++) {
      for (int j = cx; j < nbox; j += MC) {
        const int row = a_row(j, nbig), h = j < nbig ? 64 : 8;
        owners++;
        if (row >= rows) bad("a box starts past the pass's rows", rows, j);
        if (row % h) bad("a box does not start at a multiple of its height", rows, j);
        if (row + h > BN) bad("a box ends past the slot's BN rows", rows, j);
        for (int r = row; r < row + h && r < BN + 64; r++) cover[r]++;
        bytes += 128L * h;
        checked++;
      }
    }
    if (owners != nbox) bad("boxes issued by none or by two CTAs of the group", rows, owners);
    int past = 0;
    for (int r = 0; r < BN + 64; r++) {
      if (r < rows && cover[r] != 1) bad("a row of the pass loaded not exactly once", rows, r);
      if (r >= rows && cover[r] > 1) bad("a row past the pass loaded twice", rows, r);
      if (r >= rows && cover[r]) past++;
    }
    if (past > 7) bad("more than 7 rows past m zero-filled", rows, past);
    if (bytes != (long)a_bytes(rows)) bad("a_bytes is not the bytes the boxes write", rows, (int)bytes);
    const int w = width_for(rows);
    bool known = false;
    for (int v : widths) {
      if (v == w) known = true;
      if (v >= rows && v < w) bad("a narrower width holds the rows", rows, v);
    }
    if (!known) bad("width_for gives a width the switch has no case for", rows, w);
    if (w < rows) bad("width_for gives a width narrower than the rows", rows, w);
  }
  if (fails) return 1;
  std::printf("ok BN %d MC %d: heights 1..%d, %ld boxes; widths", BN, MC, BN, checked);
  for (int v : widths) std::printf(" %d", v);
  std::printf("\n");
  return 0;
}
