-- aitune registry, schema version 8 (names.h: REG_SCHEMA_VERSION).
-- Applied by registry.c when a registry is created; a registry of an older
-- version is brought up to date by db/migrations/NNN-*.sql, one per version
-- step (002: from aitune 0.1; 010-identity: hardware apart from toolchain
-- identity; 011-timing: how a measurement was timed; 012-vendor: the vendor
-- library's times; 013-scans: what `aitune scan` found at each size;
-- 014-cubin-hash: each cached cubin's own hash; 015-decided: the buckets a
-- sweep decided, so a sweep run again skips them). What a migration adds is
-- written here too, for new registries.
PRAGMA journal_mode = WAL;

CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- The fingerprint of a GPU and the toolchain that measured on it.
CREATE TABLE IF NOT EXISTS devices (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL,
  uuid          TEXT NOT NULL,
  cc            INTEGER NOT NULL,     -- 90 for sm_90
  sms           INTEGER NOT NULL,
  mem_bytes     INTEGER NOT NULL,
  l2_bytes      INTEGER NOT NULL,
  smem_optin    INTEGER NOT NULL,
  driver        TEXT NOT NULL,        -- kernel driver version, from NVML when it opens
  cuda_driver   INTEGER NOT NULL,     -- cuDriverGetVersion
  nvrtc         TEXT NOT NULL,
  -- Written from the row's content (trigger below), so the same text in
  -- every registry: the hardware (name, cc, SMs, memory, L2) and the
  -- toolchain (driver, CUDA driver API, NVRTC) apart.
  hw            TEXT,
  toolchain     TEXT,
  UNIQUE (uuid, driver, cuda_driver, nvrtc)
);
CREATE TRIGGER IF NOT EXISTS devices_identity AFTER INSERT ON devices WHEN NEW.hw IS NULL
BEGIN
  UPDATE devices SET
    hw = NEW.name || '|sm_' || NEW.cc || '|' || NEW.sms || ' SMs|' || NEW.mem_bytes || ' B|L2 ' || NEW.l2_bytes || ' B',
    toolchain = 'driver ' || NEW.driver || '|cuda ' || NEW.cuda_driver || '|nvrtc ' || NEW.nvrtc
  WHERE id = NEW.id;
END;

CREATE TABLE IF NOT EXISTS runs (
  id          INTEGER PRIMARY KEY,
  command     TEXT NOT NULL,
  spec_hash   TEXT,
  version     TEXT NOT NULL,
  seed        INTEGER NOT NULL,
  device      INTEGER REFERENCES devices(id),
  env         TEXT,                    -- JSON: clocks, temperature where NVML answers
  started     TEXT NOT NULL,
  ended       TEXT,
  outcome     TEXT,                    -- running | ok | interrupted | failed
  sources     TEXT                     -- JSON: op -> hash of its template sources (identity.h)
);

