#!/usr/bin/env bash
# A bucket's search warm-started from its neighbours' winners (src/sweep_warm.h):
# in a range sweep each bucket after the first starts from the winners of the
# buckets tuned before it (the nearest first), by default; `warm: 0` turns it
# off, `warm: N` sets how many (and turns it on for point specs); a winner of
# the registry whose config or shape is broken is skipped, never an error; a
# bad `warm` is a bad spec; random and exhaustive searches are never
# warm-started. A split part's search is warm-started as a bucket's is.
. "$(dirname "$0")/lib.sh"

range_spec() {   # FILE [EXTRA-TOP-LEVEL-LINE]
    spec "$1" <<EOF
name: w
search: model
max_evals: 3
top_k: 2
${2:-}
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {range: [1, 16]}, n: {values: [256]}, k: {values: [256]}}
EOF
}
warm_lines() { grep -c " warm " "$T/trace"; }

range_spec r.yaml
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep ok "$T/r.db" "$T/r.yaml"
expect_eq "a range sweep exits 0" "$RC" 0 || show_last
nb=$(sql "$T/r.db" "select count(distinct bucket) from measurements")
nw=$(warm_lines)
expect_true "every bucket after the first is warm-started ($nw searches, $nb buckets)" test "$nw" -ge $((nb - 1)) -a "$nb" -ge 4
expect_true "at most 4 configs each (a range's default)" sh -c "! grep ' warm ' '$T/trace' | grep -qv ': [1-4] configs\$'"

range_spec off.yaml "warm: 0"
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep ok "$T/off.db" "$T/off.yaml"
expect_eq "warm: 0 sweeps, no search warm-started" "$RC $(warm_lines)" "0 0"
sed 's/^search: model$/search: random/' "$T/r.yaml" > "$T/rnd.yaml"
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep ok "$T/rnd.db" "$T/rnd.yaml"
expect_eq "search: random (the baseline) is not warm-started" "$RC $(warm_lines)" "0 0"

spec p.yaml <<'EOF'
name: p
search: model
max_evals: 3
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {values: [2, 3, 5]}, n: {values: [256]}, k: {values: [256]}}
EOF
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep ok "$T/p.db" "$T/p.yaml"
expect_eq "a point spec is not warm-started by default" "$RC $(warm_lines)" "0 0"

# m = 7 (in the bucket m = 5 was tuned in) searched at seed 7: cold, its search
# never meets the winner of m = 5 (W); warm-started, W is among what it measures.
W=$(sql "$T/p.db" "select config from winners where shape like '{\"m\":5,%'")
q_spec() {   # FILE WARM
    spec "$1" <<EOF
name: q
search: model
seed: 7
max_evals: 3
warm: $2
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [gemv]
    shapes: {m: {values: [7]}, n: {values: [256]}, k: {values: [256]}}
EOF
}
measured_w() { sql "$1" "select count(*) from measurements where shape like '{\"m\":7,%' and config = '$W'"; }
for w in 0 1; do
    q_spec "q$w.yaml" "$w"
    cp "$T/p.db" "$T/q$w.db"
    rm -f "$T/trace"
    AITUNE_TRACE="$T/trace" fake_sweep ok "$T/q$w.db" "$T/q$w.yaml"
    expect_eq "warm: $w at m = 7 exits 0" "$RC" 0 || show_last
done
expect_eq "warm: 1: one config, the nearest winner's, measured; warm: 0: not" \
    "$(warm_lines) $(measured_w "$T/q1.db") $(measured_w "$T/q0.db")" "1 1 0"

# A winner found at another m is carried to the search's (tmpl_carry):
# swapab's found at m = 192 starts a search at m = 215 with as many tiles of
# A's rows, each the narrowest width that holds them (one tile: 224).
sa_spec() {   # FILE M
    spec "$1" <<EOF
name: sa
search: model
seed: 3
max_evals: 4
warm: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes: {m: {values: [$2], exact: true}, n: {values: [4096]}, k: {values: [4096]}}
EOF
}
sa_spec sa192.yaml 192
fake_sweep ok "$T/sa.db" "$T/sa192.yaml"
expect_eq "swapab at m = 192 exits 0" "$RC" 0 || show_last
bn=$(sql "$T/sa.db" "select json_extract(config, '\$.bn') from winners")
want=$(awk -v bn="$bn" 'BEGIN { z = int((192 + bn - 1) / bn); need = int((215 + z - 1) / z);
    n = split("96 128 160 192 224 256", w, " "); for (i = 1; i <= n; i++) if (w[i] + 0 >= need) { print w[i]; exit } }')
# ... and the most of its nvar widths that width takes (equal steps a
# multiple of 8; wstep's none narrower than half of it), as carry keeps them.
nv=$(sql "$T/sa.db" "select json_extract(config, '\$.nvar') || ' ' || json_extract(config, '\$.wstep') from winners")
nvws=$(awk -v bn="$want" -v nv="${nv% *}" -v ws="${nv#* }" 'BEGIN {
    if (bn <= 64) { print nv, ws; exit }
    n = split("5 3 2", v, " ");
    for (i = 1; i <= n; i++) { x = v[i] + 0
        if (x <= nv + 0 && (ws == 0 && bn % (16 * (x - 1)) == 0 || ws != 0 && 2 * (bn - ws * (x - 1)) >= bn)) { print x, ws; exit } }
    print 1, (nv + 0 > 1 ? 0 : ws) }')
