-- physgrade project schema, version 4: the near-duplicate and contamination audit.

-- Sentence embeddings, computed once per model and text. model is the engine's cache key (the
-- model's name and a digest of its weights); text_hash the SHA-256 of the embedded text.
CREATE TABLE embeddings (
    model     TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL,             -- float32, little-endian, L2-normalised
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;

-- Each audit run: what was compared, with which model and thresholds, and what it found.
CREATE TABLE duplicate_audits (
    id         INTEGER PRIMARY KEY,
    source     TEXT NOT NULL,            -- '' within the project, else the other set's path
    model      TEXT NOT NULL,
    provider   TEXT NOT NULL,
    jaccard    REAL NOT NULL,
    cosine     REAL NOT NULL,
    n_a        INTEGER NOT NULL,
    n_b        INTEGER NOT NULL,
    pairs      INTEGER NOT NULL,
    summary    TEXT,                     -- JSON: counts by stage, lax and strict counts, histogram
    ran_at     TEXT NOT NULL
);

-- Candidate pairs. a is a question of this project; b another of its questions (source '')
-- or an item of the other set, whose text is kept so the pair can be read later. A new audit
-- of the same source updates the scores; a pair it no longer flags is dropped unless a judge
-- or a reviewer has spoken about it.
CREATE TABLE duplicate_pairs (
    id              INTEGER PRIMARY KEY,
    source          TEXT NOT NULL,
    a               TEXT NOT NULL REFERENCES questions (id),
    b               TEXT NOT NULL,
    b_text          TEXT,
    jaccard         REAL NOT NULL,
    cosine          REAL NOT NULL,
    stages          TEXT NOT NULL,       -- JSON list of the stages that flagged it: [1], [2], [1, 2]
    found_at        TEXT NOT NULL,
    label           TEXT CHECK (label IN ('close_duplicate', 'same_topic')),
    label_model     TEXT,
    label_version   TEXT,
    label_rationale TEXT,
    decision        TEXT CHECK (decision IN ('confirmed', 'rejected')),
    decided_by      TEXT,
    decided_at      TEXT,
    UNIQUE (source, a, b)
);
CREATE INDEX duplicate_pairs_b ON duplicate_pairs (b);

-- Judge batches may now also carry duplicate-pair questions: rebuild the table to widen its
-- CHECK (SQLite cannot alter one). Foreign keys are off during migrations.
CREATE TABLE judge_batches_new (
    id             TEXT PRIMARY KEY,
    purpose        TEXT NOT NULL CHECK (purpose IN ('verdicts', 'bloom', 'duplicates')),
    model          TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    requests       INTEGER NOT NULL,
    status         TEXT NOT NULL,
    counts         TEXT,
    submitted_at   TEXT NOT NULL,
    ended_at       TEXT,
    ingested_at    TEXT
);
INSERT INTO judge_batches_new SELECT * FROM judge_batches;
DROP TABLE judge_batches;
ALTER TABLE judge_batches_new RENAME TO judge_batches;
