-- When each update key was last used (docs/releases.md "Update keys"): shown on the console's
-- update-keys page so an admin can tell a live key from a forgotten one before revoking it.
-- Written at most once a minute per key and process (access_keys/grant.py), never per request.
-- (0006 is taken by another branch's migration.)
ALTER TABLE releases.update_keys ADD COLUMN last_used_at timestamptz;
