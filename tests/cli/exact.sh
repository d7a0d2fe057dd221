#!/usr/bin/env bash
# Dims tuned at exact sizes (docs/SPEC.md "Exact sizes"): Llama-3-8B's fused
# q/k/v weight (6144 x 4096) added, `exact: true`, to a registry whose log2
# bucket n=2^12 holds o_proj's 4096 x 4096 winner: its own bucket, keyed
# n=6144, that replaces nothing; lookup (libaitune), why and the dispatcher
# `aitune emit` writes answer 6144 from it and 4096 or 5000 from the log2
# bucket as before; resume, merge, export and import keep the keys; hold
# never cuts an exact dim; a spec that asks for exact with a range is one
# line, exit 3. GEMM winners come from a fake sweep (kernels compiled, times
# made up), so no GPU is needed.
. "$(dirname "$0")/lib.sh"

# ---- a registry of log2 winners, as one tuned before exact dims ----
spec log2.yaml <<'YAML'
name: log2
max_evals: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [16]}, n: {values: [4096]}, k: {values: [4096]}}
YAML
DB=$T/llama.db
fake_sweep ok "$DB" "$T/log2.yaml"
expect_eq "the log2 sweep exits 0" "$RC" 0 || show_last
old=$(sql "$DB" "select bucket || ' ' || lo || ' ' || hi || ' ' || config || ' ' || median_us from winners")

# ---- the fused shape, exact n and k, into it ----
spec fused.yaml <<'YAML'
name: fused
max_evals: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [16]}, n: {values: [6144], exact: true}, k: {values: [4096], exact: true}}
YAML
fake_sweep ok "$DB" "$T/fused.yaml"
expect_eq "the exact sweep exits 0" "$RC" 0 || show_last
expect_eq "its winner: keyed by n and k's sizes, edges [6144, 6145) and [4096, 4097), tuned there" \
    "$(sql "$DB" "select bucket || ' ' || lo || ' ' || hi || ' ' || shape from winners where bucket not like '%2^12%'")" \
    'm=2^4,n=6144,k=4096 16,6144,4096 32,6145,4097 {"m":16,"n":6144,"k":4096}'
expect_eq "the log2 winner is still there, untouched" \
    "$(sql "$DB" "select bucket || ' ' || lo || ' ' || hi || ' ' || config || ' ' || median_us from winners where bucket like '%2^12%'")" "$old"
expect_eq "its measurements are its own bucket's" \
    "$(sql "$DB" "select count(*) from measurements where bucket = 'm=2^4,n=6144,k=4096' and json_extract(shape, '\$.n') = 6144")" \
    "$(sql "$DB" "select count(*) from measurements where json_extract(shape, '\$.n') = 6144")"
expect_resumed ok "$DB" "$T/fused.yaml" "select bucket, shape, config from winners order by bucket"

# ---- lookup: the bucket that answers each shape ----
SHAPES="16,6144,4096 31,6144,4096 16,4096,4096 16,5000,4096 16,6144,4104 16,8191,4096 64,6144,4096 64,4096,4096 1,6144,4096"
want="16,6144,4096:exact m=2^4,n=6144,k=4096;31,6144,4096:exact m=2^4,n=6144,k=4096;\
16,4096,4096:exact m=2^4,n=2^12,k=2^12;16,5000,4096:exact m=2^4,n=2^12,k=2^12;\
16,6144,4104:exact m=2^4,n=2^12,k=2^12;16,8191,4096:exact m=2^4,n=2^12,k=2^12;\
64,6144,4096:nearest m=2^4,n=6144,k=4096;64,4096,4096:nearest m=2^4,n=2^12,k=2^12;\
1,6144,4096:nearest m=2^4,n=6144,k=4096;"
got=""
for s in $SHAPES; do got="$got$s:$(gemm_lookup "$DB" "$s");"; done
expect_eq "lookup: 6144 x 4096 from its exact bucket, 4096 and 5000 from the log2 one; nearest m at n = 6144 from the exact one" \
    "$got" "$want"
