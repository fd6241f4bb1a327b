-- physgrade project schema, version 15: declared facets (physgrade.facets).
--
-- Which question fields a project filters, counts and stratifies by is the project setting
-- 'facets' (a JSON list of field names). An import now declares the built-in fields its records
-- carry; a project imported before this version declares, once, the built-in fields its
-- questions already carry (kept in extra, or the answer_type column), in the built-in order.
WITH built_in (name, position) AS (
    VALUES ('language', 1), ('notation', 2), ('source', 3), ('difficulty', 4),
           ('native_difficulty', 5), ('answer_type', 6), ('subject', 7), ('skill', 8),
           ('format', 9), ('modality', 10), ('source_topic', 11)
), carried AS (
    SELECT name, position FROM built_in
     WHERE (name = 'answer_type' AND EXISTS (SELECT 1 FROM questions
                                             WHERE nullif(trim(answer_type), '') IS NOT NULL))
        OR (name <> 'answer_type' AND EXISTS (
                SELECT 1 FROM questions
                 WHERE json_valid(extra) AND json_type(extra, '$."' || name || '"') IS NOT NULL
                   AND json_type(extra, '$."' || name || '"') <> 'null'))
)
INSERT OR IGNORE INTO project_settings (key, value)
SELECT 'facets', (SELECT json_group_array(name) FROM (SELECT name FROM carried ORDER BY position))
 WHERE EXISTS (SELECT 1 FROM carried);
