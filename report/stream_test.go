package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

func ptr(v float64) *float64 { return &v }

// streamDataset stores a dataset of 8 samples whose file order differs
// from their ids' order, with a formula-like text, imported ratings in
// "h" (two annotators' keys "h@r1", "h@r2" on most rows, one rating empty, one absent)
// and "g", and browser reviews of criterion "Q" by two reviewers (one of
// whom takes a rating back with an empty one) and of "R" by one.
func streamDataset(t *testing.T, db *models.DB) (wsID int64, ds models.Dataset, rows []models.DatasetRow) {
	t.Helper()
	ctx := t.Context()
	ws, p := streamProject(t, db)
	ds = models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "D", Columns: []string{"text", "ctx", "h", "g"},
		Fields: []evaluator.Field{{Column: "text", Label: "=Text"}, {Column: "ctx", Label: "Context"}}, RatingColumns: []string{"h", "g"}}
	positions := []int{4, 1, 6, 2, 7, 3, 5} // stored out of file order
	for i, pos := range positions {
		r := models.DatasetRow{Position: pos, ExternalID: fmt.Sprintf("s%d", pos),
			Data:    map[string]string{"text": []string{"=cmd()", "plain, with comma", "line\nbreak", "quote \"x\"", "+1", "", "ünïcode <b>"}[i], "ctx": "c"},
			Ratings: map[string]*float64{"h": ptr(float64(pos%5) + 0.25), "g": ptr(float64(pos) / 3)}}
		if pos != 2 {
			r.Ratings["h@r1"], r.Ratings["h@r2"] = ptr(float64(pos%4)), ptr(float64(pos%3)+1)
		}
		// A column whose name JSON encoders may escape, with annotators.
		r.Ratings["n<&>/"] = ptr(float64(pos % 3))
		if pos > 4 {
			r.Ratings["n<&>/@x"], r.Ratings["n<&>/@y"] = ptr(1), ptr(float64(pos%2))
		}
		switch pos {
		case 3:
			r.Ratings["h"] = nil
		case 5:
			delete(r.Ratings, "g")
		}
		rows = append(rows, r)
	}
	// A row without any rating at all (an empty object).
	rows = append(rows, models.DatasetRow{Position: 8, ExternalID: "s8", Data: map[string]string{"text": "unrated"}, Ratings: map[string]*float64{}})
	if err := db.CreateDataset(ctx, &ds, rows); err != nil {
		t.Fatal(err)
	}
	rows, err := db.ListDatasetRows(ctx, ds.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	rate := func(crit, reviewer string, vals map[int]*float64) {
		t.Helper()
		for _, r := range rows {
			v, ok := vals[r.Position]
			if !ok {
				continue
			}
			rv := models.ReviewRating{WorkspaceID: ws.ID, DatasetID: ds.ID, RowID: r.ID, Criterion: crit, Reviewer: reviewer, Score: v, Lo: 1, Hi: 5}
			if v == nil {
				rv.Comment = "not sure any more"
			}
			if _, err := db.AddReviewRating(ctx, rv); err != nil {
				t.Fatal(err)
			}
		}
	}
	rate("Q", "ann", map[int]*float64{1: ptr(2), 2: ptr(3), 4: ptr(5), 6: ptr(1)})
	rate("Q", "bob", map[int]*float64{1: ptr(4), 3: ptr(2), 6: ptr(2.5)})
	rate("Q", "bob", map[int]*float64{6: nil}) // bob's current review of s6 has no rating
	rate("R", "cy", map[int]*float64{2: ptr(4), 7: ptr(1.5)})
	return ws.ID, ds, rows
}

