package runner

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// TestJudgeSettingsStopNamesTheKindsThatStop: the comment on
// models.JudgeSettingsStop, which says when a run is stopped with it,
// names every judge error kind runLevel stops a run on, and no other
// (regression: it named auth, not_found and refused, and not payment or
// not_api, which stop a run too). The kinds are read from the judge
// package's ErrorKind constants, so a new one is checked too.
func TestJudgeSettingsStopNamesTheKindsThatStop(t *testing.T) {
	fset := token.NewFileSet()
	judgeFile, err := parser.ParseFile(fset, "../evaluator/judge/errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []judge.ErrorKind
	ast.Inspect(judgeFile, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "ErrorKind" {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				v, _ := strconv.Unquote(lit.Value)
				kinds = append(kinds, judge.ErrorKind(v))
			}
		}
		return true
	})
	if len(kinds) < 10 {
		t.Fatalf("read %d error kinds from the judge package: %v", len(kinds), kinds)
	}
	modelsFile, err := parser.ParseFile(fset, "../models/types.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := ""
	ast.Inspect(modelsFile, func(n ast.Node) bool {
		if gd, ok := n.(*ast.GenDecl); ok && gd.Tok == token.CONST && len(gd.Specs) == 1 {
			if vs := gd.Specs[0].(*ast.ValueSpec); vs.Names[0].Name == "JudgeSettingsStop" && gd.Doc != nil {
				doc = gd.Doc.Text()
			}
		}
		return true
	})
	if doc == "" {
		t.Fatal("no comment on models.JudgeSettingsStop")
	}
	// The comment lists them as "(evaluator/judge kinds a, b and c...".
	m := regexp.MustCompile(`evaluator/judge kinds ([a-z_, ]+)`).FindStringSubmatch(strings.Join(strings.Fields(doc), " "))
	if m == nil {
		t.Fatalf("JudgeSettingsStop's comment lists no evaluator/judge kinds: %q", doc)
	}
	listed := map[string]bool{}
	for _, k := range regexp.MustCompile(`,\s*|\s+and\s+`).Split(strings.TrimSpace(m[1]), -1) {
		listed[k] = true
	}
	for _, k := range kinds {
		var stop *judgeUnusable
		stops := errors.As(runLevel(&judge.Error{Kind: k, Status: 400}), &stop)
		named := listed[string(k)]
		if stops != named {
			t.Errorf("kind %s: stops the run %v, named by JudgeSettingsStop's comment %v", k, stops, named)
		}
	}
}
