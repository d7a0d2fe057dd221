#!/usr/bin/env bash
# tests/run: slow 45 (peel spaces compiled, host harnesses built)
# The row kernels' peel (templates/lib/rows.lua, lib/staged.lua) without a
# GPU: rows that start off a 16-byte boundary move their whole 16-byte
# vectors as vectors, the head and tail as scalars. The rules (peel only
# where rows are off a boundary, and there always for rows of 256 bytes or
# more; 16-byte vectors; no weights held in registers; a hold row fits its
# grid positions); the defaults at odd widths; the sources (peel bodies,
# the shifted weight loads, the scalar path kept for x and y at different
# offsets); the generated index arithmetic run on the host (every element
# of every row offset and length covered once, each vector aligned) and
# the shifted load ldu (every offset and bound, exact, no read outside the
# buffer); a sample of the peel spaces compiled by NVRTC with no spills
# and no stack (AITUNE_TEST_FULL=1: all of them); a peel winner emitted
# and built by nvcc. Correctness on the GPU: bench/rows_vocab.sh.
. "$(dirname "$0")/lib.sh"

KS=$ROOT/build/tests/kernel_sample
if [ ! -x "$KS" ]; then
    skip "peel: build/tests/kernel_sample is not built (make)"
    exit 0
fi


TMA1='{"block":256,"cluster":1,"occ":3,"peel":1,"red":0,"store":0}'
TMA0='{"block":256,"cluster":1,"occ":3,"peel":0,"red":0,"store":0}'
ks_accepted softmax/tma bf16 4096,32001 "$TMA1"
ks_refused softmax/tma bf16 4096,32000 '{"block":256,"cluster":1,"occ":3,"peel":1,"red":0,"store":0}' \
    "rows are 16-byte aligned: nothing to peel"
ks_refused softmax/tma bf16 4096,32001 "$TMA0" "rows off a 16-byte boundary: peel=1 copies their whole chunks in bulk"
ks_accepted rmsnorm/tma f32 4096,16002 '{"block":512,"cluster":2,"occ":1,"peel":1,"red":0,"rpb":1,"store":1}'
HOLD='"occ":0,"persist":0,"red":0,"tpr":1024,"wreg":0'
ks_accepted rmsnorm/hold bf16 4096,32001 "{\"block\":1024,\"nv\":4,$HOLD,\"peel\":1,\"vbytes\":16}"
ks_refused rmsnorm/hold bf16 4096,32001 "{\"block\":1024,\"nv\":4,$HOLD,\"peel\":1,\"vbytes\":8}" \
    "the peeled path moves 16-byte vectors"
ks_refused rmsnorm/hold bf16 4096,32001 '{"block":1024,"nv":4,"occ":0,"peel":1,"persist":1,"red":0,"tpr":1024,"vbytes":16,"wreg":1}' \
    "weights held in registers would need each row's shift"
# a row of 32761 elements starts at most 7 past a boundary: 32768 grid
# positions, one step of 1024 x 4 x 8; 32767 needs 32774
ks_accepted rmsnorm/hold bf16 4096,32761 "{\"block\":1024,\"nv\":4,$HOLD,\"peel\":1,\"vbytes\":16}"
ks_refused rmsnorm/hold bf16 4096,32767 "{\"block\":1024,\"nv\":4,$HOLD,\"peel\":1,\"vbytes\":16}" \
    "row does not fit the registers"
ks_refused softmax/stream bf16 4096,32001 '{"block":256,"nv":4,"occ":0,"passes":2,"peel":0,"persist":0,"red":0,"tpr":32,"vbytes":2}' \
    "rows of 256 bytes or more off a 16-byte boundary: peel=1 moves them in 16-byte vectors"
# short rows keep the scalar configs beside the peel ones
ks_accepted softmax/hold bf16 16,63 '{"block":128,"nv":1,"occ":0,"passes":2,"peel":0,"persist":0,"red":0,"tpr":64,"vbytes":2}'
ks_accepted softmax/hold bf16 16,63 '{"block":128,"nv":1,"occ":0,"passes":2,"peel":1,"persist":0,"red":0,"tpr":16,"vbytes":16}'
ks_refused layernorm/stream f32 4096,4096 '{"block":256,"nv":4,"occ":0,"peel":1,"persist":0,"red":0,"tpr":32,"vbytes":16}' \
    "rows are 16-byte aligned: nothing to peel"