W2=$(sql "$T/sa.db" "select json_set(config, '\$.bn', $want, '\$.nvar', ${nvws% *}, '\$.wstep', ${nvws#* }) from winners")
sa_spec sa215.yaml 215
cp "$T/sa.db" "$T/sa192.db"
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep ok "$T/sa.db" "$T/sa215.yaml"
expect_eq "swapab at m = 215, warm-started, exits 0" "$RC" 0 || show_last
expect_eq "its warm start is m = 192's winner (bn $bn) carried to 215 (bn $want, nvar ${nvws% *})" \
    "$(grep ' warm-start gemm_nt ' "$T/trace" | sed 's/.*swapab: //')" "$W2"
expect_eq "and it is measured at 215" \
    "$(sql "$T/sa.db" "select count(*) from measurements where shape like '{\"m\":215,%' and config = '$W2'")" 1

# A carry that fails (a templates folder whose swapab carry raises): the
# failure is traced, the warm start is the winner's config as it is, and the
# sweep goes on.
mkdir -p "$T/home" && cp -r "$ROOT/templates" "$ROOT/search" "$T/home/"
sed -i 's/^  t.carry = function(.*)$/&\n    error("carry broke")/' "$T/home/templates/lib/swapab.lua"
rm -f "$T/trace"
cp "$T/sa192.db" "$T/sab.db"
AITUNE_HOME="$T/home" AITUNE_TRACE="$T/trace" fake_sweep ok "$T/sab.db" "$T/sa215.yaml"
expect_eq "a carry that raises: the sweep exits 0" "$RC" 0 || show_last
expect_true "the failure is traced, naming carry" grep -q ' warm-carry gemm_nt gemm_nt/swapab: .*carry broke' "$T/trace"
W=$(sql "$T/sa192.db" "select config from winners where shape like '{\"m\":192,%'")
expect_eq "the warm start is m = 192's winner as it is" \
    "$(grep ' warm-start gemm_nt ' "$T/trace" | sed 's/.*swapab: //')" "$W"

# A hostile registry: winners whose config or shape is broken are skipped.
cp "$T/p.db" "$T/h.db"
sql "$T/h.db" "update winners set config = '{\"cpw\":' where shape like '{\"m\":2,%';
               update winners set shape = 'not json' where shape like '{\"m\":3,%';
               update winners set shape = '{\"m\":-1,\"n\":256,\"k\":256}' where shape like '{\"m\":5,%'" >/dev/null
q_spec h.yaml 4
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep ok "$T/h.db" "$T/h.yaml"
expect_eq "broken winners in the registry: the sweep exits 0 and starts cold" "$RC $(warm_lines)" "0 0" || show_last

for bad in "warm: 17" "warm: -1" "warm: many"; do
    range_spec bad.yaml "$bad"
    fake_sweep ok "$T/bad.db" "$T/bad.yaml"
    expect_eq "'$bad' is a bad spec (exit 3)" "$RC" 3
    expect_true "its one line names the field" sh -c "grep -q warm '$T/err' && test \$(wc -l < '$T/err') -eq 1"
done

# A split part's search (split_evals) starts from its neighbours' winners
# too: each part searched is warm-started, under the part's key, but the
# first bucket's first (n=2^12: no winner is in the registry yet); the
# first bucket's other parts start from the winners its parts' searches
# found before them (sweep_warm.h's warm_seen: they are stored only when
# the bucket ends); warm: 0 leaves them cold.
spec parts.yaml <<'EOF'
name: parts
search: model
max_evals: 6
top_k: 3
hold: true
split_evals: 6
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {range: [4096, 16384]}
EOF
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep shape_time "$T/parts.db" "$T/parts.yaml"
expect_eq "a range sweep with split searches exits 0" "$RC" 0 || show_last
nsearched=$(grep -c ': searched at ' "$T/out")
n1=$(grep ': searched at ' "$T/out" | grep -c ' n=2^12/')
npw=$(grep -c ' warm axpy n=[^ ]*/[^ ]* axpy/vec: [1-4] configs$' "$T/trace")
expect_true "every part searched but the first bucket's first is warm-started ($npw of $nsearched)" \
    test "$nsearched" -ge 4 -a "$npw" = $((nsearched - 1))
expect_true "the first bucket's parts after its first start from its parts' winners ($n1 searched)" \
    test "$n1" -ge 2 -a "$(grep -c ' warm axpy n=2^12/' "$T/trace")" = $((n1 - 1))
nstart=$(grep -c ' warm-start axpy ' "$T/trace")
nconf=$(grep ' warm axpy ' "$T/trace" | awk '{s += $(NF-1)} END {print s + 0}')
expect_eq "each warm start's config is traced" "$nstart" "$nconf"
sed 's/^split_evals: 6$/split_evals: 6\nwarm: 0/' "$T/parts.yaml" > "$T/parts0.yaml"
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep shape_time "$T/parts0.db" "$T/parts0.yaml"
nsearched=$(grep -c ': searched at ' "$T/out")
expect_eq "warm: 0: parts searched ($nsearched), none warm-started" "$RC,$([ "$nsearched" -ge 2 ] && echo yes),$(grep -c ' warm ' "$T/trace")" "0,yes,0"
done_testing
