-- Staged rollouts (issue 12): the percentage of installed apps a release is offered to by the
-- update feeds that can honour one (electron-updater's stagingPercentage, Squirrel.Windows'
-- `# NN%`). NULL: everyone. The spec's update check ignores it.
ALTER TABLE releases.releases
    ADD COLUMN rollout smallint CHECK (rollout BETWEEN 1 AND 100);
