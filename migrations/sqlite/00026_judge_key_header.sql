-- +goose Up
-- How a judge sends its API key: 'bearer' (Authorization: Bearer, what
-- OpenAI and every compatible server take, and what every judge stored so
-- far sends) or 'api-key' (the api-key header of Azure OpenAI's
-- per-deployment endpoints, .../openai/deployments/NAME?api-version=...).
ALTER TABLE judges ADD COLUMN key_header TEXT NOT NULL DEFAULT 'bearer';

-- +goose Down
ALTER TABLE judges DROP COLUMN key_header;
