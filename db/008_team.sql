-- physgrade project schema, version 8: team grading (assignments, grader packs, merges,
-- adjudication). See physgrade/team/.

-- Which project this file is: a pack remembers its project's id, and a merge refuses a pack
-- made from another project. One row, made here.
CREATE TABLE project_identity (
    id TEXT NOT NULL
);
INSERT INTO project_identity (id) VALUES (lower(hex(randomblob(16))));

-- One `physgrade assign` (or the app's Assign dialog): what was asked, so it can be redone.
CREATE TABLE assignment_runs (
    id         INTEGER PRIMARY KEY,
    graders    TEXT NOT NULL,            -- JSON list of names, in the order given
    overlap    REAL NOT NULL,            -- share of the new responses given to two graders
    per_grader INTEGER,                  -- at most this many new responses each; NULL: all
    seed       INTEGER NOT NULL,
    filter     TEXT,                     -- JSON of the filter's facets; NULL: every response
    made_at    TEXT NOT NULL,
    added      INTEGER NOT NULL          -- (response, grader) rows this run added
);

-- A response a person is to grade. Assigning again adds rows; it never moves one.
CREATE TABLE assignments (
    grader_id   INTEGER NOT NULL REFERENCES raters (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    run_id      INTEGER REFERENCES assignment_runs (id),  -- NULL in a pack
    PRIMARY KEY (grader_id, response_id)
) WITHOUT ROWID;
CREATE INDEX assignments_response ON assignments (response_id);

-- In a pack (only there): where it came from. One row; a project that is no pack has none.
CREATE TABLE pack_origin (
    pack_id      TEXT PRIMARY KEY,
    grader       TEXT NOT NULL,
    project_id   TEXT NOT NULL,          -- project_identity.id of the project it came from
    project_name TEXT NOT NULL,          -- that project's file name, for people
    made_at      TEXT NOT NULL,
    blind        INTEGER NOT NULL CHECK (blind IN (0, 1))
) WITHOUT ROWID;

-- In the project: the packs made from it.
CREATE TABLE packs (
    id             TEXT PRIMARY KEY,
    grader_id      INTEGER NOT NULL REFERENCES raters (id),
    file_name      TEXT NOT NULL,
    made_at        TEXT NOT NULL,
    blind          INTEGER NOT NULL CHECK (blind IN (0, 1)),
    responses      INTEGER NOT NULL,
    history_merged INTEGER NOT NULL DEFAULT 0, -- the pack's last score_history id merged
    history_mark   TEXT                        -- that row, as physgrade.team.merge marks it:
                                               -- a copy graded elsewhere differs there
) WITHOUT ROWID;

-- What each pack and the project last agreed on, per person and criterion: the common
-- ancestor of a three-way merge. Written when the pack is made and by every merge.
CREATE TABLE pack_base (
    pack_id     TEXT NOT NULL REFERENCES packs (id),
    rater_id    INTEGER NOT NULL REFERENCES raters (id),
    response_id TEXT NOT NULL,
    rubric      TEXT NOT NULL,
    criterion   TEXT NOT NULL,
    value       INTEGER,
    note        TEXT,
    PRIMARY KEY (pack_id, rater_id, response_id, rubric, criterion)
) WITHOUT ROWID;

-- One pack merged (a merge that changed nothing leaves no row).
CREATE TABLE merges (
    id        INTEGER PRIMARY KEY,
    pack_id   TEXT NOT NULL REFERENCES packs (id),
    file_name TEXT NOT NULL,
    sha256    TEXT NOT NULL,
    merged_at TEXT NOT NULL,
    applied   INTEGER NOT NULL,          -- criteria brought in
    conflicts INTEGER NOT NULL           -- conflicts found
);

-- The same person gave one criterion different values in the project and in a pack since
-- they last agreed: nothing is overwritten until a person chooses (resolution).
CREATE TABLE merge_conflicts (
    id            INTEGER PRIMARY KEY,
    pack_id       TEXT NOT NULL REFERENCES packs (id),
    rater_id      INTEGER NOT NULL REFERENCES raters (id),
    response_id   TEXT NOT NULL REFERENCES responses (id),
    rubric        TEXT NOT NULL,
    criterion     TEXT NOT NULL,
    project_value INTEGER,               -- NULL with project_given 0: not scored there
    project_given INTEGER NOT NULL CHECK (project_given IN (0, 1)),
    project_note  TEXT,
    project_time  TEXT,
    pack_value    INTEGER,
    pack_given    INTEGER NOT NULL CHECK (pack_given IN (0, 1)),
    pack_note     TEXT,
    pack_time     TEXT,
    found_at      TEXT NOT NULL,
    resolution    TEXT CHECK (resolution IN ('pack', 'project')),  -- NULL while open
    resolved_by   TEXT,
    resolved_at   TEXT
);
CREATE UNIQUE INDEX merge_conflicts_open
    ON merge_conflicts (pack_id, rater_id, response_id, rubric, criterion)
    WHERE resolution IS NULL;

-- Where a history row came from: NULL for a change made in this file, else e.g.
-- "merged from alice.physgrade (pack 1f3c…)".
ALTER TABLE score_history ADD COLUMN source TEXT;

-- A row here (only ever inside the transaction of a merge, which writes the history rows it
-- brings itself) keeps the history triggers quiet.
CREATE TABLE score_history_quiet (
    reason TEXT NOT NULL
);

DROP TRIGGER score_history_insert;
DROP TRIGGER score_history_update;
DROP TRIGGER score_history_delete;

CREATE TRIGGER score_history_insert AFTER INSERT ON scores
WHEN (SELECT kind FROM raters WHERE id = NEW.rater_id) = 'human'
     AND NOT EXISTS (SELECT 1 FROM score_history_quiet)
BEGIN
    INSERT INTO score_history (rater_id, response_id, rubric, criterion, action, old_value,
                               new_value, changed_by, changed_at)
    VALUES (NEW.rater_id, NEW.response_id, NEW.rubric, NEW.criterion, 'set', NULL, NEW.value,
            (SELECT name FROM raters WHERE id = NEW.rater_id), NEW.updated_at);
END;

CREATE TRIGGER score_history_update AFTER UPDATE OF value ON scores
WHEN (SELECT kind FROM raters WHERE id = NEW.rater_id) = 'human'
     AND OLD.value IS NOT NEW.value AND NOT EXISTS (SELECT 1 FROM score_history_quiet)
BEGIN
    INSERT INTO score_history (rater_id, response_id, rubric, criterion, action, old_value,
                               new_value, changed_by, changed_at)
    VALUES (NEW.rater_id, NEW.response_id, NEW.rubric, NEW.criterion, 'change', OLD.value,
            NEW.value, (SELECT name FROM raters WHERE id = NEW.rater_id), NEW.updated_at);
END;

CREATE TRIGGER score_history_delete AFTER DELETE ON scores
WHEN (SELECT kind FROM raters WHERE id = OLD.rater_id) = 'human'
     AND NOT EXISTS (SELECT 1 FROM score_history_quiet)
BEGIN
    INSERT INTO score_history (rater_id, response_id, rubric, criterion, action, old_value,
                               new_value, changed_by, changed_at)
    VALUES (OLD.rater_id, OLD.response_id, OLD.rubric, OLD.criterion, 'clear', OLD.value, NULL,
            (SELECT name FROM raters WHERE id = OLD.rater_id),
            strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;

-- An adjudicator's final value of one criterion of a response (NULL value: N/A). It is the
-- human consensus of that criterion in every report, whatever the graders gave.
CREATE TABLE score_adjudications (
    response_id TEXT NOT NULL REFERENCES responses (id),
    rubric      TEXT NOT NULL,
    criterion   TEXT NOT NULL,
    value       INTEGER,
    note        TEXT,
    adjudicator TEXT NOT NULL,
    decided_at  TEXT NOT NULL,
    PRIMARY KEY (response_id, rubric, criterion)
) WITHOUT ROWID;

-- Every adjudication decision, kept by trigger like score_history.
CREATE TABLE adjudication_history (
    id          INTEGER PRIMARY KEY,
    response_id TEXT NOT NULL,
    rubric      TEXT NOT NULL,
    criterion   TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('set', 'change', 'clear')),
    old_value   INTEGER,
    new_value   INTEGER,
    adjudicator TEXT NOT NULL,
    changed_at  TEXT NOT NULL
);

CREATE TRIGGER adjudication_history_insert AFTER INSERT ON score_adjudications
BEGIN
    INSERT INTO adjudication_history (response_id, rubric, criterion, action, old_value,
                                      new_value, adjudicator, changed_at)
    VALUES (NEW.response_id, NEW.rubric, NEW.criterion, 'set', NULL, NEW.value,
            NEW.adjudicator, NEW.decided_at);
END;

CREATE TRIGGER adjudication_history_update AFTER UPDATE OF value ON score_adjudications
WHEN OLD.value IS NOT NEW.value
BEGIN
    INSERT INTO adjudication_history (response_id, rubric, criterion, action, old_value,
                                      new_value, adjudicator, changed_at)
    VALUES (NEW.response_id, NEW.rubric, NEW.criterion, 'change', OLD.value, NEW.value,
            NEW.adjudicator, NEW.decided_at);
END;

CREATE TRIGGER adjudication_history_delete AFTER DELETE ON score_adjudications
BEGIN
    INSERT INTO adjudication_history (response_id, rubric, criterion, action, old_value,
                                      new_value, adjudicator, changed_at)
    VALUES (OLD.response_id, OLD.rubric, OLD.criterion, 'clear', OLD.value, NULL,
            OLD.adjudicator, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;
