package judge

import (
	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/jsontext"
)

// MessagesJSON is json.Marshal(msgs), byte for byte: the form in which a
// batch stores the messages it sent (and from which pages and resumes
// decode them). Every call stores one, so it is written without
// reflection, as the request body is (jsonenc.go).
func MessagesJSON(msgs []evaluator.Message) string {
	n := 2
	for _, m := range msgs {
		n += len(m.Role) + len(m.Content) + 24
	}
	// A little room for escapes, so that most prompts fit at once.
	return string(appendMessages(make([]byte, 0, n+n/16), msgs))
}

// appendMessages appends msgs as json.Marshal writes a []evaluator.Message
// (fields in order, HTML characters escaped, nil as null): in the stored
// request and in the cache key (RequestHash).
func appendMessages(b []byte, msgs []evaluator.Message) []byte {
	if msgs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = jsontext.AppendString(b, m.Role, true)
		b = append(b, `,"content":`...)
		b = jsontext.AppendString(b, m.Content, true)
		b = append(b, '}')
	}
	return append(b, ']')
}
