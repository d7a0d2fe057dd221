#!/usr/bin/env bash
# tests/run: slow 12 (swapab's mid-size kernels compile, some with five widths)
# A split part's finalists race their spans (src/tmpl.h: tmpl_span;
# sweep_part.c: race_spans): the config made to serve every m of the part's
# range at the width each wants. swapab's: one tile of rows holding the
# part's upper edge, its widths chosen at run time (wstep 8 or 16, nvar
# widths) down to the part's lower edge. A search runs at one size, so
# without them a part of [129, 256) races configs tiled for that size only.
# The fake worker's shape_time ranks the kernels anew at every size, so the
# bucket splits and its parts are searched.
. "$(dirname "$0")/lib.sh"

spec r.yaml <<'EOF2'
name: span
search: random
max_evals: 4
top_k: 2
hold: true
split_evals: 4
split_depth: 1
timing: stream
tasks:
  - op: gemm_nt
    dtypes: [bf16]
    templates: [swapab]
    shapes:
      m: {range: [129, 256], align: [1]}
      n: {values: [14336], exact: true}
      k: {values: [4096], exact: true}
EOF2
rm -f "$T/trace"
AITUNE_TRACE="$T/trace" fake_sweep shape_time "$T/r.db" "$T/r.yaml" --max-evals 4
expect_eq "a range sweep of swapab with parts searched exits 0" "$RC" 0 || show_last
grep ': searched at ' "$T/out" > "$T/searched"
nsearched=$(wc -l < "$T/searched")
nsaid=$(grep -oE 'and [0-9]+ spans? raced' "$T/searched" | awk '{s += $2} END {print s + 0}')
grep -E '^[0-9.]+ gpu=[0-9]+ span gemm_nt ' "$T/trace" > "$T/spans"
expect_true "parts were searched ($nsearched) and their lines count the spans raced ($nsaid)" \
    test "$nsearched" -ge 1 -a "$nsaid" -ge 1
expect_eq "each span raced is traced, with its config" "$(wc -l < "$T/spans")" "$nsaid"
# Every span: the mid-size kernel, one tile holding its part's upper edge,
# widths chosen at run time (nvar > 1) down to its lower edge: a part
# [lo, hi) of this bucket has hi - 1 <= bn, and bn's narrowest width
# (bn - wstep (nvar - 1), or bn / 2 for wstep 0) at most lo rounded up to 8
# (at least bn / 2, the narrowest a span takes).
python3 - "$T/spans" "$T/out" > "$T/check" <<'PY'
import json, re, sys
# A part's m range: from its line "KEY: m [lo, hi)" where it was kept; a
# part searched and then not kept (the bucket stayed whole) has only its
# key, whose m is its lower edge (2^7: 128), its upper the next part's or
# the bucket's (256).
parts, lows = {}, set()
def low(key):
    m = key.split("/")[1].split(",")[0]
    return 2 ** int(m[2:]) if m.startswith("2^") else int(m)
for line in open(sys.argv[2]):
    m = re.match(r"split +gemm_nt bf16 (\S+): m \[(\d+), (\d+)\)", line)
    if m: parts[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    m = re.match(r"split +gemm_nt bf16 (\S+/\S+): its winner .*: searched at ", line)
    if m: lows.add((low(m.group(1)), m.group(1)))
edges = sorted(lows) + [(256, None)]
for (lo, key), (hi, _) in zip(edges, edges[1:]):
    parts.setdefault(key, (lo, hi))
bad = []
for line in open(sys.argv[1]):
    f = line.split()
    key, cfg = f[4], json.loads(line.split(": ", 1)[1])
    if key not in parts:
        bad.append("%s: no part of that key" % key)
        continue
    lo, hi = parts[key]
    bn, nv, ws = cfg["bn"], cfg["nvar"], cfg["wstep"]
    narrow = bn - ws * (nv - 1) if ws else bn // 2 if nv > 1 else bn
    if not (bn > 64 and hi - 1 <= bn and narrow <= max((lo + 7) // 8 * 8, bn // 2)):
        bad.append("%s %s [%d, %d)" % (key, json.dumps(cfg), lo, hi))
print("%d bad" % len(bad)); print("\n".join(bad))
PY
expect_eq "every span holds its part's upper edge in one tile and reaches its lower edge" "$(head -1 "$T/check")" "0 bad" ||
    sed -n '2,5p' "$T/check" | sed 's/^/    /'
expect_true "a span takes widths chosen at run time (wstep 8 or 16)" grep -qE '"wstep":(8|16)' "$T/spans"
done_testing
