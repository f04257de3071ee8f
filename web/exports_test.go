package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// knownTestOnlyExports are exported functions that tests outside package
// web call and the product does not, found when this check was written
// and left for a change of their own: the alignment test computes the
// expected cells with the page's formatters, and two components are
// rendered directly by the handlers' tests. Do not add to it.
var knownTestOnlyExports = []string{"AlignDiffText", "AlignIntervalText", "RunProgressBlock", "StandaloneRunReport"}

// TestNoExportOnlyForTests: a function package web exports is there for
// the product's other packages, not only for their tests; one that only
// tests call from outside belongs unexported (its tests in package web)
// or in a test-support package such as web/webtest. Before, ParseNumber
// was exported from web for the handlers' and the browser tests alone.
func TestNoExportOnlyForTests(t *testing.T) {
	const webPath = "github.com/batcheval/batcheval/web"
	fset := token.NewFileSet()
	exported := map[string]bool{}
	inTests, inProduct := map[string]bool{}, map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != ".." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		isTest := strings.HasSuffix(path, "_test.go")
		if filepath.Dir(path) == filepath.Join("..", "web") {
			if !isTest {
				for _, decl := range f.Decls {
					if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.IsExported() {
						exported[fn.Name.Name] = true
					}
				}
			}
			return nil
		}
		alias := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == webPath {
				alias = "web"
				if imp.Name != nil {
					alias = imp.Name.Name
				}
			}
		}
		if alias == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == alias {
					if isTest {
						inTests[sel.Sel.Name] = true
					} else {
						inProduct[sel.Sel.Name] = true
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(exported) == 0 || len(inProduct) == 0 {
		t.Fatalf("found %d exported functions and %d uses outside package web: the walk is broken", len(exported), len(inProduct))
	}
	var testOnly []string
	for name := range exported {
		if inTests[name] && !inProduct[name] && !slices.Contains(knownTestOnlyExports, name) {
			testOnly = append(testOnly, name)
		}
	}
	slices.Sort(testOnly)
	if len(testOnly) > 0 {
		t.Errorf("package web exports %s for tests outside it alone: unexport them and test them in package web, or move them to a test-support package such as web/webtest", strings.Join(testOnly, ", "))
	}
}
