-- How an operator has a definition judged (kiln defs set), and the registry of solutions that
-- runs name as baselines (kiln solutions add, kiln defs import).
--
-- Settings live beside the definition, not in definition_pb: registering the definition again
-- (a re-import of its dataset) keeps them. A NULL column is a setting not made: the definition's
-- own tolerance or flashinfer-bench's default applies.
CREATE TABLE definition_settings (
  definition             TEXT    NOT NULL PRIMARY KEY,
  atol                   REAL,
  rtol                   REAL,
  required_matched_ratio REAL,
  warmup                 INTEGER,
  iterations             INTEGER,
  trials                 INTEGER,
  updated_ms             INTEGER NOT NULL
) STRICT;

-- One solution per (definition, name); runs name it as the baseline "solution:<name>".
-- solution_pb is the whole kiln.v1.Solution, sources included; sha256 covers every field of it.
CREATE TABLE solutions (
  definition  TEXT    NOT NULL,
  name        TEXT    NOT NULL,
  language    TEXT    NOT NULL,
  author      TEXT    NOT NULL,
  sha256      TEXT    NOT NULL,
  solution_pb BLOB    NOT NULL,
  created_ms  INTEGER NOT NULL,
  PRIMARY KEY (definition, name)
) STRICT;

-- The baselines a run asked for (Run.baselines: torch_eager, solution:NAME, ...), one per line,
-- in request order. Runs archived before this migration read back with none.
ALTER TABLE runs ADD COLUMN baselines TEXT NOT NULL DEFAULT '';
