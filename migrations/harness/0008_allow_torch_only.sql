-- kiln defs set --allow-torch-only: integrity.no_own_kernel and integrity.own_kernel_share
-- become warnings for the definition (1), or are enforced whatever its tags say (0); NULL
-- leaves the definition's own tags.
ALTER TABLE definition_settings ADD COLUMN allow_torch_only INTEGER;
