#!/usr/bin/env bash
# Alignment classes in bucket keys (src/align.h, docs/SPEC.md "Shapes and
# buckets"): 4096 and 4097 of one dim are buckets of their own, keyed
# without and with ":align1"; lookup (libaitune) and the dispatcher `aitune
# emit` writes hand each shape a winner tuned at a class it can run; the
# hold race and a split keep the bucket's class in every size they measure;
# a damaged winners.shape is one clear error. GEMM winners come from a fake
# sweep (kernels compiled, times made up), so no GPU is needed.
. "$(dirname "$0")/lib.sh"

# ---- one registry, 4096^3 and 4096 x 4097 x 4096 ----
spec gemm.yaml <<'YAML'
name: align
max_evals: 1
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [mma]
    shapes: {m: {values: [4096]}, n: {values: [4096, 4097]}, k: {values: [4096]}}
YAML
DB=$T/gemm.db
fake_sweep ok "$DB" "$T/gemm.yaml"
expect_eq "a spec listing n = 4096 and 4097 sweeps (exit 0)" "$RC" 0 || show_last
expect_eq "two winners, the odd one keyed with its class, each tuned at its own n" \
    "$(sql "$DB" "select bucket || ' ' || json_extract(shape, '\$.n') from winners order by bucket" | tr '\n' ';')" \
    "m=2^12,n=2^12,k=2^12 4096;m=2^12,n=2^12:align1,k=2^12 4097;"
expect_eq "both with the same edges" "$(sql "$DB" "select count(distinct lo || hi) from winners")" 1

# lookup: the bucket that answers each n.
SHAPES="4096,4096,4096 4096,4097,4096 4096,4098,4096 4096,4100,4096 4096,4104,4096 4096,8191,4096 5000,4099,6000 4096,4097,20000 4096,4096,20000"
got=""
for s in $SHAPES; do got="$got$s:$(gemm_lookup "$DB" "$s");"; done
expect_eq "lookup: 4097, 4098, 4100 (classes 1, 2, 4) take the odd winner, 4096 and 4104 the aligned one, exact or nearest" "$got" \
"4096,4096,4096:exact m=2^12,n=2^12,k=2^12;\
4096,4097,4096:exact m=2^12,n=2^12:align1,k=2^12;\
4096,4098,4096:exact m=2^12,n=2^12:align1,k=2^12;\
4096,4100,4096:exact m=2^12,n=2^12:align1,k=2^12;\
4096,4104,4096:exact m=2^12,n=2^12,k=2^12;\
4096,8191,4096:exact m=2^12,n=2^12:align1,k=2^12;\
5000,4099,6000:exact m=2^12,n=2^12:align1,k=2^12;\
4096,4097,20000:nearest m=2^12,n=2^12:align1,k=2^12;\
4096,4096,20000:nearest m=2^12,n=2^12,k=2^12;"

# A registry tuned at 4096 only answers 4097 from that bucket, exact, as before.
cp "$DB" "$T/aligned.db"
sql "$T/aligned.db" "delete from winners where bucket like '%:align%'; delete from measurements where bucket like '%:align%'" >/dev/null
got=""
for s in 4096,4097,4096 4096,4100,4096 4096,4096,4096; do got="$got$(gemm_lookup "$T/aligned.db" "$s");"; done
expect_eq "a registry with only the aligned winner answers every n of the range with it, exact" "$got" \
    "exact m=2^12,n=2^12,k=2^12;exact m=2^12,n=2^12,k=2^12;exact m=2^12,n=2^12,k=2^12;"

# emit: the dispatcher picks the kernel lookup picks, shape by shape.
expect_exit 0 "emit the whole op over both winners" "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --db "$DB" -o "$T/all.cu"
expect_true "the dispatcher carries each kernel's classes" grep -q '^static const unsigned char aitune_al\[2\]\[3\] = { {3, 3, 3}, {3, 0, 3} };' "$T/all.cu"
expect_dispatcher "$T/all.cu" "$DB" $SHAPES
run "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --shape 4096,4100,4096 --db "$DB" -o -
expect_stdout "^// Chosen at level 'exact': bucket m=2\^12,n=2\^12:align1,k=2\^12: " "emit for one shape takes the winner lookup takes"

# Resume: the same sweep again measures nothing and keeps both winners.
expect_resumed ok "$DB" "$T/gemm.yaml" "select bucket, shape, config from winners order by bucket"

