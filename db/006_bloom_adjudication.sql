-- physgrade project schema, version 6: Bloom annotation sessions and adjudicated labels.
--
-- questions.bloom_cognitive / bloom_knowledge hold a question's FINAL Bloom label, the one
-- reports and filters use. The rule (the view bloom_final) is, in order:
--   1. the adjudicated label (bloom_adjudications), if there is one;
--   2. else the label every human annotator gave, when at least one person gave a complete
--      label (both dimensions) and all complete human labels are identical (labels with a
--      dimension missing are work in progress and do not count);
--   3. else the label the question came with: bloom_imported, which keeps the imported value
--      the first time the rule replaces it (no row there means the question still has it).
-- Triggers apply the rule to a question whenever a human label or an adjudication of it is
-- written, inside the same transaction, whatever writes it (the app, set_bloom_label, an
-- import); physgrade.annotation.adjudication.refresh applies the same statement on demand.
-- (Keeping the imported label tests NOT EXISTS rather than INSERT OR IGNORE: an upsert's
-- conflict policy overrides the one of the statements in the triggers it fires.)

-- An adjudicator's decision on a question's final Bloom label (both dimensions).
CREATE TABLE bloom_adjudications (
    question_id TEXT PRIMARY KEY REFERENCES questions (id),
    cognitive   TEXT NOT NULL,
    knowledge   TEXT NOT NULL,
    adjudicator TEXT NOT NULL,
    decided_at  TEXT NOT NULL
) WITHOUT ROWID;

-- The Bloom label a question was imported with, kept when the rule first replaces it.
CREATE TABLE bloom_imported (
    question_id TEXT PRIMARY KEY REFERENCES questions (id),
    cognitive   TEXT,
    knowledge   TEXT
) WITHOUT ROWID;

-- Per question: how many people gave a complete label, how many different ones, and (when
-- they all agree) that label.
CREATE VIEW bloom_human_labels AS
SELECT b.question_id AS question_id, count(*) AS annotators,
       count(DISTINCT b.cognitive || char(31) || b.knowledge) AS distinct_labels,
       min(b.cognitive) AS cognitive, min(b.knowledge) AS knowledge
FROM bloom_labels b JOIN raters r ON r.id = b.annotator_id
WHERE r.kind = 'human' AND b.cognitive IS NOT NULL AND b.knowledge IS NOT NULL
GROUP BY b.question_id;

