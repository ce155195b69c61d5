-- Accounts that sign in: an argon2id hash of the password (never the password), and whether it
-- must be changed at the next sign-in. An account without a hash cannot sign in with a password.
ALTER TABLE core.accounts
    ADD COLUMN password_hash        text,
    ADD COLUMN must_change_password boolean NOT NULL DEFAULT false,
    ADD CHECK (kind = 'user' OR password_hash IS NULL);

-- Tokens: Gitea lists the last eight characters of each token so its owner can tell them apart,
-- and when it was last used. Tokens made before scopes were enforced could do everything their
-- user could: they keep exactly that as the scope `all`.
ALTER TABLE core.access_tokens
    ADD COLUMN token_last_eight text NOT NULL DEFAULT '',
    ADD COLUMN last_used_at     timestamptz;
UPDATE core.access_tokens SET scopes = '{all}' WHERE scopes = '{}';
ALTER TABLE core.access_tokens ALTER COLUMN scopes SET DEFAULT '{all}';
CREATE UNIQUE INDEX access_tokens_user_lower_name_key ON core.access_tokens (user_id, lower(name))
    WHERE name <> 'world';
