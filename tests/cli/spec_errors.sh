#!/usr/bin/env bash
# Bad specs stop `aitune compile` and `aitune sweep` with exit 3 and one
# error line naming the file and line; `sweep` without a GPU exits 1 and
# points at `aitune compile`. Nothing is compiled here.
. "$(dirname "$0")/lib.sh"

spec bad.yaml <<'EOF'
name: bad
tasks:
  - op: axpy
    dtypes: [f32]
    shape:
      n: {log2: [10, 12]}
EOF
expect_exit 3 "compile of a spec with an unknown field" "$AITUNE" compile "$T/bad.yaml" --db "$T/r.db"
expect_stderr "^aitune: error: spec '.*bad.yaml' line 5: unknown field 'shape'" "the error names file, line 5 and the field"
expect_stderr_lines 1 "one error line"

spec unknown_op.yaml <<'EOF'
name: x
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [10, 10]}
  - op: axpyy
    dtypes: [f32]
    shapes:
      n: {log2: [10, 10]}
EOF
expect_exit 3 "unknown op in a spec" "$AITUNE" compile "$T/unknown_op.yaml" --db "$T/r.db"
expect_stderr "spec '.*unknown_op.yaml' line 7: .*unknown op 'axpyy'" "unknown op: names the task's line 7 and the op"
expect_stderr "known: .*axpy" "unknown op: lists the known ops"
expect_stderr_lines 1 "unknown op: one error line"

spec unknown_template.yaml <<'EOF'
name: x
tasks:
  - op: softmax
    dtypes: [bf16]
    templates: [hold, tmaa]
    shapes:
      rows: {values: [7]}
      cols: {values: [4096]}
EOF
expect_exit 3 "a template the op does not have" "$AITUNE" compile "$T/unknown_template.yaml" --db "$T/r.db"
expect_stderr "spec '.*unknown_template.yaml' line 5: op 'softmax' has no template 'tmaa' \(it has: .*hold.*stream" \
    "unknown template: names the line, the name and the op's templates"
expect_stderr_lines 1 "unknown template: one error line"

# A task that names templates tunes only those.
spec only_hold.yaml <<'EOF'
name: x
tasks:
  - op: softmax
    dtypes: [bf16]
    templates: [hold]
    shapes:
      rows: {values: [7]}
      cols: {values: [4096]}
EOF
# Two configs per template are enough to see which templates were compiled.
expect_exit 0 "compile of a task limited to one template" "$AITUNE" compile -v "$T/only_hold.yaml" --db "$T/only.db" --max-evals 2
expect_true "only softmax/hold was compiled" sh -c "grep -q 'softmax/hold' '$T/out' && ! grep -Eq 'softmax/(stream|tma)' '$T/out'"

spec unknown_dtype.yaml <<'EOF'
name: x
tasks:
  - op: axpy
    dtypes: [f32, bf61]
    shapes:
      n: {log2: [10, 10]}
EOF
expect_exit 3 "unknown dtype in a spec" "$AITUNE" compile "$T/unknown_dtype.yaml" --db "$T/r.db"
expect_stderr "spec '.*unknown_dtype.yaml' line [0-9]+: .*'bf61'" "unknown dtype: names a line and the dtype"
expect_stderr "f32, f16, bf16" "unknown dtype: lists the op's dtypes"

spec wrong_dim.yaml <<'EOF'
name: x
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      m: {log2: [10, 10]}
EOF
expect_exit 3 "a dim the op does not have" "$AITUNE" compile "$T/wrong_dim.yaml" --db "$T/r.db"
expect_stderr "line 3: .*dim 'n'" "wrong dim: names the task's line and the op's dim"

spec unknown_search.yaml <<'EOF'
name: x
tasks:
  - op: axpy
    dtypes: [f32]
    search: genetic_magic
    shapes:
      n: {log2: [10, 10]}
