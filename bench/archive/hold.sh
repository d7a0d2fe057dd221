#!/usr/bin/env bash
# Buckets that hold (issue 12): sweep SPEC (a spec with `hold: true`) on the
# GPU, then report per op the worst loss of a bucket's race winner at the
# bucket's middle and upper edge against the fastest finalist there, before
# (the race's winner), after hold (the finalist hold chose) and after
# splitting (the worst part of a bucket that split_at split, parts searched
# where they lose most included: spec split_evals), and the parts searched
# with their candidates. Logs to OUTDIR.
#   bench/archive/hold.sh OUTDIR [SPEC] [--budget D]
set -u
out=${1:?usage: bench/archive/hold.sh OUTDIR [SPEC] [--budget D]}
spec=${2:-bench/archive/hold/memory.yaml}
shift $(( $# >= 2 ? 2 : 1 ))
mkdir -p "$out"
db=$(mktemp -d /tmp/aitune-hold.XXXX)/hold.db
start=$(date +%s)
build/aitune sweep "$spec" --db "$db" --quiet "$@" > "$out/hold-sweep.txt" 2> "$out/hold-sweep.err"
echo "sweep exit $? after $(( $(date +%s) - start )) s"
grep '^hold:' "$out/hold-sweep.err"
python3 - "$out/hold-sweep.txt" <<'PY' | tee "$out/hold-table.txt"
import re, sys
inf = float("inf")
before, hold_after, parts, searched = {}, {}, {}, {}
for line in open(sys.argv[1]):
    m = re.match(r"hold +(\S+) (\S+) (\S+): the race's winner loses (everything )?([0-9.]+)% .*; (it stays|another finalist)", line)
    if m:
        key = (m.group(1), m.group(2), m.group(3))
        loss = inf if m.group(4) else float(m.group(5))
        before[key] = loss
        if m.group(6) == "it stays":
            hold_after[key] = loss
        continue
    m = re.match(r"hold +(\S+) (\S+) (\S+): .* worst loss ([0-9.]+)%", line)
    if m:
        hold_after[(m.group(1), m.group(2), m.group(3))] = float(m.group(4))
        continue
    # A part's own search (at S, where it loses most; its bucket may stay whole):
    # "split OP DT PARENT/CORNER: its winner loses X% (at ...): searched at S, N candidates; ..."
    m = re.match(r"split +(\S+) \S+ [^/ ]+/\S+: its winner loses .*: searched at \S+, ([0-9]+) candidates?", line)
    if m:
        s = searched.setdefault(m.group(1), [0, 0])
        s[0] += 1
        s[1] += int(m.group(2))
        continue
    # A part of a split bucket: "split OP DT PARENT/CORNER: edges: tmpl config, worst loss X% (at ...)"
    m = re.match(r"split +(\S+) (\S+) ([^/ ]+)/\S+: .* worst loss (everything )?([0-9.]+)%", line)
    if m:
        key = (m.group(1), m.group(2), m.group(3))
        parts.setdefault(key, []).append(inf if m.group(4) else float(m.group(5)))
rows = {}
for key in before:
    op = key[0]
    r = rows.setdefault(op, {"n": 0, "moved": 0, "split": 0, "before": 0.0, "hold": 0.0, "final": 0.0})
    r["n"] += 1
    r["moved"] += hold_after.get(key) is not None and hold_after[key] != before[key]
    r["before"] = max(r["before"], before[key])
    r["hold"] = max(r["hold"], hold_after.get(key, before[key]))
    final = max(parts[key]) if key in parts else hold_after.get(key, before[key])
    r["split"] += key in parts
    r["final"] = max(r["final"], final)
f = lambda v: "fails" if v == inf else "%.1f%%" % v
print("| op | buckets probed | winners changed | buckets split | parts searched (candidates) | worst loss before | after hold | after splitting |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for op, r in rows.items():
    s = searched.get(op, [0, 0])
    print("| %s | %d | %d | %d | %d (%d) | %s | %s | %s |" % (op, r["n"], r["moved"], r["split"], s[0], s[1], f(r["before"]),
                                                          f(r["hold"]), f(r["final"])))
PY
