package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestReviewerAgreementWithTheJudge: on a finished demo run, browser
// reviewers with histories rate the first criterion, and the run's
// alignment page shows each one's agreement with the judge. Every figure
// is recomputed here from the stored reviews (each reviewer's latest
// rating of a sample) and the judge's final scores as the run's JSON
// export gives them, by the textbook definitions written in this package's
// tests (Pearson, Spearman as Pearson on mid-ranks, Kendall's τ-b over
// all pairs), and Pearson's interval below 50 samples by Fisher's z
// (tanh(atanh r ± 1.96/√(n−3))), independently of evaluator/stats:
//   - Ann rates 12 samples (one twice: the second counts) and rates a 13th
//     then withdraws it: 12 rated;
//   - Bob rates 2: every figure "undefined", too few samples, not 0;
//   - Cid gives 5 samples the same rating: "undefined", his ratings are
//     constant;
//   - a reviewer named with markup is shown escaped;
//   - Fay, an account whose ratings an owner excluded, is listed, marked.
//
// It failed before: the page had no per-reviewer figures.
func TestReviewerAgreementWithTheJudge(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		run, crit, rows, fay, viewer := reviewersSetUp(t, env, "reviewers")
		lo, hi := crit.Lo, crit.Hi
		levels := int(hi-lo) + 1
		rate := func(who string, user *int64, row int, score *float64) {
			t.Helper()
			r := models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: run.DatasetID, RowID: rows[row].ID, Criterion: crit.Name,
				HumanColumn: crit.HumanColumn, Reviewer: who, UserID: user, RunID: &run.ID, Lo: lo, Hi: hi, Score: score}
			if score == nil {
				r.Comment = "withdrawn"
			}
			_, err := env.db.AddReviewRating(ctx, r)
			must(t, err)
		}
		at := func(k int) *float64 { v := lo + float64(k%levels); return &v }
		const eve = `<i>Eve</i> & "co"`
		rate("Ann", nil, 0, at(2)) // replaced below
		for i := range 12 {
			rate("Ann", nil, i, at(i*7/3))
		}
		rate("Ann", nil, 12, at(1))
		rate("Ann", nil, 12, nil)
		rate("Bob", nil, 0, at(0))
		rate("Bob", nil, 1, at(2))
		for i := 2; i < 7; i++ {
			rate("Cid", nil, i, at(1))
		}
		for i := 3; i < 12; i++ {
			rate(eve, nil, i, at(i*i))
		}
		for i := range 9 {
			rate(fay.Email, &fay.ID, i, at(i+1))
		}
		must(t, env.db.SetRatingsExcluded(ctx, env.ws.ID, fay.ID, true, "owner"))

		// The judge's final scores, from the run's export.
		rec := env.getAs(fmt.Sprintf("/runs/%d/export.json", run.ID), viewer)
		if rec.Code != http.StatusOK {
			t.Fatalf("export: %d", rec.Code)
		}
		var ex struct {
			Report struct {
				Criteria []struct {
					Samples []struct {
						Final *float64 `json:"final"`
					}
				}
			}
		}
		must(t, json.Unmarshal(rec.Body.Bytes(), &ex))
		finals := ex.Report.Criteria[0].Samples
		if len(finals) != len(rows) {
			t.Fatalf("%d samples exported, %d rows", len(finals), len(rows))
		}
		// Each reviewer's latest review of each sample, from every stored
		// review (oldest first).
		all, err := env.db.ListDatasetReviews(ctx, env.ws.ID, run.DatasetID)
		must(t, err)
		rowIndex := map[int64]int{}
		for i, r := range rows {
			rowIndex[r.ID] = i
		}
		latest := map[string]map[int]*float64{}
		for _, r := range all {
			name := r.Reviewer
			if latest[name] == nil {
				latest[name] = map[int]*float64{}
			}
			latest[name][rowIndex[r.RowID]] = r.Score
		}
		type figures struct {
			rated, n            int
			pearson, spearman   float64
			kendall, ciLo, ciHi float64
		}
		want := map[string]figures{}
		for name, byRow := range latest {
			var f figures
			var x, y []float64
			for i := range rows {
				s, ok := byRow[i]
				if !ok || s == nil {
					continue
				}
				f.rated++
				if finals[i].Final != nil {
					x, y = append(x, *finals[i].Final), append(y, *s)
				}
			}
			f.n = len(x)
			f.pearson, f.spearman, f.kendall = math.NaN(), math.NaN(), math.NaN()
			f.ciLo, f.ciHi = math.NaN(), math.NaN()
			if f.n >= 3 && !constant(x) && !constant(y) {
				f.pearson = textbookPearson(x, y)
				f.spearman = textbookPearson(midRanks(x), midRanks(y))
				f.kendall = kendallTauB(x, y)
				if f.n > 3 && math.Abs(f.pearson) < 1 {
					z, se := math.Atanh(f.pearson), 1/math.Sqrt(float64(f.n-3))
					f.ciLo, f.ciHi = math.Tanh(z-1.96*se), math.Tanh(z+1.96*se)
				}
			}
			want[name] = f
		}
		if w := want["Ann"]; w.rated != 12 || math.IsNaN(w.pearson) {
			t.Fatalf("the history should leave Ann 12 rated samples with a defined Pearson r: %+v", w)
		}

		// The run page's human ratings panel, which a team reads, leads there.
		if rp := env.getAs(fmt.Sprintf("/runs/%d", run.ID), viewer).Body.String(); !strings.Contains(rp, fmt.Sprintf(`href="/runs/%d/align#reviewers" data-testid="run-reviewer-agreement"`, run.ID)) {
			t.Errorf("the run page does not link each reviewer's agreement")
		}
		page := env.getAs(fmt.Sprintf("/runs/%d/align", run.ID), viewer)
		if page.Code != http.StatusOK {
			t.Fatalf("alignment page: %d", page.Code)
		}
		body := page.Body.String()
		if strings.Contains(body, "<i>Eve</i>") {
			t.Errorf("a reviewer's name reached the page unescaped")
		}
		trs := regexp.MustCompile(`(?s)<tr data-testid="reviewer-agreement">(.*?)</tr>`).FindAllStringSubmatch(body, -1)
		if len(trs) != len(want) {
			t.Fatalf("%d reviewers on the page, want %d:\n%s", len(trs), len(want), body)
		}
		cell := func(tr, id string) string {
			m := regexp.MustCompile(`data-testid="` + id + `">([^<]*)<`).FindStringSubmatch(tr)
			if m == nil {
				return "(none)"
			}
			return m[1]
		}
		seen := map[string]bool{}
		for _, m := range trs {
			tr := m[1]
			name := ""
			for n := range want {
				shown := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;").Replace(n)
				// A name typed, or an account's email beside its name.
				if strings.Contains(tr, "<strong>"+shown+"</strong>") || strings.Contains(tr, `data-testid="review-reviewer-email">`+shown+"</span>") {
					name = n
				}
			}
			if name == "" {
				t.Errorf("a row names no reviewer as the review lists do: %s", tr)
				continue
			}
			seen[name] = true
			w := want[name]
			if got := cell(tr, "reviewer-rated"); got != strconv.Itoa(w.rated) {
				t.Errorf("%s: %s samples rated, want %d", name, got, w.rated)
			}
			if got := cell(tr, "reviewer-n"); got != strconv.Itoa(w.n) {
				t.Errorf("%s: n %s, want %d", name, got, w.n)
			}
			for _, c := range []struct {
				id   string
				want float64
			}{{"reviewer-pearson", w.pearson}, {"reviewer-spearman", w.spearman}, {"reviewer-kendall", w.kendall}} {
				got := cell(tr, c.id)
				if math.IsNaN(c.want) {
					if got != "undefined" {
						t.Errorf("%s: %s reads %q, want undefined", name, c.id, got)
					}
					continue
				}
				if v, err := strconv.ParseFloat(pageNumber(got), 64); err != nil || math.Abs(v-c.want) > 0.0005 {
					t.Errorf("%s: %s reads %q, recomputed %.6f", name, c.id, got, c.want)
				}
			}
			ci := cell(tr, "reviewer-pearson-ci")
			if math.IsNaN(w.ciLo) {
				if ci != "undefined" {
					t.Errorf("%s: Pearson's interval reads %q, want undefined", name, ci)
				}
			} else {
				lo, hi, ok := strings.Cut(ci, " to ")
				l, errL := strconv.ParseFloat(pageNumber(lo), 64)
				h, errH := strconv.ParseFloat(pageNumber(hi), 64)
				if !ok || errL != nil || errH != nil || math.Abs(l-w.ciLo) > 0.0005 || math.Abs(h-w.ciHi) > 0.0005 {
					t.Errorf("%s: Pearson's interval reads %q, recomputed %.4f to %.4f", name, ci, w.ciLo, w.ciHi)
				}
			}
			why := cell(tr, "reviewer-undefined-why")
			switch name {
			case "Bob":
				if !strings.HasPrefix(why, "too few samples") {
					t.Errorf("Bob (2 samples): says %q, want too few samples", why)
				}
			case "Cid":
				if !strings.Contains(why, "same rating") {
					t.Errorf("Cid (constant ratings): says %q, want the same rating", why)
				}
			case fay.Email:
				if !strings.Contains(tr, `data-testid="reviewer-excluded"`) {
					t.Errorf("Fay's ratings are excluded, her row does not say so: %s", tr)
				}
			}
			if name != fay.Email && strings.Contains(tr, `data-testid="reviewer-excluded"`) {
				t.Errorf("%s is marked excluded", name)
			}
		}
		if len(seen) != len(want) {
			t.Errorf("reviewers shown %v, want %d", seen, len(want))
		}
	})
}