-- The final label of every question by the rule above, and where it comes from. (Correlated
-- subqueries rather than a join on bloom_human_labels, so that asking for one question reads
-- that question's labels only.)
CREATE VIEW bloom_final AS
SELECT question_id,
       CASE WHEN adjudicated THEN adjudicated_cognitive
            WHEN consensus_cognitive IS NOT NULL THEN consensus_cognitive
            WHEN kept THEN imported_cognitive
            ELSE current_cognitive END AS cognitive,
       CASE WHEN adjudicated THEN adjudicated_knowledge
            WHEN consensus_cognitive IS NOT NULL THEN consensus_knowledge
            WHEN kept THEN imported_knowledge
            ELSE current_knowledge END AS knowledge,
       CASE WHEN adjudicated THEN 'adjudicated'
            WHEN consensus_cognitive IS NOT NULL THEN 'consensus'
            ELSE 'imported' END AS source
FROM (SELECT q.id AS question_id, q.bloom_cognitive AS current_cognitive,
             q.bloom_knowledge AS current_knowledge,
             a.question_id IS NOT NULL AS adjudicated, a.cognitive AS adjudicated_cognitive,
             a.knowledge AS adjudicated_knowledge,
             i.question_id IS NOT NULL AS kept, i.cognitive AS imported_cognitive,
             i.knowledge AS imported_knowledge,
             (SELECT CASE WHEN count(DISTINCT b.cognitive || char(31) || b.knowledge) = 1
                          THEN min(b.cognitive) END
              FROM bloom_labels b JOIN raters r ON r.id = b.annotator_id
              WHERE b.question_id = q.id AND r.kind = 'human' AND b.cognitive IS NOT NULL
              AND b.knowledge IS NOT NULL) AS consensus_cognitive,
             (SELECT CASE WHEN count(DISTINCT b.cognitive || char(31) || b.knowledge) = 1
                          THEN min(b.knowledge) END
              FROM bloom_labels b JOIN raters r ON r.id = b.annotator_id
              WHERE b.question_id = q.id AND r.kind = 'human' AND b.cognitive IS NOT NULL
              AND b.knowledge IS NOT NULL) AS consensus_knowledge
      FROM questions q
      LEFT JOIN bloom_adjudications a ON a.question_id = q.id
      LEFT JOIN bloom_imported i ON i.question_id = q.id);

-- The label a question was imported with is kept the first time anything changes it, in one
-- place for every path that applies the rule (the triggers below, the migration, refresh()).
CREATE TRIGGER bloom_keep_imported AFTER UPDATE OF bloom_cognitive, bloom_knowledge ON questions
WHEN OLD.bloom_cognitive IS NOT NEW.bloom_cognitive OR OLD.bloom_knowledge IS NOT NEW.bloom_knowledge
BEGIN
    INSERT INTO bloom_imported (question_id, cognitive, knowledge)
    SELECT OLD.id, OLD.bloom_cognitive, OLD.bloom_knowledge
    WHERE NOT EXISTS (SELECT 1 FROM bloom_imported k WHERE k.question_id = OLD.id);
END;

CREATE TRIGGER bloom_final_label_insert AFTER INSERT ON bloom_labels
WHEN (SELECT kind FROM raters WHERE id = NEW.annotator_id) = 'human'
BEGIN
    UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (
        SELECT cognitive, knowledge FROM bloom_final WHERE question_id = NEW.question_id)
    WHERE id = NEW.question_id;
END;

CREATE TRIGGER bloom_final_label_update AFTER UPDATE ON bloom_labels
WHEN (SELECT kind FROM raters WHERE id = NEW.annotator_id) = 'human'
BEGIN
    UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (
        SELECT cognitive, knowledge FROM bloom_final WHERE question_id = NEW.question_id)
    WHERE id = NEW.question_id;
END;

CREATE TRIGGER bloom_final_label_delete AFTER DELETE ON bloom_labels
WHEN (SELECT kind FROM raters WHERE id = OLD.annotator_id) = 'human'
BEGIN
    UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (
        SELECT cognitive, knowledge FROM bloom_final WHERE question_id = OLD.question_id)
    WHERE id = OLD.question_id;
END;

CREATE TRIGGER bloom_final_adjudication_insert AFTER INSERT ON bloom_adjudications
BEGIN
    UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (
        SELECT cognitive, knowledge FROM bloom_final WHERE question_id = NEW.question_id)
    WHERE id = NEW.question_id;
END;

CREATE TRIGGER bloom_final_adjudication_update AFTER UPDATE ON bloom_adjudications
BEGIN
    UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (
        SELECT cognitive, knowledge FROM bloom_final WHERE question_id = NEW.question_id)
    WHERE id = NEW.question_id;
END;

CREATE TRIGGER bloom_final_adjudication_delete AFTER DELETE ON bloom_adjudications
BEGIN
    UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (
        SELECT cognitive, knowledge FROM bloom_final WHERE question_id = OLD.question_id)
    WHERE id = OLD.question_id;
END;

-- Projects made before this version may already hold people's labels: apply the rule once.
UPDATE questions SET (bloom_cognitive, bloom_knowledge) = (
    SELECT cognitive, knowledge FROM bloom_final f WHERE f.question_id = questions.id)
WHERE id IN (SELECT question_id FROM bloom_human_labels WHERE distinct_labels = 1);
