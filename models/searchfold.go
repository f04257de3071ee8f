package models

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
	"gorm.io/gorm"
)

// FoldName is a name as a search compares it, the same on SQLite and
// PostgreSQL: both compare the folded name stored with each run and
// experiment (migration 00050) with the folded search. SQLite's LOWER and
// LIKE fold ASCII letters only ("evaluation" did not find "Évaluation"),
// while PostgreSQL's ILIKE folds every letter; neither ignores accents.
//
// Folding takes compatibility forms apart (NFKD: "ﬁ" is "fi", a
// full-width "Ｅ" is "E"), folds case with Unicode's full folding ("ß" is
// "ss", final "ς" is "σ", "İ" is "i"), drops the accents of Latin and
// Greek letters ("é" is "e", "ά" is "α"), and puts what is left together
// again (NFC). Marks of other scripts stay: they make other letters there
// (Japanese "が" is not "か", Russian "й" is not "и", Devanagari's vowel
// signs and virama are part of the word).
func FoldName(s string) string {
	d := cases.Fold().String(norm.NFKD.String(s))
	var b strings.Builder
	b.Grow(len(d))
	stripMarks := false
	for _, r := range d {
		if unicode.Is(unicode.Mn, r) {
			if !stripMarks {
				b.WriteRune(r)
			}
			continue
		}
		stripMarks = unicode.In(r, unicode.Latin, unicode.Greek)
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

// BeforeSave stores the run's folded name (FoldName) with its name.
func (r *Run) BeforeSave(*gorm.DB) error {
	r.NameFolded = FoldName(r.Name)
	return nil
}

// BeforeSave stores the experiment's folded name (FoldName) with its name.
func (e *Experiment) BeforeSave(*gorm.DB) error {
	e.NameFolded = FoldName(e.Name)
	return nil
}

// foldedNameTables are the tables whose rows keep a folded name.
var foldedNameTables = []string{"runs", "experiments"}

// foldChunk is how many names a statement of the backfill reads.
const foldChunk = 1000

// FoldStoredNames stores the folded name of every run and experiment that
// has none: those stored before migration 00050 (which can only add the
// column: neither database's SQL folds as FoldName does). It runs after
// the migrations, in one transaction, and finds nothing to do once done.
func (db *DB) FoldStoredNames(ctx context.Context) (int, error) {
	n := 0
	err := db.Gorm.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, table := range foldedNameTables {
			var after int64
			for {
				var rows []struct {
					ID   int64
					Name string
				}
				if err := tx.Table(table).Select("id", "name").Where("name_folded IS NULL AND id > ?", after).
					Order("id").Limit(foldChunk).Scan(&rows).Error; err != nil {
					return fmt.Errorf("read the %s names to fold: %w", table, err)
				}
				for _, r := range rows {
					if err := tx.Table(table).Where("id = ?", r.ID).UpdateColumn("name_folded", FoldName(r.Name)).Error; err != nil {
						return fmt.Errorf("store the folded name of %s %d: %w", table, r.ID, err)
					}
					after = r.ID
				}
				n += len(rows)
				if len(rows) < foldChunk {
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
