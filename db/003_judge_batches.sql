-- physgrade project schema, version 3: Message Batches submitted to a judge, kept in the project
-- so that collecting their results survives restarts and a later run does not submit the same
-- work twice.

CREATE TABLE judge_batches (
    id             TEXT PRIMARY KEY,      -- the API's batch id
    purpose        TEXT NOT NULL CHECK (purpose IN ('verdicts', 'bloom')),
    model          TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    requests       INTEGER NOT NULL,
    status         TEXT NOT NULL,         -- the API's processing_status: in_progress, canceling, ended
    counts         TEXT,                  -- JSON of the API's request_counts when last polled
    submitted_at   TEXT NOT NULL,
    ended_at       TEXT,
    ingested_at    TEXT                   -- set once every result is stored: the batch is done
);

-- Which response (or question, for Bloom suggestions) each request of a batch is about.
CREATE TABLE judge_batch_items (
    batch_id  TEXT NOT NULL REFERENCES judge_batches (id),
    custom_id TEXT NOT NULL,
    item_id   TEXT NOT NULL,
    PRIMARY KEY (batch_id, custom_id)
) WITHOUT ROWID;
CREATE INDEX judge_batch_items_item ON judge_batch_items (item_id);
