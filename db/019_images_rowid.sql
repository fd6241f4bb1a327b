-- physgrade project schema, version 19: images kept in a table with rowids.

-- Version 14 stored images WITHOUT ROWID, which keeps each whole image (up to 20 MiB) inside the
-- B-tree keyed by its hash, so every lookup by hash (a link's foreign key check, INSERT OR
-- IGNORE, the reading's join) walked whole images: storing 1,000 figures of 200 KB took twice
-- as long, and linking them seconds instead of milliseconds. With rowids the hash has its own
-- small index and the bytes sit in overflow pages read only when asked for. Foreign keys are
-- off during migrations, so the table can be rebuilt under its own name.
CREATE TABLE images_new (
    sha256     TEXT NOT NULL PRIMARY KEY,
    media_type TEXT NOT NULL CHECK (media_type IN ('image/png', 'image/jpeg', 'image/gif',
                                                   'image/webp')),
    width      INTEGER NOT NULL CHECK (width > 0),
    height     INTEGER NOT NULL CHECK (height > 0),
    byte_size  INTEGER NOT NULL CHECK (byte_size > 0),
    bytes      BLOB NOT NULL
);
INSERT INTO images_new (sha256, media_type, width, height, byte_size, bytes)
    SELECT sha256, media_type, width, height, byte_size, bytes FROM images;
DROP TABLE images;
ALTER TABLE images_new RENAME TO images;
