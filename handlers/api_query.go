package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"
)

// An API request's query parameters are read as strictly as its JSON body
// (api_strictjson.go): a parameter the endpoint does not take is refused,
// naming it and the ones it takes. A script filtering the runs list with
// ?status=failed, which the list has no filter for, would otherwise get
// every run and act on them as if they had failed. The parameters each
// endpoint takes are the ones the OpenAPI document lists, so the document
// and the server cannot disagree about them.

// apiQueryParams maps "METHOD /api/v1/runs/:id" (Echo's spelling of the
// route) to the query parameters the document lists for it, sorted.
var apiQueryParams = mustAPIQueryParams(openAPIJSON)

func mustAPIQueryParams(doc []byte) map[string][]string {
	type param struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
		In   string `json:"in"`
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
	out := map[string][]string{}
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
			names := []string{}
			for _, p := range append(slices.Clone(shared), op.Parameters...) {
				if p = resolve(p); p.In == "query" && !slices.Contains(names, p.Name) {
					names = append(names, p.Name)
				}
			}
			slices.Sort(names)
			out[strings.ToUpper(method)+" "+route] = names
		}
	}
	return out
}

// refuseUnknownQuery wraps an API route's handler: a query parameter the
// document does not list for the route is refused with 400 (bad_request,
// as an unknown key of a JSON body is). Routes the document does not
// list are left unchecked.
func refuseUnknownQuery(method, path string, next echo.HandlerFunc) echo.HandlerFunc {
	takes, ok := apiQueryParams[method+" "+path]
	if !ok {
		return next
	}
	return func(c echo.Context) error {
		var unknown []string
		for name := range c.QueryParams() {
			if !slices.Contains(takes, name) {
				unknown = append(unknown, name)
			}
		}
		if len(unknown) == 0 {
			return next(c)
		}
		slices.Sort(unknown)
		what := "it takes no query parameters"
		if len(takes) > 0 {
			what = "it takes " + quotedList(takes)
		}
		return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(
			"the query parameter %q is not one %s %s takes (%s): leave it out; /api/v1/openapi.json lists each endpoint's parameters",
			unknown[0], method, strings.ReplaceAll(path, ":id", "{id}"), what))
	}
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
