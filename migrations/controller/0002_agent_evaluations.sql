-- Evaluations a command agent made itself through `kiln mcp` while answering a request (the
-- run ids kiln mcp wrote to its ledger): they count against the campaign's candidate budget.
ALTER TABLE agent_requests ADD COLUMN agent_evaluations INTEGER NOT NULL DEFAULT 0;