// constant reports whether every value of xs is the same.
func constant(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// pageNumber is a number as a page writes it (a true minus, a plus sign)
// in Go's syntax.
func pageNumber(s string) string {
	return strings.NewReplacer("−", "-", "+", "").Replace(strings.TrimSpace(s))
}

// reviewersSetUp is the reviewer-table tests' start: a finished BatchEval
// run of the demo dataset named name, its first criterion, the dataset's
// rows, Fay (a reviewer account) and a viewer's session cookie (with an
// account the instance signs people in, so the pages are read as a
// viewer).
func reviewersSetUp(t *testing.T, env *testEnv, name string) (models.Run, evaluator.Criterion, []models.DatasetRow, models.User, *http.Cookie) {
	t.Helper()
	d := env.demo()
	run := env.waitRun(env.startRun(d.dataset, name, models.MethodBatchEval, nil).ID, 60*time.Second)
	if run.Status != models.RunSucceeded {
		t.Fatalf("run: %s (%s)", run.Status, run.Error)
	}
	rows, err := env.db.ListDatasetRows(context.Background(), d.dataset.ID, 0, 0)
	must(t, err)
	fay := env.createUser(env.ws.ID, "fay@example.org", models.RoleReviewer)
	viewer := env.sessionCookie(env.createUser(env.ws.ID, "vic@example.org", models.RoleViewer))
	return run, run.RubricSnapshot.Criteria[0], rows, fay, viewer
}
