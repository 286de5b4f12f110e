-- The principal a campaign is for (kiln-controller --tokens): it and operators see the campaign.
-- Campaigns from before were started on a controller without tokens, whose every caller is the
-- operator 'local'.
ALTER TABLE campaigns ADD COLUMN owner TEXT NOT NULL DEFAULT 'local';
CREATE INDEX campaigns_by_owner ON campaigns (owner, created_unix_ms);
