-- physgrade project schema, version 1.
-- Expert work (scores, reviews, labels) is stored one small row per decision so that every
-- change is its own commit; score changes by people are kept in score_history by trigger.

CREATE TABLE questions (
    id                 TEXT PRIMARY KEY,
    kind               TEXT NOT NULL DEFAULT 'problem' CHECK (kind IN ('problem', 'conceptual')),
    topic              TEXT,
    question           TEXT NOT NULL,
    options            TEXT,             -- JSON object {"A": "...", ...} or NULL
    answer             TEXT,
    answer_type        TEXT,
    unit               TEXT,
    reference_solution TEXT,
    reference_sections BLOB,             -- template labels found (physgrade.template.scan)
    bloom_cognitive    TEXT,
    bloom_knowledge    TEXT,
    variant_of         TEXT REFERENCES questions (id) DEFERRABLE INITIALLY DEFERRED,
    region             TEXT,
    extra              TEXT              -- JSON object of fields the format does not name
);
CREATE INDEX questions_topic ON questions (topic);
CREATE INDEX questions_variant_of ON questions (variant_of);

CREATE TABLE responses (
    id          TEXT PRIMARY KEY,
    question_id TEXT NOT NULL REFERENCES questions (id),
    model       TEXT NOT NULL,
    response    TEXT NOT NULL,
    sections    BLOB,                    -- template labels found (physgrade.template.scan)
    compliant   INTEGER NOT NULL CHECK (compliant IN (0, 1)),
    extra       TEXT
);
CREATE INDEX responses_question ON responses (question_id);
CREATE INDEX responses_model ON responses (model, compliant);

-- Anyone or anything that scores or labels: human graders, LLM judges, rule checkers.
-- An LLM judge under another prompt version is another rater.
CREATE TABLE raters (
    id             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('human', 'llm', 'rules')),
    prompt_version TEXT NOT NULL DEFAULT '',
    UNIQUE (name, prompt_version)
);

-- One row per rater, response and criterion. value NULL means N/A (allowed only where the
-- rubric allows it); a missing row means "not scored".
CREATE TABLE scores (
    rater_id    INTEGER NOT NULL REFERENCES raters (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    rubric      TEXT NOT NULL,
    criterion   TEXT NOT NULL,
    value       INTEGER,
    note        TEXT,
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (rater_id, response_id, rubric, criterion)
) WITHOUT ROWID;
CREATE INDEX scores_response ON scores (response_id);

-- What goes with a whole verdict or grade: a judge's run metadata, a grader's overall note.
CREATE TABLE assessments (
    rater_id    INTEGER NOT NULL REFERENCES raters (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    rubric      TEXT NOT NULL,
    comment     TEXT,
    raw         TEXT,                    -- a judge's raw output, kept for inspection
    status      TEXT NOT NULL DEFAULT 'ok' CHECK (status IN ('ok', 'failed')),
    assessed_at TEXT NOT NULL,
    extra       TEXT,
    PRIMARY KEY (rater_id, response_id, rubric)
) WITHOUT ROWID;

CREATE TABLE score_history (
    id          INTEGER PRIMARY KEY,
    rater_id    INTEGER NOT NULL,
    response_id TEXT NOT NULL,
    rubric      TEXT NOT NULL,
    criterion   TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('set', 'change', 'clear')),
    old_value   INTEGER,
    new_value   INTEGER,
    changed_by  TEXT NOT NULL,
    changed_at  TEXT NOT NULL
);
CREATE INDEX score_history_item ON score_history (response_id, rater_id);

CREATE TRIGGER score_history_insert AFTER INSERT ON scores
WHEN (SELECT kind FROM raters WHERE id = NEW.rater_id) = 'human'
BEGIN
    INSERT INTO score_history (rater_id, response_id, rubric, criterion, action, old_value,
                               new_value, changed_by, changed_at)
    VALUES (NEW.rater_id, NEW.response_id, NEW.rubric, NEW.criterion, 'set', NULL, NEW.value,
            (SELECT name FROM raters WHERE id = NEW.rater_id), NEW.updated_at);
END;

CREATE TRIGGER score_history_update AFTER UPDATE OF value ON scores
WHEN (SELECT kind FROM raters WHERE id = NEW.rater_id) = 'human'
     AND OLD.value IS NOT NEW.value
BEGIN
    INSERT INTO score_history (rater_id, response_id, rubric, criterion, action, old_value,
                               new_value, changed_by, changed_at)
    VALUES (NEW.rater_id, NEW.response_id, NEW.rubric, NEW.criterion, 'change', OLD.value,
            NEW.value, (SELECT name FROM raters WHERE id = NEW.rater_id), NEW.updated_at);
END;

CREATE TRIGGER score_history_delete AFTER DELETE ON scores
WHEN (SELECT kind FROM raters WHERE id = OLD.rater_id) = 'human'
BEGIN
    INSERT INTO score_history (rater_id, response_id, rubric, criterion, action, old_value,
                               new_value, changed_by, changed_at)
    VALUES (OLD.rater_id, OLD.response_id, OLD.rubric, OLD.criterion, 'clear', OLD.value, NULL,
            (SELECT name FROM raters WHERE id = OLD.rater_id),
            strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

-- An expert's audit of one judge verdict: per criterion 2 agree / 1 partly / 0 disagree.
CREATE TABLE judge_review_criteria (
    reviewer_id INTEGER NOT NULL REFERENCES raters (id),
    judge_id    INTEGER NOT NULL REFERENCES raters (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    criterion   TEXT NOT NULL,
    agreement   INTEGER NOT NULL CHECK (agreement IN (0, 1, 2)),
    updated_at  TEXT NOT NULL,
    PRIMARY KEY (reviewer_id, judge_id, response_id, criterion)
) WITHOUT ROWID;

-- The reviewer's label for the verdict as a whole.
CREATE TABLE judge_reviews (
    reviewer_id INTEGER NOT NULL REFERENCES raters (id),
    judge_id    INTEGER NOT NULL REFERENCES raters (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    verdict     TEXT CHECK (verdict IN ('correct', 'lenient', 'strict')),
    updated_at  TEXT NOT NULL,
    extra       TEXT,
    PRIMARY KEY (reviewer_id, judge_id, response_id)
) WITHOUT ROWID;

-- Bloom's taxonomy labels of a question by one annotator (a person or a model).
CREATE TABLE bloom_labels (
    question_id  TEXT NOT NULL REFERENCES questions (id),
    annotator_id INTEGER NOT NULL REFERENCES raters (id),
    cognitive    TEXT,
    knowledge    TEXT,
    updated_at   TEXT NOT NULL,
    extra        TEXT,
    PRIMARY KEY (question_id, annotator_id)
) WITHOUT ROWID;

CREATE TABLE imports (
    id          INTEGER PRIMARY KEY,
    file_name   TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    kind        TEXT NOT NULL,
    mapping     TEXT,                    -- JSON object of --map renames
    imported_at TEXT NOT NULL,
    added       INTEGER NOT NULL,
    unchanged   INTEGER NOT NULL
);
CREATE INDEX imports_sha ON imports (sha256, kind);
