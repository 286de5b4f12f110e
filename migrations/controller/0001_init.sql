-- kiln-controller archive: campaigns and everything they did, so that a restarted controller
-- resumes each campaign without repeating finished evaluations or losing agent results.

CREATE TABLE campaigns (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  definition TEXT NOT NULL,
  spec_yaml TEXT NOT NULL,
  spec_files_json TEXT NOT NULL,     -- {"path": "content"} of the files the YAML names
  status TEXT NOT NULL,              -- running | completed | cancelled | failed
  reason TEXT NOT NULL DEFAULT '',
  state_json TEXT NOT NULL DEFAULT '{}',  -- loop state: round, pass, agent, counters, history
  baseline_latency_ms REAL NOT NULL DEFAULT 0,
  best_latency_ms REAL NOT NULL DEFAULT 0,
  incumbent_hash TEXT NOT NULL DEFAULT '',
  created_unix_ms INTEGER NOT NULL,
  finished_unix_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX campaigns_by_status ON campaigns(status);

CREATE TABLE rounds (
  campaign_id TEXT NOT NULL REFERENCES campaigns(id),
  round INTEGER NOT NULL,
  pass TEXT NOT NULL,                -- baseline | functional | optimization
  agent TEXT NOT NULL,
  direction TEXT NOT NULL DEFAULT '',
  evidence_json TEXT NOT NULL DEFAULT '{}',
  outcome TEXT NOT NULL DEFAULT '',  -- promoted | rejected | failed | duplicate | ...
  started_unix_ms INTEGER NOT NULL,
  finished_unix_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign_id, round)
);

-- One request to an agent and what it answered.
CREATE TABLE agent_requests (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id TEXT NOT NULL REFERENCES campaigns(id),
  round INTEGER NOT NULL,
  agent TEXT NOT NULL,
  pass TEXT NOT NULL,
  prompt TEXT NOT NULL,
  state TEXT NOT NULL,               -- pending | answered | failed
  response TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  cost_usd REAL NOT NULL DEFAULT 0,
  turns INTEGER NOT NULL DEFAULT 0,
  candidate_count INTEGER NOT NULL DEFAULT 0,
  started_unix_ms INTEGER NOT NULL,
  finished_unix_ms INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX agent_requests_by_campaign ON agent_requests(campaign_id, round);

-- Candidates by content hash: a hash is evaluated at most once per campaign.
CREATE TABLE candidates (
  campaign_id TEXT NOT NULL REFERENCES campaigns(id),
  hash TEXT NOT NULL,
  request_id INTEGER NOT NULL,
  round INTEGER NOT NULL,
  agent TEXT NOT NULL,
  params_json TEXT NOT NULL DEFAULT '{}',
  solution_json TEXT NOT NULL,
  state TEXT NOT NULL,               -- pending | evaluated | invalid
  status TEXT NOT NULL DEFAULT '',   -- overall verdict of its first evaluation
  mean_latency_ms REAL NOT NULL DEFAULT 0,
  created_unix_ms INTEGER NOT NULL,
  PRIMARY KEY (campaign_id, hash)
);

-- One harness run of a candidate (purpose first | confirm | baseline).
CREATE TABLE evaluations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  campaign_id TEXT NOT NULL REFERENCES campaigns(id),
  candidate_hash TEXT NOT NULL,
  purpose TEXT NOT NULL,
  round INTEGER NOT NULL,
  harness TEXT NOT NULL DEFAULT '',
  run_id TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL,               -- submitted | done | failed
  status TEXT NOT NULL DEFAULT '',
  mean_latency_ms REAL NOT NULL DEFAULT 0,
  gpu_seconds REAL NOT NULL DEFAULT 0,
  result_json TEXT NOT NULL DEFAULT '{}',  -- per-workload evidence
  attempts INTEGER NOT NULL DEFAULT 0,
  started_unix_ms INTEGER NOT NULL,
  finished_unix_ms INTEGER NOT NULL DEFAULT 0,
  UNIQUE (campaign_id, candidate_hash, purpose)
);

CREATE TABLE promotions (
  campaign_id TEXT NOT NULL REFERENCES campaigns(id),
  round INTEGER NOT NULL,
  candidate_hash TEXT NOT NULL,
  solution_name TEXT NOT NULL,
  agent TEXT NOT NULL,
  latency_ms REAL NOT NULL,
  previous_latency_ms REAL NOT NULL,
  noise REAL NOT NULL,
  unix_ms INTEGER NOT NULL
);

CREATE TABLE events (
  campaign_id TEXT NOT NULL REFERENCES campaigns(id),
  seq INTEGER NOT NULL,
  unix_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  message TEXT NOT NULL,
  PRIMARY KEY (campaign_id, seq)
);
