// The wgmma family's staging code (templates/lib/wgmma.lua: stage_all, the
// overlapped copy and the TMA thread's band waits) and tma_ws's copy of D
// (ws_copy) run on the CPU, so its claims, bands and copies are checked
// without a GPU.
//
// Built by tests/cli/staging_host.sh from a generated kernel: DEFS names a
// file with the config's #defines, PART the source's host-testable part.
//   g++ -std=c++17 -DDEFS='"defs.h"' -DPART='"part.cuh"' staging.cpp
//   ./staging M N K GRID [DOFF]  (prints "ok ..." lines, or "FAIL ..." and exits 1)
// tma_ws (EPI_WS): after the staging, the copy warps of every CTA copy its
// tiles from a patterned copy of D in the workspace to D (DOFF elements
// past a 16-byte boundary, against an inaccessible page), every tile
// marked ready, and the same threads then take the consumers' warps'
// shares of its last tile; D must then equal the copy on the grid's tiles,
// and the copy warps alone must have left the consumers' shares unwritten.
// Each CUDA thread is a fiber (ucontext) of one OS thread, the fibers taken
// in turn wherever a GPU thread may be overtaken by the others: at a
// barrier (a warp's __shfl_sync and __syncwarp meet at the warp's,
// __syncthreads at the CTA's), at __nanosleep, and before and after every
// atomic and acquire load, so each other thread may observe the state
// between two of them (a counter published before its rows are copied is
// caught every time, not when two OS threads happen to interleave so). One
// OS thread switching fibers costs a small part of what OS threads meeting
// at futex barriers did. The grid is GRID CTAs of 128 threads (the producer
// warpgroup's size: stage_all runs on any number of warps; warps 1-3 copy
// behind the first wave). Operands sit against inaccessible pages, so a
// read past A or B faults.
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define AIT_DEV static inline
#define __restrict__
#define __shared__
template<class T> static inline T min(T a, T b) { return a < b ? a : b; }
template<class T> static inline T max(T a, T b) { return a > b ? a : b; }
struct uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{ x, y, z, w }; }
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) >> (s & 31));
}
template<class T> static inline T __ldg(const T* p) { return *p; }

// The fibers. The running one's threadIdx, blockIdx and CTA are globals,
// saved into its fiber when it yields and set from the next one's.
struct { unsigned x; } gridDim;
static struct { unsigned x; } threadIdx, blockIdx;
static int my_cta;
struct fiber_t { ucontext_t ctx; unsigned tid, bid; int cta; bool done; };
static std::vector<fiber_t> fibers;
static size_t cur;
static ucontext_t main_ctx;
static void enter(size_t f) {
  cur = f;
  threadIdx.x = fibers[f].tid; blockIdx.x = fibers[f].bid; my_cta = fibers[f].cta;
}
// The next fiber not done after the running one (itself if none is).
static size_t next_fiber() {
  size_t f = cur;
  do f = f + 1 == fibers.size() ? 0 : f + 1; while (fibers[f].done && f != cur);
  return f;
}
static void yield_() {
  fiber_t& me = fibers[cur];
  me.tid = threadIdx.x; me.bid = blockIdx.x; me.cta = my_cta;
  const size_t from = cur, to = next_fiber();
  if (to == from) return;
  enter(to);
  if (swapcontext(&fibers[from].ctx, &fibers[to].ctx)) { perror("swapcontext"); exit(2); }
}
struct barrier_t { unsigned need, count, gen; };
static void barrier_wait(barrier_t& b) {
  const unsigned gen = b.gen;
  if (++b.count == b.need) { b.count = 0; b.gen++; return; }
  while (b.gen == gen) yield_();
}

