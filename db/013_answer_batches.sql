-- physgrade project schema, version 13: judge batches may carry final-answer checks (the model
-- stage of physgrade.answers.model_stage) as well.

-- Rebuild the table to widen its CHECK (SQLite cannot alter one), keeping every column and
-- row. Foreign keys are off during migrations; judge_batch_items still names judge_batches,
-- which the renamed table is again, and its index is on judge_batch_items, so it stays.
CREATE TABLE judge_batches_new (
    id             TEXT PRIMARY KEY,      -- the API's batch id
    purpose        TEXT NOT NULL
                   CHECK (purpose IN ('verdicts', 'bloom', 'duplicates', 'answers')),
    model          TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    requests       INTEGER NOT NULL,
    status         TEXT NOT NULL,         -- the API's processing_status
    counts         TEXT,                  -- JSON of the API's request_counts when last polled
    submitted_at   TEXT NOT NULL,
    ended_at       TEXT,
    ingested_at    TEXT                   -- set once every result is stored: the batch is done
);
INSERT INTO judge_batches_new (id, purpose, model, prompt_version, requests, status, counts,
                               submitted_at, ended_at, ingested_at)
    SELECT id, purpose, model, prompt_version, requests, status, counts, submitted_at, ended_at,
           ingested_at FROM judge_batches;
DROP TABLE judge_batches;
ALTER TABLE judge_batches_new RENAME TO judge_batches;
