-- Rollout plans (docs/rollouts.md): a schedule that raises a release's staged-rollout percentage
-- (0003_rollout.sql) step by step, and halts it when a health gate fails.
--
-- `due_at` is the next evaluation: any replica's evaluator takes the due rows with FOR UPDATE
-- SKIP LOCKED and moves `due_at` in the same transaction as its decision, so one due time is
-- decided once, whatever the number of replicas, and a replica that was down finds the row due
-- and decides it once (never a step per missed interval).
CREATE TABLE releases.rollout_plans (
    release_id      bigint      PRIMARY KEY REFERENCES releases.releases (id) ON DELETE CASCADE,
    repo_id         bigint      NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    steps           jsonb       NOT NULL,
    gates           jsonb       NOT NULL,
    on_failure      text        NOT NULL CHECK (on_failure IN ('halt', 'withdraw')),
    state           text        NOT NULL CHECK (state IN ('running', 'paused', 'halted', 'done')),
    step            integer     NOT NULL CHECK (step >= 0),
    started_at      timestamptz NOT NULL DEFAULT now(),
    step_started_at timestamptz NOT NULL DEFAULT now(),
    due_at          timestamptz,
    -- why the last decision was taken: `summary` for every reader, `detail` (figures) for
    -- publishers only, as insights are
    summary         text        NOT NULL,
    detail          text        NOT NULL DEFAULT '',
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rollout_plans_due ON releases.rollout_plans (due_at) WHERE state = 'running';

-- Every decision of a plan, the evaluator's and the publishers': what the console's history and
-- insights' reach per step show.
CREATE TABLE releases.rollout_events (
    id         bigserial   PRIMARY KEY,
    release_id bigint      NOT NULL REFERENCES releases.releases (id) ON DELETE CASCADE,
    at         timestamptz NOT NULL DEFAULT now(),
    kind       text        NOT NULL,
    step       integer     NOT NULL,
    percent    smallint    NOT NULL,
    actor_id   bigint, -- NULL: the evaluator
    summary    text        NOT NULL,
    detail     text        NOT NULL DEFAULT '',
    figures    jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX rollout_events_release ON releases.rollout_events (release_id, id);

-- The external signal: figures a crash reporter or CI posts per release (each post replaces the
-- release's figures: a reporter posts its totals).
CREATE TABLE releases.release_health (
    release_id       bigint      PRIMARY KEY REFERENCES releases.releases (id) ON DELETE CASCADE,
    sessions         bigint      NOT NULL CHECK (sessions >= 0),
    crashed_sessions bigint      NOT NULL CHECK (crashed_sessions >= 0),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CHECK (crashed_sessions <= sessions)
);
