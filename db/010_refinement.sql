-- physgrade project schema, version 10: prompt versions and judge refinements
-- (physgrade.judge.versions, physgrade.refinement).

-- Every prompt version physgrade has sent requests under, with the texts they were built from
-- (templates as loaded, and a refined prompt's examples), so a version can be shown and run
-- again after the bundled templates have changed.
CREATE TABLE prompt_versions (
    version     TEXT PRIMARY KEY,
    purpose     TEXT NOT NULL,           -- verdicts, bloom or duplicates
    base        TEXT,                    -- the version a refined prompt was made from
    texts       TEXT NOT NULL,           -- JSON {name: text}
    examples    TEXT NOT NULL DEFAULT '[]',  -- JSON [response id, ...] shown as examples
    created_at  TEXT NOT NULL
);

-- A split of the responses a judge and a reference both assessed into a calibration part
-- (where examples may come from) and a held-out part (only ever measured). Made once per
-- judge, reference, share and seed, and never redrawn, so every run measures the same part.
CREATE TABLE refinement_splits (
    id          INTEGER PRIMARY KEY,
    judge       TEXT NOT NULL,           -- rater label, "NAME [VERSION]"
    reference   TEXT NOT NULL,           -- a grader's name or "human consensus"
    holdout     REAL NOT NULL CHECK (holdout > 0 AND holdout < 1),
    seed        INTEGER NOT NULL,
    created_at  TEXT NOT NULL,
    UNIQUE (judge, reference, holdout, seed)
);

CREATE TABLE refinement_split_items (
    split_id    INTEGER NOT NULL REFERENCES refinement_splits (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    heldout     INTEGER NOT NULL CHECK (heldout IN (0, 1)),
    PRIMARY KEY (split_id, response_id)
) WITHOUT ROWID;

-- A refinement: the judge's prompt with examples from a split's calibration part, and the
-- raters compared on its held-out part: "before" (the judge itself, or the model under the
-- base prompt) and "after" (the model under the refined prompt).
CREATE TABLE refinements (
    id              INTEGER PRIMARY KEY,
    split_id        INTEGER NOT NULL REFERENCES refinement_splits (id),
    model           TEXT NOT NULL,
    examples        INTEGER NOT NULL CHECK (examples >= 1),   -- as many as asked for
    chosen          TEXT NOT NULL DEFAULT '[]',  -- JSON: each example, its rubric and criteria
    criteria        TEXT NOT NULL DEFAULT '[]',  -- JSON ["KEY", ...] examples aim at; [] all
    before_name     TEXT NOT NULL,
    before_version  TEXT NOT NULL,
    after_version   TEXT NOT NULL REFERENCES prompt_versions (version),
    created_at      TEXT NOT NULL,
    UNIQUE (split_id, model, examples, criteria)
);
