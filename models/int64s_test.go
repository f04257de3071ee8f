package models_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestParseInt64sReadsAsJSONDoes: the split of an alignment is read by
// ParseInt64s instead of encoding/json; every text reads the same (or is
// refused by both), and AppendInt64s writes what encoding/json writes.
func TestParseInt64sReadsAsJSONDoes(t *testing.T) {
	for _, s := range []string{"", "null", "[]", "[1]", "[1,2,3]", "[-5,0,7]", "[9223372036854775807,-9223372036854775808]",
		"[1, 2]", " [1]", "[1,]", "[,1]", "[01]", "[+1]", "[1_000]", "[1.5]", "[1e3]", "[9223372036854775808]", "[18446744073709551616]", "[-9223372036854775809]", "[ ]", "[\"1\"]", "[", "]", "{}", "[null]", "[-]", "[1,-0]"} {
		got, gotErr := models.ParseInt64s(s)
		var want []int64
		var wantErr error
		if s != "" {
			wantErr = json.Unmarshal([]byte(s), &want)
		}
		if (gotErr != nil) != (wantErr != nil) || (wantErr == nil && !reflect.DeepEqual(got, want)) {
			t.Errorf("ParseInt64s(%q) = %#v, %v; encoding/json %#v, %v", s, got, gotErr, want, wantErr)
		}
	}
	for _, ids := range [][]int64{{}, {1}, {3, -1, math.MaxInt64, math.MinInt64}} {
		want, _ := json.Marshal(ids)
		if got := models.AppendInt64s(nil, ids); string(got) != string(want) {
			t.Errorf("AppendInt64s(%v) = %s, want %s", ids, got, want)
		}
	}
}

// TestInt64sSerializerReadsStoredSplits: lists written by GORM's json
// serializer (every alignment stored before) read back the same through
// int64s, and int64s writes what json wrote, on both databases.
func TestInt64sSerializerReadsStoredSplits(t *testing.T) {
	type asJSON struct {
		ID  int64
		IDs []int64 `gorm:"column:ids;serializer:json"`
	}
	type asInt64s struct {
		ID  int64
		IDs []int64 `gorm:"column:ids;serializer:int64s"`
	}
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		if err := db.Gorm.Exec("CREATE TABLE ids_probe (id BIGINT PRIMARY KEY, ids TEXT)").Error; err != nil {
			t.Fatal(err)
		}
		lists := [][]int64{nil, {}, {7}, {1, 2, 3, 1 << 40}, {-3, 0}}
		for i, ids := range lists {
			if err := db.Gorm.Table("ids_probe").Create(&asJSON{ID: int64(i + 1), IDs: ids}).Error; err != nil {
				t.Fatal(err)
			}
			if err := db.Gorm.Table("ids_probe").Create(&asInt64s{ID: int64(i + 101), IDs: ids}).Error; err != nil {
				t.Fatal(err)
			}
		}
		for i, ids := range lists {
			for _, id := range []int64{int64(i + 1), int64(i + 101)} {
				var got asInt64s
				if err := db.Gorm.Table("ids_probe").First(&got, id).Error; err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.IDs, ids) {
					t.Errorf("row %d: read %#v, stored %#v", id, got.IDs, ids)
				}
			}
			var texts []*string
			db.Gorm.Raw("SELECT ids FROM ids_probe WHERE id IN (?, ?) ORDER BY id", i+1, i+101).Scan(&texts)
			if len(texts) != 2 || !reflect.DeepEqual(texts[0], texts[1]) {
				t.Errorf("list %v: json wrote %v, int64s %v", ids, textAt(texts, 0), textAt(texts, 1))
			}
		}
	})
}

func textAt(ss []*string, i int) any {
	if i >= len(ss) || ss[i] == nil {
		return nil
	}
	return *ss[i]
}

// BenchmarkSplitRead reads half a million row ids, as an alignment of a
// million samples stores its held-out part, with encoding/json (before)
// and ParseInt64s.
func BenchmarkSplitRead(b *testing.B) {
	ids := make([]int64, 500000)
	for i := range ids {
		ids[i] = int64(2*i + 1000000)
	}
	text := string(models.AppendInt64s(nil, ids))
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var out []int64
			if err := json.Unmarshal([]byte(text), &out); err != nil || len(out) != len(ids) {
				b.Fatal(err)
			}
		}
	})
	b.Run("ParseInt64s", func(b *testing.B) {
		for b.Loop() {
			out, err := models.ParseInt64s(text)
			if err != nil || len(out) != len(ids) {
				b.Fatal(err)
			}
		}
	})
}
