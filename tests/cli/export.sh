#!/usr/bin/env bash
# aitune export: csv, json and Kernel Tuner T4 of a fake sweep's registry,
# read back by Python's csv and json modules; a hostile string survives
# escaping; bad format, table, op and output are one line with their exit code.
. "$(dirname "$0")/lib.sh"

small_spec
DB=$T/e.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
fake_sweep wrong_verify:2 "$DB" "$T/small.yaml"
expect_eq "a fake sweep to export" "$RC" 0 || show_last
# A hostile error text: quotes, a comma, a newline, a backslash, a control char.
sqlite3 "$DB" "UPDATE measurements SET error = 'bad \"quote\", line' || char(10) || 'two \\ ' || char(1) WHERE status = 'wrong'"
n_m=$(sql "$DB" "select count(*) from measurements")

expect_exit 0 "export --format json" "$AITUNE" export --format json --db "$DB"
got=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
w = d["winners"][0]
bad = [m for m in d["measurements"] if m["status"] == "wrong"][0]
print(len(d["measurements"]), len(d["winners"]), len(d["runs"]), len(d["devices"]),
      type(w["config"]).__name__, type(w["runners_up"]).__name__, bad["error"] == "bad \"quote\", line\ntwo \\ \x01")' <"$T/out" 2>&1)
expect_eq "json: every table, configs as objects, strings escaped" "$got" "$n_m 1 1 1 dict list True"

expect_exit 0 "export --format json --what winners --op axpy" "$AITUNE" export --format=json --what=winners --op axpy --db "$DB"
got=$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), d[0]["op"], d[0]["bucket"])' <"$T/out" 2>&1)
expect_eq "json --what winners is one array" "$got" "1 axpy n=2^6"

expect_exit 0 "export --format csv" "$AITUNE" export --format csv --db "$DB"
got=$(python3 -c '
import csv, json, sys
rows = list(csv.DictReader(sys.stdin))
bad = [r for r in rows if r["status"] == "wrong"][0]
print(len(rows), json.loads(rows[0]["config"])["block"] > 0, bad["error"] == "bad \"quote\", line\ntwo \\ \x01")' <"$T/out" 2>&1)
expect_eq "csv: a row per measurement, quoted fields read back intact" "$got" "$n_m True True"
expect_exit 0 "export --format csv --what winners" "$AITUNE" export --format csv --what winners --db "$DB"
expect_eq "csv winners: a header and one row" "$(python3 -c 'import csv,sys; r=list(csv.DictReader(sys.stdin)); print(len(r), r[0]["template"])' <"$T/out")" "1 axpy/vec"

expect_exit 0 "export --format t4 -o FILE" "$AITUNE" export --format t4 --op axpy --dtype f32 -o "$T/axpy.t4.json" --db "$DB"
# T4 1.0.0 (Kernel Tuner's results schema): required configuration, times,
# invalidity (an enum) and correctness; measurements are {name, value, unit}.
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == "1.0.0"
kinds = {"timeout", "compile", "runtime", "correctness", "constraints", "correct"}
for r in d["results"]:
    for k in ("configuration", "times", "invalidity", "correctness"):
        assert k in r, k
    assert isinstance(r["configuration"], dict) and isinstance(r["times"], dict)
    assert r["invalidity"] in kinds, r["invalidity"]
    assert isinstance(r["correctness"], (int, float))
    assert isinstance(r["times"]["runtimes"], list)
    for m in r["measurements"]:
        assert isinstance(m["name"], str) and isinstance(m["unit"], str) and isinstance(m["value"], (int, float, str, list))
ok = [r for r in d["results"] if r["invalidity"] == "correct"]
best = min(ok, key=lambda r: r["measurements"][0]["value"])
print(len(d["results"]), sum(r["invalidity"] == "correctness" for r in d["results"]),
      json.dumps(best["configuration"], sort_keys=True, separators=(",", ":")))' "$T/axpy.t4.json" 2>&1)
win=$(sql "$DB" "select config from winners")
n_f=$(sql "$DB" "select count(*) from measurements where dtype = 'f32'")
expect_eq "t4: every measurement a valid T4 result; the fastest correct is the winner" "$got" "$n_f 1 $win"
if python3 -c 'import jsonschema' 2>/dev/null; then
    # The same constraints, written as a JSON schema, checked by jsonschema too.
    cat >"$T/t4-check.json" <<'EOF'
{"type": "object", "required": ["schema_version", "results"],
 "properties": {"schema_version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"},
  "results": {"type": "array", "items": {"type": "object",
   "required": ["configuration", "times", "invalidity", "correctness"],
   "properties": {"timestamp": {"type": "string"}, "configuration": {"type": "object"},
    "objectives": {"type": "array"},
    "times": {"type": "object", "properties": {"compilation_time": {"type": "number"}, "runtimes": {"type": "array"}}},
    "invalidity": {"enum": ["timeout", "compile", "runtime", "correctness", "constraints", "correct"]},
    "correctness": {"type": "number"},
    "measurements": {"type": "array", "items": {"type": "object",
     "properties": {"name": {"type": "string"}, "value": {"type": ["number", "string", "array"]}, "unit": {"type": "string"}}}}}}}}}
EOF
    expect_true "t4 passes a JSON-schema check of the T4 constraints" python3 -c '
import json, sys, jsonschema
jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))' "$T/axpy.t4.json" "$T/t4-check.json"
else
    skip "t4 JSON-schema check: no python3 jsonschema"
fi

expect_exit 2 "an unknown format" "$AITUNE" export --format xml --db "$DB"
expect_stderr "^aitune: error: unknown format 'xml' \(formats: csv, json, t4\)\$" "names the unknown format"
expect_exit 2 "no format" "$AITUNE" export --db "$DB"
expect_exit 2 "an unknown table" "$AITUNE" export --format csv --what cubins --db "$DB"
expect_stderr "unknown table 'cubins'" "names the unknown table"
expect_exit 2 "an unknown op" "$AITUNE" export --format json --op axpx --db "$DB"
expect_stderr "^aitune: error: unknown op 'axpx'" "names the unknown op"
expect_exit 1 "an unwritable output" "$AITUNE" export --format csv -o "$T/no/such/dir/x.csv" --db "$DB"
expect_stderr "^aitune: error: cannot write '.*x.csv': No such file or directory\$" "says why it cannot write"
expect_stderr_lines 1 "one line"
expect_exit 1 "a special file as output" "$AITUNE" export --format csv -o /dev/null --db "$DB"
expect_stderr "not a regular file" "refuses a non-regular file"
expect_exit 3 "a missing registry" "$AITUNE" export --format csv --db "$T/none.db"
expect_stderr "^aitune: error: no registry at" "names the missing registry"
ls "$T"/no 2>/dev/null; left=$(ls -a "$T" | grep -c '^\.aitune-export-')
expect_eq "no temporary file is left behind" "$left" 0
done_testing