# a config kept from before peel (no peel key) still instantiates as the
# aligned kernel it was
ks_line softmax/stream bf16 4096,4096 '{"block":256,"nv":4,"occ":0,"passes":2,"persist":0,"red":0,"tpr":32,"vbytes":16}' >"$T/old.txt"
mkdir -p "$T/old"
run "$KS" sources -o "$T/old" "$T/old.txt"
expect_eq "a config without peel instantiates" "$RC" 0
expect_true "... as the aligned kernel (no peel body)" bash -c "! grep -q '_peel' '$T/old/1.cu'"

# The defaults: at an odd width, peel with 16-byte vectors; aligned, none.
spec defaults.yaml <<'YAML'
name: defaults
tasks:
  - op: softmax
    dtypes: [bf16]
    shapes: {rows: {values: [4096]}, cols: {values: [4096, 4097, 32000, 32001]}}
  - op: rmsnorm
    dtypes: [f32]
    shapes: {rows: {values: [4096]}, cols: {values: [4097, 32001]}}
  - op: layernorm
    dtypes: [f16]
    shapes: {rows: {values: [4096]}, cols: {values: [4097, 32001]}}
YAML
run "$KS" list -n 0 "$T/defaults.yaml"
expect_eq "kernel_sample lists the defaults" "$RC" 0 || show_last
cp "$T/out" "$T/defaults.txt"
nodd=$(awk -F'\t' '$3 ~ /,(4097|32001)$/' "$T/defaults.txt" | wc -l)
nodd_peel=$(awk -F'\t' '$3 ~ /,(4097|32001)$/ && $5 ~ /"peel":1/' "$T/defaults.txt" | wc -l)
expect_true "defaults at odd widths exist ($nodd)" test "$nodd" -ge 12
expect_eq "every default at an odd width peels" "$nodd_peel" "$nodd"
expect_eq "... with 16-byte vectors (the register families)" \
    "$(awk -F'\t' '$3 ~ /,(4097|32001)$/ && $1 !~ /tma/ && $5 !~ /"vbytes":16/' "$T/defaults.txt" | wc -l)" 0
expect_eq "no default at an aligned width peels" \
    "$(awk -F'\t' '$3 ~ /,(4096|32000)$/ && $5 !~ /"peel":0/' "$T/defaults.txt" | wc -l)" 0

# The sources of one peel config per family.
{
    ks_line softmax/stream bf16 4096,32001 '{"block":256,"nv":4,"occ":0,"passes":2,"peel":1,"persist":0,"red":0,"tpr":32,"vbytes":16}'
    ks_line rmsnorm/hold bf16 4096,32001 "{\"block\":1024,\"nv\":4,$HOLD,\"peel\":1,\"vbytes\":16}"
    ks_line layernorm/stream f32 4096,32001 '{"block":256,"nv":4,"occ":0,"peel":1,"persist":0,"red":0,"tpr":32,"vbytes":16}'
    ks_line rmsnorm/tma bf16 4096,32001 '{"block":256,"cluster":2,"occ":1,"peel":1,"red":0,"store":1}'
    ks_line layernorm/tma f32 4096,32001 '{"block":256,"cluster":4,"occ":1,"peel":1,"red":0,"store":0}'
} >"$T/peel.txt"
mkdir -p "$T/src"
run "$KS" sources -o "$T/src" "$T/peel.txt"
expect_eq "the peel configs instantiate" "$RC" 0 || show_last
S=$T/src
expect_true "stream: peel body, scalar path where x and y start at different offsets" \
    grep -q 'if (pok) body_stream_peel<VEC>' "$S/1.cu"
expect_true "... the scalar path kept" grep -q 'else body_stream<1>' "$S/1.cu"
expect_true "hold: the hold peel body when the row's grid positions fit" \
    grep -qF 'if (pok && cols + VEC - 1 <= (long long)TPR * VEC * NV) body_hold_peel<VEC>' "$S/2.cu"
