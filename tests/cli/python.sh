#!/usr/bin/env bash
# tests/run: slow 20 (the Python layer's pytest suite, with PyTorch)
# The Python layer (python/aitune), without a GPU: `import aitune` without torch,
# then python/tests under pytest with the virtual environment `make deps` fills
# ($AITUNE_VENV, else .venv: torch and pytest), each pytest result one line here
# (PASSED -> ok, FAILED/ERROR -> FAIL, SKIPPED -> skip). Launches go to the
# recording libcuda (build/tests/fakecuda); a registry from a fake sweep gives
# the tests one real launch plan (AITUNE_SWEEP_DB).
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null 2>&1; then
    skip "the Python package: no python3"
    done_testing
    exit
fi
# Without torch: the ctypes layer imports, the torch modules load lazily.
out=$(cd "$T" && PYTHONPATH=$ROOT/python python3 -c 'import sys, aitune; print(aitune.Registry.__name__, "torch" in sys.modules)' 2>&1)
expect_eq "import aitune needs no torch" "$out" "Registry False"

# What crosses into C is checked first (ctypes neither checks a long long's
# range nor stops at a NUL): a size over 2^63 or a name or path with a NUL is
# ValueError, never a lookup of something else.
LIBSO=$ROOT/${BUILD:-build}/libaitune.so
if [ -f "$LIBSO" ] && ! nm -D "$LIBSO" 2>/dev/null | grep -q __asan_init && seed_db "$T/c.db"; then
    out=$(cd "$T" && AITUNE_LIB=$LIBSO PYTHONPATH=$ROOT/python python3 -c '
import sys, aitune
reg = aitune.Registry(sys.argv[1])
def why(f):
    try:
        f()
        return "accepted"
    except ValueError as e:
        return "ValueError"
    except aitune.AituneError as e:
        return "AituneError"
print(why(lambda: reg.lookup("axpy", "sm_90", "f32", (2**64 + 6,))),
      why(lambda: reg.lookup("axpy", "sm_90", "f32", (-2**64 + 6,))),
      why(lambda: reg.lookup("axpy", "sm_90", "f32", (4096.5,))),
      why(lambda: reg.lookup("axpy", "sm_90", "f32", (True,))),
      why(lambda: reg.lookup("axpy\0evil", "sm_90", "f32", (6,))),
      why(lambda: reg.lookup("axpy", "sm_90\0", "f32", (6,))),
      why(lambda: reg.kernel_in_context("axpy", "f32\0", (6,), "sm_90")),
      why(lambda: aitune.Registry(sys.argv[1] + "\0.other")),
      why(lambda: reg.lookup("axpy", "sm_90", "f32", (2**63 - 1,))))' "$T/c.db" 2>&1)
    expect_eq "sizes past a long long, non-integers and names or paths with a NUL are ValueError; a size that fits reaches libaitune" \
        "$out" "ValueError ValueError ValueError ValueError ValueError ValueError ValueError ValueError accepted"
else
    skip "the ctypes checks: no $LIBSO (make), or it is sanitized"
fi

PY=$VENV/bin/python
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch, pytest' >/dev/null 2>&1; then
    skip "the torch layer's tests (python/tests): no virtual environment with torch and pytest at $VENV (make deps; make VENV=DIR deps to share one)"
    done_testing
    exit
fi

LIB=$ROOT/${BUILD:-build}/libaitune.so
if nm -D "$LIB" 2>/dev/null | grep -q __asan_init; then
    skip "the torch layer's tests (python/tests): $LIB is built with a sanitizer, which python cannot load"
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
      cols: {values: [1000]}
YAML
DB=$T/py.db
fake_sweep ok "$DB" "$T/py.yaml"
expect_eq "fake sweep for the Python tests exits 0" "$RC" 0 || show_last

(cd "$ROOT" && AITUNE_LIB=$LIB AITUNE_SWEEP_DB=$DB "$PY" -m pytest -q -rA \
    -p no:cacheprovider -p no:logging --basetemp="$T/pytest" python/tests) >"$T/pytest.out" 2>&1
rc=$?
sed -n -e 's/^PASSED \(.*\)/ok   \1/p' -e "s/^FAILED \(.*\)/FAIL $SCRIPT: \1/p" -e "s/^ERROR \(.*\)/FAIL $SCRIPT: \1/p" \
    -e 's/^SKIPPED \[[0-9]*\] \(.*\)/skip \1/p' "$T/pytest.out"
if [ "$rc" != 0 ]; then
    if grep -q -e '^FAILED' -e '^ERROR' "$T/pytest.out"; then NFAIL=$((NFAIL + 1)); else fail "pytest exited $rc"; fi
    grep -E '^E ' "$T/pytest.out" | head -n 20 | sed -e 's/^/    /'
fi
done_testing
