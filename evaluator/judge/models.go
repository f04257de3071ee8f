package judge

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
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

// listedModel is one entry of an endpoint's model list.
type listedModel struct {
	ID               string `json:"id"`
	MaxModelLen      int    `json:"max_model_len"`
	ContextLength    int    `json:"context_length"`
	MaxContextLength int    `json:"max_context_length"`
}

// listModels reads the endpoint's model list (GET <base URL>/models), with
// the base URL's query string as every call has it, once, with the
// client's headers, timeout and egress rules, and no retry. An endpoint
// without a model list (ListsModels false: nothing is sent) or that answers
// 404 for it gives an error wrapping ErrNoModelList.
func (c *Client) listModels(ctx context.Context) ([]listedModel, error) {
	if !c.ListsModels() {
		return nil, fmt.Errorf("list the models: %w (an Azure OpenAI deployment's address)", ErrNoModelList)
	}
	// The endpoint is <base URL>/chat/completions: the list sits beside chat.
	u, err := c.endpoint.Parse("../" + modelsPath)
	if err != nil {
		return nil, err
	}
	// The base URL's query goes with every call (Azure's api-version).
	u.RawQuery = c.endpoint.RawQuery
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = c.header.Clone()
	req.Header.Del("Content-Type")
	res, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("list the models: %s", c.redact(err.Error()))
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("list the models: HTTP 404: %w", ErrNoModelList)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list the models: HTTP %d", res.StatusCode)
	}
	var list struct {
		Data []listedModel `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxModelsBody)).Decode(&list); err != nil {
		return nil, fmt.Errorf("list the models: the answer is not a model list: %w", err)
	}
	return list.Data, nil
}

// ContextWindow reads the judge model's context window, in tokens, from
// the endpoint's model list, where the endpoint states one: vLLM
// (max_model_len), OpenRouter (context_length), LM Studio
// (max_context_length). found is false when the list names no figure for
// the model (OpenAI, Ollama and llama.cpp's server do not): the caller
// then knows nothing more.
func (c *Client) ContextWindow(ctx context.Context) (tokens int, found bool, err error) {
	list, err := c.listModels(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, m := range list {
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

// IsOllama reports whether the endpoint is an Ollama server: the root of
// its address answers "Ollama is running", as Ollama's does. One GET, with
// the client's timeout and egress rules and without the key (the root
// needs none), no retry; any failure is false.
func (c *Client) IsOllama(ctx context.Context) bool {
	u, err := c.endpoint.Parse("/")
	if err != nil {
		return false
	}
	u.RawQuery = ""
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false
	}
	res, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(res.Body, 64))
	return res.StatusCode == http.StatusOK && strings.HasPrefix(strings.TrimSpace(string(head)), "Ollama is running")
}

// ModelNames are the model ids the endpoint's model list holds, in its
// order; an error when there is no list to read (the endpoint has none,
// refuses it or answers something else).
func (c *Client) ModelNames(ctx context.Context) ([]string, error) {
	list, err := c.listModels(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(list))
	for _, m := range list {
		if m.ID != "" {
			names = append(names, m.ID)
		}
	}
	return names, nil
}

// ClosestModels are the names of listed that model was most likely meant
// to be, best first and at most three of equal likeness: the same name in
// another case, else the names within a few typed characters of it (edit
// distance at most a third of its length, and at least 2), else the names
// that contain it or that it contains ("llama3.1" for "llama3.1:8b",
// "openai/gpt-4o" for "gpt-4o"). Only listed names are returned, never a
// made-up one; nil when none is close, or when model is itself listed.
func ClosestModels(model string, listed []string) []string {
	want := strings.ToLower(strings.TrimSpace(model))
	if want == "" || slices.Contains(listed, model) {
		return nil
	}
	type candidate struct {
		name       string
		tier, dist int
	}
	var cands []candidate
	limit := max(2, utf8.RuneCountInString(want)/3)
	for _, name := range listed {
		if len(name) > maxComparedName {
			continue
		}
		l := strings.ToLower(name)
		d := editDistance(want, l)
		switch {
		case l == want:
			cands = append(cands, candidate{name, 0, 0})
		case d <= limit:
			cands = append(cands, candidate{name, 1, d})
		case min(len(l), len(want)) >= 3 && (strings.Contains(l, want) || strings.Contains(want, l)):
			cands = append(cands, candidate{name, 2, d})
		}
	}
	if len(cands) == 0 {
		return nil
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(a.dist, b.dist))
	})
	var out []string
	for _, c := range cands {
		if c.tier != cands[0].tier || c.dist != cands[0].dist || len(out) == 3 {
			break
		}
		out = append(out, c.name)
	}
	return out
}

// maxComparedName bounds the listed names ClosestModels compares, in
// bytes: model names are far shorter, and the list is the endpoint's text,
// whose comparison costs the product of the two lengths.
const maxComparedName = 256

// editDistance is the Levenshtein distance between a and b, in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			sub := prev[j-1]
			if ra[i-1] != rb[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
