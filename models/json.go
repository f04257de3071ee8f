package models

import (
	"encoding/json"
)

// jsonValue encodes v for an Updates map, where GORM's serializer tag does not apply.
func jsonValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		// Only our own plain structs reach here; they always encode.
		panic(err)
	}
	return string(b)
}
