#!/usr/bin/env bash
# Files from and to untrusted paths (issue 31, "Files"): every -o (export,
# report, replay export) neither follows nor replaces a link, refuses a FIFO
# without blocking, and honours the umask; every input file (import, replay,
# peers) is a regular file of bounded size; infinities are JSON null in every
# export; CSV cells that a spreadsheet would run are neutralised; an empty
# CSV export still has its header.
. "$(dirname "$0")/lib.sh"

small_spec
DB=$T/f.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
fake_sweep ok "$DB" "$T/small.yaml"
expect_eq "a fake sweep to export" "$RC" 0 || show_last

# ---- -o onto a symlink, a FIFO; the umask ----
echo "precious" >"$T/target"
mkfifo "$T/fifo"
for cmd in "export --format json" "export --format csv" "report" "replay export"; do
    ln -sf "$T/target" "$T/link"
    # shellcheck disable=SC2086
    expect_exit 1 "$cmd -o LINK is refused" timeout 20 "$AITUNE" $cmd --db "$DB" -o "$T/link"
    expect_stderr "symbolic link" "$cmd -o LINK: says it is a link"
    [ -L "$T/link" ] && ok "$cmd -o LINK: the link is still a link" || fail "$cmd -o LINK replaced the link"
    expect_eq "$cmd -o LINK: its target is untouched" "$(cat "$T/target")" "precious"
    # shellcheck disable=SC2086
    expect_exit 1 "$cmd -o FIFO is refused without blocking" timeout 20 "$AITUNE" $cmd --db "$DB" -o "$T/fifo"
    [ -p "$T/fifo" ] && ok "$cmd -o FIFO: the FIFO is left alone" || fail "$cmd -o FIFO replaced the FIFO"
    rm -f "$T/new.out"
    # shellcheck disable=SC2086
    (umask 022 && "$AITUNE" $cmd --db "$DB" -o "$T/new.out" >/dev/null 2>&1)
    expect_eq "$cmd -o NEW with umask 022 is mode 644" "$(stat -c %a "$T/new.out" 2>&1)" "644"
    rm -f "$T/new.out"
    # shellcheck disable=SC2086
    (umask 077 && "$AITUNE" $cmd --db "$DB" -o "$T/new.out" >/dev/null 2>&1)
    expect_eq "$cmd -o NEW with umask 077 is mode 600" "$(stat -c %a "$T/new.out" 2>&1)" "600"
done
ls -A "$T" | grep -q '\.tmp$' && fail "a temporary file was left behind" || ok "no temporary file is left behind"

# ---- input files: a device, a FIFO, a file over the size cap ----
truncate -s 300M "$T/huge.json"
for cmd in "import --op axpy --dtype f32 --arch sm_90 --shape 64 --db $DB" "replay"; do
    # shellcheck disable=SC2086
    expect_exit 3 "${cmd%% *} /dev/zero is refused" timeout 20 "$AITUNE" $cmd /dev/zero
    expect_stderr "not a regular file" "${cmd%% *} /dev/zero: says it is not a regular file"
    # shellcheck disable=SC2086
    expect_exit 3 "${cmd%% *} FIFO is refused without blocking" timeout 20 "$AITUNE" $cmd "$T/fifo"
    # shellcheck disable=SC2086
    expect_exit 3 "${cmd%% *} of a 300 MB file is refused unread" timeout 20 "$AITUNE" $cmd "$T/huge.json"
    expect_stderr "larger than the 256 MB" "${cmd%% *} of a 300 MB file: says it is too large"
done
expect_exit 3 "show --peers FIFO is refused without blocking" timeout 20 "$AITUNE" show --peers "$T/fifo" --db "$DB"
expect_exit 3 "show --peers /dev/zero is refused" timeout 20 "$AITUNE" show --peers /dev/zero --db "$DB"

# ---- infinities: JSON null in JSON and T4 exports ----
IDB=$T/inf.db
cp "$DB" "$IDB"
sqlite3 "$IDB" "UPDATE measurements SET median_us = 1e999, min_us = -1e999, gbps = 1e999, registers = 1e999
                WHERE id = (SELECT min(id) FROM measurements WHERE status = 'ok');
                UPDATE winners SET median_us = 1e999, margin = -1e999;
                INSERT INTO vendor_times (op, arch, dtype, bucket, shape, hw, timing, library, status, median_us, min_us,
                                          spread)
                VALUES ('gemm_nt', 'sm_90', 'bf16', 'm=2^4,n=2^12,k=2^12', '{\"m\":16,\"n\":4096,\"k\":4096}', 'x',
                        'flush', 'cuBLASLt 1', 'ok', 1e999, -1e999, 1e999);"
strict_json='
import json, sys
def no(c): raise ValueError("not JSON: " + c)
json.loads(open(sys.argv[1]).read(), parse_constant=no)
print("json")'
for fmt in json t4; do
    expect_exit 0 "export --format $fmt of infinities" "$AITUNE" export --format "$fmt" --db "$IDB" -o "$T/inf.$fmt"
    expect_eq "export --format $fmt: infinities are null (strict JSON)" "$(python3 -c "$strict_json" "$T/inf.$fmt" 2>&1 | tail -1)" "json"
