#!/usr/bin/env bash
# aitune replay export: a registry's measurements (here from a sweep with
# the fake worker) become a landscape file that replay reads back, with the
# registry's statuses and times; an exhaustive replay finds the sweep's
# best config.
. "$(dirname "$0")/../cli/lib.sh"

small_spec
DB=$T/fake.db
seed_db "$DB" || { fail "seed the cubin cache (aitune compile small.yaml)"; exit 1; }
# The 5th verification answers wrong: failures are part of a landscape.
fake_sweep wrong_verify:5 "$DB" "$T/small.yaml"
expect_eq "a fake exhaustive sweep exits 0" "$RC" 0 || show_last

expect_exit 0 "replay export" "$AITUNE" replay export --db "$DB" -o "$T/land.tsv"
expect_stderr "replay export: [0-9]+ rows" "export says how many rows"
expect_eq "the file says what it is" "$(head -1 "$T/land.tsv")" "# aitune landscape v1"
grep -q "^# measured: exported from the registry $DB" "$T/land.tsv" && ok "the header names the registry" ||
    fail "the header does not name the registry"
n_db=$(sql "$DB" "select count(distinct template || config_hash) from measurements where status != 'constraint'")
n_file=$(grep -vc '^#\|^op' "$T/land.tsv")
expect_eq "one row per measured config" "$n_file" "$n_db"
n_wrong=$(sql "$DB" "select count(*) from measurements where status = 'wrong'")
[ "$n_wrong" -gt 0 ] && ok "the sweep recorded failures ($n_wrong wrong)" || fail "no wrong measurement to export"
expect_eq "failures are exported with their status" "$(awk -F'\t' '$6 == "wrong"' "$T/land.tsv" | wc -l)" "$n_wrong"
best_db=$(sql "$DB" "select printf('%.4f', min(median_us)) from measurements where status = 'ok'")
best_file=$(awk -F'\t' '$6 == "ok" { if (m == "" || $7 < m) m = $7 } END { printf "%.4f", m }' "$T/land.tsv")
expect_eq "the fastest time is the registry's" "$best_file" "$best_db"
cfg_db=$(sql "$DB" "select config from measurements where status = 'ok' order by median_us limit 1")
expect_eq "and so is its config" "$(awk -F'\t' -v t="$best_db" '$6 == "ok" && $7 + 0 == t + 0 { print $13 }' "$T/land.tsv" | head -1)" "$cfg_db"

# Replay reads it back: exhaustive over the whole space ends at the optimum.
run "$AITUNE" replay "$T/land.tsv" --strategy exhaustive,model --seeds 1 --budget 1 --trace --tsv
expect_eq "replay of the exported landscape exits 0" "$RC" 0 || show_last
last=$(awk -F'\t' '$1 == "trace" && $2 == "exhaustive" { b = $8 } END { printf "%.4f", b }' "$T/out")
expect_eq "an exhaustive replay ends at the registry's best" "$last" "$best_db"
expect_eq "it evaluates every config once" "$(awk -F'\t' '$1 == "trace" && $2 == "exhaustive"' "$T/out" | wc -l)" "$n_file"

# The newest measurement of a config wins (a re-measured config).
sql "$DB" "insert into measurements (op, template, arch, dtype, bucket, shape, config, config_hash, status, median_us, compile_ms)
           select op, template, arch, dtype, bucket, shape, config, config_hash, 'ok', 0.5, compile_ms from measurements
           where config = '$cfg_db'" >/dev/null
"$AITUNE" replay export --db "$DB" -o "$T/land2.tsv" 2>/dev/null
expect_eq "a re-measured config is exported once, with its newest time" \
    "$(grep -F "$cfg_db" "$T/land2.tsv" | cut -f7)" "0.5000"

# A bucket re-tuned as a stream: its landscape holds the stream-timed rows
# only, never a mix of the two methods; the other buckets keep theirs.
bk=$(sql "$DB" "select bucket from measurements where config = '$cfg_db' limit 1")
before=$(awk -F'\t' -v b="$bk" '$5 == b' "$T/land2.tsv" | wc -l)
sql "$DB" "insert into measurements (op, template, arch, dtype, bucket, shape, config, config_hash, status, median_us, compile_ms, timing)
           select op, template, arch, dtype, bucket, shape, config, config_hash, 'ok', 0.25, compile_ms, 'stream' from measurements
           where config = '$cfg_db' limit 1" >/dev/null
"$AITUNE" replay export --db "$DB" -o "$T/land3.tsv" 2>/dev/null
expect_true "the bucket had several configs before ($before)" test "$before" -gt 1
expect_eq "now its landscape is its one stream-timed row" \
    "$(awk -F'\t' -v b="$bk" '$5 == b { print $7 }' "$T/land3.tsv")" "0.2500"
expect_eq "the other buckets' rows are as they were" \
    "$(awk -F'\t' -v b="$bk" '$5 != b && !/^#/' "$T/land3.tsv" | wc -l)" "$(awk -F'\t' -v b="$bk" '$5 != b && !/^#/' "$T/land2.tsv" | wc -l)"

# --op, and a registry that is not there.
run "$AITUNE" replay export --db "$DB" --op nosuch
expect_eq "export of an op without measurements exits 0" "$RC" 0
expect_stderr "no measurements of nosuch" "and warns"
run "$AITUNE" replay export --db "$T/none.db"
expect_eq "export of a missing registry is bad input" "$RC" 3
expect_stderr "no registry at '.*none.db'" "and names it"
run "$AITUNE" replay export --db "$DB" --bogus 1
expect_eq "an unknown export option is a usage error" "$RC" 2

done_testing
