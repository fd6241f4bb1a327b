-- physgrade project schema, version 11: a score history that replays to the scores.
-- A merge brings a pack's history rows; where the project did not take the pack's value (the
-- pack's side of a conflict, until a person keeps it), those rows are proposals, not changes of
-- the project. Replaying the rows that are not proposed (each new_value in id order, per person,
-- response, rubric and criterion) gives the scores. See physgrade/score_history.py.

ALTER TABLE score_history ADD COLUMN proposed INTEGER NOT NULL DEFAULT 0
    CHECK (proposed IN (0, 1));

-- Before this version a merge stored every row it brought as applied. The rows that merges of
-- one pack brought for one criterion, with nothing else between them in that criterion's
-- history (a run), were taken or not together: taken only if the project held the run's last
-- value afterwards. The next row written in this project says what it held (its old value; a
-- 'set' found no score), or, with no row since, the score held now. A run followed by another
-- pack's rows cannot be told (their old values are that pack's) and stays as it was.
-- 'merged from ' is how physgrade.score_history.merged_from begins a merged row's source.
UPDATE score_history SET proposed = 1 WHERE id IN (
    WITH merged AS (      -- each merged row, and the first row of its criterion after its run
        SELECT h.id, h.rater_id, h.response_id, h.rubric, h.criterion,
               (SELECT min(n.id) FROM score_history n
                WHERE n.response_id = h.response_id AND n.rater_id = h.rater_id
                  AND n.rubric = h.rubric AND n.criterion = h.criterion
                  AND n.id > h.id AND n.source IS NOT h.source) AS next_id
        FROM score_history h WHERE h.source LIKE 'merged from %'),
    runs AS (             -- and the last row of its run
        SELECT m.*, (SELECT max(e.id) FROM score_history e
                     WHERE e.response_id = m.response_id AND e.rater_id = m.rater_id
                       AND e.rubric = m.rubric AND e.criterion = m.criterion
                       AND e.id < coalesce(m.next_id, 9223372036854775807)) AS last_id
        FROM merged m)
    SELECT r.id FROM runs r
    JOIN score_history e ON e.id = r.last_id
    LEFT JOIN score_history n ON n.id = r.next_id
    LEFT JOIN scores s ON s.rater_id = r.rater_id AND s.response_id = r.response_id
                      AND s.rubric = r.rubric AND s.criterion = r.criterion
    WHERE CASE
        WHEN n.id IS NULL THEN NOT ((s.rater_id IS NOT NULL) = (e.action != 'clear')
                                    AND s.value IS e.new_value)
        WHEN n.source LIKE 'merged from %' THEN 0
        ELSE NOT ((n.action != 'set') = (e.action != 'clear') AND n.old_value IS e.new_value)
    END);
