package judge

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"

	"github.com/batcheval/batcheval/evaluator/jsontext"
)

// Hand-written JSON for the two documents made on every call: the request
// body (wire.go) and the cache key (RequestHash). Both must come out byte
// for byte as encoding/json wrote them, since endpoints have been receiving
// those bytes and databases hold answers under hashes of them: the rules
// below are encoding/json's, and FuzzAppendString, TestEncodeBody and
// FuzzRequestHash compare with it. What is worth writing by hand is only
// this: reflection, the encoder's own buffer and its copy into ours cost
// more than the escaping itself.

// appendFloat appends f as encoding/json writes a float64: the shortest
// form that reads back the same, with an exponent only below 1e-6 or from
// 1e21 up, and a one-digit negative exponent not padded (1e-7, not 1e-07).
// NaN and infinities are an error, as there.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, &json.UnsupportedValueError{Value: reflect.ValueOf(f), Str: strconv.FormatFloat(f, 'g', -1, 64)}
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, nil
}

// appendValue appends v encoded by encoding/json (a JSON schema: maps and
// slices of anything), with or without HTML escaping, without the
// encoder's trailing newline.
func appendValue(dst []byte, v any, html bool) ([]byte, error) {
	if html {
		b, err := json.Marshal(v)
		return append(dst, b...), err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// appendBody appends the request body: the fields of chatRequest in
// order, the optional ones only when set (the omitempty rules), strings
// without HTML escaping (the SDK turned it off).
func appendBody(b []byte, r *chatRequest) ([]byte, error) {
	b = append(b, `{"messages":[`...)
	for i, m := range r.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"content":`...)
		b = jsontext.AppendString(b, m.Content, false)
		b = append(b, `,"role":`...)
		b = jsontext.AppendString(b, m.Role, false)
		b = append(b, '}')
	}
	b = append(b, `],"model":`...)
	b = jsontext.AppendString(b, r.Model, false)
	if r.Logprobs {
		b = append(b, `,"logprobs":true`...)
	}
	if r.MaxCompletionTokens != 0 {
		b = append(b, `,"max_completion_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxCompletionTokens), 10)
	}
	if r.MaxTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
	}
	if r.N != 0 {
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(r.N), 10)
	}
	if r.ReasoningEffort != "" {
		b = append(b, `,"reasoning_effort":`...)
		b = jsontext.AppendString(b, r.ReasoningEffort, false)
	}
	if r.Seed != nil {
		b = append(b, `,"seed":`...)
		b = strconv.AppendInt(b, *r.Seed, 10)
	}
	var err error
	if r.Temperature.Sent {
		b = append(b, `,"temperature":`...)
		if b, err = appendFloat(b, r.Temperature.V); err != nil {
			return b, err
		}
	}
	if r.TopLogprobs != 0 {
		b = append(b, `,"top_logprobs":`...)
		b = strconv.AppendInt(b, int64(r.TopLogprobs), 10)
	}
	if r.TopP != 0 {
		b = append(b, `,"top_p":`...)
		if b, err = appendFloat(b, r.TopP); err != nil {
			return b, err
		}
	}
	if rf := r.ResponseFormat; rf != nil {
		b = append(b, `,"response_format":{`...)
		if js := rf.JSONSchema; js != nil {
			b = append(b, `"json_schema":{"name":`...)
			b = jsontext.AppendString(b, js.Name, false)
			b = append(b, `,"strict":`...)
			b = strconv.AppendBool(b, js.Strict)
			b = append(b, `,"schema":`...)
			if b, err = appendValue(b, js.Schema, false); err != nil {
				return b, err
			}
			b = append(b, "},"...)
		}
		b = append(b, `"type":`...)
		b = jsontext.AppendString(b, rf.Type, false)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendCacheKey appends the JSON of cacheKey{baseURL, model, r} as
// json.Marshal wrote it: Request's fields under their Go names, none
// omitted, strings HTML-escaped. TestRequestHashCoversRequest fails when
// Request gains a field this does not write.
func appendCacheKey(b []byte, baseURL, model string, r *Request) ([]byte, error) {
	b = append(b, `{"base_url":`...)
	b = jsontext.AppendString(b, baseURL, true)
	b = append(b, `,"model":`...)
	b = jsontext.AppendString(b, model, true)
	b = append(b, `,"request":{"Messages":`...)
	b = appendMessages(b, r.Messages)
	var err error
	b = append(b, `,"Temperature":`...)
	if b, err = appendFloat(b, r.Temperature); err != nil {
		return b, err
	}
	b = append(b, `,"TopP":`...)
	if b, err = appendFloat(b, r.TopP); err != nil {
		return b, err
	}
	b = append(b, `,"MaxTokens":`...)
	b = strconv.AppendInt(b, int64(r.MaxTokens), 10)
	b = append(b, `,"N":`...)
	b = strconv.AppendInt(b, int64(r.N), 10)
	b = append(b, `,"Seed":`...)
	if r.Seed == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, *r.Seed, 10)
	}
	b = append(b, `,"Logprobs":`...)
	b = strconv.AppendBool(b, r.Logprobs)
	b = append(b, `,"TopLogprobs":`...)
	b = strconv.AppendInt(b, int64(r.TopLogprobs), 10)
	b = append(b, `,"JSONMode":`...)
	b = strconv.AppendBool(b, r.JSONMode)
	b = append(b, `,"JSONSchema":`...)
	if r.JSONSchema == nil {
		b = append(b, "null"...)
	} else if b, err = appendValue(b, r.JSONSchema, true); err != nil {
		return b, err
	}
	return append(b, "}}"...), nil
}
