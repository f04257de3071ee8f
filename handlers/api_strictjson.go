package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"
)

// strictKeys refuses, in a JSON body about to be decoded into a value of
// type t, what encoding/json accepts without a word:
//   - a key given twice in one object ({"name": "a", "name": "b"}): it
//     keeps the last, so one of the two values the caller sent is lost;
//   - a key that names a field only when case is ignored ({"Name": ...}
//     for "name"): it takes it as that field, so a body a stricter client
//     or the OpenAPI document refuses would work here, and two spellings
//     of one key would overwrite each other.
//
// Each is a 400 naming the key by its JSON path and what to send instead.
// Anything else (syntax, kinds, unknown keys) is left to the decoder,
// which says it in its own words; so is a body that is not JSON.
func strictKeys(data []byte, t reflect.Type, within string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkKeys(dec, t, within)
	var refused *echo.HTTPError
	if errors.As(err, &refused) {
		return err
	}
	return nil
}

// walkKeys reads the next JSON value from dec, checking the keys of every
// object in it against t (nil: a value of any shape, whose objects are
// only checked for repeated keys).
func walkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	t = decodedAs(t)
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := tok.(string)
			at := jsonPath(path, key)
			if seen[key] {
				return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(
					"the key %q is given twice: JSON keeps only one of the two values, so send it once, with the value you mean", at))
			}
			seen[key] = true
			var inner reflect.Type
			switch {
			case fields != nil:
				ft, exact := fields[key]
				if !exact {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return echo.NewHTTPError(http.StatusBadRequest, fmt.Sprintf(
								"the key %q is spelled %q here: keys are case-sensitive; send it so (the keys are listed in /api/v1/openapi.json)",
								at, jsonPath(path, name)))
						}
					}
				}
				inner = ft // nil for an unknown key: the decoder names it
			case t != nil && t.Kind() == reflect.Map:
				inner = t.Elem()
			}
			if err := walkKeys(dec, inner, at); err != nil {
				return err
			}
		}
		_, err := dec.Token() // }
		return err
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ]
		return err
	}
	return nil
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// decodedAs is the type whose fields a JSON object's keys name: t without
// its pointers, or nil when the value is read some other way (an interface,
// json.RawMessage, time.Time or any type with its own UnmarshalJSON).
func decodedAs(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil
	}
	return t
}

// jsonFields are the keys a struct takes, as encoding/json names them
// (the json tag's name, else the Go name; embedded structs' fields
// promoted), each with its type.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			if et := decodedAs(f.Type); et != nil && et.Kind() == reflect.Struct {
				for k, v := range jsonFields(et) {
					if _, shadowed := out[k]; !shadowed {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// jsonPath is the path of key in the object at path.
func jsonPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