EOF
expect_exit 3 "unknown search strategy" "$AITUNE" sweep "$T/unknown_search.yaml" --db "$T/r.db"
expect_stderr "line 3: unknown search strategy 'genetic_magic'" "unknown strategy: named with the task's line"
# search/polish.lua polishes one config (a part's winner: split_polish); a
# spec may not name it as a search.
sed 's/search: genetic_magic/search: polish/' "$T/unknown_search.yaml" >"$T/polish_search.yaml"
expect_exit 3 "the polish as a task's search" "$AITUNE" sweep "$T/polish_search.yaml" --db "$T/r.db"
expect_stderr "line 3: search strategy 'polish' is not a search: it polishes one config \(split_polish\)" \
    "the polish as a search: the line names it and says what it is"

spec bad_yaml.yaml <<'EOF'
name: x
tasks:
  - op: axpy
    dtypes: [f32, bf16
EOF
expect_exit 3 "invalid YAML" "$AITUNE" sweep "$T/bad_yaml.yaml" --db "$T/r.db"
expect_stderr "spec '.*bad_yaml.yaml' line [1-9]" "invalid YAML: names file and line"
expect_exit 3 "a missing spec file" "$AITUNE" compile "$T/nope.yaml" --db "$T/r.db"
expect_stderr "nope.yaml.*No such file" "missing spec: names the file and the reason"

spec sm75.yaml <<'EOF'
name: x
arch: sm_75
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
EOF
expect_exit 3 "compile for an arch without device facts" "$AITUNE" compile "$T/sm75.yaml" --db "$T/r75.db"
expect_stderr "arch 'sm_75'" "the unknown arch is named"

[ -e "$T/r.db" ] && fail "a bad spec creates no registry" || ok "a bad spec creates no registry"

# sweep needs a GPU: without one it says so, exits 1 and points at compile.
small_spec
if has_gpu; then
    skip "sweep without a GPU: this machine has a GPU"
else
    expect_exit 1 "sweep without a GPU" "$AITUNE" sweep "$T/small.yaml" --db "$T/nogpu.db"
    expect_stderr "needs a GPU" "sweep without a GPU says it needs one"
    [ -e "$T/nogpu.db" ] && fail "sweep without a GPU creates no registry" || ok "sweep without a GPU creates no registry"
    expect_stderr "aitune compile" "sweep without a GPU mentions aitune compile"
fi
# The same through a fake worker that reports no GPU.
run env AITUNE_WORKER="$FAKE" FAKE_MODE=nogpu "$AITUNE" sweep "$T/small.yaml" --db "$T/nogpu2.db"
expect_eq "sweep with a worker that finds no GPU exits 1" "$RC" 1
expect_stderr "cuInit failed: no GPU" "the worker's reason reaches stderr"
expect_stderr "aitune compile" "and the hint to use aitune compile"
run env AITUNE_WORKER="$FAKE" FAKE_MODE=nogpu "$AITUNE" devices
expect_eq "devices with a worker that finds no GPU exits 1" "$RC" 1
expect_stderr "no GPU: cuInit failed" "devices says no GPU with the worker's reason"

# A corrupt registry: sweep exits 3 and leaves the file as it was.
head -c 8192 /dev/urandom >"$T/corrupt.db"
cp "$T/corrupt.db" "$T/corrupt.orig"
run env AITUNE_WORKER="$FAKE" "$AITUNE" sweep "$T/small.yaml" --db "$T/corrupt.db"
expect_eq "sweep on a corrupt registry exits 3" "$RC" 3
expect_stderr "registry '.*corrupt.db'" "sweep on a corrupt registry names it"
expect_true "sweep leaves a corrupt registry byte-identical" cmp "$T/corrupt.db" "$T/corrupt.orig"
run "$AITUNE" compile "$T/small.yaml" --db "$T/corrupt.db"
expect_eq "compile on a corrupt registry exits 3" "$RC" 3
expect_true "compile leaves a corrupt registry byte-identical" cmp "$T/corrupt.db" "$T/corrupt.orig"

done_testing
