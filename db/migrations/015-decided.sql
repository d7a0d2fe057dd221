-- Schema 7 -> 8: the buckets a sweep decided (issue 33: a resumed sweep
-- skips them). Applied by registry.c, in one transaction with the new
-- schema version, when a registry is opened for writing; db/schema.sql
-- holds the same for new registries. A registry migrated here has no rows:
-- its next sweep decides every bucket again, as sweeps did before (taking
-- every measurement from the registry), and records them.
--
-- The buckets whose decision a sweep completed (src/sweep_resume.h): the
-- search, the race, hold and split all done, and their winner rows stored
-- (the bucket's, its parts', the vendor's; none where no candidate was
-- correct). A sweep run again with the same basis leaves such a bucket as it
-- is, while its winner rows on hw are still exactly the ones run stored; any
-- other bucket it decides again. A bucket cut by Ctrl-C, SIGTERM or a
-- budget has no row. Not merged: what one registry's sweep decided is its own.
CREATE TABLE IF NOT EXISTS decided (
  op       TEXT NOT NULL,
  arch     TEXT NOT NULL,
  dtype    TEXT NOT NULL,
  bucket   TEXT NOT NULL,           -- the bucket's key (a split bucket's parts are keyed under it)
  hw       TEXT NOT NULL,           -- devices.hw of the GPU, as in winners
  basis    TEXT NOT NULL,           -- what the decision was made on: spec, options, toolchain, templates, holes
  winners  INTEGER NOT NULL,        -- the winner rows run stored for it (0: none)
  run      INTEGER REFERENCES runs(id),
  PRIMARY KEY (op, arch, dtype, bucket, hw)
);
