-- Multi-tenant serving: runs are listed per principal, and leaderboards rank only runs evaluated
-- on the definition's registered workloads (a run on workloads of its own choosing is not
-- comparable). Runs archived before this migration count as not registered: they are not ranked.
ALTER TABLE runs ADD COLUMN registered_workloads INTEGER NOT NULL DEFAULT 0;

-- Listing one principal's runs, newest first, and counting them.
CREATE INDEX runs_by_principal ON runs (principal, created_ms DESC, run_id DESC);

-- GetArtifact checks that a blob belongs to a run of the caller.
CREATE INDEX artifacts_by_sha256 ON artifacts (sha256);
