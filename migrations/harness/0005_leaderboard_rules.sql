-- Leaderboards that a contest can publish (kiln leaderboard): a principal's score is that of one
-- designated run, its latest finished one unless it designated another; confirmation runs
-- re-measure ranked runs and are never ranked themselves.

-- The run each confirmation run evaluates again ('' for every other run).
ALTER TABLE runs ADD COLUMN confirms TEXT NOT NULL DEFAULT '';

-- One designated run per (principal, definition, mode): the run its "latest" leaderboard ranks.
CREATE TABLE designated_runs (
  principal     TEXT    NOT NULL,
  definition    TEXT    NOT NULL,
  mode          TEXT    NOT NULL,
  run_id        TEXT    NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  designated_ms INTEGER NOT NULL,
  PRIMARY KEY (principal, definition, mode)
) STRICT;
