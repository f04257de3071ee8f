package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// modelsPath lists the endpoint's models, relative to the base URL.
const modelsPath = "models"

// maxModelsBody bounds how much of a model list is read: a hosted router's
// list of every model it serves runs to a few hundred kilobytes.
const maxModelsBody = 8 << 20

// ErrNoModelList says that the endpoint has no model list to read: an
// Azure OpenAI per-deployment address (…/openai/deployments/NAME), which
// serves one model and answers 404 at …/deployments/NAME/models, or an
// endpoint that answered 404 there. Not a failure: the caller knows no
// more about the model.
var ErrNoModelList = errors.New("the endpoint does not list its models")

// ListsModels tells whether the endpoint may have a model list: not an
// Azure OpenAI per-deployment address (its path holds /deployments/),
// which has none (Azure's v1 API, …/openai/v1, does list its models).
func (c *Client) ListsModels() bool {
	return !strings.Contains(c.endpoint.Path, "/deployments/")
}

// ContextWindow reads the judge model's context window, in tokens, from
// the endpoint's model list (GET <base URL>/models), where the endpoint
// states one: vLLM (max_model_len), OpenRouter (context_length), LM Studio
// (max_context_length), with the base URL's query string as every call
// has it. found is false when the list names no figure for
// the model (OpenAI, Ollama and llama.cpp's server do not): the caller
// then knows nothing more. The list is read once, with the client's
// headers, timeout and egress rules, and no retry. An endpoint without a
// model list (ListsModels false: nothing is sent) or that answers 404 for
// it gives an error wrapping ErrNoModelList.
func (c *Client) ContextWindow(ctx context.Context) (tokens int, found bool, err error) {
	if !c.ListsModels() {
		return 0, false, fmt.Errorf("list the models: %w (an Azure OpenAI deployment's address)", ErrNoModelList)
	}
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
	if res.StatusCode == http.StatusNotFound {
		return 0, false, fmt.Errorf("list the models: HTTP 404: %w", ErrNoModelList)
	}
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