cp "$DB" "$T/old.db"
sql "$T/old.db" "delete from winners where bucket not like '%2^12%'" >/dev/null
same=""
for s in 16,4096,4096 16,5000,4096 16,6144,4104 64,4096,4096; do
    [ "$(gemm_lookup "$DB" "$s")" = "$(gemm_lookup "$T/old.db" "$s")" ] || same="$same $s"
done
expect_eq "every shape the exact bucket does not hold is answered as without it" "$same" ""
expect_eq "(without it, 6144 x 4096 is the log2 bucket's)" "$(gemm_lookup "$T/old.db" 16,6144,4096)" "exact m=2^4,n=2^12,k=2^12"

# ---- why --shape picks as lookup does ----
run "$AITUNE" why gemm_nt --dtype bf16 --shape 16,6144,4096 --db "$DB"
expect_stdout "^gemm_nt bf16 m=2\^4,n=6144,k=4096 on sm_90" "why --shape 16,6144,4096 explains the exact bucket"
expect_no_stdout "^gemm_nt bf16 m=2\^4,n=2\^12,k=2\^12 on" "and not the log2 one"
run "$AITUNE" why gemm_nt --dtype bf16 --shape 16,5000,4096 --db "$DB"
expect_stdout "^gemm_nt bf16 m=2\^4,n=2\^12,k=2\^12 on sm_90" "why --shape 16,5000,4096: the log2 bucket"
run "$AITUNE" why gemm_nt --dtype bf16 --bucket m=2^4,n=6144,k=4096 --db "$DB"
expect_stdout "^gemm_nt bf16 m=2\^4,n=6144,k=4096 on sm_90" "why --bucket takes an exact key"

# ---- emit: the dispatcher picks as lookup does ----
expect_exit 0 "emit the whole op over both winners" "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --db "$DB" -o "$T/all.cu"
expect_true "the dispatcher counts each kernel's exact dims" grep -Eq '^static const int aitune_ex\[2\] = \{ (0, 2|2, 0) \};' "$T/all.cu"
expect_dispatcher "$T/all.cu" "$DB" $SHAPES
run "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --shape 16,6144,4096 --db "$DB" -o -
expect_stdout "^// Chosen at level 'exact': bucket m=2\^4,n=6144,k=4096: " "emit for 6144 x 4096 takes the exact winner"

# ---- merge, export and import keep exact keys ----
run "$AITUNE" merge "$T/merged.db" "$DB"
expect_eq "merge takes a registry with exact keys (exit 0)" "$RC" 0 || show_last
expect_eq "... with both winners" "$(sql "$T/merged.db" "select group_concat(bucket, ' ') from (select bucket from winners order by bucket)")" \
    "m=2^4,n=2^12,k=2^12 m=2^4,n=6144,k=4096"
run "$AITUNE" export --format t4 --db "$DB" -o "$T/all.t4.json"
expect_eq "export exits 0" "$RC" 0 || show_last
run "$AITUNE" import "$T/all.t4.json" --db "$T/imported.db"
expect_eq "import of the export exits 0" "$RC" 0 || show_last
expect_eq "... keeping each measurement's key" \
    "$(sql "$T/imported.db" "select group_concat(b, ' ') from (select distinct bucket b from measurements order by b)")" \
    "m=2^4,n=2^12,k=2^12 m=2^4,n=6144,k=4096"
# A file naming an exact bucket its shape is not in, or a malformed one: refused.
for bad in 'm=2^4,n=6000,k=4096' 'm=2^4,n=6144:align1,k=4096' 'm=2^4,n=06144,k=4096'; do
    sed "s/\"m=2^4,n=6144,k=4096\"/\"$bad\"/" "$T/all.t4.json" >"$T/bad.t4.json"
    run "$AITUNE" import "$T/bad.t4.json" --db "$T/bad-import.db"
    expect_eq "import refuses bucket $bad for shape 16,6144,4096 (exit 3)" "$RC" 3
    expect_stderr "bucket '$(printf '%s' "$bad" | sed 's/\^/\\^/g')' is not its shape's \(m=2\^4,n=(6144|2\^12),k=(4096|2\^12)\)" "... saying so"
