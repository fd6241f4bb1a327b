-- physgrade project schema, version 5: the blind audit of LLM judges by experts.

-- A stratified sample of responses drawn for an audit, the same for every judge it names.
CREATE TABLE review_samples (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    seed        INTEGER NOT NULL,
    per_stratum INTEGER NOT NULL CHECK (per_stratum >= 1),
    strata      TEXT NOT NULL,           -- JSON list of facets: "topic", "bloom", "model"
    judges      TEXT NOT NULL,           -- JSON list of the audited judges' rater ids
    created_at  TEXT NOT NULL
);

-- The responses of a sample, with the stratum each was drawn from (its facet values joined
-- with " / ").
CREATE TABLE review_sample_items (
    sample_id   INTEGER NOT NULL REFERENCES review_samples (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    stratum     TEXT NOT NULL,
    PRIMARY KEY (sample_id, response_id)
) WITHOUT ROWID;

-- The blind name under which reviewers see a judge ("Judge A"); given once, never changed.
CREATE TABLE judge_aliases (
    judge_id INTEGER PRIMARY KEY REFERENCES raters (id),
    alias    TEXT NOT NULL UNIQUE
);
