package handlers

import (
	_ "embed"
	"fmt"
	"net/http"

	"github.com/goccy/go-yaml"
	"github.com/labstack/echo/v4"
)

// openAPIYAML is the API's OpenAPI 3 document, written as YAML (easier to
// read and review than JSON) and served as JSON. api_test.go validates real
// answers of every endpoint against it.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// openAPIJSON is the document as served, converted once at start-up.
var openAPIJSON = mustYAMLToJSON(openAPIYAML)

func mustYAMLToJSON(doc []byte) []byte {
	out, err := yaml.YAMLToJSON(doc)
	if err != nil {
		panic(fmt.Sprintf("handlers/openapi.yaml is not valid YAML: %v", err))
	}
	return out
}

// serveOpenAPI answers /api/v1/openapi.json.
func serveOpenAPI(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openAPIJSON)
}
