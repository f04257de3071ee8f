package models

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"gorm.io/gorm/schema"
)

// int64sSerializer stores a []int64 as a JSON array, as GORM's json
// serializer does, and reads one without reflection: an alignment's split
// holds a row id per sample (a million at a million samples), and
// encoding/json took 0.3-0.8 s to read half a million of them on the page
// of every alignment. Anything but a plain array of integers is read by
// encoding/json, so every value either serializer wrote reads the same.
type int64sSerializer struct{}

func init() { schema.RegisterSerializer("int64s", int64sSerializer{}) }

// Scan reads a stored array into the field.
func (int64sSerializer) Scan(ctx context.Context, field *schema.Field, dst reflect.Value, dbValue any) error {
	var s string
	switch v := dbValue.(type) {
	case nil:
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("read %s: a list of ids stored as %T", field.Name, dbValue)
	}
	ids, err := ParseInt64s(s)
	if err != nil {
		return fmt.Errorf("read %s: %w", field.Name, err)
	}
	field.ReflectValueOf(ctx, dst).Set(reflect.ValueOf(ids))
	return nil
}

// Value writes the field as a JSON array; nil is NULL, as the json
// serializer writes it.
func (int64sSerializer) Value(ctx context.Context, field *schema.Field, dst reflect.Value, fieldValue any) (any, error) {
	ids, ok := fieldValue.([]int64)
	if !ok {
		return nil, fmt.Errorf("write %s: %T is not a list of ids", field.Name, fieldValue)
	}
	if ids == nil {
		return nil, nil
	}
	return string(AppendInt64s(make([]byte, 0, 2+8*len(ids)), ids)), nil
}

// AppendInt64s appends ids to b as a JSON array, as encoding/json writes it.
func AppendInt64s(b []byte, ids []int64) []byte {
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return append(b, ']')
}

// ParseInt64s reads a JSON array of integers as encoding/json reads it into
// a []int64 ("" and null are nil, [] is empty), in one pass over s when it
// is written as AppendInt64s writes, else through encoding/json.
func ParseInt64s(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return parseInt64sJSON(s)
	}
	inner := s[1 : len(s)-1]
	if inner == "" {
		return []int64{}, nil
	}
	ids := make([]int64, 0, strings.Count(inner, ",")+1)
	for len(inner) > 0 {
		// One integer as JSON writes it: an optional minus, then 0 or
		// digits without a leading zero. Anything else, or one past int64,
		// is left to encoding/json.
		neg := inner[0] == '-'
		k := 0
		if neg {
			k = 1
		}
		start := k
		var u uint64
		for k < len(inner) && inner[k] >= '0' && inner[k] <= '9' {
			if u > (math.MaxUint64-9)/10 {
				return parseInt64sJSON(s)
			}
			u = u*10 + uint64(inner[k]-'0')
			k++
		}
		digits := k - start
		if digits == 0 || (digits > 1 && inner[start] == '0') || (!neg && u > math.MaxInt64) || (neg && u > 1<<63) {
			return parseInt64sJSON(s)
		}
		id := int64(u)
		if neg {
			id = -id // 1<<63 wraps to math.MinInt64, as wanted
		}
		ids = append(ids, id)
		inner = inner[k:]
		if len(inner) > 0 {
			if inner[0] != ',' || len(inner) == 1 {
				return parseInt64sJSON(s)
			}
			inner = inner[1:]
		}
	}
	return ids, nil
}

func parseInt64sJSON(s string) ([]int64, error) {
	var ids []int64
	if err := json.Unmarshal([]byte(s), &ids); err != nil {
		return nil, err
	}
	return ids, nil
}
