-- Release safety (docs/release-safety.md): a withdrawn release is offered by no feed or page (its
-- files stay downloadable by direct URL); a required release is a step every install below it
-- passes through; a critical release makes the update mandatory for installs below it (the
-- repository's minimum version per channel is its highest critical release).
ALTER TABLE releases.releases
    ADD COLUMN withdrawn boolean NOT NULL DEFAULT false,
    ADD COLUMN withdrawn_reason text NOT NULL DEFAULT ''
        CHECK (length(withdrawn_reason) <= 1000),
    ADD COLUMN withdrawn_at timestamptz,
    ADD COLUMN required boolean NOT NULL DEFAULT false,
    ADD COLUMN critical boolean NOT NULL DEFAULT false;
