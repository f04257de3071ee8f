-- +goose Up
-- An upload's bytes in parts of at most 1 MiB, written and read one part
-- at a time, so the server never holds a whole file in memory. Uploads
-- stored before this keep their bytes in pending_uploads.content.
CREATE TABLE pending_upload_parts (
    upload_id INTEGER NOT NULL REFERENCES pending_uploads(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (upload_id, seq)
);

-- +goose Down
DROP TABLE pending_upload_parts;
