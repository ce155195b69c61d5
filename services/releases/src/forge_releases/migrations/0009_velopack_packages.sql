-- What each `.nupkg` asset's own `.nuspec` says, for the Velopack feed (feeds/velopack.py,
-- docs/releases.md "Velopack"): read from the package once, the first time a feed needs it (so
-- assets uploaded before this table, or loaded from a world file, are read too), and kept.
-- `package_id` '' marks a `.nupkg` that is no Velopack package (not a zip, no root `.nuspec`, no
-- `<channel>`: a Squirrel.Windows package), so it is not read again. Deleting the asset deletes
-- the row.
CREATE TABLE releases.velopack_packages (
    asset_id       bigint PRIMARY KEY REFERENCES releases.assets (id) ON DELETE CASCADE,
    package_id     text NOT NULL CHECK (length(package_id) <= 256),
    version        text NOT NULL CHECK (length(version) <= 256),
    channel        text NOT NULL CHECK (length(channel) <= 256),
    notes_markdown text NOT NULL,
    notes_html     text NOT NULL,
    read_at        timestamptz NOT NULL DEFAULT now()
);
