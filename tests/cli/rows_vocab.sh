#!/usr/bin/env bash
# bench/rows_vocab.py's registry side without a GPU (--no-eager): after
# fake sweeps and a fake scan of a vocabulary-width task, the verification
# table counts candidates by status and the script exits 1 when one was
# wrong (a peeled kernel that computed a wrong row, as a GPU run of
# bench/rows_vocab.sh would report it), 0 when none; the family table names
# each template's fastest candidate; the rpb table compares rows per block
# with one row a block; the last table gives the scanned width its template
# and "not tuned" to a width the registry has no scan of.
. "$(dirname "$0")/lib.sh"

spec v.yaml <<'YAML'
name: v
search: random
seed: 3
max_evals: 3
tasks:
  - op: rmsnorm
    dtypes: [bf16]
    templates: [tma]
    shapes: {rows: {values: [4096]}, cols: {values: [32001]}}
YAML
seed_db "$T/ok.db"
fake_sweep ok "$T/ok.db" "$T/v.yaml"
expect_eq "a fake sweep at 32001 exits 0" "$RC" 0 || show_last
run env AITUNE_WORKER="$FAKE" FAKE_MODE=ok FAKE_STATE="$T/fake-scan" "$AITUNE" scan "$T/v.yaml" --db "$T/ok.db" --quiet
expect_eq "a fake scan at 32001 exits 0" "$RC" 0 || show_last
PY=$ROOT/bench/rows_vocab.py
run python3 "$PY" "$T/ok.db" --verify "$T/ok.db" --rpb "$T/ok.db" --no-eager --cols 32000,32001
expect_eq "rows_vocab.py --no-eager exits 0 when every candidate verified" "$RC" 0 || show_last
expect_stdout '^\| rmsnorm \| rmsnorm/tma \| bf16 \| 4 \| 0 \| 0 \|$' "the verification table counts 4 ok (the default and 3), 0 wrong"
expect_stdout '^verification: 4 candidates, 0 wrong$' "... and says so"
expect_stdout '^\| rmsnorm \| 32001 \| rmsnorm/tma \| [0-9.]+ \| [0-9]+ \| \{.*"peel":1' "the family table names the fastest peel candidate"
expect_stdout '^\| rmsnorm \| 32001 \| ' "the rpb table has the width"
expect_stdout '^\| rmsnorm \| 4096x32001 \| [0-9.]+ \| [0-9]+ \| - \| - \| - \| rmsnorm/tma \|$' "the last table: the scanned width and its template"
expect_stdout '^\| rmsnorm \| 4096x32000 \| - \| - \| - \| - \| - \| not tuned \|$' "... a width without a scan: not tuned"
tail -n 1 "$T/out" | grep -q '^| rmsnorm | 4096x32001 ' ||
    fail "the scanned table comes last: $(tail -n 1 "$T/out")"

seed_db "$T/bad.db"
fake_sweep wrong_verify:2 "$T/bad.db" "$T/v.yaml"
run python3 "$PY" "$T/ok.db" --verify "$T/bad.db" --no-eager --cols 32001
expect_eq "rows_vocab.py exits 1 when a verified candidate was wrong" "$RC" 1
expect_stdout '^verification: 4 candidates, 1 wrong$' "... and counts it"
run python3 "$PY" "$T/ok.db" --verify "$T/empty.db" --no-eager --cols 32001
expect_eq "exits 1 when the verification sweep left no measurement" "$RC" 1
done_testing
