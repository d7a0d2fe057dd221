#!/usr/bin/env bash
# tests/run: slow 2 (sweeps of sharded specs)
# sweep --shard i/n and aitune merge (issue 11): the shards of a sweep, each
# in its own registry, merged, give the winners of one unsharded sweep (the
# fake worker's times are deterministic); merging is idempotent and the
# order of inputs does not matter.
. "$(dirname "$0")/lib.sh"

spec four.yaml <<'EOF2'
name: four
tasks:
  - op: axpy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 8]}
  - op: scale_copy
    dtypes: [f32]
    shapes:
      n: {log2: [6, 6]}
EOF2
seed_db "$T/seed.db" scale || { fail "seed the cubin cache"; exit 1; }
cp "$T/seed.db" "$T/u.db"
fake_sweep ok "$T/u.db" "$T/four.yaml"
expect_eq "the unsharded sweep" "$RC" 0 || show_last
expect_eq "it has four winners" "$(sql "$T/u.db" "select count(*) from winners")" 4

for i in 0 1 2; do
    cp "$T/seed.db" "$T/s$i.db"
    fake_sweep ok "$T/s$i.db" "$T/four.yaml" --shard "$i/3"
    expect_eq "shard $i/3" "$RC" 0 || show_last
done
expect_eq "the shards split the buckets 2/1/1, none twice" \
    "$(for i in 0 1 2; do sql "$T/s$i.db" "select count(*) from winners"; done | tr '\n' ' ')" "2 1 1 "
expect_eq "shard 0/3 has the first and fourth buckets of the spec" \
    "$(sql "$T/s0.db" "select op || ' ' || bucket from winners order by op, bucket" | tr '\n' ',')" "axpy n=2^6,scale_copy n=2^6,"

expect_exit 0 "merge the shards" "$AITUNE" merge "$T/m.db" "$T/s0.db" "$T/s1.db" "$T/s2.db"
expect_stdout "s0.db: \+[0-9]+ measurements, \+2 winners, \+[0-9]+ cubins, \+1 runs, \+1 devices" "merge says what each input added"
key="select op, arch, dtype, bucket, hw, template, config, median_us from winners order by 1, 2, 3, 4, 5"
expect_eq "merged shards have the unsharded sweep's winners" "$(sql "$T/m.db" "$key")" "$(sql "$T/u.db" "$key")"
mcount() { sql "$1" "select (select count(*) from measurements) || ' ' || (select count(*) from winners) || ' ' ||
                     (select count(*) from runs) || ' ' || (select count(*) from devices) || ' ' || (select count(*) from cubins)"; }
want_meas=$(( $(sql "$T/s0.db" "select count(*) from measurements") + $(sql "$T/s1.db" "select count(*) from measurements") + $(sql "$T/s2.db" "select count(*) from measurements") ))
expect_eq "every shard's measurements, once" "$(sql "$T/m.db" "select count(*) from measurements")" "$want_meas"
expect_eq "one device row for the one GPU" "$(sql "$T/m.db" "select count(*) from devices")" 1
expect_eq "the winners point at the merged rows" \
    "$(sql "$T/m.db" "select count(*) from winners w join devices d on d.id = w.device join runs r on r.id = w.run join cubins c on c.hash = w.cubin")" 4
before=$(mcount "$T/m.db")
expect_exit 0 "merge the same shards again" "$AITUNE" merge "$T/m.db" "$T/s2.db" "$T/s0.db" "$T/s1.db"
expect_eq "a second merge adds nothing" "$(mcount "$T/m.db")" "$before"
expect_stdout "s0.db: \+0 measurements, \+0 winners, \+0 cubins, \+0 runs, \+0 devices, 0 misses, \+0 vendor times" "and says so"

expect_exit 0 "merge in the other order" "$AITUNE" merge "$T/r.db" "$T/s2.db" "$T/s1.db" "$T/s0.db"
expect_eq "the order of inputs does not change the winners" "$(sql "$T/r.db" "$key")" "$(sql "$T/u.db" "$key")"

# Per hardware: a faster winner of the same GPU replaces, another GPU's is kept beside.
cp "$T/s1.db" "$T/fast.db"
sqlite3 "$T/fast.db" "update winners set median_us = 1.0, config = '{\"fast\":1}'"
cp "$T/s1.db" "$T/other.db"
sqlite3 "$T/other.db" "update devices set name = 'Other GPU', uuid = 'GPU-other', hw = 'Other GPU|sm_90'; update winners set hw = 'Other GPU|sm_90'"
expect_exit 0 "merge a faster winner and another GPU's" "$AITUNE" merge "$T/m.db" "$T/fast.db" "$T/other.db"
b=$(sql "$T/s1.db" "select bucket from winners")
expect_eq "the faster winner of the same GPU wins" \
    "$(sql "$T/m.db" "select config from winners where bucket = '$b' and hw like 'Fake GPU|%'")" '{"fast":1}'
expect_eq "the other GPU's winner is kept beside it" "$(sql "$T/m.db" "select count(*) from winners where bucket = '$b'")" 2

# Misses: the larger count, not the sum (a merge may repeat).
sqlite3 "$T/s0.db" "insert into misses values ('axpy', 'sm_90', 'f32', '{\"n\":3000}', 5)"
sqlite3 "$T/s1.db" "insert into misses values ('axpy', 'sm_90', 'f32', '{\"n\":3000}', 7), ('axpy', 'sm_90', 'f32', '{\"n\":9}', 1)"
run "$AITUNE" merge "$T/m.db" "$T/s0.db" "$T/s1.db"
run "$AITUNE" merge "$T/m.db" "$T/s0.db" "$T/s1.db"
expect_eq "misses merged: the larger count per shape" "$(sql "$T/m.db" "select group_concat(count, ' ') from (select count from misses order by shape)")" "7 1"

# Usage and bad input.
expect_exit 2 "merge with no input" "$AITUNE" merge "$T/m.db"
expect_exit 3 "merge of a missing registry" "$AITUNE" merge "$T/m.db" "$T/nope.db"
expect_stderr "^aitune: error: no registry at" "one error line"
echo "not a db" >"$T/junk.db"
expect_exit 3 "merge of a file that is not a registry" "$AITUNE" merge "$T/m.db" "$T/junk.db"
expect_stderr_lines 1 "one line"
expect_exit 2 "--shard 3/3 is refused" "$AITUNE" sweep "$T/four.yaml" --db "$T/x.db" --shard 3/3
expect_exit 2 "--shard x is refused" "$AITUNE" sweep "$T/four.yaml" --db "$T/x.db" --shard x

done_testing
