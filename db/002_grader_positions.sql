-- physgrade project schema, version 2: where each grader stopped, so reopening resumes there.

CREATE TABLE grader_positions (
    rater_id    INTEGER PRIMARY KEY REFERENCES raters (id),
    response_id TEXT,                    -- the response last shown (may since have gone)
    filter      TEXT,                    -- JSON of the queue filter in use
    updated_at  TEXT NOT NULL
);
