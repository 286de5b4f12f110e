-- The harness archive's first schema. Applied by harness/archive/migrations.cc inside one
-- transaction together with `PRAGMA user_version = 1`.

-- One solution evaluated on a set of workloads. Every column a run listing shows is a plain
-- column, so listing never decodes a blob.
CREATE TABLE runs (
  run_id            TEXT    NOT NULL PRIMARY KEY,
  definition        TEXT    NOT NULL,
  solution_name     TEXT    NOT NULL,
  solution_hash     TEXT    NOT NULL,
  author            TEXT    NOT NULL,
  principal         TEXT    NOT NULL,
  state             INTEGER NOT NULL,  -- kiln.v1.RunState
  status            INTEGER NOT NULL,  -- kiln.v1.EvaluationStatus
  reason            TEXT    NOT NULL,
  mode              TEXT    NOT NULL,
  backend           TEXT    NOT NULL,
  created_ms        INTEGER NOT NULL,
  finished_ms       INTEGER NOT NULL DEFAULT 0,
  queued_s          REAL    NOT NULL DEFAULT 0,
  compile_s         REAL    NOT NULL DEFAULT 0,
  verify_s          REAL    NOT NULL DEFAULT 0,
  timing_s          REAL    NOT NULL DEFAULT 0,
  compile_log_sha   TEXT,
  compile_cache_hit INTEGER NOT NULL DEFAULT 0,
  workload_count    INTEGER NOT NULL DEFAULT 0,
  mean_latency_ms   REAL    NOT NULL DEFAULT 0,
  mean_speedup      REAL    NOT NULL DEFAULT 0,
  -- kiln.v1.Solution in protobuf JSON; sources keep their paths only (contents are artifacts
  -- of kind "source", named by path).
  solution_json     TEXT    NOT NULL,
  -- When the run entered its current state; stage seconds are measured from it.
  updated_ms        INTEGER NOT NULL
) STRICT;

-- Keyset pagination of run listings: newest first, ties broken by run_id.
CREATE INDEX runs_by_created ON runs (created_ms DESC, run_id DESC);
CREATE INDEX runs_by_definition ON runs (definition, created_ms DESC, run_id DESC);
CREATE INDEX runs_by_status ON runs (status, created_ms DESC, run_id DESC);
-- MarkInterrupted looks for unfinished runs at every start.
CREATE INDEX runs_by_state ON runs (state) WHERE state <> 5;

-- One workload's trace. latency_ms / speedup are copies of the trace's performance (NULL when
-- nothing was timed) so that run means are computed without decoding trace_pb.
CREATE TABLE traces (
  run_id         TEXT    NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  workload_index INTEGER NOT NULL,
  workload_uuid  TEXT    NOT NULL,
  status         INTEGER NOT NULL,  -- kiln.v1.EvaluationStatus
  latency_ms     REAL,
  speedup        REAL,
  trace_pb       BLOB    NOT NULL,  -- serialized kiln.v1.Trace
  PRIMARY KEY (run_id, workload_index)
) STRICT;

-- Content-addressed bytes: sources, compiler logs, binaries, worker logs, raw samples.
CREATE TABLE blobs (
  sha256  TEXT    NOT NULL PRIMARY KEY,
  size    INTEGER NOT NULL,
  content BLOB    NOT NULL
) STRICT;

CREATE TABLE artifacts (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  kind   TEXT NOT NULL,  -- source | binary | compiler_log | worker_log | samples
  name   TEXT NOT NULL,
  sha256 TEXT NOT NULL REFERENCES blobs (sha256),
  PRIMARY KEY (run_id, kind, name)
) STRICT;

CREATE TABLE definitions (
  name                 TEXT    NOT NULL PRIMARY KEY,
  op_type              TEXT    NOT NULL,
  definition_pb        BLOB    NOT NULL,  -- serialized kiln.v1.Definition
  builtin              INTEGER NOT NULL,
  has_native_reference INTEGER NOT NULL,
  workload_count       INTEGER NOT NULL,
  updated_ms           INTEGER NOT NULL
) STRICT;

CREATE TABLE workloads (
  definition  TEXT    NOT NULL REFERENCES definitions (name) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  uuid        TEXT    NOT NULL,
  workload_pb BLOB    NOT NULL,  -- serialized kiln.v1.Workload
  PRIMARY KEY (definition, uuid)
) STRICT;

CREATE TABLE settings (
  key   TEXT NOT NULL PRIMARY KEY,
  value BLOB NOT NULL
) STRICT;
