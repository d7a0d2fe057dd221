-- Schema 6 -> 7: each cached cubin's own hash (issue 31). Applied by
-- registry.c, in one transaction with the new schema version, when a
-- registry is opened for writing; db/schema.sql holds the same for new
-- registries. A cubin is taken from the cache only when its bytes hash to
-- cubin_hash and its source, entry name and options hash to its key
-- (reg_cubin_get); any other row is compiled again and replaced. Rows from
-- before schema 7 have no cubin_hash: they are compiled again the first
-- time they are asked for.
ALTER TABLE cubins ADD COLUMN cubin_hash TEXT;
