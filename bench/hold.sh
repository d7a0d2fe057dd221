#!/usr/bin/env bash
# Buckets that hold (issue 12): sweep SPEC (a spec with `hold: true`) on the
# GPU, then report per op the worst loss of a bucket's race winner at the
# bucket's middle and upper edge against the fastest finalist there, before
# (the race's winner) and after (the finalist hold chose). Logs to OUTDIR.
#   bench/hold.sh OUTDIR [SPEC] [--budget D]
set -u
out=${1:?usage: bench/hold.sh OUTDIR [SPEC] [--budget D]}
spec=${2:-bench/hold/memory.yaml}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$out"
db=$(mktemp -d /tmp/aitune-hold.XXXX)/hold.db
start=$(date +%s)
build/aitune sweep "$spec" --db "$db" --quiet "$@" > "$out/hold-sweep.txt" 2> "$out/hold-sweep.err"
echo "sweep exit $? after $(( $(date +%s) - start )) s"
grep '^hold:' "$out/hold-sweep.err"
python3 - "$out/hold-sweep.txt" <<'PY' | tee "$out/hold-table.txt"
import re, sys
before, after, n, moved, broken = {}, {}, {}, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"hold +(\S+) (\S+) (\S+): the race's winner loses (everything )?([0-9.]+)% .*; (it stays|another finalist)", line)
    if m:
        op = m.group(1)
        loss = float("inf") if m.group(4) else float(m.group(5))
        n[op] = n.get(op, 0) + 1
        before[op] = max(before.get(op, 0.0), loss)
        if m.group(6) == "it stays":
            after[op] = max(after.get(op, 0.0), loss)
        continue
    m = re.match(r"hold +(\S+) (\S+) (\S+): .* worst loss ([0-9.]+)%", line)
    if m:
        op = m.group(1)
        moved[op] = moved.get(op, 0) + 1
        after[op] = max(after.get(op, 0.0), float(m.group(4)))
print("| op | buckets probed | winners changed | worst loss before | worst loss after |")
print("| --- | --- | --- | --- | --- |")
for op in n:
    f = lambda v: "fails" if v == float("inf") else "%.1f%%" % v
    print("| %s | %d | %d | %s | %s |" % (op, n[op], moved.get(op, 0), f(before[op]), f(after.get(op, 0.0))))
PY
