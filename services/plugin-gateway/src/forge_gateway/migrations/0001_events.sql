-- Events received from the producers' outbox relays, stored once each (the id is the producer's,
-- stable across resends), and one delivery per subscribed plugin, claimed by workers with
-- FOR UPDATE SKIP LOCKED and a lease (DESIGN §6, plugin-host.md "Delivery that loses nothing").
CREATE SCHEMA IF NOT EXISTS gateway;

CREATE TABLE gateway.events (
    id          uuid PRIMARY KEY,
    type        text NOT NULL,
    source      text NOT NULL,
    occurred_at timestamptz NOT NULL,
    repo_id     bigint,
    org_id      bigint,
    actor_id    bigint,
    payload     jsonb NOT NULL DEFAULT '{}',
    received_at timestamptz NOT NULL DEFAULT now()
);

-- status: pending (waiting or leased), delivered, skipped (the plugin turned out not to subscribe),
-- dead (a permanent failure, or attempts exhausted: kept until an operator redelivers it).
CREATE TABLE gateway.deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id        uuid NOT NULL REFERENCES gateway.events (id) ON DELETE CASCADE,
    plugin          text NOT NULL,
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'delivered', 'skipped', 'dead')),
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_owner     text,
    lease_until     timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    UNIQUE (event_id, plugin)
);
CREATE INDEX deliveries_due_idx ON gateway.deliveries (plugin, next_attempt_at, id)
    WHERE status = 'pending';
CREATE INDEX deliveries_status_idx ON gateway.deliveries (plugin, status, id);

-- Every attempt is kept, so an operator can see what happened before a dead letter.
CREATE TABLE gateway.delivery_attempts (
    delivery_id bigint NOT NULL REFERENCES gateway.deliveries (id) ON DELETE CASCADE,
    attempt     integer NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(),
    outcome     text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'dead', 'released')),
    error       text,
    PRIMARY KEY (delivery_id, attempt, started_at)
);
