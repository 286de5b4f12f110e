-- The fleet front door's index of runs: which harness holds each run admitted through the
-- controller's kiln.v1.Harness service (GetRun, GetArtifact and DesignateRun go there in one hop).
CREATE TABLE fleet_runs (
  run_id TEXT PRIMARY KEY,
  harness TEXT NOT NULL,
  recorded_unix_ms INTEGER NOT NULL
);
