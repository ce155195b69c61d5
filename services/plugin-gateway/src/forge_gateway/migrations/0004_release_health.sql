-- Release health from plugins (docs/rollouts.md "From a plugin").
--
-- The rollout plans, as the releases service's `release.rollout.changed` events tell them (the
-- lossless pipeline, docs/events.md): the collector asks plugins about the running ones.
-- `decided_at` is the newest event's occurred_at, so an event that arrives late (a retry) never
-- overwrites a newer state; `release.deleted` marks the row `deleted` for good.
CREATE TABLE gateway.rollouts (
    release_id          bigint      PRIMARY KEY,
    repo_id             bigint      NOT NULL,
    tag                 text        NOT NULL,
    replaces_release_id bigint,
    replaces_tag        text,
    state               text        NOT NULL,
    decided_at          timestamptz NOT NULL
);
CREATE INDEX rollouts_running ON gateway.rollouts (repo_id) WHERE state = 'running';

-- When each plugin's next collection round is due. A replica takes a round by moving
-- `next_round_at` on in one statement, and only once it has come: one round per interval
-- whatever the number of replicas (the rollout evaluator's due rows do the same).
CREATE TABLE gateway.health_rounds (
    plugin        text        PRIMARY KEY,
    next_round_at timestamptz NOT NULL,
    rounds        bigint      NOT NULL DEFAULT 0
);
