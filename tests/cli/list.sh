#!/usr/bin/env bash
# aitune list: ops, templates (dtypes, archs, params), strategies; one op;
# --json; an unknown op is named.
. "$(dirname "$0")/lib.sh"

expect_exit 0 "list" "$AITUNE" list
expect_stdout "^templates and strategies from $ROOT\$" "list names the folder it read"
expect_stdout "^  axpy +dims n +dtypes f32 f16 bf16 +1 template" "list shows an op's dims and dtypes"
expect_stdout "^  softmax/tma +bf16 f16 f32 +sm_90\+ .*block=128,256,512,1024" "list shows a template's dtypes, archs and params"
STRATS=$(cd "$ROOT/search" && ls *.lua | sed 's/\.lua$//' | grep -vx 'space\|polish' | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')
expect_stdout "^  $STRATS\$" "list shows the search strategies (not the space helper, not the polish)"
expect_exit 0 "list one op" "$AITUNE" list softmax
expect_no_stdout "axpy" "list OP shows only that op"
expect_exit 0 "list --json" "$AITUNE" list --json
got=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
ops = {o["name"]: o for o in d["ops"]}
t = [t for t in ops["axpy"]["templates"] if t["name"] == "axpy/vec"][0]
print(ops["axpy"]["dims"], t["min_cc"], t["params"]["block"], t["configs"], " ".join(d["strategies"]))' <"$T/out" 2>&1)
expect_eq "list --json is JSON with ops, templates and strategies" "$got" \
    "['n'] 80 [64, 128, 256, 512, 1024] 200 $STRATS"
expect_exit 2 "list of an unknown op" "$AITUNE" list axpx
expect_stderr "^aitune: error: unknown op 'axpx' \(ops: attn_decode, axpy, cast," "the unknown op is named with the ops there are"
expect_exit 0 "help list" "$AITUNE" help list
expect_stdout "^usage: aitune list \[OP\] \[--json\]" "help list shows the usage"
done_testing
