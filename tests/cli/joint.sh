#!/usr/bin/env bash
# tests/run: slow 9 (softmax's three templates compiled)
# One search per bucket across an op's templates (spec `joint: true`), with
# the fake worker: the bucket's budget covers all templates together, every
# template's default is measured first, the search may spend the rest on any
# family, one winner is stored; `aitune replay --joint` scores strategies
# over the joined landscapes; a bad `joint:` value is one clear line.
. "$(dirname "$0")/lib.sh"

joint_spec
DB=$T/joint.db
fake_sweep ok "$DB" "$T/joint.yaml" --keep-cubins
expect_eq "a joint sweep exits 0" "$RC" 0 || show_last
n=$(sql "$DB" "select count(*) from measurements where status != 'constraint'")
ntm=$(sql "$DB" "select count(distinct template) from measurements where status != 'constraint'")
[ "$n" -ge 9 ] && [ "$n" -le 12 ] && ok "the bucket's budget covers all templates: 9 searched + the defaults ($n measured)" ||
    fail "measured $n, want 9 to 12"
[ "$ntm" -ge 2 ] && ok "candidates of several templates were measured ($ntm)" || fail "templates measured: $ntm"
nd=$(sql "$DB" "select count(*) from defaults where op = 'softmax'")
expect_eq "the bucket's default is stored" "$nd" 1
expect_eq "one winner" "$(sql "$DB" "select count(*) from winners")" 1
expect_eq "each config is measured once" "$(sql "$DB" "select count(*) - count(distinct template || config) from measurements")" 0

# The same spec, per template: each template gets its own 9.
sed 's/^joint: true/joint: false/' "$T/joint.yaml" >"$T/split.yaml"
# (The kernels the joint sweep compiled, the defaults' among them, come from
# its cache: --keep-cubins above, cubin_seed.)
cubin_seed "$DB" "$T/split.db"
fake_sweep ok "$T/split.db" "$T/split.yaml"
n2=$(sql "$T/split.db" "select count(*) from measurements where status != 'constraint'")
[ "$n2" -gt "$n" ] && ok "without joint each template has its own budget ($n2 > $n)" || fail "per template measured $n2, joint $n"

# A bad value.
sed 's/^joint: true/joint: maybe/' "$T/joint.yaml" >"$T/bad.yaml"
fake_sweep ok "$T/bad.db" "$T/bad.yaml"
expect_eq "joint: maybe is a bad spec (exit 3)" "$RC" 3
expect_stderr "bad.yaml' line [0-9]+: 'joint' must be true or false" "the error names the file, line and field"
expect_stderr_lines 1 "in one line"

# Replay over joined landscapes.
run "$AITUNE" replay "$AITUNE_TEST_ROOT/tests/sim/landscapes/memory-softmax.tsv" --joint --strategy model,random --seeds 2 --budget 0.1
expect_eq "replay --joint exits 0" "$RC" 0 || show_last
expect_stdout "^softmax softmax/\* sm_90 bf16 rows=2\^14,cols=2\^12: 216 configs" "the three softmax templates are one landscape of 216 configs"
run "$AITUNE" replay "$AITUNE_TEST_ROOT/tests/sim/landscapes/memory-softmax.tsv" --strategy model --seeds 2 --budget 0.1
expect_stdout "^softmax softmax/hold .*: 156 configs" "without --joint each template is its own landscape"
done_testing
