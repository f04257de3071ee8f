package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/report"
	"github.com/batcheval/batcheval/runner"
	"github.com/batcheval/batcheval/web"
)

// sameFigures is reflect.DeepEqual with NaN equal to NaN (an undefined
// correlation or p-value) and a nil slice or map equal to an empty one
// (a stored summary's gob round trip drops the difference); where says
// where a and b first differ.
func sameFigures(a, b reflect.Value, path string) (ok bool, where string) {
	if a.Kind() != b.Kind() {
		return false, path + ": kinds differ"
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		if x == y || (math.IsNaN(x) && math.IsNaN(y)) {
			return true, ""
		}
		return false, fmt.Sprintf("%s: %v != %v", path, x, y)
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() != b.IsNil() {
			return false, path + ": one is nil"
		}
		if a.IsNil() {
			return true, ""
		}
		return sameFigures(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if ok, where := sameFigures(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); !ok {
				return false, where
			}
		}
		return true, ""
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false, fmt.Sprintf("%s: length %d != %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if ok, where := sameFigures(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); !ok {
				return false, where
			}
		}
		return true, ""
	case reflect.Map:
		if a.Len() != b.Len() {
			return false, fmt.Sprintf("%s: %d keys != %d", path, a.Len(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return false, fmt.Sprintf("%s[%v]: missing", path, k)
			}
			if ok, where := sameFigures(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); !ok {
				return false, where
			}
		}
		return true, ""
	case reflect.String:
		if a.String() != b.String() {
			return false, fmt.Sprintf("%s: %q != %q", path, a.String(), b.String())
		}
		return true, ""
	case reflect.Bool:
		if a.Bool() != b.Bool() {
			return false, fmt.Sprintf("%s: %v != %v", path, a.Bool(), b.Bool())
		}
		return true, ""
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if a.Int() != b.Int() {
			return false, fmt.Sprintf("%s: %d != %d", path, a.Int(), b.Int())
		}
		return true, ""
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if a.Uint() != b.Uint() {
			return false, fmt.Sprintf("%s: %d != %d", path, a.Uint(), b.Uint())
		}
		return true, ""
	}
	// Unexported fields of other kinds (a time's location) say nothing of
	// the figures.
	return true, ""
}

func mustSame(t *testing.T, what string, want, got any) {
	t.Helper()
	if ok, where := sameFigures(reflect.ValueOf(want), reflect.ValueOf(got), what); !ok {
		t.Errorf("%s differs from the full report's: %s", what, where)
	}
}

// fullReports are the reports every comparison page built before stored
// summaries (report.BuildWith, every score and row), the oracle here.
type fullReports map[int64]*report.Report

