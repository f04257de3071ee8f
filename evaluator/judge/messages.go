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
	// Written into a pooled buffer and copied out once, at its exact size:
	// sized from the text, the buffer grew when the text needed escapes, and
	// the string was a second copy of the buffer (two or three prompt-sized
	// allocations a call instead of one).
	bp := keyBufs.Get().(*[]byte)
	b := appendMessages((*bp)[:0], msgs)
	s := string(b)
	if cap(b) <= maxPooledKey {
		*bp = b[:0]
		keyBufs.Put(bp)
	}
	return s
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
