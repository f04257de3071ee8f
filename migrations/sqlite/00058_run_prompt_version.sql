-- +goose Up
-- The version of the method's prompt templates a run was launched with
-- (evaluator/promptversion.go), stored when it is launched so a report
-- says which wording built its prompts even after the code's version
-- moves on. Empty for the runs stored before: their version was never
-- recorded, and the reports say so rather than guess.
ALTER TABLE runs ADD COLUMN prompt_template_version TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN prompt_template_version;
