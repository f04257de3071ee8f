package evaluator

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// rubricFileProblem words the YAML decoder's error on a rubric file for
// someone who is not an engineer: the line, the part of the rubric
// (criterion 2 ("Helpful"), its levels, field 1...) and what to do, in
// place of the parser's "[5:9] sequence end token ']' not found" or
// `unknown field "low"`. A message it has no words for keeps the
// parser's, after the line.
func rubricFileProblem(b []byte, err error) string {
	var (
		syn   *yaml.SyntaxError
		unk   *yaml.UnknownFieldError
		typ   *yaml.TypeError
		node  *yaml.UnexpectedNodeTypeError
		dup   *yaml.DuplicateKeyError
		where string
		what  string
		tok   *token.Token
	)
	switch {
	case errors.As(err, &unk):
		tok = unk.Token
		key := strings.TrimSuffix(strings.TrimPrefix(unk.Message, `unknown field "`), `"`)
		path := pathAt(b, tok)
		where = partOf(b, parentPath(path))
		what = unknownKey(key, parentPath(path))
	case errors.As(err, &typ):
		tok = typ.Token
		path := pathAt(b, tok)
		where = partOf(b, path)
		what = fmt.Sprintf("%s must be %s, not %s", keyName(path), kindOf(typ.DstType), quoteValue(tok))
	case errors.As(err, &node):
		tok = node.Token
		path := pathAt(b, tok)
		where = partOf(b, path)
		what = fmt.Sprintf("%s must be %s, not %s", keyName(path), nodeKind(node.Expected), nodeKind(node.Actual))
	case errors.As(err, &dup):
		tok = dup.Token
		what = syntaxWords(dup.Message)
	case errors.As(err, &syn):
		tok = syn.Token
		what = syntaxWords(syn.Message)
	default:
		return yamlProblem(err)
	}
	if what == "" {
		what = "this is not valid YAML (" + yamlMessage(err) + ")"
	}
	var lead []string
	if tok != nil && tok.Position != nil && tok.Position.Line > 0 {
		lead = append(lead, "line "+strconv.Itoa(tok.Position.Line))
	}
	if where != "" {
		lead = append(lead, where)
	}
	if len(lead) == 0 {
		return what
	}
	return strings.Join(lead, ", ") + ": " + what
}

// yamlMessage is the decoder's message without its "[line:column] ".
func yamlMessage(err error) string {
	msg := yamlProblem(err)
	if strings.HasPrefix(msg, "[") {
		if _, rest, ok := strings.Cut(msg, "] "); ok {
			return rest
		}
	}
	return msg
}

var (
	alreadyDefined = regexp.MustCompile(`^mapping key "(.*)" already defined at \[(\d+):\d+\]`)
	cannotStart    = regexp.MustCompile(`^found character '(.)' that cannot start any token`)
)

// syntaxWords says what a syntax error of the parser means and how to
// mend it, "" when it has no words for the message.
func syntaxWords(msg string) string {
	if m := alreadyDefined.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%q is given twice (also on line %s): keep one of them", m[1], m[2])
	}
	if m := cannotStart.FindStringSubmatch(msg); m != nil {
		if m[1] == "\t" {
			return "a tab indents this line: indent with spaces, not tabs"
		}
		return fmt.Sprintf("a value cannot start with %q: put the text in quotes", m[1])
	}
	for _, w := range []struct{ parser, words string }{
		{"sequence end token ']' not found", `a list opened with "[" is not closed: add the "]" after its last item`},
		{"could not find flow mapping end token '}'", `a "{" is not closed: add the "}" after its last key`},
		{"could not find '[' character corresponding to ']'", `a "]" closes no list: remove it or open the list with "["`},
		{"could not find '{' character corresponding to '}'", `a "}" closes nothing: remove it or add the "{" it closes`},
		{"could not find end character of double-quoted text", `a text opened with " is not closed: add the closing " (or write \" for a quote inside it)`},
		{"could not find end character of single-quoted text", `a text opened with ' is not closed: add the closing ' (or write '' for a quote inside it)`},
		{"value is not allowed in this context", `this line is not indented as its neighbours: the keys of one item line up under each other, with spaces`},
		{"unexpected key name", `a key is not where one may be: check this line's indentation and that each key ends with ":"`},
		{"non-map value is specified", `a value is given where keys were expected: check this line's indentation and the ":" after each key`},
	} {
		if strings.HasPrefix(msg, w.parser) {
			return w.words
		}
	}
	return ""
}

// pathAt is the YAML path ("$.criteria[1].low") of the node at tok's
// place in the file, "" when the file does not parse or has none there.
func pathAt(b []byte, tok *token.Token) string {
	if tok == nil || tok.Position == nil {
		return ""
	}
	f, err := parser.ParseBytes(b, 0)
	if err != nil {
		return ""
	}
	v := &findAt{line: tok.Position.Line, column: tok.Position.Column}
	for _, d := range f.Docs {
		ast.Walk(v, d)
	}
	return v.path
}

type findAt struct {
	line, column int
	path         string
}

func (v *findAt) Visit(n ast.Node) ast.Visitor {
	if n == nil || v.path != "" {
		return nil
	}
	if t := n.GetToken(); t != nil && t.Position != nil && t.Position.Line == v.line && t.Position.Column == v.column {
		if p := n.GetPath(); p != "" && p != "$" {
			v.path = p
			return nil
		}
	}
	return v
}

var pathStep = regexp.MustCompile(`\.([^.\[]+)|\[(\d+)\]`)

