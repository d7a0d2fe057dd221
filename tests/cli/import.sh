#!/usr/bin/env bash
# aitune import of Kernel Tuner T4 results: a file as Kernel Tuner writes it
# (tests/fixtures/t4), and a round trip of aitune's own export; corrupt
# files and results that do not fit the template import nothing and say why.
. "$(dirname "$0")/lib.sh"

KT=$ROOT/tests/fixtures/t4/axpy_kernel_tuner.json
DB=$T/i.db
expect_exit 0 "import a Kernel Tuner T4 file" "$AITUNE" import "$KT" --op axpy --dtype f32 --arch sm_90a --shape 4096 --db "$DB"
expect_stdout "^imported 4 results \(2 correct\) from .* as axpy/vec f32 sm_90 n=2\^12\$" "says what it imported"
expect_eq "statuses map from T4's invalidity" "$(sql "$DB" "select group_concat(status, ' ') from (select status from measurements order by id)")" \
    "ok ok compile wrong"
expect_eq "the time measurement (ms) becomes the median in us" "$(sql "$DB" "select median_us from measurements where id = 1")" 33.1
expect_eq "min and max come from the runtimes" "$(sql "$DB" "select min_us || ' ' || max_us from measurements where id = 1")" "32.9 33.5"
expect_eq "configs are stored canonical (sorted keys)" "$(sql "$DB" "select config from measurements where id = 1")" \
    '{"block":256,"grid_stride":0,"ilp":1,"vec":4}'
expect_eq "imported rows have no device (they never join a race)" "$(sql "$DB" "select count(*) from measurements where device is not null")" 0
expect_eq "the import is a run" "$(sql "$DB" "select outcome from runs")" ok
expect_exit 0 "import the same file again" "$AITUNE" import "$KT" --op axpy --dtype f32 --arch sm_90 --shape 4096 --db "$DB"
expect_stdout "^4 already in the registry, skipped" "a second import skips what is there"
expect_eq "no duplicate rows" "$(sql "$DB" "select count(*) from measurements")" 4
expect_exit 0 "why shows imported results" "$AITUNE" why axpy --dtype f32 --shape 4096 --db "$DB"
expect_stdout "^  wrong +axpy/vec .*invalidity 'correctness'" "an imported failure keeps its kind"

# Round trip: aitune's export names its own key, so import needs no flags.
small_spec
seed_db "$T/s.db" || { fail "seed"; exit 1; }
fake_sweep ok "$T/s.db" "$T/small.yaml"
"$AITUNE" export --format t4 --db "$T/s.db" -o "$T/s.t4.json"
expect_exit 0 "import aitune's own T4 export" "$AITUNE" import "$T/s.t4.json" --db "$T/r.db"
expect_eq "every measurement comes back with its bucket, status and time" \
    "$(sql "$T/r.db" "select op, bucket, config, status, round(median_us, 3) from measurements order by config")" \
    "$(sql "$T/s.db" "select op, bucket, config, status, round(median_us, 3) from measurements order by config")"

# Corrupt and unfitting files: one line, exit 3, nothing written.
bad() {   # bad NAME "regex" CONTENT [flags...]
    local name=$1 re=$2 content=$3
    shift 3
    printf '%s' "$content" >"$T/$name.json"
    rm -f "$T/bad.db"
    expect_exit 3 "import: $name" "$AITUNE" import "$T/$name.json" --op axpy --dtype f32 --arch sm_90 --shape 64 --db "$T/bad.db" "$@"
    expect_stderr "^aitune: error: $re" "$name: says why"
    expect_stderr_lines 1 "$name: one line"
    [ ! -f "$T/bad.db" ] || expect_eq "$name: nothing imported" "$(sql "$T/bad.db" "select count(*) from measurements")" 0
}
R='"times": {"runtimes": [0.01]}, "correctness": 1, "measurements": [{"name": "time", "value": 0.01, "unit": "ms"}]'
bad truncated "'.*truncated.json': not JSON\$" '{"schema_version": "1.0.0", "results": [{"configuration": {'
bad no-results "'.*no-results.json': no \"results\" array" '{"schema_version": "1.0.0"}'
bad not-object "'.*not-object.json' result 0: not a JSON object" '{"results": [42]}'
bad no-config "'.*no-config.json' result 0: no configuration object" "{\"results\": [{\"invalidity\": \"correct\", $R}]}"
bad bad-kind "'.*bad-kind.json' result 0: invalidity 'fine' is not a T4 kind" \
    "{\"results\": [{\"configuration\": {\"block\": 64, \"vec\": 1, \"ilp\": 1, \"grid_stride\": 0}, \"invalidity\": \"fine\", $R}]}"
bad foreign-params "'.*foreign-params.json' result 0: configuration lacks 'block'" \
    "{\"results\": [{\"configuration\": {\"block_size_x\": 64}, \"invalidity\": \"correct\", $R}]}"
bad extra-param "'.*extra-param.json' result 0: configuration .* has keys that are not parameters of axpy/vec" \
    "{\"results\": [{\"configuration\": {\"block\": 64, \"vec\": 1, \"ilp\": 1, \"grid_stride\": 0, \"x\": 1}, \"invalidity\": \"correct\", $R}]}"
bad no-time "'.*no-time.json' result 0: a correct result without a time" \
    '{"results": [{"configuration": {"block": 64, "vec": 1, "ilp": 1, "grid_stride": 0}, "invalidity": "correct", "times": {}, "correctness": 1}]}'
bad second-bad "'.*second-bad.json' result 1: invalidity" \
    "{\"results\": [{\"configuration\": {\"block\": 64, \"vec\": 1, \"ilp\": 1, \"grid_stride\": 0}, \"invalidity\": \"correct\", $R}, {\"configuration\": {\"block\": 64, \"vec\": 1, \"ilp\": 1, \"grid_stride\": 0}}]}"
bad empty "'.*empty.json': no results" '{"schema_version": "1.0.0", "results": []}'

expect_exit 3 "import of a missing file" "$AITUNE" import "$T/none.json" --op axpy --dtype f32 --arch sm_90 --shape 64 --db "$T/x.db"
expect_stderr "^aitune: error: cannot read '.*none.json': No such file or directory\$" "names the missing file"
expect_exit 2 "a Kernel Tuner file without --op" "$AITUNE" import "$KT" --dtype f32 --arch sm_90 --shape 64 --db "$T/x.db"
expect_stderr "give --op" "asks for the op"
expect_exit 2 "an unknown op" "$AITUNE" import "$KT" --op axpx --dtype f32 --arch sm_90 --shape 64 --db "$T/x.db"
expect_stderr "^aitune: error: unknown op 'axpx'" "names the unknown op"
expect_exit 2 "an unknown template" "$AITUNE" import "$KT" --op axpy --template tiled --dtype f32 --arch sm_90 --shape 64 --db "$T/x.db"
expect_stderr "op 'axpy' has no template 'tiled' \(it has axpy/vec\)" "names the unknown template"
expect_exit 2 "a shape of the wrong rank" "$AITUNE" import "$KT" --op axpy --dtype f32 --arch sm_90 --shape 64,2 --db "$T/x.db"
done_testing
