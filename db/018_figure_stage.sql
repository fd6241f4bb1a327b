-- physgrade project schema, version 18: the duplicate audit's figure stage.

-- Each image's perceptual hash, computed once per method (physgrade.dedup.figures.METHOD): the
-- stage compares these, not the pixels. A hash of another method is computed again.
CREATE TABLE image_hashes (
    sha256 TEXT NOT NULL REFERENCES images (sha256),
    method TEXT NOT NULL,
    hash   BLOB NOT NULL,                -- 256 bits, big-endian
    PRIMARY KEY (sha256, method)
) WITHOUT ROWID;

-- How close a pair's figures come: the fewest bits apart of any figure of one and any of the
-- other (NULL: either question has none), and whether they show one image, byte for byte.
-- Stage 4 in stages is the figure stage.
ALTER TABLE duplicate_pairs ADD COLUMN figure_distance INTEGER;
ALTER TABLE duplicate_pairs ADD COLUMN same_image INTEGER NOT NULL DEFAULT 0
    CHECK (same_image IN (0, 1));

-- The figure threshold an audit ran with, in bits (NULL: an audit from before the stage).
ALTER TABLE duplicate_audits ADD COLUMN figure_bits INTEGER;
