-- physgrade project schema, version 9: estimation samples, the random draws of responses whose
-- expert grades correct a judge's scores (physgrade.estimation).

-- A sample, drawn once and never redrawn: 'random' (uniform over every response), 'stratified'
-- (the same number from each stratum, as far as a stratum allows) or 'hand-picked' (ids read
-- from a file; no inclusion probability is known, so estimates refuse it unless told to assume
-- it random).
CREATE TABLE estimation_samples (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    method      TEXT NOT NULL CHECK (method IN ('random', 'stratified', 'hand-picked')),
    seed        INTEGER,                 -- NULL for a hand-picked sample
    size        INTEGER NOT NULL CHECK (size >= 1),
    strata      TEXT NOT NULL DEFAULT '[]',  -- JSON list of facets: "model", "topic"
    population  INTEGER NOT NULL,        -- responses in the project when it was drawn
    source      TEXT,                    -- a hand-picked sample's file name
    created_at  TEXT NOT NULL
);

-- The responses of a sample, each with its stratum (facet values joined with " / ", or
-- "(all)") and the probability that the draw included it (for a hand-picked sample, the
-- probability a uniform draw of the same size would have had).
CREATE TABLE estimation_sample_items (
    sample_id             INTEGER NOT NULL REFERENCES estimation_samples (id),
    response_id           TEXT NOT NULL REFERENCES responses (id),
    stratum               TEXT NOT NULL,
    inclusion_probability REAL NOT NULL
                          CHECK (inclusion_probability > 0 AND inclusion_probability <= 1),
    PRIMARY KEY (sample_id, response_id)
) WITHOUT ROWID;
CREATE INDEX estimation_sample_items_response ON estimation_sample_items (response_id);
