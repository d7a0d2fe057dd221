#!/usr/bin/env bash
# The cubin cache holds a hash of each cubin's bytes, and its key is the
# hash of its source, entry name and options (issue 31): a cached row whose
# bytes, source or options were changed is compiled again and replaced,
# never handed out "from the cache". A registry from before the hashes
# (schema 6) gets its kernels compiled again the first time they are asked
# for. A merged shard whose cubin bytes do not match their hash is refused.
. "$(dirname "$0")/lib.sh"

# Six of small.yaml's kernels and its default's: enough to poison three.
axpy_spec small.yaml 6 6 "max_evals: 6"
DB=$T/c.db
expect_exit 0 "compile fills the cache" "$AITUNE" compile "$T/small.yaml" --db "$DB"
# n candidates (the summary's count), nk kernels (the default's among them).
n=$(sed -n 's/^compile: \([0-9]*\) candidates evaluated.*/\1/p' "$T/err")
nk=$(sql "$DB" "select count(*) from cubins")
expect_true "the cache holds the $n candidates' kernels and the default's ($nk)" test "$n" -ge 6 -a "$nk" -ge "$n"
expect_eq "every cubin has its hash" "$(sql "$DB" "select count(*) from cubins where length(cubin_hash) = 16")" "$nk"
good=$(sql "$DB" "select hash, hex(cubin) from cubins order by hash" | md5sum)
expect_exit 0 "compile again" "$AITUNE" compile "$T/small.yaml" --db "$DB"
expect_stderr "; 0 compiled, $n from the cache" "all $n come from the cache"

# Poison: other bytes for one cubin; a changed source; changed options.
cand="select hash from cubins where hash not in (select cubin from defaults where cubin is not null) order by hash"
h1=$(sql "$DB" "$cand limit 1 offset 0")
h2=$(sql "$DB" "$cand limit 1 offset 1")
h3=$(sql "$DB" "$cand limit 1 offset 2")
sqlite3 "$DB" "UPDATE cubins SET cubin = randomblob(length(cubin)) WHERE hash = '$h1';
               UPDATE cubins SET source = source || ' ' WHERE hash = '$h2';
               UPDATE cubins SET options = options || ' -DEVIL' WHERE hash = '$h3';"
expect_exit 0 "compile over the poisoned cache" "$AITUNE" compile "$T/small.yaml" --db "$DB"
expect_stderr "; 3 compiled, $((n - 3)) from the cache" "the three poisoned rows are compiled again, not taken"
expect_eq "the cache holds the true bytes again" "$(sql "$DB" "select hash, hex(cubin) from cubins order by hash" | md5sum)" "$good"
expect_eq "and no changed option" "$(sql "$DB" "select count(*) from cubins where options like '%EVIL%'")" 0

# A schema 6 registry: no hashes yet; migrated, its kernels compiled again.
OLD=$T/old.db
cp "$DB" "$OLD"
sqlite3 "$OLD" "ALTER TABLE cubins DROP COLUMN cubin_hash; UPDATE meta SET value = '6' WHERE key = 'schema_version'"
expect_exit 0 "compile on a schema 6 registry" "$AITUNE" compile "$T/small.yaml" --db "$OLD"
expect_eq "it is migrated to schema 8" "$(sql "$OLD" "select value from meta where key = 'schema_version'")" 8
expect_stderr "; $n compiled, 0 from the cache" "its unhashed kernels are compiled again"
expect_eq "and now carry their hashes" "$(sql "$OLD" "select count(*) from cubins where length(cubin_hash) = 16")" "$nk"

# merge: a shard's cubin whose bytes are not the ones hashed with it.
cp "$DB" "$T/shard.db"
sqlite3 "$T/shard.db" "UPDATE cubins SET cubin = randomblob(100) WHERE hash = '$h1'"
run "$AITUNE" merge "$T/m.db" "$T/shard.db"
expect_eq "merge refuses a shard with a poisoned cubin (exit 3)" "$RC" 3 || show_last
expect_stderr "cubins: $h1: its bytes are not the ones hashed with it" "it names the cubin"

done_testing