static inline unsigned atomicAdd(unsigned* p, unsigned v) {
  yield_();
  const unsigned r = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  yield_();
  return r;
}
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __nanosleep(unsigned) { yield_(); }
static inline unsigned ld_acquire(const unsigned* p) {
  yield_();
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline void fence_proxy_global() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

static const int CTA_THREADS = 128;
struct warp_t { barrier_t bar; unsigned slot[32]; };
struct cta_t { barrier_t bar; warp_t warp[CTA_THREADS / 32]; };
static std::vector<cta_t> ctas;
static warp_t& my_warp() { return ctas[my_cta].warp[threadIdx.x / 32]; }
static inline void __syncwarp() { barrier_wait(my_warp().bar); }
static inline void __syncthreads() { barrier_wait(ctas[my_cta].bar); }
static inline unsigned __shfl_sync(unsigned, unsigned v, int src) {
  warp_t& w = my_warp();
  w.slot[threadIdx.x % 32] = v;
  barrier_wait(w.bar);
  const unsigned r = w.slot[src];
  barrier_wait(w.bar);
  return r;
}
static inline unsigned __shfl_down_sync(unsigned mask, unsigned v, unsigned d) {
  const unsigned lane = threadIdx.x % 32;
  return __shfl_sync(mask, v, (int)(lane + d < 32 ? lane + d : lane));
}
static inline unsigned __byte_perm(unsigned a, unsigned b, unsigned sel) {
  const unsigned long long x = ((unsigned long long)b << 32) | a;
  unsigned r = 0;
  for (int i = 0; i < 4; i++) r |= (unsigned)(x >> (8 * ((sel >> (4 * i)) & 7)) & 0xff) << (8 * i);
  return r;
}
static inline uint4 ld_cg_v4(const void* p) { uint4 v; memcpy(&v, p, sizeof v); return v; }
static inline unsigned ld_acquire_cta(const unsigned* p) {
  yield_();
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

#include DEFS
#include PART

static long long m, n, k;
static const unsigned char *As, *Bs;
static unsigned char* ws;
static D_T* D;
static barrier_t grid_bar;      // every thread of the grid
static long long ws_left = -1;
#if EPI_WS
// Elements of D that differ from the copy in the workspace (D starts as
// its bitwise complement, so an element is copied or not, never both).
static long long count_fill() {
  const D_T* W = (const D_T*)(ws + ws_d_off(m, n, k));
  long long c = 0;
  for (long long r = 0; r < m; r++)
    for (long long q = 0; q < n; q++) c += memcmp(&D[r * n + q], &W[r * ws_d_pitch(n) + q], sizeof(D_T)) != 0;
  return c;
}
#endif
static long long a_pre = 0, band_rows = 1, b_pre = 0, kband_rows = 64;
static int units_m, units_n;
static unsigned bad_waits = 0, waits = 0, bad_kwaits = 0, kwaits = 0;

// size bytes whose end touches an inaccessible page (and whose start, 16-byte
// aligned, follows one), filled with a pattern.
static unsigned char* guarded(size_t size, unsigned seed) {
  const size_t pg = (size_t)sysconf(_SC_PAGESIZE), body = (size + 15) / 16 * 16;
  const size_t span = (body + pg - 1) / pg * pg + 2 * pg;
  unsigned char* base = (unsigned char*)mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED || mprotect(base + pg, span - 2 * pg, PROT_READ | PROT_WRITE)) { perror("mmap"); exit(2); }
  unsigned char* p = base + span - pg - body;
  for (size_t i = 0; i < body; i++) p[i] = (unsigned char)(seed * 2654435761u + i * 40503u >> 7);
  return p;
}

// Whether rows [r0, r1) of the staged copy of src (rows of cols, padded to
// pad elements) equal src.
static bool rows_equal(const unsigned char* src, long long cols, const unsigned char* dst, long long pad, long long r0, long long r1) {
  for (long long r = r0; r < r1; r++)
    if (memcmp(src + r * cols * 2, dst + r * pad * 2, (size_t)cols * 2)) return false;
  return true;
}

static void thread_main() {
  stage_all(As, Bs, ws, m, n, k, a_pre, b_pre);
#if OVERLAP
  const int G = (int)gridDim.x / CLUSTER, w = my_cta / CLUSTER, rank = my_cta % CLUSTER;
  if (threadIdx.x == 0) {
    // The TMA thread: every tile row this CTA's persistent walk reaches, its
    // band waited for, then read (A's rows of that tile).
    const long long ap = (k + 63) / 64 * 64;
    long long kready = b_pre, checked = 0;
    for (int u = w; u < units_m * units_n; u += G) {
      int tm, tn;
      tile_at(u, units_m, units_n, tm, tn);
      if (SHARE == 1) tm = 2 * tm + rank;
      wait_band(ws, tm, m, a_pre, band_rows);
      const long long r0 = min(m, (long long)tm * BM), r1 = min(m, (long long)tm * BM + BM);
      __atomic_fetch_add(&waits, 1u, __ATOMIC_RELAXED);
      if (!rows_equal(As, k, ws + SA_OFF, ap, r0, r1)) __atomic_fetch_add(&bad_waits, 1u, __ATOMIC_RELAXED);
#if OVERLAP_B
      // Its k loop: each k tile's rows of B waited for, then read.
      for (int kb = 0; kb < (int)((k + 63) / 64); kb++) {
        wait_kband(ws, kb, k, b_pre, kband_rows, kready);
        const long long k1 = min(k, (long long)kb * 64 + 64);
        if (k1 <= checked) continue;
        __atomic_fetch_add(&kwaits, 1u, __ATOMIC_RELAXED);
        if (!rows_equal(Bs, n, ws + SA_OFF + m * ap * 2, (n + 63) / 64 * 64, (long long)kb * 64, k1))
          __atomic_fetch_add(&bad_kwaits, 1u, __ATOMIC_RELAXED);
        checked = k1;
      }
#endif
    }
  } else if (threadIdx.x >= 32) {
    stage_late(As, Bs, ws, m, n, k, a_pre, band_rows, b_pre, kband_rows);
  }
#endif
  __syncthreads();
#if EPI_WS
  if (threadIdx.x >= 32) {
    blockIdx.x = (unsigned)my_cta;
    sched_t S;
    sched_init(S, units_m * units_n, (int)((k + 63) / 64));
    ws_copy(S, D, ws, m, n, k, units_m, units_n, my_cta % CLUSTER);
  }
  // Every CTA's copy warps are done: what they left of the last tiles is
  // the consumers' shares (counted once, by the grid's first thread).
  barrier_wait(grid_bar);
  if (my_cta == 0 && threadIdx.x == 0) ws_left = count_fill();
  barrier_wait(grid_bar);
  if (threadIdx.x >= 32) {
    // The consumers' warps' shares of the CTA's last tile, taken by these.
    sched_t S;
    sched_init(S, units_m * units_n, (int)((k + 63) / 64));
    int u, k0, k1, last = -1;
    for (int it = 0; item_at(S, it, u, k0, k1); it++) last = u;
    if (last >= 0) {
      int tm, tn;
      tile_at(last, units_m, units_n, tm, tn);
      if (SHARE == 1) tm = 2 * tm + my_cta % CLUSTER;
      if (SHARE == 2) tn = 2 * tn + my_cta % CLUSTER;
      for (int cw = 3 + (int)threadIdx.x / 32 - 1; cw < WS_WARPS; cw += 3) ws_copy_tile(D, ws, m, n, k, tm, tn, cw, WS_WARPS);
    }
  }
#endif
}

// A fiber's life: the thread's code, then the next fiber not done (main's
// context once none is left).
static void fiber_main() {
  thread_main();
  fibers[cur].done = true;
  const size_t to = next_fiber();
  if (to == cur) setcontext(&main_ctx);
  enter(to);
  setcontext(&fibers[to].ctx);
}

static int fails = 0;
static void check(bool ok, const char* what) {
  printf("%s %s (m=%lld n=%lld k=%lld grid=%u)\n", ok ? "ok  " : "FAIL", what, m, n, k, gridDim.x);
  fails += !ok;
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) { fprintf(stderr, "usage: staging M N K GRID [DOFF]\n"); return 2; }
  m = atoll(argv[1]); n = atoll(argv[2]); k = atoll(argv[3]);
  gridDim.x = (unsigned)atoi(argv[4]);
  const long long br = STAGE_B ? (NT ? n : k) : 0, bc = NT ? k : n;
  const long long ap = (k + 63) / 64 * 64, bp = (bc + 63) / 64 * 64;
  As = guarded((size_t)(m * k * 2), 1);
  Bs = guarded((size_t)((NT ? n : k) * (NT ? k : n) * 2), 2);
  size_t wsz = (size_t)SA_OFF + (STAGE_A ? (size_t)(m * ap * 2) : 0) + (size_t)(br * bp * 2);
#if EPI_WS
  const long long doff = argc == 6 ? atoll(argv[5]) : 0;
  wsz += (size_t)(m * ws_d_pitch(n)) * sizeof(D_T);
  D = (D_T*)guarded((size_t)(m * n + doff) * sizeof(D_T), 4) + doff;
#endif
  ws = guarded(wsz, 3);
#if EPI_WS
  {
    const unsigned char* W = ws + ws_d_off(m, n, k);
    for (long long r = 0; r < m; r++)
      for (long long q = 0; q < n; q++)
        for (size_t b = 0; b < sizeof(D_T); b++)
          ((unsigned char*)D)[(r * n + q) * sizeof(D_T) + b] = (unsigned char)~W[(r * ws_d_pitch(n) + q) * sizeof(D_T) + b];
  }
#endif
  memset(ws, 0, SA_OFF);       // the plan's zeroed part: the counters
  const int tiles_m = (int)((m + BM - 1) / BM), tiles_n = (int)((n + BN - 1) / BN);
  units_m = SHARE == 1 ? (tiles_m + 1) / 2 : tiles_m;
  units_n = SHARE == 2 ? (tiles_n + 1) / 2 : tiles_n;
#if EPI_WS
  ws_ready[0] = ws_ready[1] = ~0u;   // every tile in the copy
#endif
#if OVERLAP
  band_rows = (long long)((tiles_m + NBANDS - 1) / NBANDS) * BM;
  a_pre = first_rows(m, k, units_m, units_n, (int)gridDim.x / CLUSTER, band_rows);
  kband_rows = kband_rows_of(k);
  b_pre = NT ? n : first_krows(n, k);
  printf("     a_pre %lld of %lld rows, bands of %lld rows; b_pre %lld of %lld k rows, bands of %lld\n", a_pre, m, band_rows,
         b_pre, br, kband_rows);
#else
  a_pre = m;
  b_pre = br;
#endif
  ctas.resize(gridDim.x);
  for (auto& c : ctas) {
    c.bar = barrier_t{ (unsigned)CTA_THREADS, 0, 0 };
    for (auto& w : c.warp) w.bar = barrier_t{ 32, 0, 0 };
  }
  const size_t nt = (size_t)gridDim.x * CTA_THREADS, stack = 256 << 10;
  grid_bar = barrier_t{ (unsigned)nt, 0, 0 };
  unsigned char* stacks = (unsigned char*)mmap(nullptr, nt * stack, PROT_READ | PROT_WRITE,
                                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (stacks == MAP_FAILED) { perror("mmap"); return 2; }
  fibers.resize(nt);
  for (size_t t = 0; t < nt; t++) {
    fiber_t& f = fibers[t];
    f.tid = (unsigned)(t % CTA_THREADS); f.bid = 0; f.cta = (int)(t / CTA_THREADS); f.done = false;
    if (getcontext(&f.ctx)) { perror("getcontext"); return 2; }
    f.ctx.uc_stack.ss_sp = stacks + t * stack;
    f.ctx.uc_stack.ss_size = stack;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_main, 0);
  }
  enter(0);
  if (swapcontext(&main_ctx, &fibers[0].ctx)) { perror("swapcontext"); return 2; }

  if (STAGE_A) check(rows_equal(As, k, ws + SA_OFF, ap, 0, m), "every row of A is staged, equal to A");
  if (STAGE_B) check(rows_equal(Bs, bc, ws + SA_OFF + (STAGE_A ? m * ap * 2 : 0), bp, 0, br), "every row of B is staged, equal to B");
  const unsigned* ctl = (const unsigned*)(ws + CTL_OFF);
  check(ctl[0] == 0 && ctl[1] == 0 && ctl[2] == 0, "the up-front counters are left zero for the next launch");
#if OVERLAP
  bool bands = true;
  for (long long b = (a_pre + band_rows - 1) / band_rows; b * band_rows < m - 1 && b < NBANDS; b++)
    bands = bands && ctl[32 + b] == (unsigned)(min(m - 1, (b + 1) * band_rows) - b * band_rows);
  check(bands, "every late band counts exactly its rows (A's last row is staged up front)");
  check(waits > 0 && bad_waits == 0, "every band wait returned with its rows in place");
  printf("     %u tile rows waited for\n", waits);
#if OVERLAP_B
  bool kbands = true;
  for (long long b = b_pre / kband_rows; b * kband_rows < k - 1 && b < NBANDS; b++) {
    const long long lo = max(b_pre, b * kband_rows), hi = min(k - 1, (b + 1) * kband_rows);
    if (hi > lo) kbands = kbands && ctl[32 + NBANDS + b] == (unsigned)(hi - lo);
  }
  check(kbands, "every late band of B's k rows counts exactly its rows (B's last row is staged up front)");
  check(b_pre >= k - 1 || (kwaits > 0 && bad_kwaits == 0), "every k band wait returned with B's rows in place");
  printf("     %u k tiles of B checked\n", kwaits);
#endif
#endif
#if EPI_WS
  // D against the copy, everywhere; and what the copy warps alone left: the
  // consumers' shares of the last tiles, at least one element unless every
  // CTA's last tile is within the copy warps' shares.
  {
    const D_T* W = (const D_T*)(ws + ws_d_off(m, n, k));
    const long long dp = ws_d_pitch(n);
    long long bad = 0;
    for (long long r = 0; r < m; r++)
      for (long long q = 0; q < n; q++) bad += memcmp(&D[r * n + q], &W[r * dp + q], sizeof(D_T)) != 0;
    check(bad == 0, "tma_ws: every element of D equals the copy in the workspace");
    // The consumers' shares: warp cw of WS_WARPS takes 8-step runs cw,
    // cw + WS_WARPS, ...; the copy warps are 0-2. A step is 32 / L rows of
    // L lanes (f32: a row over WS_H steps), a lane 16 bytes of its row.
    const int G = (int)gridDim.x / CLUSTER, nunits = units_m * units_n;
    long long want = 0;
    for (int c = 0; c < (int)gridDim.x; c++) {
      const int w = c / CLUSTER;
      if (w >= nunits) continue;
      int tm, tn;
      tile_at(w + (nunits - 1 - w) / G * G, units_m, units_n, tm, tn);
      if (SHARE == 1) tm = 2 * tm + c % CLUSTER;
      if (SHARE == 2) tn = 2 * tn + c % CLUSTER;
      const long long rows = min(m - (long long)tm * BM, (long long)BM), cols = min(n - (long long)tn * BN, (long long)BN);
      if (rows <= 0 || cols <= 0) continue;
      const long long steps = (rows + 32 / WS_L - 1) / (32 / WS_L) * WS_H;
      for (long long st = 0; st < steps; st++) {
        if (st / 8 % WS_WARPS < 3) continue;
        for (int lane = 0; lane < 32; lane++) {
          const long long row = st / WS_H * (32 / WS_L) + lane / WS_L, ch = st % WS_H * WS_L + lane % WS_L;
          if (row < rows && ch * WS_CE < cols) want += min((long long)WS_CE, cols - ch * WS_CE);
        }
      }
    }
    check(ws_left == want, "tma_ws: the copy warps leave exactly the consumers' shares of the last tiles unwritten");
    printf("     %lld elements (D %lld elements past 16 bytes); %lld wrong; %lld left to the consumers' warps (%lld expected)\n",
           m * n, doff, bad, ws_left, want);
  }
#endif
  return fails ? 1 : 0;
}
