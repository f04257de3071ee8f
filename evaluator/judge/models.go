package judge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// modelsPath lists the endpoint's models, relative to the base URL.
const modelsPath = "models"

// maxModelsBody bounds how much of a model list is read: a hosted router's
// list of every model it serves runs to a few hundred kilobytes.
const maxModelsBody = 8 << 20

// ContextWindow reads the judge model's context window, in tokens, from
// the endpoint's model list (GET <base URL>/models), where the endpoint
// states one: vLLM (max_model_len), OpenRouter (context_length), LM Studio
// (max_context_length), with the base URL's query string as every call
// has it. found is false when the list names no figure for
// the model (OpenAI, Ollama and llama.cpp's server do not): the caller
// then knows nothing more. The list is read once, with the client's
// headers, timeout and egress rules, and no retry.
func (c *Client) ContextWindow(ctx context.Context) (tokens int, found bool, err error) {
	// The endpoint is <base URL>/chat/completions: the list sits beside chat.
	u, err := c.endpoint.Parse("../" + modelsPath)
	if err != nil {
		return 0, false, err
	}
	// The base URL's query goes with every call (Azure's api-version).
	u.RawQuery = c.endpoint.RawQuery
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, false, err
	}
	req.Header = c.header.Clone()
	req.Header.Del("Content-Type")
	res, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return 0, false, fmt.Errorf("list the models: %s", c.redact(err.Error()))
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("list the models: HTTP %d", res.StatusCode)
	}
	var list struct {
		Data []struct {
			ID               string `json:"id"`
			MaxModelLen      int    `json:"max_model_len"`
			ContextLength    int    `json:"context_length"`
			MaxContextLength int    `json:"max_context_length"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxModelsBody)).Decode(&list); err != nil {
		return 0, false, fmt.Errorf("list the models: the answer is not a model list: %w", err)
	}
	for _, m := range list.Data {
		if m.ID != c.cfg.Model {
			continue
		}
		for _, v := range []int{m.MaxModelLen, m.ContextLength, m.MaxContextLength} {
			if v > 0 {
				return v, true, nil
			}
		}
	}
	return 0, false, nil
}
