#!/usr/bin/env bash
# Peer figures (src/peers.h): `sweep --peers` and `show --peers` print each
# winner's ratio to the peer measured at a shape in its bucket, on the metric
# the winner is judged by; a malformed peers file is bad input (exit 3).
. "$(dirname "$0")/lib.sh"

spec small.yaml <<'YAML'
name: small
search: random
max_evals: 2
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {values: [65536, 1048576]}
YAML
cat > "$T/peers.jsonl" <<'JSON'
{"case": "axpy:f32:70000", "eager_gbps": 1000.0, "note": "in bucket 2^16"}
{"case": "axpy:f32:65536", "eager_gbps": 2000.0}
{"case": "axpy:bf16:65536", "eager_gbps": 5.0}
JSON
DB=$T/p.db
fake_sweep ok "$DB" "$T/small.yaml" --peers "$T/peers.jsonl"
expect_eq "sweep --peers exits 0" "$RC" 0 || show_last
expect_stdout "n=2\^16 .*x eager" "sweep prints the ratio to the peer in the bucket"
run "$AITUNE" show --db "$DB" --peers "$T/peers.jsonl" --json
expect_eq "show --peers --json" "$RC" 0 || show_last
# The ratio is written with 4 decimals (and gbps with 2): a small ratio is
# off by up to half its last decimal.
got=$(python3 -c '
import json, sys
rows = {r["bucket"]: r for r in json.load(sys.stdin)}
a, b = rows["n=2^16"], rows["n=2^20"]
p = a["peer"]
print(p["name"], p["value"], abs(p["ratio"] - a["gbps"] / 1000.0) < 5e-5 + 1e-3 * p["ratio"], "peer" in b)' <"$T/out" 2>&1)
expect_eq "the first line whose shape is in the bucket answers, on GB/s; a bucket without one has none" "$got" "eager 1000.0 True False"
run "$AITUNE" show --db "$DB" --peers "$T/peers.jsonl"
expect_stdout "x eager)" "show prints the ratio in the table"
echo '{"case": "axpy:f32"}' > "$T/bad.jsonl"
expect_exit 3 "a case without a shape is bad input" "$AITUNE" show --db "$DB" --peers "$T/bad.jsonl"
expect_stderr "line 1" "the error names the line"
echo '{"case": "axpy:f32:10",}' > "$T/bad2.jsonl"
expect_exit 3 "malformed JSON is bad input" "$AITUNE" show --db "$DB" --peers "$T/bad2.jsonl"
expect_exit 3 "a missing peers file is bad input" "$AITUNE" show --db "$DB" --peers "$T/none.jsonl"
done_testing
