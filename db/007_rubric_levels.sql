-- physgrade project schema, version 7: what each score level of each criterion means.
--
-- One row per rubric, criterion and level; the level is the value as text ('0', '1', '2') or
-- 'N/A', as files and the command line write it. The criteria and their ranges are physgrade's
-- (physgrade.rubric); only the descriptions belong to the project, so that a study can word them
-- its own way (physgrade rubric --set) and every grader of the project reads the same. The rows
-- below are physgrade's default wording, given to every project, new or existing; a
-- multiple-choice final answer takes only 0 and the maximum, so those two also read for options.

CREATE TABLE rubric_levels (
    rubric      TEXT NOT NULL,
    criterion   TEXT NOT NULL,
    level       TEXT NOT NULL,
    description TEXT NOT NULL CHECK (trim(description) <> ''),
    PRIMARY KEY (rubric, criterion, level)
) WITHOUT ROWID;

INSERT INTO rubric_levels (rubric, criterion, level, description) VALUES
    ('prefs', 'INT', '0', 'A given, a condition or the unknown is misread, and it matters to the solution.'),
    ('prefs', 'INT', '1', 'Givens, conditions and the unknown are all read as the problem states them.'),
    ('prefs', 'MOD', '0', 'The approach or an assumption does not fit the situation (e.g. a needed effect is left out).'),
    ('prefs', 'MOD', '1', 'The approach and every assumption suit the physical situation.'),
    ('prefs', 'CON', '0', 'At least once, a principle is used that the problem does not call for.'),
    ('prefs', 'CON', '1', 'Every principle invoked is one the problem calls for.'),
    ('prefs', 'APP', '0', 'A principle is applied wrongly: a wrong formula, or a quantity in the wrong role.'),
    ('prefs', 'APP', '1', 'Each principle is applied with the right formula and every quantity in its role.'),
    ('prefs', 'CAL', '0', 'An arithmetic or algebra error that the work goes on with.'),
    ('prefs', 'CAL', '1', 'Arithmetic and algebra are right (a slip put right at once does not count).'),
    ('prefs', 'COR', '0', 'Values or units clash in several places, or a wrong value carried on decides the result.'),
    ('prefs', 'COR', '1', 'One local slip (a unit dropped or wrong, one bad intermediate value); the method holds.'),
    ('prefs', 'COR', '2', 'All intermediate values and units make physical sense, first step to last.'),
    ('prefs', 'COH', '0', 'The argument leaps, contradicts itself, or uses a result before deriving it.'),
    ('prefs', 'COH', '1', 'Each step follows from those before it, with no leaps or contradictions.'),
    ('prefs', 'ANS', '0', 'Wrong or missing final value, or the wrong option.'),
    ('prefs', 'ANS', '1', 'Right value but the unit missing or wrong, or only part of what was asked right (not for multiple choice).'),
    ('prefs', 'ANS', '2', 'Right value (within tolerance) and unit for all that was asked, or, multiple choice, the right option.'),
    ('conceptual', 'SET', '0', 'The givens, the approach or the assumptions are missed or mistaken.'),
    ('conceptual', 'SET', '1', 'The givens, the approach and the assumptions are identified correctly.'),
    ('conceptual', 'CON', '0', 'The reasoning rests on a wrong or missing physical principle.'),
    ('conceptual', 'CON', '1', 'The right physical principles carry the reasoning.'),
    ('conceptual', 'EXE', '0', 'A formula, a calculation or a unit is wrong.'),
    ('conceptual', 'EXE', '1', 'Formulas, calculations and units are all right.'),
    ('conceptual', 'EXE', 'N/A', 'Nothing to compute: a purely conceptual item (the score is then out of 4).'),
    ('conceptual', 'COH', '0', 'The explanation has gaps, leaps or contradictions.'),
    ('conceptual', 'COH', '1', 'The explanation hangs together from start to end.'),
    ('conceptual', 'ANS', '0', 'A wrong option, several options, or an ambiguous or missing answer.'),
    ('conceptual', 'ANS', '1', 'Exactly the right option (or, without options, the right statement).');
