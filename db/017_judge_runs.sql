-- physgrade project schema, version 17: runs of a judge, and the decoding settings of each.
--
-- A second run of the same judge model under the same prompt version is a rater of its own,
-- told apart by a run label (Physics-R1 compares two runs of one judge): raters are unique by
-- name, prompt version and run. The default run '' is every rater made before.
CREATE TABLE raters_new (
    id             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('human', 'llm', 'rules')),
    prompt_version TEXT NOT NULL DEFAULT '',
    run            TEXT NOT NULL DEFAULT '',
    UNIQUE (name, prompt_version, run)
);
INSERT INTO raters_new (id, name, kind, prompt_version) SELECT id, name, kind, prompt_version
    FROM raters;
-- The views and triggers that read raters name it by name: with the legacy rename, SQLite
-- leaves them as they are (they read the new table) instead of checking them against a
-- schema with no raters table for a moment.
PRAGMA legacy_alter_table = ON;
DROP TABLE raters;
ALTER TABLE raters_new RENAME TO raters;
PRAGMA legacy_alter_table = OFF;

-- Every verdict run (a direct run, a batch submission or an import of verdicts): the judge
-- model, prompt version and run it made verdicts for, and how it decoded. temperature and top_p
-- are NULL where nothing was sent or the import did not say (the API's default: temperature
-- 1.0, no top_p); max_tokens NULL where an import did not say.
CREATE TABLE judge_runs (
    id             INTEGER PRIMARY KEY,
    purpose        TEXT NOT NULL,
    model          TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    run            TEXT NOT NULL DEFAULT '',
    temperature    REAL,
    top_p          REAL,
    max_tokens     INTEGER,
    source         TEXT NOT NULL CHECK (source IN ('direct', 'batch', 'import')),
    requests       INTEGER NOT NULL,
    started_at     TEXT NOT NULL
);
CREATE INDEX judge_runs_rater ON judge_runs (model, prompt_version, run);

-- The run each submitted batch belongs to (a batch without a row: the default run, sent with
-- the API's defaults, as every batch before), so that collecting it stores each verdict under
-- its run's rater and a corrective retry decodes as the batch did.
CREATE TABLE judge_batch_runs (
    batch_id TEXT PRIMARY KEY REFERENCES judge_batches (id),
    run_id   INTEGER NOT NULL REFERENCES judge_runs (id)
) WITHOUT ROWID;
