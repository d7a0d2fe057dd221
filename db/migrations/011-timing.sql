-- Schema 3 -> 4: how a measurement was timed (a spec's `timing`). Applied by
-- registry.c, in one transaction with the new schema version, when a
-- registry is opened for writing; db/schema.sql holds the same for new
-- registries. Earlier measurements were all timed one launch after an L2
-- flush. A sweep takes as its own (resume, earlier finalists) only the
-- measurements timed the way its task is, so a bucket re-tuned as a stream
-- never mixes in times of the other method.
ALTER TABLE measurements ADD COLUMN timing TEXT NOT NULL DEFAULT 'flush';
