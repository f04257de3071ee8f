-- +goose Up
-- The dataset a project's launch form chooses by default, when a person
-- marked one as main; NULL means the first uploaded original.
ALTER TABLE projects ADD COLUMN main_dataset_id BIGINT REFERENCES datasets(id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE projects DROP COLUMN main_dataset_id;
