-- Pinned repositories of an organization, optionally placed in named groups.
CREATE SCHEMA IF NOT EXISTS orgs;

CREATE TABLE orgs.pin_groups (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id        bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    name          text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
    display_order integer NOT NULL DEFAULT 0,
    collapsed     boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (id, org_id) -- lets a pin's group be checked to belong to the pin's organization
);
CREATE INDEX pin_groups_org_order_idx ON orgs.pin_groups (org_id, display_order, id);

CREATE TABLE orgs.pins (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    org_id        bigint NOT NULL REFERENCES core.accounts (id) ON DELETE CASCADE,
    repo_id       bigint NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    group_id      bigint,
    display_order integer NOT NULL DEFAULT 0,
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- two simultaneous pins of one repository: one wins, the other gets a unique violation
    UNIQUE (org_id, repo_id),
    -- deleting a group moves its pins to no group (PostgreSQL 15: SET NULL of one column)
    FOREIGN KEY (group_id, org_id) REFERENCES orgs.pin_groups (id, org_id) ON DELETE SET NULL (group_id)
);
CREATE INDEX pins_org_order_idx ON orgs.pins (org_id, display_order, id);
CREATE INDEX pins_repo_idx ON orgs.pins (repo_id);
