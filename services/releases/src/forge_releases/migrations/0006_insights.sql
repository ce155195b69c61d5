-- Insights (docs/insights.md): how many update checks, feed answers and downloads, per repository,
-- hour (kept 2 days) and UTC day (kept INSIGHTS_RETENTION_DAYS), and per counted dimension. Only
-- aggregates: no address, user agent, token or key is ever stored. '' means "not said": the
-- client did not send its version, nothing was offered (up to date), a check names no file.
CREATE TABLE releases.insights_hourly (
    repo_id  bigint      NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    hour     timestamptz NOT NULL,
    kind     text        NOT NULL CHECK (kind IN ('check', 'download')),
    feed     text        NOT NULL,
    running  text        NOT NULL,
    offered  text        NOT NULL,
    platform text        NOT NULL,
    arch     text        NOT NULL,
    channel  text        NOT NULL,
    file     text        NOT NULL,
    n        bigint      NOT NULL CHECK (n > 0),
    PRIMARY KEY (repo_id, hour, kind, feed, running, offered, platform, arch, channel, file)
);

CREATE TABLE releases.insights_daily (
    repo_id  bigint NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    day      date   NOT NULL,
    kind     text   NOT NULL CHECK (kind IN ('check', 'download')),
    feed     text   NOT NULL,
    running  text   NOT NULL,
    offered  text   NOT NULL,
    platform text   NOT NULL,
    arch     text   NOT NULL,
    channel  text   NOT NULL,
    file     text   NOT NULL,
    n        bigint NOT NULL CHECK (n > 0),
    PRIMARY KEY (repo_id, day, kind, feed, running, offered, platform, arch, channel, file)
);

-- The daily counts summed over every dimension but one (`dim` names it: running, offered, platform,
-- arch, channel, feed, file), written by the same statement as the rows above: what the API and
-- the page read. One row per value and month, its days in an array (`counts[d]`: day d of the
-- month, UTC), so a year of 200 versions is 2,600 rows read in key order, not the 438,000 of
-- the cross product nor 73,000 of one row a day.
CREATE TABLE releases.insights_monthly_by (
    repo_id bigint   NOT NULL REFERENCES core.repositories (id) ON DELETE CASCADE,
    kind    text     NOT NULL CHECK (kind IN ('check', 'download')),
    dim     text     NOT NULL,
    value   text     COLLATE "C" NOT NULL,
    month   date     NOT NULL CHECK (extract(day FROM month) = 1),
    counts  bigint[] NOT NULL CHECK (cardinality(counts) = 31),
    PRIMARY KEY (repo_id, kind, dim, value, month)
);

-- Retention prunes by time alone.
CREATE INDEX insights_hourly_hour ON releases.insights_hourly (hour);
CREATE INDEX insights_daily_day ON releases.insights_daily (day);
CREATE INDEX insights_monthly_by_month ON releases.insights_monthly_by (month);

-- How far the releases service has read nginx's log of the checks it answered from its
-- micro-cache (INSIGHTS_PROXY_LOG): advanced in the same transaction as the counts it read, so
-- a line is counted once, whichever replica reads it and whenever one crashes.
CREATE TABLE releases.insights_log_positions (
    path     text   PRIMARY KEY,
    inode    bigint NOT NULL,
    position bigint NOT NULL CHECK (position >= 0)
);
