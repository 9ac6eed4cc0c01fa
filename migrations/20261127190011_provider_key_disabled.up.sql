-- A provider key can be retired without being deleted (a key rotation:
-- add the new key, shift the weight, disable the old one). The proxy
-- loads no disabled key.
ALTER TABLE provider_keys ADD COLUMN disabled BOOLEAN NOT NULL DEFAULT FALSE;
