#!/usr/bin/env bash
# tests/run: slow 8 (attn_decode kernels compiled)
# Decode attention (templates/attn_decode) without a GPU: a spec of five
# dims (Llama-3-8B's heads: 32 over 8 kv heads of 128) plans, narrows the
# compiled-in head dim and group size to the shape's, and a fake sweep of a
# sample compiles every kernel without spills and keeps a winner keyed by
# all five dims; heads that do not divide, and head dims without a kernel,
# are refused with the reason; each kernel writes NaN, never a wrong number,
# at a head dim or group size it was not built for; emit writes a winner as
# a standalone .cu that nvcc builds.
. "$(dirname "$0")/lib.sh"

spec attn.yaml <<'YAML'
name: attn
tasks:
  - op: attn_decode
    dtypes: [bf16]
    shapes:
      b: {values: [1, 8], exact: true}
      h: {values: [32], exact: true}
      g: {values: [8], exact: true}
      n: {values: [184], exact: true}
      d: {values: [128], exact: true}
YAML
expect_exit 0 "a spec of five dims plans" "$AITUNE" compile "$T/attn.yaml" --plan
expect_stdout "attn_decode bf16 b=8,h=32,g=8,n=184,d=128" "each batch is a bucket of five exact dims"
expect_stdout "attn_decode/split +[0-9]+ +all" "the split family serves it"

seed_db "$T/attn.db"
fake_sweep ok "$T/attn.db" "$T/attn.yaml" --max-evals 6
expect_eq "a fake sweep of a sample exits 0" "$RC" 0 || show_last
n=$(sql "$T/attn.db" "select count(*) from cubins where source like '%#define HD 128%'")
expect_true "kernels were compiled ($n)" test "$n" -ge 4
expect_eq "every one compiled for the shape's head dim and group (4 heads a kv head)" \
    "$(sql "$T/attn.db" "select count(*) from cubins where source like '%#define HD 128%' and source like '%#define GRP 4%'")" "$n"
expect_eq "none spills" "$(sql "$T/attn.db" "select count(*) from cubins where source like '%#define HD 128%' and spills = 0 and stack = 0")" "$n"
expect_eq "each writes NaN at a shape it was not built for" \
    "$(sql "$T/attn.db" "select count(*) from cubins where source like '%#define HD 128%' and source like '%if (h != g * GRP || d != HD)%' and source like '%0x7fc00000%'")" "$n"
expect_eq "a winner per batch, keyed by the five dims" \
    "$(sql "$T/attn.db" "select group_concat(bucket, ' ') from (select bucket from winners where op = 'attn_decode' order by bucket)")" \
    "b=1,h=32,g=8,n=184,d=128 b=8,h=32,g=8,n=184,d=128"

# A standalone .cu of a five-dim winner, built by nvcc.
emit_builds "$T/attn.db" attn_decode sm_90 bf16 1,32,8,184,128 "$T/attn.cu" "attn_decode bf16 at batch 1"

sed 's/h: {values: \[32\]/h: {values: [30]/' "$T/attn.yaml" >"$T/h30.yaml"
expect_exit 0 "heads that do not divide over the kv heads plan" "$AITUNE" compile "$T/h30.yaml" --plan
expect_stdout "attn_decode/split +- +not for this bucket: h must be a multiple of g" "and are refused, saying why"
sed 's/d: {values: \[128\]/d: {values: [96]/' "$T/attn.yaml" >"$T/d96.yaml"
expect_exit 0 "a head dim of 96 plans" "$AITUNE" compile "$T/d96.yaml" --plan
expect_stdout "not for this bucket: head dim d must be 64, 128 or 256" "and is refused, saying why"

done_testing
