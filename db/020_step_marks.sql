-- physgrade project schema, version 20: where the reasoning breaks.

-- Failure taxonomies a project has reworded or added: the built-in ones live in code
-- (physgrade.taxonomies.BUILT_IN) and a row of the same name replaces its texts.
CREATE TABLE taxonomies (
    name        TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    categories  TEXT NOT NULL            -- JSON list of {key, title, description, criteria}
);

-- A rater's reading of a response's steps (physgrade.steps numbers them 1..n): the first wrong
-- step (0: none is wrong; NULL: not said), its category in a taxonomy, and ratings of single
-- steps, -1/0/+1 (JSON {"step": rating}).
CREATE TABLE step_marks (
    rater_id    INTEGER NOT NULL REFERENCES raters (id),
    response_id TEXT NOT NULL REFERENCES responses (id),
    first_wrong INTEGER CHECK (first_wrong >= 0),
    taxonomy    TEXT,
    category    TEXT,
    ratings     TEXT,
    note        TEXT,
    updated_at  TEXT NOT NULL,
    CHECK ((taxonomy IS NULL) = (category IS NULL)),
    PRIMARY KEY (rater_id, response_id)
) WITHOUT ROWID;
CREATE INDEX step_marks_response ON step_marks (response_id);

-- Every change a person makes to a mark, as scores keep theirs (old and new as JSON).
CREATE TABLE step_mark_history (
    id          INTEGER PRIMARY KEY,
    rater_id    INTEGER NOT NULL,
    response_id TEXT NOT NULL,
    action      TEXT NOT NULL CHECK (action IN ('set', 'change', 'clear')),
    old         TEXT,
    new         TEXT,
    changed_by  TEXT NOT NULL,
    changed_at  TEXT NOT NULL,
    source      TEXT                     -- as score_history's: NULL by hand, else the import
);
CREATE INDEX step_mark_history_item ON step_mark_history (response_id, rater_id);

CREATE TRIGGER step_mark_history_insert AFTER INSERT ON step_marks
WHEN (SELECT kind FROM raters WHERE id = NEW.rater_id) = 'human'
BEGIN
    INSERT INTO step_mark_history (rater_id, response_id, action, old, new, changed_by,
                                   changed_at)
    VALUES (NEW.rater_id, NEW.response_id, 'set', NULL,
            json_object('first_wrong', NEW.first_wrong, 'taxonomy', NEW.taxonomy,
                        'category', NEW.category, 'ratings', json(coalesce(NEW.ratings, '{}'))),
            (SELECT name FROM raters WHERE id = NEW.rater_id), NEW.updated_at);
END;

CREATE TRIGGER step_mark_history_update AFTER UPDATE ON step_marks
WHEN (SELECT kind FROM raters WHERE id = NEW.rater_id) = 'human'
     AND (OLD.first_wrong IS NOT NEW.first_wrong OR OLD.category IS NOT NEW.category
          OR OLD.taxonomy IS NOT NEW.taxonomy OR OLD.ratings IS NOT NEW.ratings)
BEGIN
    INSERT INTO step_mark_history (rater_id, response_id, action, old, new, changed_by,
                                   changed_at)
    VALUES (NEW.rater_id, NEW.response_id, 'change',
            json_object('first_wrong', OLD.first_wrong, 'taxonomy', OLD.taxonomy,
                        'category', OLD.category, 'ratings', json(coalesce(OLD.ratings, '{}'))),
            json_object('first_wrong', NEW.first_wrong, 'taxonomy', NEW.taxonomy,
                        'category', NEW.category, 'ratings', json(coalesce(NEW.ratings, '{}'))),
            (SELECT name FROM raters WHERE id = NEW.rater_id), NEW.updated_at);
END;

CREATE TRIGGER step_mark_history_delete AFTER DELETE ON step_marks
WHEN (SELECT kind FROM raters WHERE id = OLD.rater_id) = 'human'
BEGIN
    INSERT INTO step_mark_history (rater_id, response_id, action, old, new, changed_by,
                                   changed_at)
    VALUES (OLD.rater_id, OLD.response_id, 'clear',
            json_object('first_wrong', OLD.first_wrong, 'taxonomy', OLD.taxonomy,
                        'category', OLD.category, 'ratings', json(coalesce(OLD.ratings, '{}'))),
            NULL, (SELECT name FROM raters WHERE id = OLD.rater_id),
            strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
END;
