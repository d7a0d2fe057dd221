-- Schema 2 -> 3: identity (issue 11). Applied by registry.c, in one
-- transaction with the new schema version, when a registry is opened for
-- writing (a 0.1 registry gets 002 first); db/schema.sql holds the same for
-- new registries.
--
-- Hardware identity apart from toolchain identity. devices keeps one row per
-- (uuid, driver, CUDA driver, NVRTC); hw names the hardware alone (name, cc,
-- SMs, memory, L2) and toolchain the software that measured on it. Both are
-- written from the row's content, so they are the same text in every
-- registry and survive a merge (local integer ids do not).
ALTER TABLE devices ADD COLUMN hw TEXT;
ALTER TABLE devices ADD COLUMN toolchain TEXT;
UPDATE devices SET
  hw = name || '|sm_' || cc || '|' || sms || ' SMs|' || mem_bytes || ' B|L2 ' || l2_bytes || ' B',
  toolchain = 'driver ' || driver || '|cuda ' || cuda_driver || '|nvrtc ' || nvrtc;
CREATE TRIGGER IF NOT EXISTS devices_identity AFTER INSERT ON devices WHEN NEW.hw IS NULL
BEGIN
  UPDATE devices SET
    hw = NEW.name || '|sm_' || NEW.cc || '|' || NEW.sms || ' SMs|' || NEW.mem_bytes || ' B|L2 ' || NEW.l2_bytes || ' B',
    toolchain = 'driver ' || NEW.driver || '|cuda ' || NEW.cuda_driver || '|nvrtc ' || NEW.nvrtc
  WHERE id = NEW.id;
END;

-- What produced a run's kernels: a JSON object, op -> hash of the op's
-- template folder and templates/lib (sweep writes it; NULL for 0.1 runs,
-- whose template sources are unknown).
ALTER TABLE runs ADD COLUMN sources TEXT;

-- Winners are keyed by the hardware they were measured on as well, so a
-- sweep on another GPU of the same arch adds a row instead of overwriting.
CREATE TABLE winners_hw (
  op          TEXT NOT NULL,
  arch        TEXT NOT NULL,
  dtype       TEXT NOT NULL,
  bucket      TEXT NOT NULL,
  hw          TEXT NOT NULL DEFAULT '',
  dims        TEXT NOT NULL,
  lo          TEXT NOT NULL,
  hi          TEXT NOT NULL,
  shape       TEXT NOT NULL,
  template    TEXT NOT NULL,
  config      TEXT NOT NULL,
  median_us   REAL NOT NULL,
  gbps        REAL, tflops REAL,
  default_us  REAL,
  margin      REAL,
  exhaustive  INTEGER NOT NULL DEFAULT 1,
  runners_up  TEXT,
  cubin       TEXT,
  launch      TEXT NOT NULL,
  device      INTEGER REFERENCES devices(id),
  run         INTEGER REFERENCES runs(id),
  PRIMARY KEY (op, arch, dtype, bucket, hw)
);
INSERT INTO winners_hw (op, arch, dtype, bucket, hw, dims, lo, hi, shape, template, config, median_us, gbps,
                        tflops, default_us, margin, exhaustive, runners_up, cubin, launch, device, run)
  SELECT w.op, w.arch, w.dtype, w.bucket, coalesce((SELECT d.hw FROM devices d WHERE d.id = w.device), ''),
         w.dims, w.lo, w.hi, w.shape, w.template, w.config, w.median_us, w.gbps, w.tflops, w.default_us,
         w.margin, w.exhaustive, w.runners_up, w.cubin, w.launch, w.device, w.run
  FROM winners w;
DROP TABLE winners;
ALTER TABLE winners_hw RENAME TO winners;

-- Writers that name no hardware (a winner is written with its device id)
-- get the device's: the row is written again with hw filled and the
-- original insert dropped, so INSERT OR REPLACE replaces only the winner of
-- the same hardware.
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
