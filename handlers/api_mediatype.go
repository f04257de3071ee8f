package handlers

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// An API request's body is read as the type its Content-Type names: a
// body sent as text/plain, or with no Content-Type, is refused (415)
// rather than read as JSON, naming the type the endpoint takes. The types
// each endpoint takes are the ones the OpenAPI document lists for its
// request body (as its query parameters are, api_query.go). Only /api/
// routes are wrapped: the web forms post form encodings as before.

// apiBody is what the document says of an operation's request body.
type apiBody struct {
	// Types are the media types it takes, sorted.
	Types []string
	// Required: a request without a body is refused too; otherwise a
	// request with no body and no Content-Type passes.
	Required bool
}

// apiBodies maps "METHOD /api/v1/runs/:id/continue" (Echo's spelling) to
// its request body, for the operations that take one.
var apiBodies = mustAPIBodies(openAPIJSON)

func mustAPIBodies(doc []byte) map[string]apiBody {
	type body struct {
		Ref      string                     `json:"$ref"`
		Required bool                       `json:"required"`
		Content  map[string]json.RawMessage `json:"content"`
	}
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			RequestBodies map[string]body `json:"requestBodies"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		panic(fmt.Sprintf("handlers/openapi.yaml: %v", err))
	}
	out := map[string]apiBody{}
	for path, item := range d.Paths {
		route := echoRoute(path)
		for method, raw := range item {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			var op struct {
				RequestBody *body `json:"requestBody"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				panic(fmt.Sprintf("handlers/openapi.yaml: %s %s: %v", method, path, err))
			}
			b := op.RequestBody
			if b == nil {
				continue
			}
			if name, ok := strings.CutPrefix(b.Ref, "#/components/requestBodies/"); ok {
				ref, found := d.Components.RequestBodies[name]
				if !found {
					panic("handlers/openapi.yaml: no request body " + b.Ref)
				}
				b = &ref
			}
			ab := apiBody{Required: b.Required}
			for t := range b.Content {
				ab.Types = append(ab.Types, t)
			}
			slices.Sort(ab.Types)
			out[strings.ToUpper(method)+" "+route] = ab
		}
	}
	return out
}

// echoRoute spells an OpenAPI path as Echo's route: {id} is :id.
func echoRoute(path string) string {
	for {
		i := strings.Index(path, "{")
		j := strings.Index(path, "}")
		if i < 0 || j < i {
			return path
		}
		path = path[:i] + ":" + path[i+1:j] + path[j+1:]
	}
}

// refuseOtherMediaTypes wraps an API route's handler: a body whose
// Content-Type is not one the document lists for the route (or that has
// none) is refused with 415 unsupported_media_type, naming the type to
// send. A route whose body is optional takes a request with no body and
// no Content-Type. Routes that take no body are left unchecked.
func refuseOtherMediaTypes(method, path string, next echo.HandlerFunc) echo.HandlerFunc {
	b, ok := apiBodies[method+" "+path]
	if !ok || len(b.Types) == 0 {
		return next
	}
	want := strings.Join(b.Types, " or ")
	return func(c echo.Context) error {
		req := c.Request()
		sent := req.Header.Get(echo.HeaderContentType)
		if sent == "" && !b.Required && req.ContentLength == 0 {
			return next(c)
		}
		if sent == "" {
			return echo.NewHTTPError(http.StatusUnsupportedMediaType, fmt.Sprintf(
				"the request has no Content-Type: %s %s takes %s; send the header Content-Type: %s", method, openAPIPath(path), want, b.Types[0]))
		}
		mt, _, err := mime.ParseMediaType(sent)
		if err == nil && slices.Contains(b.Types, mt) {
			return next(c)
		}
		return echo.NewHTTPError(http.StatusUnsupportedMediaType, fmt.Sprintf(
			"the request's Content-Type is %q: %s %s takes %s; send the body as that, with the header Content-Type: %s", sent, method, openAPIPath(path), want, b.Types[0]))
	}
}

// openAPIPath spells an Echo route as the document does: :id is {id}.
func openAPIPath(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}
