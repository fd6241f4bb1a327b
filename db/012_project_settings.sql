-- physgrade project schema, version 12: the project's own settings, and the answer tolerance
-- as one of them (physgrade.answers.tolerance).

-- Settings that belong to a project rather than to a user: every rater of the project uses
-- them, so they travel with the file. One row per setting; the value as text.
CREATE TABLE project_settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
) WITHOUT ROWID;

-- The relative tolerance for final answers, used by the rules rater and the answer hint and
-- written into the judge prompt: 1%, the number the judge prompt always stated.
INSERT INTO project_settings (key, value) VALUES ('answer_tolerance', '0.01');

-- Until now the bare rules rater checked at 2%; it is the 2% rater, named so, and `rules`
-- now means the project's tolerance at its default of 1%.
UPDATE raters SET prompt_version = 'rtol 0.02' WHERE kind = 'rules' AND prompt_version = ''
    AND NOT EXISTS (SELECT 1 FROM raters o WHERE o.name = raters.name
                    AND o.prompt_version = 'rtol 0.02');