func (f fullReports) of(t *testing.T, db *models.DB, wsID, runID int64) *report.Report {
	t.Helper()
	if rep, ok := f[runID]; ok {
		return rep
	}
	rep, err := report.BuildWith(context.Background(), db, wsID, runID, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f[runID] = rep
	return rep
}

// oldFiguresOf is figuresOf as it was: the run's full report.
func oldFiguresOf(t *testing.T, db *models.DB, full fullReports, run models.Run) runFigures {
	f := runFigures{run: run, avgP: math.NaN(), avgS: math.NaN(), tokens: math.NaN(), calls: run.Calls,
		failed: run.BatchesFailed + run.MissingScores, partial: !run.Finished()}
	rep := full.of(t, db, run.WorkspaceID, run.ID)
	f.rep = rep
	f.avgP, f.avgS = averagePearson(rep), averageCoef(rep, func(c report.CriterionReport) float64 { return c.Spearman.Coef })
	f.rows = len(rep.Criteria[0].Samples)
	if f.rows > 0 {
		f.tokens = float64(run.PromptTokens+run.CompletionTokens) / float64(f.rows)
		if run.CostUSD != nil && !run.Simulated {
			c := *run.CostUSD / float64(f.rows)
			f.cost = &c
		}
	}
	return f
}

// oldCompareView is compareView as it was: both runs' full reports, every
// row's text.
func oldCompareView(repA, repB *report.Report, cmp comparison, offset, limit int) web.CompareView {
	repB = alignedCriterion(repB, cmp.criterion, cmp.criterionB)
	v := compareShell(cmp)
	// Each run's missing scores, from its full report.
	v.MissingA, v.MissingB = missingScores(repA, cmp.criterion), missingScores(repB, cmp.criterion)
	if cmp.criterion < len(repA.Criteria) && repA.Criteria[cmp.criterion].HasHuman {
		v.HumanA = &repA.Criteria[cmp.criterion]
	}
	if cmp.criterion < len(repB.Criteria) && repB.Criteria[cmp.criterion].HasHuman {
		v.HumanB = &repB.Criteria[cmp.criterion]
	}
	samplesB := map[string]report.SampleResult{}
	for _, s := range repB.Criteria[cmp.criterion].Samples {
		samplesB[report.SampleKey(s, v.SameDataset)] = s
	}
	var xs, ys []*float64
	for _, s := range repA.Criteria[cmp.criterion].Samples {
		sb, ok := samplesB[report.SampleKey(s, v.SameDataset)]
		if !ok {
			v.Unmatched++
			continue
		}
		row := web.CompareRow{RowID: s.RowID, ExternalID: s.ExternalID, Excerpt: web.RunExcerpt(web.ExcerptField(s.Fields), 110),
			Human: s.Human, A: s.Final, B: sb.Final, UnitA: unit(s.Final, cmp.critA), UnitB: unit(sb.Final, cmp.critB)}
		row.Diff, row.DiffDecimal = unitDifference(row.UnitA, row.UnitB)
		xs, ys = append(xs, s.Final), append(ys, sb.Final)
		v.Rows = append(v.Rows, row)
	}
	sort.SliceStable(v.Rows, func(i, j int) bool {
		a, b := v.Rows[i].Diff, v.Rows[j].Diff
		if a == nil || b == nil {
			return a != nil && b == nil
		}
		return math.Abs(*a) > math.Abs(*b)
	})
	v.Total = len(v.Rows)
	v.Offset, v.PageSize = min(max(offset, 0), v.Total), limit
	v.Rows = v.Rows[v.Offset:min(len(v.Rows), v.Offset+limit)]
	px, py, missing := stats.Pairs(xs, ys)
	v.Pearson, v.Spearman = stats.Pearson(px, py), stats.Spearman(px, py)
	v.Pearson.Missing, v.Spearman.Missing = missing, missing
	v.Reading = stats.Interpret(stats.MethodPearson, v.Pearson)
	if cmp.Mismatch != "" {
		v.Reading = mismatchReading(cmp)
	}
	if v.HumanA != nil && v.HumanB != nil {
		v.HasHuman = true
		if v.DifferentCriteria {
			v.AgreementReading = differentCriteriaReading
		} else {
			v.Agreement = report.CompareCriterion(repA, repB, cmp.criterion, v.SameDataset)
			v.AgreementReading = agreementReading(v.Agreement, cmp.a.Name, cmp.b.Name)
			v.PairedNote = pairedSamplesNote(v.Agreement, v.HumanA, v.HumanB)
		}
	}
	return v
}

// noisyCopy stores a copy of ds as a noisy copy is: new rows with the same
// sample ids, here in reverse order, without the sample "s3" and with one
// sample ("extra") the original lacks, so pairing by id is exercised
// (order, a sample of A without counterpart, one of B without).
func noisyCopy(t *testing.T, db *models.DB, ds models.Dataset, n int) (models.Dataset, []int64) {
	t.Helper()
	cp := ds
	cp.ID, cp.Name = 0, ds.Name+" (noisy)"
	cp.ParentDatasetID = &ds.ID
	mustB(t, db.Gorm.Create(&cp).Error)
	var rows []models.DatasetRow
	pos := 0
	for i := n - 1; i >= 0; i-- {
		if i == 3 {
			continue
		}
		c, f := float64(1+i%5), float64(1+(i*7)%5)
		rows = append(rows, models.DatasetRow{DatasetID: cp.ID, Position: pos, ExternalID: fmt.Sprintf("s%d", i),
			Data: map[string]string{"context": fmt.Sprintf("Dialogue %d, noisy", i), "response": "A noisy reply"}, Ratings: map[string]*float64{"coherence": &c, "fluency": &f}})
		pos++
	}
	one := 3.0
	rows = append(rows, models.DatasetRow{DatasetID: cp.ID, Position: pos, ExternalID: "extra",
		Data: map[string]string{"context": "extra", "response": "extra"}, Ratings: map[string]*float64{"coherence": &one, "fluency": &one}})
	mustB(t, db.Gorm.CreateInBatches(&rows, exportBenchChunk).Error)
	cp.RowCount = len(rows)
	mustB(t, db.Gorm.Model(&cp).Update("row_count", cp.RowCount).Error)
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return cp, ids
}

// TestComparisonsFromStoredResults builds runs of one dataset and of a
// noisy copy, stores their summaries as the runner does, and checks that
// the experiment page's figures and headline tests and the compare page's
// every figure, read from the stored summaries and per-sample results, are
// exactly those of the full reports the pages built before.
func TestComparisonsFromStoredResults(t *testing.T) {
	parallelTest(t)
	const n = 240
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, p, ds, a, b := synthPair(t, db, "stored pairs", n)
		noisy, noisyIDs := noisyCopy(t, db, ds, n)
		c := synthRunOn(t, db, p, noisy, noisyIDs, 2)
		exp := models.Experiment{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds.ID, Name: "stored", CreatedAt: time.Now()}
		mustB(t, db.CreateExperiment(ctx, &exp))
		for _, id := range []int64{a, b, c} {
			mustB(t, report.StoreStats(ctx, db, ws.ID, id))
			mustB(t, db.SetRunExperiment(ctx, ws.ID, id, exp.ID))
		}
		r, err := runner.New(runner.Config{DB: db, Log: slog.New(slog.DiscardHandler)})
		mustB(t, err)
		h, err := New(db, r, slog.New(slog.DiscardHandler), ws)
		mustB(t, err)
		ctx = context.WithValue(ctx, principalKey{}, Principal{Kind: LocalUser, Workspace: ws, Role: models.RoleOwner})
		full := fullReports{}

		// The compare page, every pair and criterion, both ways round.
		for _, pair := range [][2]int64{{a, b}, {b, a}, {a, c}, {c, b}} {
			for criterion := range 2 {
				t.Run(fmt.Sprintf("compare %d-%d criterion %d", pair[0], pair[1], criterion), func(t *testing.T) {
					var cmp comparison
					var err error
					if cmp.a, err = db.FindRun(ctx, ws.ID, pair[0]); err != nil {
						t.Fatal(err)
					}
					if cmp.b, err = db.FindRun(ctx, ws.ID, pair[1]); err != nil {
						t.Fatal(err)
					}
					cmp.dsA, _ = db.FindDataset(ctx, ws.ID, cmp.a.DatasetID)
					cmp.dsB, _ = db.FindDataset(ctx, ws.ID, cmp.b.DatasetID)
					cmp.criterion, cmp.criterionB = criterion, criterion
					cmp.critA, cmp.critB = cmp.a.RubricSnapshot.Criteria[criterion], cmp.b.RubricSnapshot.Criteria[criterion]
					want := oldCompareView(full.of(t, db, ws.ID, pair[0]), full.of(t, db, ws.ID, pair[1]), cmp, 10, 2*n)
					h.reports = newReportCache() // computed here, not read from the cache
					got, err := h.compareView(ctx, cmp, 10, 2*n, true)
					if err != nil {
						t.Fatal(err)
					}
					// The figures of each run's own agreement: the stored
					// summary has no samples, the full report has them all.
					for _, hc := range []**report.CriterionReport{&want.HumanA, &want.HumanB} {
						if *hc != nil {
							cp := **hc
							cp.Samples = nil
							*hc = &cp
						}
					}
					mustSame(t, "compare view", want, got)
					if got.Total < n-2 || len(got.Rows) == 0 || !got.HasHuman || len(got.Agreement) != 3 {
						t.Fatalf("compare view: %d matched, %d rows, human %v, %d differences: the test compares too little",
							got.Total, len(got.Rows), got.HasHuman, len(got.Agreement))
					}
					if cmp.dsA.ID != cmp.dsB.ID && got.Unmatched != 1 {
						t.Errorf("pairing by sample id: %d of A's samples unmatched, want 1 (s3)", got.Unmatched)
					}
					// Read again from the cache: the same.
					again, err := h.compareView(ctx, cmp, 10, 2*n, true)
					mustB(t, err)
					mustSame(t, "compare view from the cache", want, again)
				})
			}
		}

		// The experiment page: the table, the headline and its paired tests.
		runs, err := db.ListExperimentRuns(ctx, ws.ID, exp.ID)
		mustB(t, err)
		h.reports = newReportCache()
		var gotFigs, wantFigs []runFigures
		for _, run := range runs {
			f, err := h.figuresOf(ctx, run)
			mustB(t, err)
			gotFigs = append(gotFigs, f)
			wantFigs = append(wantFigs, oldFiguresOf(t, db, full, run))
		}
		mustSame(t, "experiment rows", experimentRows(wantFigs, 2), experimentRows(gotFigs, 2))
		mustSame(t, "experiment summary", experimentSummary(wantFigs), experimentSummary(gotFigs))
		wantChart, wantNote := experimentChart(wantFigs)
		gotChart, gotNote := experimentChart(gotFigs)
		mustSame(t, "experiment chart", wantChart, gotChart)
		mustSame(t, "experiment chart note", wantNote, gotNote)
		oldCompare := func(x, y runFigures) stats.AveragedDifference {
			return report.CompareAverage(x.rep, y.rep, x.run.DatasetID == y.run.DatasetID)
		}
		wantCs := rankContenders(wantFigs, oldCompare)
		scores := h.pairedScores(ctx)
		gotCs := rankContenders(gotFigs, func(x, y runFigures) stats.AveragedDifference {
			d, err := h.compareAverage(scores, x, y, nil)
			mustB(t, err)
			return d
		})
		if len(wantCs) != 3 || len(gotCs) != 3 {
			t.Fatalf("%d and %d contenders, want 3", len(wantCs), len(gotCs))
		}
		for i := range wantCs {
			if wantCs[i].fig.run.ID != gotCs[i].fig.run.ID {
				t.Fatalf("contender %d: run %d, want %d", i, gotCs[i].fig.run.ID, wantCs[i].fig.run.ID)
			}
			mustSame(t, fmt.Sprintf("paired test %d", i), wantCs[i].test, gotCs[i].test)
			mustSame(t, fmt.Sprintf("Holm-adjusted p %d", i), wantCs[i].adjP, gotCs[i].adjP)
		}
		if d := gotCs[1].test; math.IsNaN(d.Diff) || math.IsNaN(d.P) || d.Criteria != 2 {
			t.Errorf("the paired test compares nothing: %+v", d)
		}
		h.reports = newReportCache()
		gotVerdict, err := h.experimentVerdict(ctx, gotFigs, nil)
		mustB(t, err)
		mustSame(t, "experiment verdict", verdictOf(wantCs, repeatBands(wantFigs)), gotVerdict)

		// Past pairLiveSamples the tests are computed in the background:
		// the first view says so, a view after it has the same figures.
		h.pairLiveSamples = n / 2
		h.reports = newReportCache()
		pending, err := h.experimentVerdict(ctx, gotFigs, nil)
		mustB(t, err)
		if !pending.TestsPending || pending.Text != "" || len(pending.Tests) != 0 {
			t.Errorf("first verdict of large runs = %+v, want the tests pending and no headline", pending)
		}
		h.reports.settling.Wait()
		gotVerdict, err = h.experimentVerdict(ctx, gotFigs, nil)
		mustB(t, err)
		mustSame(t, "experiment verdict computed in the background", verdictOf(wantCs, repeatBands(wantFigs)), gotVerdict)

		var cmp comparison
		cmp.a, _ = db.FindRun(ctx, ws.ID, a)
		cmp.b, _ = db.FindRun(ctx, ws.ID, c)
		cmp.dsA, _ = db.FindDataset(ctx, ws.ID, cmp.a.DatasetID)
		cmp.dsB, _ = db.FindDataset(ctx, ws.ID, cmp.b.DatasetID)
		cmp.critA, cmp.critB = cmp.a.RubricSnapshot.Criteria[0], cmp.b.RubricSnapshot.Criteria[0]
		first, err := h.compareView(ctx, cmp, 0, 50, true)
		mustB(t, err)
		if first.AgreementPending == nil || first.Agreement != nil || first.AgreementReading != "" {
			t.Errorf("first compare view of large runs: pending %v, %d differences, reading %q; want pending only",
				first.AgreementPending, len(first.Agreement), first.AgreementReading)
		}
		h.reports.settling.Wait()
		later, err := h.compareView(ctx, cmp, 0, 50, true)
		mustB(t, err)
		want := oldCompareView(full.of(t, db, ws.ID, a), full.of(t, db, ws.ID, c), cmp, 0, 50)
		mustSame(t, "agreement computed in the background", want.Agreement, later.Agreement)
		mustSame(t, "agreement reading computed in the background", want.AgreementReading, later.AgreementReading)
		if later.AgreementPending != nil {
			t.Error("the agreement is still pending after its computation ended")
		}

		// Another choice of human ratings for run a drops its comparisons.
		rc := h.reports
		if len(rc.matched) == 0 || len(rc.criterionPairs) == 0 || len(rc.pairs) == 0 {
			t.Fatalf("nothing cached to drop: %d pairings, %d criterion tests, %d average tests", len(rc.matched), len(rc.criterionPairs), len(rc.pairs))
		}
		h.forgetReports(a)
		for k := range rc.matched {
			if k.a == a || k.b == a {
				t.Errorf("pairing %v kept after run %d's ratings changed", k, a)
			}
		}
		for k := range rc.criterionPairs {
			if k.a == a || k.b == a {
				t.Errorf("criterion test %v kept after run %d's ratings changed", k, a)
			}
		}
		for k := range rc.pairs {
			if k.a == a || k.b == a {
				t.Errorf("average test %v kept after run %d's ratings changed", k, a)
			}
		}
	})
}

