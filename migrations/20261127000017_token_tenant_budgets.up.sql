-- Budgets on API tokens and on tenants (CONTRACT §14): the same JSON
-- configuration as gateways.budget and users.budget; NULL means none.
ALTER TABLE tenants ADD COLUMN budget TEXT;
--bun:split
ALTER TABLE tokens ADD COLUMN budget TEXT;
