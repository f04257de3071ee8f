package dataimport

import (
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
)

// TestApplierKeepsIDsNotRecords: the applier remembers every id to report
// repeats, and must not keep the records those ids were cut from. A CSV
// record's fields share one string, so an id kept as it was read holds
// its whole record: 20,000 records of 2 KiB would stay in memory (40 MiB).
func TestApplierKeepsIDsNotRecords(t *testing.T) {
	const n, textLen = 20000, 2048
	text := strings.Repeat("x", textLen)
	a := NewApplier([]string{"id", "text"}, CSV, Mapping{IDColumn: "id", Fields: []evaluator.Field{{Label: "Text", Column: "text"}}},
		func(func(Record) error) error { t.Fatal("no id repeats, yet the file was read again"); return nil })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		// One backing string per record, as encoding/csv gives fields.
		line := strconv.Itoa(i) + "," + text
		id, rest, _ := strings.Cut(line, ",")
		a.Add(Record{Line: i + 2, Values: map[string]string{"id": id, "text": rest}})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if limit := int64(n * textLen / 8); retained > limit {
		t.Errorf("the applier keeps %d KiB after %d records of %d bytes (limit %d KiB): it holds the records, not only their ids", retained>>10, n, textLen, limit>>10)
	}
	runtime.KeepAlive(a)
}