// TestComparisonPagesWhileResultsArePrepared: while a large finished run's
// summary is built in the background (held here), its experiment page,
// compare page and shared comparison answer at once with a "Preparing
// results" note that reloads the page, the experiment page names no best
// run, and the API's experiment answers 503 with Retry-After; so does the
// run's share link. Once built, every page shows the figures.
func TestComparisonPagesWhileResultsArePrepared(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// The other run of the comparison, finished with its summary stored.
		other := env.waitRun(env.launch(env.demo().launchForm("1", "10")), 60*time.Second)
		run := unstoredFinishedRun(t, env, true)
		hb := holdBuilds(env)
		ctx := context.Background()
		exp := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: run.ProjectID, DatasetID: run.DatasetID, Name: "large", CreatedAt: time.Now()}
		mustB(t, env.db.CreateExperiment(ctx, &exp))
		mustB(t, env.db.SetRunExperiment(ctx, env.ws.ID, run.ID, exp.ID))
		mustB(t, env.db.SetRunExperiment(ctx, env.ws.ID, other.ID, exp.ID))
		env.h.forgetReports(run.ID)
		_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareCompare, RunID: run.ID, OtherRunID: other.ID})
		mustB(t, err)
		_, runToken, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: run.ID})
		mustB(t, err)
		owner := env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		api := newAPIClient(t, env)
		ck := env.sessionCookie(owner)
		expPage := fmt.Sprintf("/experiments/%d", exp.ID)
		cmpPage := fmt.Sprintf("/compare?a=%d&b=%d", run.ID, other.ID)
		refresh := `<meta http-equiv="refresh" content="` + fmt.Sprint(preparingRetrySeconds) + `"`

		for _, path := range []string{expPage, cmpPage, "/s/" + token, "/s/" + runToken} {
			rec := env.within(t, path, ck)
			body := rec.Body.String()
			if rec.Code != 200 {
				t.Fatalf("GET %s while preparing: %d %.500s", path, rec.Code, body)
			}
			for _, want := range []string{`data-testid="results-preparing"`, refresh, run.Name} {
				if !strings.Contains(body, want) {
					t.Errorf("GET %s while preparing lacks %q", path, want)
				}
			}
			if strings.Contains(body, `data-testid="experiment-verdict"`) || strings.Contains(body, `data-testid="agreement-table"`) {
				t.Errorf("GET %s while preparing shows a verdict", path)
			}
		}
		assertPreparing(t, "API experiment", api.get(fmt.Sprintf("/api/v1/experiments/%d", exp.ID), tok))
		// The build runs in the background and may reach the builder only
		// after the pages have answered (it waits for one of the slots the
		// paired comparisons also take): wait for it before counting.
		select {
		case <-hb.started:
		case <-time.After(10 * time.Second):
			t.Fatal("the pages started no build")
		}
		if n := hb.calls.Load(); n != 1 {
			t.Errorf("%d builds started for one summary, want 1", n)
		}

		close(hb.release)
		env.h.reports.settling.Wait()
		for _, path := range []string{expPage, cmpPage, "/s/" + token, "/s/" + runToken} {
			rec := env.within(t, path, ck)
			if body := rec.Body.String(); rec.Code != 200 || strings.Contains(body, `data-testid="results-preparing"`) {
				t.Errorf("GET %s once built: %d, still preparing: %v", path, rec.Code, strings.Contains(body, `data-testid="results-preparing"`))
			}
		}
		if rec := env.within(t, cmpPage, ck); !strings.Contains(rec.Body.String(), `data-testid="agreement-table"`) {
			t.Errorf("the compare page once built has no paired tests")
		}
		if rec := api.get(fmt.Sprintf("/api/v1/experiments/%d", exp.ID), tok); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"average_pearson":`) {
			t.Errorf("API experiment once built: %d %.300s", rec.Code, rec.Body.String())
		}
	})
}

// TestSharedRunPageFromStoredSummary: a shared finished run's page, drawn
// from its stored summary and one page of stored samples, is byte for byte
// the page drawn from the full report when the run fits on one page, and a
// larger run's page lists one page of samples with a pager.
func TestSharedRunPageFromStoredSummary(t *testing.T) {
	serialTest(t) // sets sharedPageSize
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := env.waitRun(env.launch(env.demo().launchForm("2", "5")), 60*time.Second)
		ctx := env.localCtx()
		draw := func(v web.SharedRunView) string {
			var buf strings.Builder
			if err := web.SharedRunPage(v).Render(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			return buf.String()
		}
		facts, err := env.h.reportFacts(ctx, run)
		mustB(t, err)
		full, err := report.BuildWith(ctx, env.db, env.ws.ID, run.ID, report.Options{})
		mustB(t, err)
		sp := web.SharedPage{Base: "/s/token", Title: run.Name}
		want := draw(web.SharedRunView{SharedPage: sp, ReportFacts: facts, Report: full})
		env.h.forgetReports(run.ID)
		v, err := env.h.sharedRunView(ctx, run, 1)
		mustB(t, err)
		if v.SamplePages != 1 || v.SampleTotal != len(full.Criteria[0].Samples) {
			t.Fatalf("%d pages of %d samples, want 1 of %d", v.SamplePages, v.SampleTotal, len(full.Criteria[0].Samples))
		}
		v.SharedPage, v.ReportFacts = sp, facts
		got := draw(v)
		if got != want {
			i := 0
			for i < min(len(got), len(want)) && got[i] == want[i] {
				i++
			}
			t.Errorf("the shared page from storage differs from the full report's at byte %d:\nwant …%.300s\ngot  …%.300s", i, want[max(0, i-100):], got[max(0, i-100):])
		}
		if !strings.Contains(got, `data-testid="sample-row"`) || !strings.Contains(got, `data-testid="scatter"`) {
			t.Errorf("the shared page lists no samples or draws no scatter")
		}

		// Two samples a page: the second page lists the third and fourth
		// samples, in file order, and links both ways.
		was := sharedPageSize
		sharedPageSize = 2
		defer func() { sharedPageSize = was }()
		v, err = env.h.sharedRunView(ctx, run, 2)
		mustB(t, err)
		if n := len(v.Report.Criteria[0].Samples); n != 2 || v.SamplePages != (v.SampleTotal+1)/2 {
			t.Fatalf("page 2: %d samples, %d pages of %d", n, v.SamplePages, v.SampleTotal)
		}
		for k, s := range v.Report.Criteria[0].Samples {
			if w := full.Criteria[0].Samples[2+k]; s.RowID != w.RowID || s.ExternalID != w.ExternalID || *s.Final != *w.Final {
				t.Errorf("page 2 sample %d: row %d %q, want row %d %q", k, s.RowID, s.ExternalID, w.RowID, w.ExternalID)
			}
		}
		v.SharedPage, v.ReportFacts = sp, facts
		page := draw(v)
		for _, want := range []string{`data-testid="shared-samples-pager"`, `?page=1#samples`, `?page=3#samples`} {
			if !strings.Contains(page, want) {
				t.Errorf("page 2 lacks %q", want)
			}
		}
	})
}

// synthPair is a project of its own with a synthetic dataset of n samples
// and two finished runs of it (seeds 0 and 1).
func synthPair(t *testing.T, db *models.DB, name string, n int) (ws models.Workspace, p models.Project, ds models.Dataset, a, b int64) {
	t.Helper()
	ctx := context.Background()
	ws, err := db.EnsureDefaultWorkspace(ctx)
	mustB(t, err)
	p = models.Project{WorkspaceID: ws.ID, Name: name}
	mustB(t, db.CreateProject(ctx, &p))
	ds, ids := synthDataset(t, db, p, n)
	return ws, p, ds, synthRunOn(t, db, p, ds, ids, 0), synthRunOn(t, db, p, ds, ids, 1)
}
