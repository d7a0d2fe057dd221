#!/usr/bin/env bash
# Specs are untrusted input (issue 14, items 7, 8 and 9): duplicate keys,
# option injection through arch, control characters in messages, deep
# nesting, huge files, special files and oversized shapes are refused with
# exit 3 and one error line, quickly.
. "$(dirname "$0")/lib.sh"

body='tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}'

printf 'name: a\nname: b\n%s\n' "$body" >"$T/dup.yaml"
expect_exit 3 "a duplicate top-level key" "$AITUNE" compile "$T/dup.yaml" --db "$T/r.db"
expect_stderr "^aitune: error: spec '.*dup.yaml' line 2: field 'name' appears twice" "the duplicate is named with its line"
expect_stderr_lines 1 "duplicate key: one error line"

spec dupdim.yaml <<'EOF'
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
      n: {log2: [8, 8]}
EOF
expect_exit 3 "a duplicate dim" "$AITUNE" compile "$T/dupdim.yaml" --db "$T/r.db"
expect_stderr "line 6: .*dim 'n' appears twice" "the duplicate dim is named with its line"

spec duptask.yaml <<'EOF'
tasks:
  - op: axpy
    op: cast
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
EOF
expect_exit 3 "a duplicate key in a task" "$AITUNE" compile "$T/duptask.yaml" --db "$T/r.db"
expect_stderr "line 3: field 'op' appears twice in a task" "the task's duplicate key is named"

for arch in "sm_90 -DX=1" "sm_90 -G" "sm_9" "compute_90" "sm_90a;rm"; do
    printf 'arch: "%s"\n%s\n' "$arch" "$body" >"$T/arch.yaml"
    expect_exit 3 "arch '$arch' is refused" "$AITUNE" compile "$T/arch.yaml" --db "$T/r.db"
    expect_stderr "line 1: unknown arch .*known: .*sm_90a" "arch '$arch': names the known archs"
done
[ -e "$T/r.db" ] && fail "a refused spec created the registry" || ok "a refused spec leaves no registry"

printf 'tasks:\n  - op: axpy\n    dtypes: [f32]\n    "bad\\e]0;owned\\a\\nkey": 1\n    shapes:\n      n: {log2: [6, 6]}\n' >"$T/ctl.yaml"
expect_exit 3 "an unknown key with control characters" "$AITUNE" compile "$T/ctl.yaml" --db "$T/r.db"
expect_stderr_lines 1 "control characters: one error line"
if grep -q $'\x1b' "$T/err" || grep -q $'\a' "$T/err"; then fail "the error carries raw terminal escapes"; else ok "escapes are printed escaped"; fi
expect_stderr 'bad\\x1b]0;owned\\x07\\nkey' "the key is shown with its bytes escaped"

python3 -c "print('tasks: ' + '[' * 80000 + ']' * 80000)" >"$T/deep.yaml"
start=$(date +%s)
expect_exit 3 "80000-deep nesting" timeout 20 "$AITUNE" compile "$T/deep.yaml" --db "$T/r.db"
expect_stderr "nested more than 16 levels" "deep nesting: says why"
[ $(( $(date +%s) - start )) -le 2 ] && ok "deep nesting is refused within 2 s" || fail "deep nesting took more than 2 s"
python3 -c "print('tasks: ' + '{a: ' * 20000 + '1' + '}' * 20000)" >"$T/deepmap.yaml"
expect_exit 3 "deep nesting of mappings" timeout 20 "$AITUNE" compile "$T/deepmap.yaml" --db "$T/r.db"

expect_exit 3 "compile /dev/zero" timeout 20 "$AITUNE" compile /dev/zero --db "$T/r.db"
expect_stderr "spec '/dev/zero': not a regular file" "/dev/zero: not a regular file"
mkfifo "$T/fifo"
expect_exit 3 "compile a FIFO (no writer: must not block)" timeout 20 "$AITUNE" compile "$T/fifo" --db "$T/r.db"
expect_exit 3 "compile a directory" "$AITUNE" compile "$T" --db "$T/r.db"
{ printf '%s\n' "$body"; head -c 2000000 /dev/zero | tr '\0' '#'; echo; } >"$T/huge.yaml"
expect_exit 3 "a 2 MB spec" "$AITUNE" compile "$T/huge.yaml" --db "$T/r.db"
expect_stderr "larger than 1024 KiB" "a huge spec: says it is too large"

printf '%s\n---\n%s\n' "$body" "$body" >"$T/two.yaml"
expect_exit 3 "two YAML documents" "$AITUNE" compile "$T/two.yaml" --db "$T/r.db"

spec big.yaml <<'EOF'
tasks:
  - op: transpose
    dtypes: [f32]
    shapes:
      rows: {log2: [40, 40]}
      cols: {log2: [40, 40]}
EOF
expect_exit 3 "a shape of 2^80 elements" "$AITUNE" compile "$T/big.yaml" --db "$T/r.db"
expect_stderr "line 6: .*more than 2\\^48 elements" "2^80 elements: says the shape is too large"

# Item 8: a shape whose buffers exceed the GPU's memory is refused before
# the worker tries to allocate them (the fake GPU has 86 GB; axpy at 2^36
# needs 512 GiB).
spec big36.yaml <<'EOF'
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [36, 36]}
EOF
fake_sweep ok "$T/big36.db" "$T/big36.yaml"
expect_eq "a sweep of buffers larger than the GPU's memory exits 3" "$RC" 3 || show_last
expect_stderr "spec '.*big36.yaml' line 2: axpy f32 n=2\\^36 needs 549755813888 bytes of buffers; the GPU has" \
    "the shape's bytes and the GPU's memory are named"

done_testing
