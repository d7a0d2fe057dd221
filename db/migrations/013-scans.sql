-- Schema 5 -> 6: `aitune scan` (issue 33). Applied by registry.c, in one
-- transaction with the new schema version, when a registry is opened for
-- writing; db/schema.sql holds the same for new registries.
--
-- What an application sees at each size of a range: the registry's answer
-- there (as libaitune gives it on this GPU), its time, the vendor's in the
-- same race, the best measurement the registry held at that size, and
-- whether the size is a hole (src/sweep_scan.h). One row per (op, arch,
-- dtype, shape, hardware, timing): a later scan replaces it. hw is
-- devices.hw, as in winners, so rows survive a merge.
CREATE TABLE IF NOT EXISTS scans (
  op         TEXT NOT NULL,
  arch       TEXT NOT NULL,
  dtype      TEXT NOT NULL,
  shape      TEXT NOT NULL,           -- JSON object, dim -> size, as measurements.shape
  hw         TEXT NOT NULL,           -- devices.hw of the GPU
  timing     TEXT NOT NULL,           -- flush | stream, as measurements.timing
  level      TEXT,                    -- exact | nearest | default (NULL: nothing answered)
  bucket     TEXT,                    -- the bucket (or part) that answered
  template   TEXT,
  config     TEXT,
  status     TEXT NOT NULL,           -- ok, or why there is no time (none, compile, wrong, runtime, ...)
  median_us  REAL,                    -- the answer's time there
  vendor_us  REAL,                    -- the vendor's, in the same race (NULL: not served or failed)
  best_us    REAL,                    -- the fastest measurement the registry held at this shape (NULL: none)
  hole       INTEGER NOT NULL,        -- 1: below 1.00x vendor, over 5% behind best_us, or no time
  error      TEXT,
  device     INTEGER REFERENCES devices(id),
  run        INTEGER REFERENCES runs(id),
  PRIMARY KEY (op, arch, dtype, shape, hw, timing)
);