-- One row per candidate evaluated. status: ok | constraint | compile |
-- runtime | timeout | wrong.
CREATE TABLE IF NOT EXISTS measurements (
  id          INTEGER PRIMARY KEY,
  op          TEXT NOT NULL,
  template    TEXT NOT NULL,
  arch        TEXT NOT NULL,
  dtype       TEXT NOT NULL,
  bucket      TEXT NOT NULL,
  shape       TEXT NOT NULL,           -- JSON object, dim -> size
  config      TEXT NOT NULL,           -- canonical JSON
  config_hash TEXT NOT NULL,
  status      TEXT NOT NULL,
  median_us   REAL, min_us REAL, max_us REAL, spread REAL,
  samples     INTEGER,
  gbps        REAL, tflops REAL,
  registers   INTEGER, spills INTEGER, smem INTEGER,
  compile_ms  REAL,
  cubin       TEXT,                    -- cubins.hash
  error       TEXT,
  device      INTEGER REFERENCES devices(id),
  run         INTEGER REFERENCES runs(id),
  timing      TEXT NOT NULL DEFAULT 'flush'   -- flush | stream: how it was timed (a spec's timing)
);
CREATE INDEX IF NOT EXISTS measurements_task
  ON measurements (op, arch, dtype, bucket, device, config_hash);

-- The winner of each (op, arch, dtype, bucket). lo/hi: the bucket's edges,
-- one integer per dim in the op's dim order, comma separated, hi exclusive.
CREATE TABLE IF NOT EXISTS winners (
  op          TEXT NOT NULL,
  arch        TEXT NOT NULL,
  dtype       TEXT NOT NULL,
  bucket      TEXT NOT NULL,
  hw          TEXT NOT NULL DEFAULT '', -- devices.hw of the GPU it was measured on
  dims        TEXT NOT NULL,           -- dim names, comma separated
  lo          TEXT NOT NULL,
  hi          TEXT NOT NULL,
  shape       TEXT NOT NULL,           -- the representative shape it was tuned on
  template    TEXT NOT NULL,
  config      TEXT NOT NULL,
  median_us   REAL NOT NULL,
  gbps        REAL, tflops REAL,
  default_us  REAL,                    -- the template default's time, same run
  margin      REAL,                    -- runner-up time / winner time - 1
  exhaustive  INTEGER NOT NULL DEFAULT 1,
  runners_up  TEXT,                    -- JSON list of {template, config, median_us}
  cubin       TEXT,
  launch      TEXT NOT NULL,           -- the launch plan, JSON (src/plan.h)
  device      INTEGER REFERENCES devices(id),
  run         INTEGER REFERENCES runs(id),
  PRIMARY KEY (op, arch, dtype, bucket, hw)
);
-- A winner written with its device id only gets the device's hw: written
-- again with hw filled, the original insert dropped, so INSERT OR REPLACE
-- replaces the winner of the same hardware only.
CREATE TRIGGER IF NOT EXISTS winners_hw_fill BEFORE INSERT ON winners
  WHEN NEW.hw = '' AND coalesce((SELECT hw FROM devices WHERE id = NEW.device), '') <> ''
BEGIN
  INSERT OR REPLACE INTO winners (op, arch, dtype, bucket, hw, dims, lo, hi, shape, template, config, median_us,
                                  gbps, tflops, default_us, margin, exhaustive, runners_up, cubin, launch, device, run)
  VALUES (NEW.op, NEW.arch, NEW.dtype, NEW.bucket, (SELECT hw FROM devices WHERE id = NEW.device), NEW.dims,
          NEW.lo, NEW.hi, NEW.shape, NEW.template, NEW.config, NEW.median_us, NEW.gbps, NEW.tflops,
          NEW.default_us, NEW.margin, NEW.exhaustive, NEW.runners_up, NEW.cubin, NEW.launch, NEW.device, NEW.run);
  SELECT RAISE(IGNORE);
END;

-- The template default per (op, arch, dtype): the runtime's last fallback,
-- with its compiled kernel when one was built (cubins.hash, launch plan).
CREATE TABLE IF NOT EXISTS defaults (
  op       TEXT NOT NULL,
  arch     TEXT NOT NULL,
  dtype    TEXT NOT NULL,
  template TEXT NOT NULL,
  config   TEXT NOT NULL,
  cubin    TEXT,
  launch   TEXT,
  PRIMARY KEY (op, arch, dtype)
);

-- Compile cache: hash of (source, options, arch, nvrtc version). The source
-- is kept so a hash collision can never hand back the wrong kernel, and
-- cubin_hash is the hash of the cubin's bytes (012-cubin-hash): a row whose
-- key or bytes do not match is compiled again, never used.
CREATE TABLE IF NOT EXISTS cubins (
  hash       TEXT PRIMARY KEY,
  source     TEXT NOT NULL,
  options    TEXT NOT NULL,
  kernel     TEXT NOT NULL,
  cubin      BLOB NOT NULL,
  registers  INTEGER, spills INTEGER, smem INTEGER, stack INTEGER,
  log        TEXT,
  compile_ms REAL,
  cubin_hash TEXT
);

-- Shapes asked for with no tuned bucket: the next sweep's input.
CREATE TABLE IF NOT EXISTS misses (
  op    TEXT NOT NULL,
  arch  TEXT NOT NULL,
  dtype TEXT NOT NULL,
  shape TEXT NOT NULL,
  count INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (op, arch, dtype, shape)
);

-- The vendor library's time (cuBLASLt) at a shape the sweep timed, measured
-- as a candidate is (db/migrations/012-vendor.sql says more). A winner whose
-- template is 'vendor/cublaslt' is the vendor itself: no template beat it
-- over that bucket or part.
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