# why: a shape's bucket is the one of its class.
run "$AITUNE" why gemm_nt --dtype bf16 --shape 4096,4097,4096 --db "$DB"
expect_stdout "^gemm_nt bf16 m=2\^12,n=2\^12:align1,k=2\^12 on sm_90" "why --shape 4096,4097,4096 explains the odd bucket"
expect_no_stdout "^gemm_nt bf16 m=2\^12,n=2\^12,k=2\^12 on" "and not the aligned one"
run "$AITUNE" why gemm_nt --dtype bf16 --shape 4096,4100,4096 --db "$DB"
expect_stdout "^gemm_nt bf16 m=2\^12,n=2\^12:align1,k=2\^12 on sm_90" "why --shape 4096,4100,4096: the odd bucket, whose winner runs it"
expect_no_stdout "^gemm_nt bf16 m=2\^12,n=2\^12,k=2\^12 on" "and not the aligned one"
run "$AITUNE" why gemm_nt --dtype bf16 --shape 4096,4104,4096 --db "$DB"
expect_stdout "^gemm_nt bf16 m=2\^12,n=2\^12,k=2\^12 on sm_90" "why --shape 4096,4104,4096: the aligned bucket"
expect_no_stdout "^gemm_nt bf16 m=2\^12,n=2\^12:align1,k=2\^12 on" "and not the odd one"
run "$AITUNE" why gemm_nt --dtype bf16 --shape 4096,4097,4096 --db "$T/aligned.db"
expect_stdout "^gemm_nt bf16 m=2\^12,n=2\^12,k=2\^12 on sm_90" "why --shape 4096,4097,4096 with the aligned winner only: that bucket"

# ---- a damaged winners.shape: one line, exit 3, from lookup and emit ----
for bad in '{"m":4096,"k":4096}|dim .n.' '{"m":4096,"n":"4097","k":4096}|dim .n.' '{"m":4096,"n":-4097,"k":4096}|integer >= 1' \
           '[4096,4097,4096]|JSON object'; do
    shape=${bad%|*} why=${bad#*|}
    cp "$DB" "$T/bad.db"
    sql "$T/bad.db" "update winners set shape = '$shape' where bucket like '%:align1%'" >/dev/null
    run "$AITUNE" lookup gemm_nt --arch sm_90 --dtype bf16 --shape 4096,4096,4096 --db "$T/bad.db"
    expect_eq "lookup over a winner with shape $shape exits 3" "$RC" 3
    expect_stderr "^aitune: error: registry '.*bad\.db': winner gemm_nt sm_90 bf16 m=2\^12,n=2\^12:align1,k=2\^12: .*$why" \
        "... naming the registry, the winner's bucket and what is wrong ($why)"
    expect_stderr_lines 1 "... on one line"
    run "$AITUNE" emit gemm_nt --arch sm_90 --dtype bf16 --db "$T/bad.db" -o "$T/bad.cu"
    expect_eq "emit over it exits 3" "$RC" 3
    expect_stderr "^aitune: error: registry '.*bad\.db': .*m=2\^12,n=2\^12:align1,k=2\^12: .*$why" "... saying why, on one line"
    expect_stderr_lines 1 "... one line"
    expect_true "... and writes nothing" test ! -e "$T/bad.cu"
done

# ---- hold and split keep the class (axpy; the fake's rankings flip at 5760) ----
seed_db "$T/split.db"
spec split.yaml <<'YAML'
name: split
search: random
max_evals: 8
top_k: 4
hold: true
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {values: [4096, 4097]}
YAML
fake_sweep flip_at:5760 "$T/split.db" "$T/split.yaml"
expect_eq "a hold sweep of n = 4096 and 4097 exits 0" "$RC" 0 || show_last
expect_eq "both buckets split at 5760; the odd one's parts tuned at odd sizes" \
    "$(sql "$T/split.db" "select bucket || ' ' || lo || ' ' || hi || ' ' || shape from winners order by bucket" | tr '\n' ';')" \
    'n=2^12/2^12 4096 5760 {"n":4096};n=2^12/5760 5760 8192 {"n":5760};n=2^12:align1/2^12 4096 5760 {"n":4097};n=2^12:align1/5760 5760 8192 {"n":5761};'
sizes=$(grep -o 'task=[0-9]*/f32' "$T/fake-state.log" | sort -u | sed 's/task=//; s|/f32||' | sort -n | tr '\n' ' ')
expect_eq "the sizes raced: the aligned bucket's at multiples of 64, the odd one's one above" "$sizes" \
    "4096 4097 5696 5697 5760 5761 8128 8129 "
got=""
for n in 4096 4097 5759 5760 5761 6001 6002 8191; do
    run "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape "$n" --db "$T/split.db" --json
    got="$got$n:$(sed -n 's/.*"bucket":"\([^"]*\)".*/\1/p' "$T/out");"
done
expect_eq "lookup answers from the part of the shape's class" "$got" \
    "4096:n=2^12/2^12;4097:n=2^12:align1/2^12;5759:n=2^12:align1/2^12;5760:n=2^12/5760;5761:n=2^12:align1/5760;6001:n=2^12:align1/5760;6002:n=2^12:align1/5760;8191:n=2^12:align1/5760;"
expect_resumed flip_at:5760 "$T/split.db" "$T/split.yaml" "select bucket, lo, hi, shape, config from winners order by bucket"

# ---- the spec ----
spec same.yaml <<'YAML'
name: same
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {values: [4096, 4104]}
YAML
run "$AITUNE" compile "$T/same.yaml" --db "$T/same.db"
expect_eq "4096 and 4104 (one bucket, one class) are refused (exit 3)" "$RC" 3
expect_stderr "^aitune: error: spec '.*same\.yaml' line 6: dim 'n': sizes 4096 and 4104 fall in the same bucket \[4096, 8192\) and alignment class 8" \
    "the message names both sizes and the class"
expect_stderr_lines 1 "... on one line"
done_testing
