-- physgrade project schema, version 14: images of questions, reference solutions and responses.

-- Each distinct image once, named by the SHA-256 of its bytes (content-addressed), so the
-- project file stays the one thing to move. Only checked raster images are stored
-- (physgrade.images.MEDIA_TYPES); the bytes are kept exactly as imported.
CREATE TABLE images (
    sha256     TEXT PRIMARY KEY,
    media_type TEXT NOT NULL CHECK (media_type IN ('image/png', 'image/jpeg', 'image/gif',
                                                   'image/webp')),
    width      INTEGER NOT NULL CHECK (width > 0),
    height     INTEGER NOT NULL CHECK (height > 0),
    byte_size  INTEGER NOT NULL CHECK (byte_size > 0),
    bytes      BLOB NOT NULL
) WITHOUT ROWID;

-- Which question, reference solution or response holds which image, in order. owner_id is a
-- question id (kinds 'question' and 'reference') or a response id (kind 'response').
CREATE TABLE image_links (
    owner_kind TEXT NOT NULL CHECK (owner_kind IN ('question', 'reference', 'response')),
    owner_id   TEXT NOT NULL,
    position   INTEGER NOT NULL CHECK (position >= 0),
    sha256     TEXT NOT NULL REFERENCES images (sha256),
    PRIMARY KEY (owner_kind, owner_id, position)
) WITHOUT ROWID;
CREATE INDEX image_links_sha256 ON image_links (sha256);
