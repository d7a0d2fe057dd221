#!/usr/bin/env bash
# The Python package (python/aitune) over build/libaitune.so, without a GPU:
# argument checks against launch plans, lookups, misses, clear errors
# (python/tests/test_aitune.py). Needs python3.
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
    skip "the Python package: no python3"
    done_testing
    exit
fi
spec py.yaml <<YAML
name: py
search: random
max_evals: 1
tasks:
  - op: softmax
    dtypes: [bf16]
    shapes:
      rows: {values: [64]}
      cols: {values: [1000, 5000]}
YAML
DB=$T/py.db
fake_sweep ok "$DB" "$T/py.yaml"
expect_eq "fake sweep for the Python checks exits 0" "$RC" 0 || show_last
AITUNE_LIB=$ROOT/build/libaitune.so python3 "$ROOT/python/tests/test_aitune.py" "$DB" 2>"$T/pyerr"
rc=$?
[ -s "$T/pyerr" ] && sed -e 's/^/    stderr: /' "$T/pyerr" | tail -n 5
expect_eq "python/tests/test_aitune.py exits 0" "$rc" 0
misses=$(sql "$DB" "select shape || ' ' || count from misses")
expect_eq "the miss it flushed is in the registry" "$misses" "64,1048576 1"
done_testing