// steps splits "$.criteria[1].levels" into "criteria", "1", "levels".
func steps(path string) []string {
	var out []string
	for _, m := range pathStep.FindAllStringSubmatch(strings.TrimPrefix(path, "$"), -1) {
		if m[1] != "" {
			out = append(out, m[1])
		} else {
			out = append(out, m[2])
		}
	}
	return out
}

// parentPath is the path of what holds path's last step.
func parentPath(path string) string {
	if i := max(strings.LastIndex(path, "."), strings.LastIndex(path, "[")); i > 0 {
		return path[:i]
	}
	return "$"
}

// keyName is the last key of path ("lo", "levels"), or "this value".
func keyName(path string) string {
	s := steps(path)
	for i := len(s) - 1; i >= 0; i-- {
		if _, err := strconv.Atoi(s[i]); err != nil {
			if i == len(s)-1 {
				return fmt.Sprintf("%q", s[i])
			}
			return fmt.Sprintf("each item of %q", s[i])
		}
	}
	return "the file"
}

// partOf names the part of the rubric path is in, as the product's other
// rubric errors do: `criterion 2 ("Helpful"), example 1`, `field 1`.
func partOf(b []byte, path string) string {
	s := steps(path)
	var parts []string
	for i := 0; i+1 < len(s); i++ {
		n, err := strconv.Atoi(s[i+1])
		if err != nil {
			continue
		}
		switch {
		case i == 0 && s[i] == "criteria":
			part := fmt.Sprintf("criterion %d", n+1)
			if name := stringAt(b, fmt.Sprintf("$.criteria[%d].name", n)); name != "" {
				part += fmt.Sprintf(" (%q)", name)
			}
			parts = append(parts, part)
		case i == 0 && s[i] == "fields":
			parts = append(parts, fmt.Sprintf("field %d", n+1))
		case s[i] == "examples":
			parts = append(parts, fmt.Sprintf("example %d", n+1))
		case s[i] == "fields":
			parts = append(parts, fmt.Sprintf("text %d", n+1))
		}
	}
	return strings.Join(parts, ", ")
}

// stringAt reads the text at path in the file, "" when there is none.
func stringAt(b []byte, path string) string {
	p, err := yaml.PathString(path)
	if err != nil {
		return ""
	}
	var s string
	if err := p.Read(strings.NewReader(string(b)), &s); err != nil {
		return ""
	}
	return s
}

// unknownKey says that key is not one of those the part at parent takes,
// and which those are.
func unknownKey(key, parent string) string {
	t := typeAt(parent)
	keys := yamlKeys(t)
	switch t {
	case reflect.TypeFor[Rubric]():
		return fmt.Sprintf("%q is not a rubric file key; a rubric file holds %s", key, joinAnd(keys))
	case reflect.TypeFor[Criterion]():
		msg := fmt.Sprintf("%q is not a criterion field; the fields of a criterion are %s", key, joinAnd(keys))
		if slices.Contains(yamlKeys(reflect.TypeFor[Levels]()), key) {
			msg += fmt.Sprintf(` (%q goes under "levels": levels: {low: ..., middle: ..., high: ...})`, key)
		}
		return msg
	case reflect.TypeFor[Levels]():
		return fmt.Sprintf("%q is not a level; the levels are %s", key, joinAnd(keys))
	case reflect.TypeFor[Field]():
		return fmt.Sprintf("%q is not a field setting; a field has %s", key, joinAnd(keys))
	case reflect.TypeFor[Example]():
		return fmt.Sprintf("%q is not an example field; an example has %s", key, joinAnd(keys))
	case nil:
		return fmt.Sprintf("%q is not a rubric file key", key)
	}
	return fmt.Sprintf("%q is not expected here; the keys here are %s", key, joinAnd(keys))
}

// typeAt is the Go type the rubric file's path decodes into (nil when the
// path leads nowhere the format knows).
func typeAt(path string) reflect.Type {
	t := reflect.TypeFor[Rubric]()
	for _, s := range steps(path) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if _, err := strconv.Atoi(s); err == nil {
			if t.Kind() != reflect.Slice {
				return nil
			}
			t = t.Elem()
			continue
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := fieldByKey(t, s)
		if !ok {
			return nil
		}
		t = f.Type
	}
	return t
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// yamlKeys are the keys a struct takes in a rubric file, in order.
func yamlKeys(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// kindOf says what a value of type t is written as in a rubric file.
func kindOf(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int64, reflect.Int32:
		return "a number"
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return `a list (items on lines starting with "- ", or [a, b])`
	case reflect.Struct, reflect.Map:
		return `keys with values ("key: value" lines, or {key: value})`
	case reflect.Pointer:
		return kindOf(t.Elem())
	}
	return "another kind of value"
}

// nodeKind says what a YAML node type is, in words.
func nodeKind(t ast.NodeType) string {
	switch t {
	case ast.SequenceType:
		return `a list (items on lines starting with "- ", or [a, b])`
	case ast.MappingType, ast.MappingValueType:
		return `keys with values ("key: value" lines, or {key: value})`
	case ast.StringType, ast.LiteralType:
		return "text"
	case ast.IntegerType, ast.FloatType:
		return "a number"
	case ast.BoolType:
		return "true or false"
	case ast.NullType:
		return "empty"
	}
	return "another kind of value"
}

// quoteValue shows the value at tok for a type error: "low", a list.
func quoteValue(tok *token.Token) string {
	if tok == nil {
		return "this value"
	}
	switch tok.Type {
	case token.SequenceStartType, token.SequenceEntryType:
		return "a list"
	case token.MappingStartType:
		return "keys with values"
	}
	return fmt.Sprintf("%q", tok.Value)
}
