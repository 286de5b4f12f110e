-- Every attempt of an evaluation on a harness: the run that gave the evaluation its verdict and
-- the runs given up on the way (a harness gone mid-run, a call that broke, a run the harness
-- marked INTERRUPTED when it restarted). An evaluation has one verdict however many attempts it
-- took; this table says where each attempt went and why it ended.
CREATE TABLE evaluation_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id TEXT NOT NULL REFERENCES campaigns(id),
  candidate_hash TEXT NOT NULL,
  purpose TEXT NOT NULL,
  harness TEXT NOT NULL,
  run_id TEXT NOT NULL DEFAULT '',  -- empty when no run was admitted
  -- running | verdict | interrupted | abandoned | broken | failed | cancelled
  outcome TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT '',
  started_unix_ms INTEGER NOT NULL,
  finished_unix_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX evaluation_attempts_by_campaign ON evaluation_attempts (campaign_id, harness);
CREATE INDEX evaluation_attempts_by_run ON evaluation_attempts (run_id);