expect_true "rmsnorm's weights read with a shift at a peeled column" grep -qF 'wv = ldu<V>(w + c, w, w + cols)' "$S/2.cu"
expect_true "layernorm's weight and bias too" grep -qF 'bv = ldu<V>(b + c, b, b + cols)' "$S/3.cu"
expect_true "tma: the whole chunks in one bulk copy from the first aligned element" \
    grep -qF 'bulk_in(smaddr(sp + ph), xr + ph, (unsigned)nb * 16, mb)' "$S/4.cu"
expect_true "tma store 1: the whole chunks out in one bulk copy" \
    grep -qF 'bulk_out(yr + ph, smaddr(sp + ph), (unsigned)nb * 16)' "$S/4.cu"
expect_true "tma: the plain path kept" grep -q 'row_body<1>(' "$S/5.cu"
expect_true "tma: the weights shifted" grep -qF 'wv = ldu<V>(w + cb + c, w, w + cols), bv = ldu<V>(b + cb + c, b, b + cols)' "$S/5.cu"

# The generated index arithmetic on the host: lib/rows.lua's per-row peel
# (pm .. nsc, the vectors' test, the scalars' column) and lib/staged.lua's
# (m .. pt, nsc) pasted from the sources above into a harness that walks
# every thread of every step, for every offset a row can start at.
if command -v g++ >/dev/null 2>&1; then
    sed -n '/body_stream_peel(/,/^}/p' "$S/1.cu" >"$T/peel_body"
    grep -E '^ *const int (pm|pend|ph|pt|nsc) =' "$T/peel_body" >"$T/peel_row.inc"
    okx=$(grep -o 'ok\[j\] = rv && [^;]*' "$T/peel_body" | head -n 1 | sed 's/^ok\[j\] = //')
    kx=$(grep -o 'const int k = [^;]*' "$T/peel_body" | head -n 1 | sed 's/^const int k = //')
    sed -n '/if (pok) {/,/__syncthreads/p' "$S/4.cu" | grep -E '^ *const int (m|ph|nb|pt) =' >"$T/stage.inc"
    skx=$(grep -o 'const int k = [^;]*' "$S/4.cu" | head -n 1 | sed 's/^const int k = //')
    nscx=$(grep -o 'nsc = n - [^;]*' "$S/4.cu" | head -n 1)
    expect_eq "five per-row lines pasted" "$(wc -l <"$T/peel_row.inc")" 5
    expect_eq "four staged lines pasted" "$(wc -l <"$T/stage.inc")" 4
    cat >"$T/cover.cc" <<EOF
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
using std::min;
static int fails = 0;
static void bad(const char* what, long long cols, int off, int a, int b) {
  if (fails++ < 5) std::printf("FAIL cover: %s (cols %lld, offset %d, %d %d)\n", what, cols, off, a, b);
}
alignas(128) static unsigned char buf[1 << 22];
// lib/rows.lua: a row of cols elements starting pm0 elements past a
// 16-byte boundary, walked by TPR threads in steps of NV vectors.
template<typename T, int V> void rows(long long cols, int pm0, int TPR, int NV) {
  const T* xr = reinterpret_cast<const T*>(buf + 64 + pm0 * sizeof(T));
  const bool rv = true;
#include "peel_row.inc"
  if (pm != pm0) bad("pm", cols, pm0, pm, pm0);
  std::vector<int> seen(cols, 0);
  for (int c0 = 0; c0 < pend; c0 += TPR * V * NV)
    for (int t = 0; t < TPR; ++t) {
      for (int j = 0; j < NV; ++j) {
        const int c = c0 + (j * TPR + t) * V;
        if (!($okx)) continue;
        if ((uintptr_t)(xr + (c - pm)) % 16) bad("unaligned vector", cols, pm0, c, 0);
        for (int e = 0; e < V; ++e) {
          if (c - pm + e < 0 || c - pm + e >= cols) bad("vector outside the row", cols, pm0, c, e);
          else seen[c - pm + e]++;
        }
      }
      if (c0 == 0 && rv)
        for (int i = t; i < nsc; i += TPR) {
          const int k = $kx;
          if (k < 0 || k >= cols) bad("scalar outside the row", cols, pm0, i, k);
          else seen[k]++;
        }
    }
  for (long long i = 0; i < cols; ++i) if (seen[i] != 1) { bad("element not covered once", cols, pm0, (int)i, seen[i]); break; }
  if (ph > V - 1 || cols - pt > V - 1) bad("head or tail of a vector or more", cols, pm0, ph, pt);
}
// lib/staged.lua: a slice of n elements starting m0 past a boundary, staged
// at sx + m (sx 128-aligned).
template<typename T, int VE> void staged(int n, int m0) {
  constexpr int V = VE;
  const T* xr = reinterpret_cast<const T*>(buf + 64 + m0 * sizeof(T));
#include "stage.inc"
  const int $nscx;
  if (m != m0) bad("m", n, m0, m, m0);
  if ((m + n) * (int)sizeof(T) > n * (int)sizeof(T) + 16) bad("staged past the slice and 16 bytes", n, m0, m, 0);
  std::vector<int> seen(n, 0);
  if (nb > 0 && ((uintptr_t)(xr + ph) % 16 || (m + ph) * sizeof(T) % 16)) bad("unaligned chunks", n, m0, ph, nb);
  for (int i = 0; i < nb; ++i)
    for (int e = 0; e < V; ++e) {
      const int k = ph + i * V + e;
      if (k >= n) bad("chunk past the slice", n, m0, i, e);
      else seen[k]++;
    }
  for (int i = 0; i < nsc; ++i) {
    const int k = $skx;
    if (k < 0 || k >= n) bad("scalar outside the slice", n, m0, i, k);
    else seen[k]++;
  }
  for (int i = 0; i < n; ++i) if (seen[i] != 1) { bad("slice element not covered once", n, m0, i, seen[i]); break; }
}
int main() {
  long long nrow = 0;
  const long long wide[] = {32000, 32001, 50257, 100353};
  for (int pm = 0; pm < 8; ++pm) {
    for (long long cols = 1; cols <= 300; ++cols) {
      rows<unsigned short, 8>(cols, pm, 4, 2); rows<unsigned short, 8>(cols, pm, 32, 1);
      if (pm < 4) rows<float, 4>(cols, pm, 4, 2);
      nrow += 3;
    }
    for (long long cols : wide) { rows<unsigned short, 8>(cols, pm, 1024, 4); if (pm < 4) rows<float, 4>(cols, pm, 256, 4); nrow += 2; }
    for (int n = 0; n <= 300; ++n) { staged<unsigned short, 8>(n, pm); if (pm < 4) staged<float, 4>(n, pm); nrow += 2; }
  }
  std::printf("%lld rows and slices walked, %d failures\n", nrow, fails);
  return fails != 0;
}
EOF
    run g++ -std=c++17 -O1 -Wall -Wno-unknown-pragmas -Wno-unused-variable -I"$T" -o "$T/cover" "$T/cover.cc"
    expect_eq "the index harness builds" "$RC" 0 || show_last
    run "$T/cover"
    expect_eq "every element of every row offset and length covered once, vectors aligned ($(cat "$T/out"))" "$RC" 0 || show_last

    # ldu: exact at every offset and bound, vector loads aligned and inside
    # the buffer, the shifted path taken.
    sed -n '/^template<int V> AIT_DEV VecT<V> ldu(/,/^}/p' "$S/2.cu" >"$T/ldu.inc"
    expect_true "ldu pasted" test "$(wc -l <"$T/ldu.inc")" -ge 20
    cat >"$T/ldu.cc" <<'EOF'