done
got=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = [m for m in d["measurements"] if m["median_us"] is None and m["status"] == "ok"]
v = d["vendor"][0]
print(len(m), m[0]["min_us"], m[0]["registers"], d["winners"][0]["median_us"], d["winners"][0]["margin"],
      v["median_us"], v["min_us"], v["spread"])' "$T/inf.json" 2>&1)
expect_eq "export json: the infinite values are each null (the vendor's too)" "$got" "1 None None None None None None None"
expect_exit 0 "report of infinities" "$AITUNE" report --db "$IDB" -o "$T/inf.html"
grep -Eqi '[^a-z](inf|nan)[^a-z]' <(sed -e 's/<[^>]*>/ /g' "$T/inf.html" | grep -v "^ *$" | grep -i "[0-9 ]inf\|nan") \
    && fail "the report prints inf or nan" || ok "the report prints no inf or nan"
grep -Eq '="-?(inf|nan)' "$T/inf.html" && fail "the report's SVG has inf or nan attributes" || ok "the report's SVG attributes are finite"
grep -q "n/a" "$T/inf.html" && ok "the report says n/a for the infinite time" || fail "the report does not say n/a"

# ---- CSV: formula cells neutralised, numbers kept, header always ----
CDB=$T/csv.db
cp "$DB" "$CDB"
sqlite3 "$CDB" "UPDATE measurements SET error = '=HYPERLINK(\"http://x\",\"y\")' WHERE id = 1;
                UPDATE measurements SET error = '+1+cmd|'' /C calc''!A0' WHERE id = 2;
                UPDATE measurements SET error = '-2+3' WHERE id = 3;
                UPDATE measurements SET error = '@SUM(1)' WHERE id = 4;
                UPDATE measurements SET error = char(9) || '=1' WHERE id = 5;
                UPDATE measurements SET spread = -0.5 WHERE id = 6;"
expect_exit 0 "export --format csv of formula strings" "$AITUNE" export --format csv --db "$CDB"
got=$(python3 -c '
import csv, sys
rows = {r["id"]: r for r in csv.DictReader(sys.stdin)}
print(" ".join(rows[str(i)]["error"][:2] for i in range(1, 6)), rows["6"]["spread"])' <"$T/out" 2>&1)
expect_eq "csv: = + - @ and tab cells get a leading apostrophe; a negative number does not" \
    "$got" "'= '+ '- '@ '	 -0.5"
EDB=$T/empty.db
cp "$DB" "$EDB"
sqlite3 "$EDB" "DELETE FROM winners; DELETE FROM measurements"
for what in measurements winners runs; do
    expect_exit 0 "export --format csv --what $what of an empty table" "$AITUNE" export --format csv --what $what --op axpy --db "$EDB"
    [ "$what" = runs ] && want=id || want=op
    if head -n1 "$T/out" | grep -q "$want"; then ok "the empty $what CSV has its header line"; else fail "the empty $what CSV has no header"; show_last; fi
done

# ---- the landscape file: counts in range, linear load ----
{
    printf '# aitune landscape v1\nop\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tregisters\tconfig\n'
    printf 'axpy\taxpy/vec\tsm_90\tf32\tn=2^6\tok\t1.5\t1\t1e300\t{"block":64,"vec":1,"ilp":1}\n'
} >"$T/regs.tsv"
expect_exit 3 "replay of a register count of 1e300 is refused" "$AITUNE" replay "$T/regs.tsv"
expect_stderr "registers '1e300' is not a count" "it names the column and value"
expect_exit 2 "replay --seeds 0 is a usage error" "$AITUNE" replay "$T/regs.tsv" --seeds 0
expect_stderr "--seeds '0' must be an integer in \\[1, " "it names the option and its value (no missing argument)"

# One landscape of 30k rows, then of 60k: a quadratic load took 3.5 s and
# 13.5 s (every row compared with every earlier one).
gen() {
    python3 -c '
import sys
n = int(sys.argv[1])
print("# aitune landscape v1")
print("op\ttemplate\tarch\tdtype\tbucket\tstatus\ttime_us\tcompile_ms\tconfig")
for i in range(n):
    print("axpy\taxpy/vec\tsm_90\tf32\tn=2^6\tok\t%d.5\t1\t{\"block\":%d}" % (1 + i % 97, i))' "$1"
}
gen 30000 >"$T/big.tsv"
gen 60000 >"$T/bigger.tsv"
# Load only: an unknown strategy stops the run after the load.
t0=$(date +%s.%N); "$AITUNE" replay "$T/big.tsv" --strategy nosuch >/dev/null 2>"$T/err"; t1=$(date +%s.%N)
"$AITUNE" replay "$T/bigger.tsv" --strategy nosuch >/dev/null 2>>"$T/err"; t2=$(date +%s.%N)
one=$(echo "$t1 - $t0" | bc); two=$(echo "$t2 - $t1" | bc)
[ "$(grep -c "nosuch" "$T/err")" = 2 ] && ok "both landscapes load (up to the strategy check)" || fail "the big landscapes did not load: $(head -2 "$T/err")"
# Linear: twice the rows costs about twice (quadratic: four times), and
# 60k rows load in well under the 6.9 s the quadratic load took here.
if [ "$(echo "$two < 2.6 * $one + 0.5 && $two < 2" | bc)" = 1 ]; then
    ok "30k rows load in ${one}s, 60k in ${two}s (linear)"
else
    fail "landscape load is not linear: 30k rows ${one}s, 60k rows ${two}s"
fi

done_testing
