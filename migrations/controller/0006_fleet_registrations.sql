-- The fleet front door's journal: what callers registered through the controller (definitions,
-- solutions, definition settings), replayed in order to a harness that joins, comes back or
-- restarted. One row per (kind, key): a later registration replaces the row and takes a new seq.
CREATE TABLE fleet_registrations (
  kind TEXT NOT NULL,      -- definition | solution | settings
  key TEXT NOT NULL,       -- the definition's or the solution's name
  request BLOB NOT NULL,   -- the serialized request, as it is replayed
  seq INTEGER NOT NULL,    -- order of registration
  recorded_unix_ms INTEGER NOT NULL,
  PRIMARY KEY (kind, key)
);
