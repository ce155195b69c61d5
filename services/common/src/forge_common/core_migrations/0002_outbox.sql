-- Events written in the same transaction as the change they describe; a relay sends them to the
-- gateway and deletes a row only after the gateway acknowledged it.
CREATE TABLE core.outbox (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    type        text NOT NULL,
    occurred_at timestamptz NOT NULL DEFAULT now(),
    source      text NOT NULL,
    repo_id     bigint,
    org_id      bigint,
    actor_id    bigint,
    payload     jsonb NOT NULL DEFAULT '{}',
    attempts    integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_due_idx ON core.outbox (next_attempt_at, occurred_at);
