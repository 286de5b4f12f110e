-- Multi-GPU nodes: a run records the device it was evaluated on (set when it gets its device
-- slot): the device's index on the node (cuda: the harness's CUDA ordinal), its name and its PCI
-- bus id. Runs archived before this migration have an empty device_name: the device is unknown.
ALTER TABLE runs ADD COLUMN device_index INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN device_name TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN device_pci_bus_id TEXT NOT NULL DEFAULT '';
