#!/usr/bin/env bash
# aitune merge with shards that lie (issue 31): each input is checked whole
# before one row of it is merged (integrity, one row per key, finite
# positive times, well-formed keys and split parts), inputs are opened
# read-only (an older one is migrated in a copy, never in place), and a
# merge is idempotent. A refused input: one line, exit 3, the output as it
# was.
. "$(dirname "$0")/lib.sh"

axpy_spec two.yaml 6 7
seed_db "$T/seed.db" || { fail "seed the cubin cache"; exit 1; }
cp "$T/seed.db" "$T/s0.db"
fake_sweep ok "$T/s0.db" "$T/two.yaml"
expect_eq "a shard with two winners" "$RC" 0 || show_last
expect_exit 0 "merge it into a new registry" "$AITUNE" merge "$T/out.db" "$T/s0.db"
key="select op, arch, dtype, bucket, hw, template, config, median_us from winners order by 1, 2, 3, 4, 5"
dump() { sql "$1" "$key"; sql "$1" "select count(*) from measurements"; }
good=$(dump "$T/out.db")

# refused NAME "what the message says" "SQL that makes the bad shard"
refused() {
    local name=$1 msg=$2 sqltext=$3
    cp "$T/s0.db" "$T/$name.db"
    sqlite3 "$T/$name.db" "$sqltext" || { fail "$name: could not make the shard"; return; }
    local sum
    sum=$(md5sum <"$T/$name.db")
    run "$AITUNE" merge "$T/out.db" "$T/$name.db"
    if [ "$RC" = 3 ] && [ "$(wc -l <"$T/err")" = 1 ]; then ok "$name: refused in one line (exit 3)"; else fail "$name: exit $RC, want 3 in one line"; show_last; fi
    expect_stderr "$msg" "$name: the message says why"
    expect_eq "$name: the output is as it was" "$(dump "$T/out.db")" "$good"
    expect_eq "$name: the input was not written" "$(md5sum <"$T/$name.db")" "$sum"
}

refused negative "median_us -1.0 is not a finite positive time" \
    "UPDATE winners SET median_us = -1 WHERE bucket = 'n=2^6'"
refused infinite "median_us Inf is not a finite positive time" \
    "UPDATE winners SET median_us = 1e999 WHERE bucket = 'n=2^6'"
refused zero_measure "row [0-9]+: 0.0 is not a finite positive time" \
    "UPDATE measurements SET median_us = 0.0 WHERE id = (SELECT min(id) FROM measurements WHERE status = 'ok')"
refused runner_up "a runner-up without a finite positive time" \
    "UPDATE winners SET runners_up = json_set(runners_up, '\$[0].median_us', -5) WHERE bucket = 'n=2^6'"
# One fake part of a real bucket: merged, it would delete the real winner.
refused fake_part "do not cover the bucket" \
    "UPDATE winners SET bucket = 'n=2^6/2^6', hi = '100' WHERE bucket = 'n=2^6'"
refused whole_part "do not cover the bucket" \
    "UPDATE winners SET bucket = 'n=2^6/2^6' WHERE bucket = 'n=2^6'"
refused bad_part "bucket key is not one aitune writes" \
    "UPDATE winners SET bucket = 'n=2^6/x' WHERE bucket = 'n=2^6'"
refused plain_pow2 "bucket key is not one aitune writes" \
    "UPDATE winners SET bucket = 'n=2^6/64' WHERE bucket = 'n=2^6'"
refused corner "is not its corner's" \
    "INSERT INTO winners SELECT op, arch, dtype, 'n=2^6/96', hw, dims, '64', '96', shape, template, config,
       median_us, gbps, tflops, default_us, margin, exhaustive, runners_up, cubin, launch, device, run
       FROM winners WHERE bucket = 'n=2^6';
     INSERT INTO winners SELECT op, arch, dtype, 'n=2^6/80', hw, dims, '96', '128', '{\"n\":100}', template, config,
       median_us, gbps, tflops, default_us, margin, exhaustive, runners_up, cubin, launch, device, run
       FROM winners WHERE bucket = 'n=2^6';
     DELETE FROM winners WHERE bucket = 'n=2^6'"
