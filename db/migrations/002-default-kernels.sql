-- Schema 1 (aitune 0.1) -> 2. Applied by registry.c inside one transaction
-- when a registry is opened for writing; the launch plans in winners.launch
-- are rewritten from 0.1's JSON to plan version 2 by reg_migrate_plans (it
-- needs the ops' signatures, which only the templates know).
--
-- defaults gain the default config's compiled kernel, so libaitune can launch
-- at the default level: the cubin's hash and its launch plan.
ALTER TABLE defaults ADD COLUMN cubin TEXT;
ALTER TABLE defaults ADD COLUMN launch TEXT;