// streamProject makes the default workspace and a project in it.
func streamProject(t *testing.T, db *models.DB) (models.Workspace, models.Project) {
	t.Helper()
	ws, err := db.EnsureDefaultWorkspace(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	p := models.Project{WorkspaceID: ws.ID, Name: "P"}
	if err := db.CreateProject(t.Context(), &p); err != nil {
		t.Fatal(err)
	}
	return ws, p
}

// streamCase is one run shape.
type streamCase struct {
	name     string
	method   string
	rounds   int
	criteria []evaluator.Criterion
	source   models.HumanSource
	// score gives sample pos's score on criterion ci in round r: judged
	// false leaves the round unjudged, a nil score is unreadable.
	score func(pos, ci, r int) (v *float64, judged bool)
}

func everyScore(pos, ci, r int) (*float64, bool) {
	switch {
	case (pos+ci+r)%5 == 0:
		return nil, true // unreadable
	case pos == 7 && r > 0:
		return nil, false // not judged yet
	}
	return ptr(1 + float64((pos*7+ci*3+r)%9)/2.3), true
}

// storeStreamRun stores a finished run of the case over the dataset.
func storeStreamRun(t *testing.T, db *models.DB, wsID int64, ds models.Dataset, rows []models.DatasetRow, tc streamCase) models.Run {
	t.Helper()
	ctx := t.Context()
	now := time.Now().UTC()
	ver := 3
	run := models.Run{WorkspaceID: wsID, ProjectID: ds.ProjectID, DatasetID: ds.ID, Name: tc.name, Method: tc.method,
		Status: models.RunSucceeded, CreatedAt: now, FinishedAt: &now, MethodSettings: evaluator.DefaultMethodSettings(),
		Settings:       evaluator.Settings{Rounds: tc.rounds, BatchSize: 2, Seed: 11},
		RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: tc.criteria}, RubricVersion: &ver,
		JudgeSnapshot: models.JudgeSnapshot{Name: "j", Model: "m-1"}}
	if err := db.CreateRun(ctx, &run, nil); err != nil {
		t.Fatal(err)
	}
	for ci := range tc.criteria {
		for r := range tc.rounds {
			ids := make([]int64, len(rows))
			for i, row := range rows {
				ids[i] = row.ID
			}
			b := models.RunBatch{RunID: run.ID, CriterionIndex: ci, Round: r, RowIDs: ids, Status: models.BatchDone, Problems: []string{}, Details: map[string]any{}}
			if err := db.Gorm.Create(&b).Error; err != nil {
				t.Fatal(err)
			}
			for i, row := range rows {
				v, judged := tc.score(row.Position, ci, r)
				if !judged {
					continue
				}
				s := models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: ci, Round: r, RowID: row.ID, Label: i + 1, Score: v}
				if err := db.Gorm.Create(&s).Error; err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if tc.source != "" {
		if _, err := db.SetRunHumanSource(ctx, wsID, run.ID, tc.source, "tester"); err != nil {
			t.Fatal(err)
		}
	}
	return run
}

var (
	critQ   = evaluator.Criterion{Name: "Q", Lo: 1, Hi: 5, HumanColumn: "h"}
	critR   = evaluator.Criterion{Name: "R", Lo: 1, Hi: 5}
	critG   = evaluator.Criterion{Name: "=G", Lo: 0, Hi: 3, HumanColumn: "g"}
	critQex = evaluator.Criterion{Name: "Q", Lo: 1, Hi: 5, HumanColumn: "h", AnnotatorColumns: []string{"h@r2", "h@r1"},
		Examples: []evaluator.Example{{SampleID: "x", Score: 2}}}
	critN    = evaluator.Criterion{Name: "N", Lo: 0, Hi: 2, HumanColumn: "n<&>/"}
	critQone = evaluator.Criterion{Name: "Q", Lo: 1, Hi: 5, HumanColumn: "h", AnnotatorColumns: []string{"h@r1"}}
	// Q's browser reviews (1 to 5) with "g" (0.33 to 2.33) as the imported
	// column: under "both" it is mapped onto 1 to 5 over every row.
	critQg = evaluator.Criterion{Name: "Q", Lo: 1, Hi: 5, HumanColumn: "g"}
)

var streamCases = []streamCase{
	{"batcheval two rounds imported", models.MethodBatchEval, 2, []evaluator.Criterion{critQ}, "", everyScore},
	{"geval one round two criteria", models.MethodGEval, 1, []evaluator.Criterion{critQ, critR}, models.HumansImported, everyScore},
	{"llmeval three rounds explicit annotators", models.MethodLLMEval, 3, []evaluator.Criterion{critQone, critG}, "", everyScore},
	{"closerlook nothing judged", models.MethodCloserLook, 1, []evaluator.Criterion{critQ}, "", func(int, int, int) (*float64, bool) { return nil, false }},
	{"batcheval every score unreadable", models.MethodBatchEval, 2, []evaluator.Criterion{critG, critQ}, "", func(int, int, int) (*float64, bool) { return nil, true }},
	{"batcheval browser ratings", models.MethodBatchEval, 2, []evaluator.Criterion{critQ, critR, critG}, models.HumansBrowser, everyScore},
	{"batcheval both", models.MethodBatchEval, 1, []evaluator.Criterion{critQ, critR}, models.HumansBoth, everyScore},
	{"geval both with explicit annotators", models.MethodGEval, 2, []evaluator.Criterion{critQex, critG}, models.HumansBoth, everyScore},
	{"geval escaped column imported", models.MethodGEval, 1, []evaluator.Criterion{critN, critQ}, "", everyScore},
	{"batcheval escaped column both", models.MethodBatchEval, 2, []evaluator.Criterion{critN}, models.HumansBoth, everyScore},
	{"llmeval browser explicit annotators", models.MethodLLMEval, 1, []evaluator.Criterion{critQex}, models.HumansBrowser, everyScore},
	{"batcheval both imported column mapped", models.MethodBatchEval, 1, []evaluator.Criterion{critQg}, models.HumansBoth, everyScore},
}

// TestStreamedExportsMatchBuiltReport: for every run shape, the streamed
// CSV and JSON are byte for byte what WriteCSV and WriteJSON write from
// the built report, with pages of one, two and the default number of rows.
func TestStreamedExportsMatchBuiltReport(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		wsID, ds, rows := streamDataset(t, db)
		all := ""
		for _, tc := range streamCases {
			t.Run(tc.name, func(t *testing.T) {
				run := storeStreamRun(t, db, wsID, ds, rows, tc)
				rep, err := Build(ctx, db, wsID, run.ID)
				if err != nil {
					t.Fatal(err)
				}
				var wantCSV, wantJSON bytes.Buffer
				if err := rep.WriteCSV(&wantCSV); err != nil {
					t.Fatal(err)
				}
				if err := rep.WriteJSON(&wantJSON); err != nil {
					t.Fatal(err)
				}
				all += wantCSV.String()
				for _, size := range []int{1, 2, 0} {
					got := streamOut(t, ctx, db, wsID, run.ID, size, func(x *exportSource, w *bytes.Buffer) error { return x.writeCSV(ctx, w) })
					if got != wantCSV.String() {
						t.Errorf("page %d: CSV differs:\n got %q\nwant %q", size, got, wantCSV.String())
					}
					got = streamOut(t, ctx, db, wsID, run.ID, size, func(x *exportSource, w *bytes.Buffer) error { return x.writeJSON(ctx, rep, w) })
					if got != wantJSON.String() {
						t.Errorf("page %d: JSON differs:\n got %s\nwant %s", size, got, wantJSON.String())
					}
				}
				// The exported entry points give the same bytes.
				var csvOut, jsonOut bytes.Buffer
				if err := StreamCSV(ctx, db, wsID, run.ID, &csvOut); err != nil || csvOut.String() != wantCSV.String() {
					t.Errorf("StreamCSV: %v, same bytes %v", err, csvOut.String() == wantCSV.String())
				}
				if err := StreamJSON(ctx, db, rep, &jsonOut); err != nil || jsonOut.String() != wantJSON.String() {
					t.Errorf("StreamJSON: %v, same bytes %v", err, jsonOut.String() == wantJSON.String())
				}
			})
		}
		// The cases cover what they claim: ceiling annotators imported and
		// merged with browser reviewers, browser ratings counted.
		for _, want := range []string{"annotators h@r1, h@r2", "(6 browser ratings", "(8 browser ratings", "annotators h@r2, h@r1, h@browser:ann", "N=n<&>/ (annotators n<&>/@x, n<&>/@y)",
			"Q: the imported ratings (0 to 3) lie outside the rubric's 1 to 5", "Q: the imported ratings (0.3333 to 2.333) lie outside the rubric's 1 to 5"} {
			if !strings.Contains(all, want) {
				t.Errorf("no export says %q: the cases miss a shape", want)
			}
		}
	})
}

