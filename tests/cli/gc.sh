#!/usr/bin/env bash
# What a registry keeps (issue 13, registry upkeep), with the fake worker:
# a sweep drops the cubins of the candidates that lost once their bucket has
# a winner, keeping winners', finalists' and defaults' (--keep-cubins keeps
# all); aitune gc then drops the losers' measurements and whatever no
# winner, finalist or default needs, VACUUMs and reports the sizes. Every
# winner stays launchable (cubin and plan: emit, lookup), and retune races
# the finalists again without compiling.
. "$(dirname "$0")/lib.sh"

axpy_spec two.yaml 6 7
# The kernels of the finalists (runners_up) through their measurements,
# and the cubins of the candidates that neither won nor raced.
FINALISTS="select m.cubin from winners w join json_each(w.runners_up) f join measurements m
           on m.op = w.op and m.bucket = w.bucket and m.template = json_extract(f.value, '\$.template')
           and m.config = json(json_extract(f.value, '\$.config'))"
LOSERS="select cubin from measurements where cubin is not null and cubin not in (select cubin from winners)
        and cubin not in ($FINALISTS) and cubin not in (select cubin from defaults where cubin is not null)"
launchable() {   # every winner, finalist and default with its kernel
    sql "$1" "select (select count(*) from winners w join cubins c on c.hash = w.cubin
                      where length(c.cubin) > 100 and w.launch like '{\"v\":2,%') || ' ' ||
                     (select count(*) from ($FINALISTS) f join cubins c on c.hash = f.cubin) || ' ' ||
                     (select count(*) from defaults d join cubins c on c.hash = d.cubin where d.launch like '{\"v\":2,%')"
}
want_launchable() {
    sql "$1" "select (select count(*) from winners) || ' ' || (select sum(json_array_length(runners_up)) from winners)
              || ' ' || (select count(*) from defaults)"
}

# ---- the sweep keeps what can still matter ----
DB=$T/g.db
seed_db "$DB" || { fail "seed the cubin cache"; exit 1; }
cp "$DB" "$T/k.db"
expect_exit 0 "gc of a compile-only registry" "$AITUNE" gc --db "$T/k.db"
expect_stdout "^  measurements 0 -> 0, cubins [0-9]+ -> 1 " "a compile-only registry is a cache: gc drops it"
expect_eq "but for the default's kernel" "$(sql "$T/k.db" "select count(*) from defaults d join cubins c on c.hash = d.cubin")" 1
cp "$DB" "$T/k.db"
fake_sweep wrong_verify:4 "$DB" "$T/two.yaml"
expect_eq "a fake sweep of two buckets" "$RC" 0 || show_last
expect_stderr "^registry: [0-9.]+ MB, after dropping [0-9]+ cubins of candidates that lost \([0-9.]+ MB; --keep-cubins" \
    "the sweep says what it dropped and the registry's size"
expect_eq "every winner, finalist and default keeps its kernel" "$(launchable "$DB")" "$(want_launchable "$DB")"
expect_eq "no loser's cubin is left" "$(sql "$DB" "select count(*) from cubins where hash in ($LOSERS)")" 0
[ "$(sql "$DB" "select count(*) from ($LOSERS)")" -gt 20 ] && ok "the losers were measured" || fail "no losers measured"
expect_eq "a failed candidate's cubin is dropped too" \
    "$(sql "$DB" "select count(*) from measurements m join cubins c on c.hash = m.cubin where m.status = 'wrong'")" 0
expect_eq "every measurement stays (why and resume use them)" \
    "$(sql "$DB" "select count(*) >= 76 from measurements")" 1
expect_eq "a new registry gives freed pages back" "$(sql "$DB" "pragma auto_vacuum")" 2

fake_sweep wrong_verify:4 "$T/k.db" "$T/two.yaml" --keep-cubins
expect_eq "a sweep with --keep-cubins" "$RC" 0 || show_last
expect_eq "--keep-cubins keeps every measured kernel" \
    "$(sql "$T/k.db" "select count(*) from measurements m left join cubins c on c.hash = m.cubin
                      where m.cubin is not null and c.hash is null")" 0
expect_no_stdout "dropping" "and drops nothing"
expect_eq "the same winners either way" "$(sql "$T/k.db" "select bucket, config from winners order by 1")" \
    "$(sql "$DB" "select bucket, config from winners order by 1")"
ck=$(sql "$T/k.db" "select count(*) from cubins")
cg=$(sql "$DB" "select count(*) from cubins")
[ "$cg" -lt "$ck" ] && ok "fewer cubins stored ($ck -> $cg)" || fail "cubins: $cg trimmed vs $ck kept"
expect_exit 2 "compile --keep-cubins is refused" "$AITUNE" compile "$T/two.yaml" --db "$T/k.db" --keep-cubins

# ---- gc: winners, finalists and defaults stay launchable ----
cp "$DB" "$T/f.db"
cp "$DB" "$T/r.db"
size0=$(stat -c %s "$DB")
m0=$(sql "$DB" "select count(*) from measurements")
c0=$(sql "$DB" "select count(*) from cubins")
winners0=$(sql "$DB" "select op, arch, dtype, bucket, template, config, cubin, launch from winners order by bucket")
nkeep=$(sql "$DB" "select sum(json_array_length(runners_up) + 1) from winners")
expect_exit 0 "gc" "$AITUNE" gc --db "$DB"
expect_stdout "^.*g.db: [0-9.]+ [KM]B -> [0-9.]+ [KM]B\$" "reports the size before and after"
expect_stdout "^  measurements $m0 -> $nkeep, cubins $c0 -> [0-9]+ \(winners, finalists and defaults kept\)\$" \
    "reports what it dropped"
