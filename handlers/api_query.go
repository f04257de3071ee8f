package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// An API request's query parameters are read as strictly as its JSON body
// (api_strictjson.go): a parameter the endpoint does not take is refused,
// naming it and the ones it takes. A script filtering the runs list with
// ?status=failed, which the list has no filter for, would otherwise get
// every run and act on them as if they had failed. The parameters each
// endpoint takes are the ones the OpenAPI document lists, so the document
// and the server cannot disagree about them. Likewise a parameter given
// twice (?a=2&b=3&a=4: which run is A?) is refused rather than read as its
// first value, as a key given twice in a JSON body is, and a parameter whose
// document lists the values it takes (export.csv's excel) is refused with
// any other value rather than answered as if it were absent.

// apiQuery is what the document says of one route's query parameters.
type apiQuery struct {
	// names are the parameters the route takes, sorted.
	names []string
	// enums holds, for a parameter whose schema lists its values (enum),
	// those values in the document's order.
	enums map[string][]string
}

// apiQueryParams maps "METHOD /api/v1/runs/:id" (Echo's spelling of the
// route) to the query parameters the document lists for it.
var apiQueryParams = mustAPIQueryParams(openAPIJSON)

func mustAPIQueryParams(doc []byte) map[string]apiQuery {
	type param struct {
		Ref    string `json:"$ref"`
		Name   string `json:"name"`
		In     string `json:"in"`
		Schema struct {
			Enum []string `json:"enum"`
		} `json:"schema"`
	}
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]param `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		panic(fmt.Sprintf("handlers/openapi.yaml: %v", err))
	}
	resolve := func(p param) param {
		if name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/"); ok {
			ref, found := d.Components.Parameters[name]
			if !found {
				panic("handlers/openapi.yaml: no parameter " + p.Ref)
			}
			return ref
		}
		return p
	}
	out := map[string]apiQuery{}
	for path, item := range d.Paths {
		var shared []param
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				panic(fmt.Sprintf("handlers/openapi.yaml: %s: %v", path, err))
			}
		}
		route := path
		for {
			i := strings.Index(route, "{")
			j := strings.Index(route, "}")
			if i < 0 || j < i {
				break
			}
			route = route[:i] + ":" + route[i+1:j] + route[j+1:]
		}
		for method, raw := range item {
			if method == "parameters" || method == "summary" || method == "description" {
				continue
			}
			var op struct {
				Parameters []param `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				panic(fmt.Sprintf("handlers/openapi.yaml: %s %s: %v", method, path, err))
			}
			q := apiQuery{names: []string{}, enums: map[string][]string{}}
			for _, p := range append(slices.Clone(shared), op.Parameters...) {
				if p = resolve(p); p.In == "query" && !slices.Contains(q.names, p.Name) {
					q.names = append(q.names, p.Name)
					if len(p.Schema.Enum) > 0 {
						q.enums[p.Name] = p.Schema.Enum
					}
				}
			}
			slices.Sort(q.names)
			out[strings.ToUpper(method)+" "+route] = q
		}
	}
	return out
}

// refuseUnknownQuery wraps an API route's handler: a query parameter the
// document does not list for the route, or one given more than once, is
// refused with 400 (bad_request, as an unknown or repeated key of a JSON
// body is), and a value outside the values the document lists for the
// parameter with 422 (invalid), naming the values it takes. Routes the
// document does not list are left unchecked.
func refuseUnknownQuery(method, path string, next echo.HandlerFunc) echo.HandlerFunc {
	q, ok := apiQueryParams[method+" "+path]
	if !ok {
		return next
	}
	takes := q.names
	endpoint := method + " " + strings.ReplaceAll(path, ":id", "{id}")
	return func(c echo.Context) error {
		params := c.QueryParams()
		var unknown, repeated []string
		for name, values := range params {
			switch {
			case !slices.Contains(takes, name):
				unknown = append(unknown, name)
			case len(values) > 1:
				repeated = append(repeated, name)
			}
		}
		if len(unknown) > 0 {
			slices.Sort(unknown)
			what := "it takes no query parameters"
			if len(takes) > 0 {
				what = "it takes " + quotedList(takes)
			}
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(
				"the query parameter %q is not one %s takes (%s): leave it out; /api/v1/openapi.json lists each endpoint's parameters",
				unknown[0], endpoint, what))
		}
		if len(repeated) > 0 {
			slices.Sort(repeated)
			name := repeated[0]
			return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(
				"the query parameter %q is given %d times (%s): give it once, with the value you mean",
				name, len(params[name]), quotedList(params[name])))
		}
		for _, name := range takes {
			values, listed := q.enums[name]
			if !listed || params.Get(name) == "" || slices.Contains(values, params.Get(name)) {
				continue
			}
			return models.Errorf(models.EInvalid,
				"the query parameter %q cannot be %q: %s takes %s; leave it out for the default",
				name, params.Get(name), endpoint, orList(values))
		}
		return next(c)
	}
}

// orList is values quoted and joined with commas and a final "or".
func orList(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// quotedList is names quoted and joined with commas and a final "and".
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