func streamOut(t *testing.T, ctx context.Context, db *models.DB, wsID, runID int64, size int, write func(*exportSource, *bytes.Buffer) error) string {
	t.Helper()
	x, err := openExport(ctx, db, wsID, runID)
	if err != nil {
		t.Fatal(err)
	}
	x.pageRows = size
	var b bytes.Buffer
	if err := write(x, &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// stopAfter accepts n bytes, then fails every write.
type stopAfter struct{ n int }

var errStop = errors.New("client went away")

func (w *stopAfter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		w.n = 0
		return 0, errStop
	}
	w.n -= len(p)
	return len(p), nil
}

// TestStreamedExportReadsAsItWrites: a client that stops reading after a
// few kilobytes of a 3,000-sample export has made the export read a page
// or two of rows, not every row; a writer that held every sample before
// writing would have read them all.
func TestStreamedExportReadsAsItWrites(t *testing.T) {
	db := dbtest.Open(t, models.SQLite)
	ctx := t.Context()
	ws, p := streamProject(t, db)
	const n = 3000
	ds := models.Dataset{WorkspaceID: ws.ID, ProjectID: p.ID, Name: "D", Columns: []string{"text"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"h"}}
	var rows []models.DatasetRow
	for i := range n {
		rows = append(rows, models.DatasetRow{Position: i, ExternalID: fmt.Sprintf("s%d", i), Data: map[string]string{"text": strings.Repeat("x", 200)},
			Ratings: map[string]*float64{"h": ptr(float64(i % 5))}})
	}
	if err := db.CreateDataset(ctx, &ds, rows); err != nil {
		t.Fatal(err)
	}
	crit := evaluator.Criterion{Name: "Q", Lo: 1, Hi: 5, HumanColumn: "h", AnnotatorColumns: []string{"h@a", "h@b"}}
	run := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, Name: "r", Method: models.MethodBatchEval, Status: models.RunSucceeded,
		Settings: evaluator.Settings{Rounds: 1, BatchSize: 10}, RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{crit}}}
	if err := db.CreateRun(ctx, &run, nil); err != nil {
		t.Fatal(err)
	}
	const page = 100
	for _, tc := range []struct {
		name  string
		write func(x *exportSource, w *stopAfter) error
	}{
		{"csv", func(x *exportSource, w *stopAfter) error { return x.writeCSV(ctx, w) }},
		{"json", func(x *exportSource, w *stopAfter) error {
			rep, err := Build(ctx, db, ws.ID, run.ID)
			if err != nil {
				return err
			}
			return x.writeJSON(ctx, rep, w)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := openExport(ctx, db, ws.ID, run.ID)
			if err != nil {
				t.Fatal(err)
			}
			read := 0
			x.pageRows, x.onPage = page, func(rows int) { read += rows }
			err = tc.write(x, &stopAfter{n: 4 << 10})
			if !errors.Is(err, errStop) {
				t.Fatalf("export to a client that went away: %v, want its write error", err)
			}
			// What 64 KiB of write buffer holds, plus a page: far from n.
			if read == 0 || read > n/3 {
				t.Errorf("read %d rows of %d before the client went away, want at most %d", read, n, n/3)
			}
		})
	}
}
