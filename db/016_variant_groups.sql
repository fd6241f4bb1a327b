-- physgrade project schema, version 16: variant groups (physgrade.studies.variant_groups).

-- The template a question was made from, when a benchmark makes several questions of one
-- template with other numbers (SymPyBench's parameter variants, with or without a base
-- question): the questions sharing it are one variant group. NULL for a question of no
-- template; a contextual variant (variant_of) without one belongs to its base's group.
ALTER TABLE questions ADD COLUMN variant_group TEXT;
CREATE INDEX questions_variant_group ON questions (variant_group);

-- An import before this version kept the field among the unnamed ones (extra): it moves to
-- its column, as text, as an import now stores it (a number as written, true/false as words).
UPDATE questions
   SET variant_group = nullif(CASE json_type(extra, '$.variant_group')
                                  WHEN 'true' THEN 'true' WHEN 'false' THEN 'false'
                                  ELSE trim(CAST(json_extract(extra, '$.variant_group') AS TEXT))
                              END, ''),
       extra = nullif(json_remove(extra, '$.variant_group'), '{}')
 WHERE json_valid(extra) AND json_type(extra, '$.variant_group') IS NOT NULL
   AND json_type(extra, '$.variant_group') <> 'null';