#include <cstdint>
#include <cstdio>
#include <cstring>
#define AIT_DEV static inline
typedef ELT T;
template<int V> struct alignas(V * sizeof(T)) VecT { T e[V]; };
static const T *g_lo, *g_hi;
static long bad = 0, nvec = 0;
template<int V> static VecT<V> ldv(const T* p) {
  VecT<V> r{};
  if ((uintptr_t)p % sizeof(VecT<V>) || p < g_lo || p + V > g_hi) { bad++; return r; }
  nvec++;
  std::memcpy(&r, p, sizeof r);
  return r;
}
static unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned sh) {
  return (unsigned)((((unsigned long long)hi << 32) | lo) >> (sh & 31));
}
#include "ldu.inc"
template<int V> static long run() {
  alignas(64) static T buf[512];
  for (int i = 0; i < 512; ++i) { unsigned u = 0x9e3779b9u * (i + 1); std::memcpy(&buf[i], &u, sizeof(T)); }
  long wrong = 0, n = 0;
  for (int lo = 0; lo < 2 * V; ++lo)
    for (int hi = lo + V; hi <= lo + 6 * V; ++hi) {
      g_lo = buf + 32 + lo;
      g_hi = buf + 32 + hi;
      for (const T* p = g_lo; p + V <= g_hi; ++p, ++n) {
        VecT<V> r = ldu<V>(p, g_lo, g_hi);
        if (std::memcmp(&r, p, sizeof r)) wrong++;
      }
    }
  std::printf("V=%d: %ld loads, %ld wrong; ", V, n, wrong);
  return wrong;
}
int main() {
  long w = run<16 / sizeof(T)>() + run<8 / sizeof(T)>() + (sizeof(T) == 2 ? run<2>() : 0);
  std::printf("%ld vector loads, %ld outside or unaligned\n", nvec, bad);
  return w || bad || nvec == 0;
}
EOF
    for elt in "unsigned short" float; do
        run g++ -std=c++17 -O1 -Wall -Wno-unknown-pragmas "-DELT=$elt" -I"$T" -o "$T/ldu" "$T/ldu.cc"
        expect_eq "the ldu harness builds ($elt)" "$RC" 0 || show_last
        run "$T/ldu"
        expect_eq "ldu ($elt): $(cat "$T/out")" "$RC" 0 || show_last
    done
