-- Profiles (the Profile RPC, `kiln profile`): runs of kind 'profile' carry Nsight Compute's
-- figures per kernel (kiln.v1.RunProfile) and are never ranked.

-- 'evaluation' (Evaluate, EvaluateBatch) or 'profile'.
ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'evaluation';
-- kiln.v1.RunProfile, serialized; NULL for evaluations and for profiles not finished.
ALTER TABLE runs ADD COLUMN profile_pb BLOB;

-- The profiles a principal took in the last hour (--max-profiles-per-hour).
CREATE INDEX runs_profiles_by_principal ON runs (principal, created_ms) WHERE kind = 'profile';
