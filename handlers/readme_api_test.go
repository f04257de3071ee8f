package handlers

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

var (
	mdFence      = regexp.MustCompile("(?s)```.*?```")
	mdCodeSpan   = regexp.MustCompile("`([^`]+)`")
	curlBody     = regexp.MustCompile(`(?s)"\$API([^"]*)" -d '(.*?)' \| jq`)
	shellJSONVar = regexp.MustCompile(`'"\$[A-Z_]+"'`)
	shellPathVar = regexp.MustCompile(`\$[A-Z_]+`)
	pathParam    = regexp.MustCompile(`\{[^/}]+\}`)
)

// requestSchema is the JSON body one operation of the API accepts.
type requestSchema struct {
	op     string // "POST /api/v1/projects/{id}/runs"
	path   *regexp.Regexp
	schema *openapi3.Schema
}

func loadRequestSchemas(t *testing.T) []requestSchema {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out []requestSchema
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			mt := op.RequestBody.Value.Content.Get("application/json")
			if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
				continue
			}
			re := regexp.MustCompile("^" + pathParam.ReplaceAllString(path, "[^/]+") + "$")
			out = append(out, requestSchema{op: method + " " + path, path: re, schema: mt.Schema.Value})
		}
	}
	return out
}

// nestedIn names the property under which key sits inside s ("settings"),
// or "" when s has no such property below its top level.
func nestedIn(s *openapi3.Schema, key string, depth int) string {
	if s == nil || depth > 6 {
		return ""
	}
	for name, p := range s.Properties {
		if p == nil || p.Value == nil {
			continue
		}
		if _, ok := p.Value.Properties[key]; ok {
			return name
		}
		if p.Value.Items != nil {
			if _, ok := p.Value.Items.Value.Properties[key]; ok {
				return name + "[]"
			}
		}
		if in := nestedIn(p.Value, key, depth+1); in != "" {
			return name + "." + in
		}
	}
	return ""
}

// TestREADMEAPIExamplesMatchOpenAPI: the JSON the README tells people to
// send (inline fragments such as `"settings": {"no_cache": true}` and the
// curl walkthrough's bodies) is accepted by the request schemas of
// openapi.yaml, which the API tests hold the server to. The README once
// said `"no_cache": true` for a launch, a top-level field the API refuses
// as unknown: it belongs inside "settings".
func TestREADMEAPIExamplesMatchOpenAPI(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	schemas := loadRequestSchemas(t)

	// The curl walkthrough: each body against its operation's schema.
	bodies := 0
	for _, fence := range mdFence.FindAllString(string(readme), -1) {
		for _, m := range curlBody.FindAllStringSubmatch(fence, -1) {
			bodies++
			path := "/api/v1" + shellPathVar.ReplaceAllString(m[1], "1")
			// '"$DATASET"' closes the shell quote around a variable: any
			// value of the right type stands in ("1" in a string, 1 bare).
			var body any
			if err := json.Unmarshal([]byte(shellJSONVar.ReplaceAllString(m[2], "1")), &body); err != nil {
				t.Errorf("README: the body sent to %s is not JSON: %v", path, err)
				continue
			}
			i := slices.IndexFunc(schemas, func(s requestSchema) bool {
				return strings.HasPrefix(s.op, http.MethodPost+" ") && s.path.MatchString(path)
			})
			if i < 0 {
				t.Errorf("README posts JSON to %s, which openapi.yaml has no JSON body for", path)
				continue
			}
			if err := schemas[i].schema.VisitJSON(body); err != nil {
				t.Errorf("README: the body sent to %s does not match %s: %v", path, schemas[i].op, err)
			}
		}
	}
	if bodies < 3 {
		t.Errorf("found %d curl bodies in the README's API walkthrough, want at least 3: update this test", bodies)
	}

	// Inline fragments: one that names a top-level field of a request body
	// must be accepted by a schema that has such a field; one that names
	// only fields of answers (`"current": true`) is not checked here.
	fragments := 0
	for _, m := range mdCodeSpan.FindAllStringSubmatch(mdFence.ReplaceAllString(string(readme), ""), -1) {
		text := strings.Join(strings.Fields(m[1]), " ")
		if !strings.HasPrefix(text, "{") {
			text = "{" + text + "}"
		}
		var obj map[string]any
		if json.Unmarshal([]byte(text), &obj) != nil || len(obj) == 0 {
			continue // not JSON: a command, a path, a name
		}
		accepted, candidates := false, 0
		for _, s := range schemas {
			if !slices.ContainsFunc(keys(obj), func(k string) bool { _, ok := s.schema.Properties[k]; return ok }) {
				continue
			}
			candidates++
			// A fragment shows some fields of a body, not all it needs.
			partial := *s.schema
			partial.Required = nil
			if partial.VisitJSON(obj) == nil {
				accepted = true
				break
			}
		}
		if candidates > 0 {
			fragments++
		}
		if accepted {
			continue
		}
		for _, k := range keys(obj) {
			for _, s := range schemas {
				if in := nestedIn(s.schema, k, 0); in != "" {
					t.Errorf("README shows `%s`: %s does not accept it; %q goes inside %q", m[1], s.op, k, in)
				}
			}
		}
		if candidates > 0 {
			t.Errorf("README shows `%s` as a request body, but no request schema in openapi.yaml accepts it", m[1])
		}
	}
	if fragments < 2 {
		t.Errorf("found %d inline request fragments in the README, want at least 2: update this test", fragments)
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