else
    skip "the host harnesses: no g++"
fi

# NVRTC: the peel spaces at odd widths compile without spills or stack.
spec odd.yaml <<'YAML'
name: peel-odd
seed: 5
search: random
tasks:
  - op: softmax
    dtypes: [bf16, f32]
    shapes: {rows: {values: [4096]}, cols: {values: [1001, 100353]}}
  - op: rmsnorm
    dtypes: [bf16, f32]
    shapes: {rows: {values: [4096]}, cols: {values: [1001, 100353]}}
  - op: layernorm
    dtypes: [bf16, f32]
    shapes: {rows: {values: [4096]}, cols: {values: [1001, 100353]}}
YAML
if [ "${AITUNE_TEST_FULL:-0}" = 1 ]; then which="every config" sample=; else which="2 sampled configs and the default" sample="--max-evals 2"; fi
expect_exit 0 "compile $which of every row family at odd widths" "$AITUNE" compile -v "$T/odd.yaml" --db "$T/odd.db" $sample
cp "$T/out" "$T/table"
for f in softmax/hold softmax/stream softmax/tma rmsnorm/hold rmsnorm/stream rmsnorm/tma layernorm/hold layernorm/stream layernorm/tma; do
    n=$(awk -v f="$f" '$2 == f' "$T/table" | wc -l)
    np=$(awk -v f="$f" '$2 == f && $3 ~ /"peel":1/' "$T/table" | wc -l)
    expect_true "$f: compiled at odd widths ($n)" test "$n" -ge 3
    expect_eq "$f: every one peels" "$np" "$n"
    expect_eq "$f: none spills" "$(awk -v f="$f" '$2 == f && $5 == 0' "$T/table" | wc -l)" "$n"
done
expect_eq "no kernel keeps a stack frame" "$(sql "$T/odd.db" "select count(*) from cubins where stack > 0")" 0

# A peel winner through a fake sweep, emitted and built by nvcc.
spec win.yaml <<'YAML'
name: win
search: random
max_evals: 2
tasks:
  - op: softmax
    dtypes: [bf16]
    templates: [tma]
    shapes: {rows: {values: [4096]}, cols: {values: [32001]}}
  - op: rmsnorm
    dtypes: [bf16]
    templates: [hold]
    shapes: {rows: {values: [4096]}, cols: {values: [4097]}}
YAML
seed_db "$T/win.db"
fake_sweep ok "$T/win.db" "$T/win.yaml"
expect_eq "a fake sweep at odd widths exits 0" "$RC" 0 || show_last
expect_eq "both winners peel" "$(sql "$T/win.db" "select count(*) from winners where config like '%\"peel\":1%'")" 2
if command -v nvcc >/dev/null 2>&1; then
    for q in "softmax 4096,32001" "rmsnorm 4096,4097"; do
        set -- $q
        emit_builds "$T/win.db" "$1" sm_90 bf16 "$2" "$T/$1.cu" "peel $1 at $2"
    done
else
    skip "nvcc builds the emitted peel kernels: no nvcc"
fi
done_testing
