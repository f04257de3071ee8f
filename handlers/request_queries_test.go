package handlers

import (
	"testing"

	"gorm.io/gorm"
)

// onRequestQueries calls record with the SQL of each query and row read
// made on env's database handles (writer and reader) by a request whose
// context carries countedRequest{} (the runner's and other requests'
// queries are left out), until t ends. record may be called from several
// goroutines at once.
func (env *testEnv) onRequestQueries(t *testing.T, name string, record func(q string)) {
	t.Helper()
	hook := "test:" + name
	for _, g := range []*gorm.DB{env.db.Gorm, env.db.Read} {
		if g == nil {
			continue
		}
		seen := func(tx *gorm.DB) {
			if tx.Statement.Context == nil || tx.Statement.Context.Value(countedRequest{}) == nil {
				return
			}
			record(tx.Statement.SQL.String())
		}
		must(t, g.Callback().Query().After("gorm:query").Register(hook, seen))
		must(t, g.Callback().Row().After("gorm:row").Register(hook, seen))
		t.Cleanup(func() {
			_ = g.Callback().Query().Remove(hook)
			_ = g.Callback().Row().Remove(hook)
		})
	}
}