refused other_key "its shape's key is 'n=2\\^6:align1'" \
    "UPDATE winners SET shape = '{\"n\":65}' WHERE bucket = 'n=2^6'"
refused edges "edges of dim n are" \
    "UPDATE winners SET hi = '1000' WHERE bucket = 'n=2^6'"
refused arch "not an op, arch, dtype and template" \
    "UPDATE winners SET arch = 'sm_9x' WHERE bucket = 'n=2^6'"
refused template "not an op, arch, dtype and template" \
    "UPDATE measurements SET template = 'softmax/hold' WHERE id = 1"
refused measurement_key "bucket 'n=064' " \
    "UPDATE measurements SET bucket = 'n=064' WHERE id = 1"
refused measurement_exact "its shape is outside bucket 'n=65'" \
    "UPDATE measurements SET bucket = 'n=65' WHERE id = 1"
refused measurement_shape "its shape is outside bucket" \
    "UPDATE measurements SET shape = '{\"n\":4096}' WHERE id = 1"
refused status "status 'great' is not ok" \
    "UPDATE measurements SET status = 'great' WHERE id = 1"
# Two winners of one key, in a table made without its primary key: which one
# a merge kept would depend on the order it read them.
wsql=$(sqlite3 "$T/s0.db" "SELECT sql FROM sqlite_master WHERE name = 'winners'" | sed -z 's/,\s*PRIMARY KEY\s*([^)]*)//')
refused duplicate "two rows of one key" \
    "CREATE TABLE w2 AS SELECT * FROM winners; DROP TABLE winners; $wsql;
     INSERT INTO winners SELECT * FROM w2; DROP TABLE w2;
     INSERT INTO winners SELECT op, arch, dtype, bucket, hw, dims, lo, hi, shape, template, '{\"slow\":1}',
       median_us * 2, gbps, tflops, default_us, margin, exhaustive, runners_up, cubin, launch, device, run
       FROM winners WHERE bucket = 'n=2^6'"

# The vendor's times (schema 5) are checked as measurements are: a merge
# keeps the first row of a key, so a lie would stay for good.
VROW="INSERT INTO vendor_times (op, arch, dtype, bucket, shape, hw, timing, library, status, median_us)
      VALUES ('gemm_nt', 'sm_90', 'bf16', 'm=2^4,n=2^12,k=2^12', '{\"m\":16,\"n\":4096,\"k\":4096}', 'Fake GPU',
              'flush', 'cuBLASLt 1', 'ok', 12.5)"
refused vendor_negative "vendor_times: .* -1.0 is not a finite positive time" "$VROW; UPDATE vendor_times SET median_us = -1"
refused vendor_status "vendor_times: .* status 'great' is not ok, wrong or runtime" "$VROW; UPDATE vendor_times SET status = 'great'"
refused vendor_bucket "vendor_times: .* bucket 'm=16' " "$VROW; UPDATE vendor_times SET bucket = 'm=16'"
refused vendor_shape "vendor_times: .* its shape is outside bucket" \
    "$VROW; UPDATE vendor_times SET shape = '{\"m\":64,\"n\":4096,\"k\":4096}'"
refused vendor_arch "vendor_times: .* not an op, arch" "$VROW; UPDATE vendor_times SET arch = 'sm_9x'"
vsql=$(sqlite3 "$T/s0.db" "SELECT sql FROM sqlite_master WHERE name = 'vendor_times'" | sed -z 's/,\s*PRIMARY KEY\s*([^)]*)//')
refused vendor_duplicate "vendor_times: two rows of one key" \
    "DROP TABLE vendor_times; $vsql; $VROW; $VROW; UPDATE vendor_times SET median_us = 99 WHERE rowid = 2"
# The vendor holds only buckets of ops it serves.
refused vendor_winner "not an op, arch, dtype and template" \
    "UPDATE winners SET template = 'vendor/cublaslt', config = '{}' WHERE bucket = 'n=2^6'"
