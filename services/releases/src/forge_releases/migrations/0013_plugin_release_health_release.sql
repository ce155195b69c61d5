-- The figures plugins reported for a release (core.plugin_release_health, core migration 0008)
-- belong to the release: deleted with it, and never stored for a release that does not exist.
ALTER TABLE core.plugin_release_health
    ADD CONSTRAINT plugin_release_health_release_fkey
    FOREIGN KEY (release_id) REFERENCES releases.releases (id) ON DELETE CASCADE;
