// The wgmma family's work schedule (templates/lib/wgmma_streamk.lua:
// sched_init and item_at) run on the CPU over many grids, so a unit lost or
// done twice, or a stream-K piece that its fix-up would not add, is caught
// without a GPU.
//
// Built by tests/cli/streamk_host.sh from a generated stream-K kernel: PART
// names a file with the source's `#define STREAMK` line and its schedule
// (from `struct sched_t` to the accumulator slot).
//   g++ -std=c++17 -DPART='"sched.cuh"' streamk.cpp && ./a.out
// For every units count 1..600, k-tiles 1, 2, 3, 7, 64, 65 and grids of 8,
// 13, 66 and 132 workers, one CTA or a pair a worker (at most 132 CTAs), it
// checks:
//  - every (unit, k-tile) is some worker's, exactly once;
//  - data-parallel items are whole units below dp, stream-K ones at or
//    above it; a worker has at most one stream-K piece (STREAMK 1) or two
//    (STREAMK 2), and no two pieces share an accumulator slot (sk_mine);
//  - a stream-K unit's pieces are the ones its ticket counts to and its last
//    piece adds (sk_piece: their slots, in k order), each following the one
//    before in k; under STREAMK 2 every worker's share of the split k-tiles
//    differs from another's by at most one.
// Prints one line a mode and "FAIL ..." for the first few failures; exits 1
// on any.
#include <algorithm>
#include <cstdio>
#include <vector>

#define AIT_DEV static inline
template<class T> static inline T min(T a, T b) { return a < b ? a : b; }
template<class T> static inline T max(T a, T b) { return a > b ? a : b; }
static struct { unsigned x; } gridDim, blockIdx;
static int cluster_ = 1;
#define CLUSTER cluster_
#include PART

static int fails = 0, checks = 0;
static void check(bool ok, const char* what, int nunits, int kiters, int G) {
  checks++;
  if (ok) return;
  if (++fails <= 10) printf("FAIL %s (units %d, k-tiles %d, workers %d, cluster %d)\n", what, nunits, kiters, G, cluster_);
}

struct item { int w, u, k0, k1, slot; };

static void one(int nunits, int kiters, int G) {
  gridDim.x = (unsigned)(G * cluster_);
  std::vector<int> cover((size_t)nunits * kiters, 0);
  std::vector<item> items;
  std::vector<int> share(G, 0);
  sched_t S0{};
  for (int w = 0; w < G; w++) {
    blockIdx.x = (unsigned)(w * cluster_ + cluster_ - 1);
    sched_t S;
    sched_init(S, nunits, kiters);
    if (w == 0) S0 = S;
    int u, k0, k1, nsk = 0;
    for (int it = 0; item_at(S, it, u, k0, k1); it++) {
      const bool in = u >= 0 && u < nunits && k0 >= 0 && k0 < k1 && k1 <= kiters;
      check(in, "an item inside the grid's units and k", nunits, kiters, G);
      if (!in) return;
      if (it < S.ndp) check(u < S.dp && k0 == 0 && k1 == kiters, "a data-parallel item is a whole unit below dp", nunits, kiters, G);
      else {
        check(u >= S.dp, "a stream-K item is a unit at or above dp", nunits, kiters, G);
        items.push_back({ w, u, k0, k1, sk_mine(S, it) });
        share[w] += k1 - k0;
        nsk++;
      }
      for (int kb = k0; kb < k1; kb++) cover[(size_t)u * kiters + kb]++;
      check(nsk <= STREAMK, "at most STREAMK stream-K pieces a worker", nunits, kiters, G);
      if (nsk > STREAMK) return;
    }
  }
  bool once = true;
  for (int c : cover) once = once && c == 1;
  check(once, "every (unit, k-tile) exactly once", nunits, kiters, G);
  // Each piece's slot is its own.
  std::vector<int> slots;
  for (const item& x : items) slots.push_back(x.slot);
  std::sort(slots.begin(), slots.end());
  check(std::adjacent_find(slots.begin(), slots.end()) == slots.end(), "no two pieces share a slot", nunits, kiters, G);
  for (int sl : slots) check(sl >= 0 && sl < STREAMK * G, "a slot inside the workspace's", nunits, kiters, G);
  // The fix-up of unit dp + u0 waits for sk_piece(u0, -1) pieces (its
  // ticket) and adds slots sk_piece(u0, pc) in that order: the pieces that
  // ran must be exactly those, piece pc the pc-th in k.
  std::vector<std::vector<item>> pieces(S0.sk);
  for (const item& x : items) pieces[x.u - S0.dp].push_back(x);
  for (int u0 = 0; u0 < S0.sk; u0++) {
    std::vector<item>& ps = pieces[u0];
    std::sort(ps.begin(), ps.end(), [](const item& a, const item& b) { return a.k0 < b.k0; });
    const int np = sk_piece(S0, u0, -1);
    check((int)ps.size() == np, "a stream-K unit has the pieces its ticket counts to", nunits, kiters, G);
    for (size_t pc = 0; pc < ps.size() && (int)pc < np; pc++) {
      check(sk_piece(S0, u0, (int)pc) == ps[pc].slot, "the fix-up adds piece pc's slot pc-th", nunits, kiters, G);
      if (pc) check(ps[pc].k0 == ps[pc - 1].k1, "piece pc follows piece pc - 1 in k", nunits, kiters, G);
    }
  }
  if (STREAMK == 2 && S0.sk) {
    const auto mm = std::minmax_element(share.begin(), share.end());
    check(*mm.second - *mm.first <= 1, "every worker's share of the split k-tiles within one of another's", nunits, kiters, G);
  }
}

int main() {
  const int ks[] = { 1, 2, 3, 7, 64, 65 }, gs[] = { 8, 13, 66, 132 };
  for (int c = 1; c <= 2; c++) {
    cluster_ = c;
    for (int G : gs)
      for (int kiters : ks)
        for (int nunits = 1; nunits <= 600 && G * c <= 132; nunits++) one(nunits, kiters, G);
  }
  printf("%s STREAMK %d: %d checks, %d failed\n", fails ? "FAIL" : "ok  ", STREAMK, checks, fails);
  return fails ? 1 : 0;
}