# A shard with a sound vendor row and a scan merges: its vendor row comes
# across once; scans stay with the GPU that made them.
cp "$T/s0.db" "$T/vend.db"
sqlite3 "$T/vend.db" "$VROW; INSERT INTO scans (op, arch, dtype, shape, hw, timing, status, hole)
                      VALUES ('axpy', 'sm_90', 'f32', '{\"n\":100}', 'Fake GPU', 'flush', 'ok', 0)"
cp "$T/out.db" "$T/vout.db"
run "$AITUNE" merge "$T/vout.db" "$T/vend.db"
expect_eq "a shard with vendor times and scans merges" "$RC" 0 || show_last
expect_stdout "\+1 vendor times" "its vendor row comes across"
expect_eq "with its time" "$(sql "$T/vout.db" "select median_us from vendor_times")" "12.5"
expect_exit 0 "merged again" "$AITUNE" merge "$T/vout.db" "$T/vend.db"
expect_stdout "\+0 vendor times" "it adds nothing"

# A corrupt page that reads without an error: a measurement's op changed in
# its table page but not in the index (integrity_check finds it; a plain
# read would merge an 'axpz' row).
cp "$T/s0.db" "$T/corrupt.db"
sqlite3 "$T/corrupt.db" "PRAGMA journal_mode = DELETE" >/dev/null
python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b"axpyaxpy/vec")
assert i >= 0
b[i + 3] = ord("z")
open(sys.argv[1], "wb").write(b)' "$T/corrupt.db" || fail "corrupt the shard"
run "$AITUNE" merge "$T/out.db" "$T/corrupt.db"
expect_eq "a shard with a corrupt page is refused (exit 3)" "$RC" 3 || show_last
expect_stderr "damaged|malformed" "it says the shard is damaged"
expect_eq "the output is as it was" "$(dump "$T/out.db")" "$good"

# Idempotent: the same shard again, and the result of either order, the same.
expect_exit 0 "merge the shard again" "$AITUNE" merge "$T/out.db" "$T/s0.db"
expect_stdout "\+0 measurements, \+0 winners, \+0 cubins, \+0 runs, \+0 devices" "it adds nothing"
expect_eq "the output is as it was" "$(dump "$T/out.db")" "$good"
cp "$T/s0.db" "$T/faster.db"
sqlite3 "$T/faster.db" "UPDATE winners SET median_us = median_us / 2, config = '{\"fast\":1}' WHERE bucket = 'n=2^7'"
expect_exit 0 "merge a shard with a faster winner" "$AITUNE" merge "$T/ab.db" "$T/s0.db" "$T/faster.db"
expect_exit 0 "and in the other order" "$AITUNE" merge "$T/ba.db" "$T/faster.db" "$T/s0.db"
expect_eq "the order of inputs does not change the winners" "$(sql "$T/ab.db" "$key")" "$(sql "$T/ba.db" "$key")"
once=$(sql "$T/ab.db" "$key")
expect_exit 0 "merge both again" "$AITUNE" merge "$T/ab.db" "$T/faster.db" "$T/s0.db"
expect_eq "a second merge changes no winner" "$(sql "$T/ab.db" "$key")" "$once"

# An input is opened read-only: an older one is migrated in a copy.
cp "$T/s0.db" "$T/old.db"
sqlite3 "$T/old.db" "ALTER TABLE measurements DROP COLUMN timing; ALTER TABLE cubins DROP COLUMN cubin_hash; DROP TABLE vendor_times; DROP TABLE scans; UPDATE meta SET value = '3' WHERE key = 'schema_version'"
sum=$(md5sum <"$T/old.db")
expect_exit 0 "merge a schema 3 shard" "$AITUNE" merge "$T/fromold.db" "$T/old.db"
expect_eq "its winners arrive" "$(sql "$T/fromold.db" "$key")" "$(sql "$T/s0.db" "$key")"
expect_eq "the shard itself is untouched (still schema 3)" "$(md5sum <"$T/old.db")" "$sum"
ls -A "$T" | grep -q "aitune-merge" && fail "a merge's working copy was left behind" || ok "no working copy is left behind"

done_testing
