package models_test

import (
	"context"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestFoldName: a name as a search compares it folds case for every
// script, drops the accents of Latin and Greek letters and keeps the marks
// that make other letters elsewhere.
func TestFoldName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Évaluation", "evaluation"},
		{"ÉVALUATION à part", "evaluation a part"},
		{"E\u0301valuation", "evaluation"}, // decomposed é
		{"Straße", "strasse"},
		{"Ｆｕｌｌ ﬁle", "full file"}, // full-width letters, a ligature
		{"İstanbul", "istanbul"},
		{"ΑΞΙΟΛΌΓΗΣΗ", "αξιολογηση"},
		{"αξιολόγησης", "αξιολογησησ"}, // final sigma folds to σ
		{"ОЦЕНКА ответов", "оценка ответов"},
		{"Новый", "новый"}, // й stays й
		{"評価がある", "評価がある"}, // が stays が
		{"हिन्दी", "हिन्दी"},
		{"50% sure_ok", "50% sure_ok"},
	} {
		if got := models.FoldName(tc.in); got != tc.want {
			t.Errorf("FoldName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRunSearchFoldsNames: searching the runs by name ("evaluation")
// found "Évaluation" on PostgreSQL (ILIKE) but not on SQLite, whose LIKE
// folds ASCII letters only. Both compare the folded names stored with the
// runs now: case folded in every script, Latin and Greek accents dropped,
// on both databases; a rename stores the new folded name, and the names
// stored before migration 00050 are folded after it (FoldStoredNames).
func TestRunSearchFoldsNames(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		w := newWorld(t, db)
		named := map[string]int64{}
		for _, name := range []string{"Évaluation à part", "STRASSE one", "Straße two", "Оценка ответов", "Новый прогон",
			"ΑΞΙΟΛΌΓΗΣΗ", "評価がある", "Plain evaluation"} {
			named[name] = w.newRun(t, name).ID
		}
		search := func(q string) map[int64]bool {
			t.Helper()
			got, err := db.ListRunNames(ctx, w.ws.ID, models.RunNameSearch{Match: q})
			if err != nil {
				t.Fatal(err)
			}
			ids := map[int64]bool{}
			for _, r := range got {
				ids[r.ID] = true
			}
			return ids
		}
		cases := []struct {
			q         string
			want, not []string
		}{
			{"evaluation", []string{"Évaluation à part", "Plain evaluation"}, []string{"STRASSE one"}},
			{"ÉVALUATION À", []string{"Évaluation à part"}, []string{"Plain evaluation"}},
			{"strasse", []string{"STRASSE one", "Straße two"}, nil},
			{"STRAßE", []string{"STRASSE one", "Straße two"}, nil},
			{"оценка", []string{"Оценка ответов"}, []string{"Новый прогон"}},
			{"НОВЫЙ", []string{"Новый прогон"}, nil},
			{"новыи", nil, []string{"Новый прогон"}}, // й is not и
			{"αξιολογηση", []string{"ΑΞΙΟΛΌΓΗΣΗ"}, nil},
			{"が", []string{"評価がある"}, nil},
			{"か", nil, []string{"評価がある"}},
		}
		check := func(when string) {
			t.Helper()
			for _, tc := range cases {
				got := search(tc.q)
				for _, n := range tc.want {
					if !got[named[n]] {
						t.Errorf("%s: searching %q does not find %q", when, tc.q, n)
					}
				}
				for _, n := range tc.not {
					if got[named[n]] {
						t.Errorf("%s: searching %q finds %q", when, tc.q, n)
					}
				}
			}
		}
		check("stored")

		// Names stored before 00050 have no folded name until the step
		// after the migrations folds them.
		if err := db.Gorm.Exec(`UPDATE runs SET name_folded = NULL`).Error; err != nil {
			t.Fatal(err)
		}
		if got := search("evaluation"); len(got) != 0 {
			t.Fatalf("runs without a folded name found: %v", got)
		}
		n, err := db.FoldStoredNames(ctx)
		if err != nil || n < len(named) {
			t.Fatalf("FoldStoredNames folded %d names (%v), want at least %d", n, err, len(named))
		}
		check("folded after the migration")
		if n, err := db.FoldStoredNames(ctx); err != nil || n != 0 {
			t.Errorf("folding again folded %d names (%v), want none", n, err)
		}

		// A rename stores the new folded name.
		if _, err := db.Rename(ctx, w.ws.ID, models.KindRun, named["Plain evaluation"], "Ünïcode run"); err != nil {
			t.Fatal(err)
		}
		if got := search("unicode"); !got[named["Plain evaluation"]] {
			t.Errorf("the renamed run is not found by its new name")
		}
		if got := search("plain"); got[named["Plain evaluation"]] {
			t.Errorf("the renamed run is still found by its old name")
		}
	})
}