done
# A merged shard whose exact key does not fit its edges: refused, one line.
cp "$DB" "$T/shard.db"
sql "$T/shard.db" "update winners set hi = '32,6146,4097' where bucket = 'm=2^4,n=6144,k=4096'" >/dev/null
run "$AITUNE" merge "$T/merged2.db" "$T/shard.db"
expect_eq "merge refuses an exact key over wider edges (exit 3)" "$RC" 3
expect_stderr "edges of dim n are \[6144, 6146\), the key's \[6144, 6145\)" "... naming the dim and both edges"
expect_stderr_lines 1 "... on one line"
run "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape 16,6144,4096 --db "$T/shard.db"
expect_eq "lookup over it: a corrupt registry (exit 3)" "$RC" 3
expect_stderr "its key names n = 6144 exactly, its edges are \[6144, 6146\)" "... saying why"

# ---- hold: a split cuts the range dim, never the exact one ----
spec hold.yaml <<'YAML'
name: hold
search: random
max_evals: 2
top_k: 2
tasks:
  - op: softmax
    dtypes: [bf16]
    templates: [stream]
    shapes:
      rows: {range: [16, 31]}
      cols: {values: [1000, 1016], exact: true}
YAML
fake_sweep flip_at:24,flip_dim:0 "$T/hold.db" "$T/hold.yaml"
expect_eq "a range over exact cols with rankings that flip at rows 24 sweeps (exit 0)" "$RC" 0 || show_last
expect_eq "each bucket split along rows at 24; every part keeps its one cols" \
    "$(sql "$T/hold.db" "select group_concat(bucket || '@' || lo || '-' || hi, ' ') from (select * from winners where bucket not like '%align1%' order by bucket)")" \
    "rows=2^4,cols=1000/24,1000@24,1000-32,1001 rows=2^4,cols=1000/2^4,1000@16,1000-24,1001 rows=2^4,cols=1016/24,1016@24,1016-32,1017 rows=2^4,cols=1016/2^4,1016@16,1016-24,1017"
cols=$(grep -o 'task=[0-9]*,[0-9]*/' "$T/fake-state.log" | sed 's/.*,//; s|/||' | sort -u | tr '\n' ' ')
expect_eq "every size raced has cols 1000 or 1016" "$cols" "1000 1016 "
run "$AITUNE" merge "$T/hold-merged.db" "$T/hold.db"
expect_eq "merge checks the parts partition buckets with an exact dim (exit 0)" "$RC" 0 || show_last
got=""
for s in 16,1000 24,1016 31,1000 20,1008; do
    run "$AITUNE" lookup softmax --arch sm_90 --dtype bf16 --shape "$s" --db "$T/hold.db" --json
    got="$got$s:$(sed -n 's/.*"level":"\([a-z]*\)".*"bucket":"\([^"]*\)".*/\1 \2/p' "$T/out");"
done
expect_eq "lookup answers from the part of the shape's cols" "$got" \
    "16,1000:exact rows=2^4,cols=1000/2^4,1000;24,1016:exact rows=2^4,cols=1016/24,1016;31,1000:exact rows=2^4:align1,cols=1000/24,1000;20,1008:nearest rows=2^4:align1,cols=1016/2^4,1016;"
expect_resumed flip_at:24,flip_dim:0 "$T/hold.db" "$T/hold.yaml" "select bucket, lo, hi, shape, config from winners order by bucket"

# ---- the spec ----
spec range.yaml <<'YAML'
name: range
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {range: [1, 64], exact: true}
YAML
run "$AITUNE" compile "$T/range.yaml" --db "$T/range.db"
expect_eq "exact with a range is refused (exit 3)" "$RC" 3
expect_stderr "^aitune: error: spec '.*range\.yaml' line 6: dim 'n': exact goes with values or log2, not range" "... saying so"
expect_stderr_lines 1 "... on one line"
spec twice.yaml <<'YAML'
name: twice
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {values: [4096, 4104, 4096], exact: true}
YAML
run "$AITUNE" compile "$T/twice.yaml" --db "$T/twice.db"
expect_eq "a size listed twice is refused (exit 3)" "$RC" 3
expect_stderr "^aitune: error: spec '.*twice\.yaml' line 6: dim 'n': size 4096 is listed twice" "... naming it, on its line"
done_testing
