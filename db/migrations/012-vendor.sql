-- Schema 4 -> 5: the vendor in the loop (issue 33). Applied by registry.c,
-- in one transaction with the new schema version, when a registry is opened
-- for writing; db/schema.sql holds the same for new registries.
--
-- The vendor library's time (cuBLASLt: src/vendor.h) at a shape the sweep
-- timed, measured by the worker as it measures a candidate (verified against
-- the reference, the task's timing method), so `show`, `why`, `report` and
-- the sweep's summary can say how a winner compares with it, and a bucket
-- (or a split bucket's part) that no template beats can name the vendor as
-- its winner (winners.template 'vendor/cublaslt'). One row per (op, arch,
-- dtype, bucket, shape, hardware, timing): a later measurement replaces it.
-- hw is devices.hw, as in winners, so the rows survive a merge.
CREATE TABLE IF NOT EXISTS vendor_times (
  op         TEXT NOT NULL,
  arch       TEXT NOT NULL,
  dtype      TEXT NOT NULL,
  bucket     TEXT NOT NULL,           -- the bucket the shape was timed for (a part's: its home's)
  shape      TEXT NOT NULL,           -- JSON object, dim -> size, as measurements.shape
  hw         TEXT NOT NULL,           -- devices.hw of the GPU
  timing     TEXT NOT NULL,           -- flush | stream, as measurements.timing
  library    TEXT NOT NULL,           -- 'cuBLASLt 130100': the library and its version
  algo       TEXT,                    -- the heuristic's choice, for the record
  status     TEXT NOT NULL,           -- ok | wrong | runtime (no library, no algorithm, a CUDA error)
  median_us  REAL, min_us REAL, max_us REAL, spread REAL,
  samples    INTEGER,
  error      TEXT,
  device     INTEGER REFERENCES devices(id),
  run        INTEGER REFERENCES runs(id),
  PRIMARY KEY (op, arch, dtype, bucket, shape, hw, timing)
);