expect_eq "the winners are untouched" "$(sql "$DB" "select op, arch, dtype, bucket, template, config, cubin, launch from winners order by bucket")" "$winners0"
expect_eq "every winner, finalist and default still has its kernel" "$(launchable "$DB")" "$(want_launchable "$DB")"
expect_eq "nothing else is left in the cache" \
    "$(sql "$DB" "select count(*) from cubins where hash not in (select cubin from winners) and hash not in ($FINALISTS)
                  and hash not in (select cubin from defaults where cubin is not null)")" 0
expect_eq "only winners' and finalists' measurements remain" "$(sql "$DB" "select count(*) from measurements")" "$nkeep"
expect_eq "no failed measurement remains" "$(sql "$DB" "select count(*) from measurements where status <> 'ok'")" 0
size1=$(stat -c %s "$DB")
[ "$size1" -lt "$size0" ] && ok "the file shrank ($size0 -> $size1 bytes)" || fail "the file did not shrink ($size0 -> $size1)"
[ ! -s "$DB-wal" ] && ok "the WAL is truncated" || fail "the WAL still holds $(stat -c %s "$DB-wal") bytes"
expect_eq "the registry passes an integrity check" "$(sql "$DB" "pragma integrity_check")" ok
expect_exit 0 "lookup after gc" "$AITUNE" lookup axpy --arch sm_90 --dtype f32 --shape 100 --db "$DB"
expect_stdout "\(exact: tuned bucket n=2\^6" "lookup still answers exactly"
for n in 64 128; do
    expect_exit 0 "emit the winner of n=$n after gc" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape $n --db "$DB" -o "$T/k$n.cu"
    expect_true "the emitted kernel is there" grep -q "aitune_axpy_f32" "$T/k$n.cu"
done
expect_exit 0 "emit of every bucket after gc" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --db "$DB" -o "$T/all.cu"
expect_exit 0 "why after gc" "$AITUNE" why axpy --dtype f32 --shape 100 --db "$DB"
expect_stdout "^winner: axpy/vec" "why still shows the winner"
expect_eq "and the race's finalists" "$(grep -c ' regs  axpy/vec' "$T/out")" $(( nkeep / 2 ))
expect_exit 0 "gc again is harmless" "$AITUNE" gc --db "$DB"
expect_stdout "^  measurements $nkeep -> $nkeep, " "a second gc drops nothing"
expect_exit 0 "gc --keep-finalists is the default" "$AITUNE" gc --keep-finalists --db "$DB"
expect_stdout "^  measurements $nkeep -> $nkeep, " "and drops nothing either"

# Retune races the finalists from their cubins: nothing to compile.
sqlite3 "$DB" "update devices set driver = '550.1' where driver = 'fake'"
rm -f "$T/fake-state"*
run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "$AITUNE" retune "$T/two.yaml" --db "$DB" --quiet
expect_eq "retune after gc" "$RC" 0 || show_last
expect_stdout "^retune: 2 stale buckets re-raced, 0 searched again" "both buckets re-raced from their finalists"
# (gc drops the engine's fill kernel and the op's reference: those two compile again.)
expect_stderr "; 2 compiled, [0-9]+ from the cache;" "every finalist's kernel came from the cache"

expect_exit 0 "gc --winners-only" "$AITUNE" gc --winners-only --db "$T/f.db"
expect_stdout "^  measurements $m0 -> 2, cubins $c0 -> [0-9]+ \(winners and defaults kept\)\$" "says what it kept"
expect_eq "only the winners' own measurements remain" \
    "$(sql "$T/f.db" "select count(*) from measurements m join winners w on m.op = w.op and m.bucket = w.bucket and m.config = w.config")" 2
expect_eq "the winners' and defaults' kernels remain" \
    "$(sql "$T/f.db" "select (select count(*) from winners w join cubins c on c.hash = w.cubin) || ' ' ||
                             (select count(*) from defaults d join cubins c on c.hash = d.cubin)")" "2 1"
expect_exit 0 "emit after gc --winners-only" "$AITUNE" emit axpy --arch sm_90 --dtype f32 --shape 200 --db "$T/f.db" -o "$T/w.cu"
sqlite3 "$T/f.db" "update devices set driver = '550.1' where driver = 'fake'"
rm -f "$T/fake-state"*
run env AITUNE_WORKER="$FAKE" FAKE_STATE="$T/fake-state" "$AITUNE" retune "$T/two.yaml" --db "$T/f.db" --quiet
expect_stderr "; ([3-9]|[1-9][0-9]+) compiled, " "without the finalists' kernels, retune compiles them again"
expect_exit 2 "--winners-only with --keep-finalists" "$AITUNE" gc --winners-only --keep-finalists --db "$T/f.db"

# A registry from before auto_vacuum: gc turns it on.
sqlite3 "$T/r.db" "pragma auto_vacuum = none; vacuum"
expect_eq "an older registry has no auto_vacuum" "$(sql "$T/r.db" "pragma auto_vacuum")" 0
expect_exit 0 "gc of it" "$AITUNE" gc --db "$T/r.db"
expect_eq "gc turns incremental auto_vacuum on" "$(sql "$T/r.db" "pragma auto_vacuum")" 2

expect_exit 3 "gc of a missing registry" "$AITUNE" gc --db "$T/none.db"
expect_stderr "^aitune: error: no registry at" "names the missing registry"
[ ! -e "$T/none.db" ] && ok "gc creates no registry" || fail "gc created a registry"
expect_exit 3 "gc of a file that is not a registry" sh -c "echo garbage > '$T/bad.db'; '$AITUNE' gc --db '$T/bad.db'"
expect_stderr_lines 1 "one line"
expect_exit 2 "gc with an argument" "$AITUNE" gc extra --db "$DB"
done_testing
