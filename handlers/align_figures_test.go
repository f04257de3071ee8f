package handlers

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// fedRecord is one FED dialogue as the shared file holds it.
type fedRecord struct {
	ID      string             `json:"id"`
	System  string             `json:"system"`
	Context string             `json:"context"`
	Scores  map[string]float64 `json:"scores"`
}

// readFED reads the first n FED dialogues, skipping the test when the
// shared datasets are absent.
func readFED(t *testing.T, n int) []fedRecord {
	t.Helper()
	f, err := os.Open(fedDialogPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dataset %s is absent; this test needs the shared datasets checkout", fedDialogPath)
	}
	must(t, err)
	defer f.Close()
	var out []fedRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() && len(out) < n {
		var r fedRecord
		must(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	must(t, sc.Err())
	if len(out) < n {
		t.Fatalf("FED has %d rows, want at least %d", len(out), n)
	}
	return out
}

// storedFinals are a run's final scores of criterion ci by sample id,
// recomputed from its stored round scores: the mean of the readable ones
// (method.md, BatchEval step 4); a sample with none is absent.
func storedFinals(t *testing.T, env *testEnv, runID int64, ci int) map[string]float64 {
	t.Helper()
	var scores []models.RunScore
	must(t, env.db.Gorm.Where("run_id = ? AND criterion_index = ?", runID, ci).Find(&scores).Error)
	run, err := env.db.GetRun(context.Background(), runID)
	must(t, err)
	rows, err := env.db.ListDatasetRows(context.Background(), run.DatasetID, 0, 0)
	must(t, err)
	ext := map[int64]string{}
	for _, r := range rows {
		ext[r.ID] = r.ExternalID
	}
	sum, n := map[string]float64{}, map[string]int{}
	for _, s := range scores {
		if s.Score != nil {
			sum[ext[s.RowID]] += *s.Score
			n[ext[s.RowID]]++
		}
	}
	out := map[string]float64{}
	for id, k := range n {
		out[id] = sum[id] / float64(k)
	}
	return out
}

// TestAlignmentPageFiguresRecomputed starts an alignment from a BatchEval
// run of the simulated judge on the first 60 FED dialogues, for each of
// two criteria: Coherent judged on 0 to 2, the humans' own scale (their
// ratings compared as given), and Overall judged on the paper's 1 to 3,
// whose human ratings (0.4 to 4) are on another scale and, as the run's
// report says, mapped linearly from their lowest and highest values onto
// the judge's. It recomputes, sharing no code with the product, every
// figure the alignment page shows: the split's sizes; the calibration
// disagreements (each sample's final score as the mean of its stored round
// scores, its human rating on the judge's scale, judge − humans, the
// largest first) and the draft's examples, labelled with the humans'
// rating on the judge's scale; and, once the draft is accepted, the
// held-out before/after table: Pearson r, Spearman ρ (Pearson of average
// ranks) and Kendall τ-b (every pair counted) of each held-out run's
// finals with the humans, their difference after − before, its 95%
// interval (heldOutIntervalOracle) and n.
func TestAlignmentPageFiguresRecomputed(t *testing.T) {
	const n = 60
	fed := readFED(t, n)
	type critCase struct {
		name   string
		lo, hi float64
	}
	crits := []critCase{{"Coherent", 0, 2}, {"Overall", 1, 3}}
	// The figures each database's alignment pages show: the same inputs
	// and seeds must give the same numbers on both (held-out split,
	// bootstrap intervals and all), not just numbers near the oracle's.
	var mu sync.Mutex
	byDB := map[string]map[string]string{}
	eachDB(t, func(t *testing.T, env *testEnv) {
		db := t.Name()
		ctx := context.Background()
		rows := make([]models.DatasetRow, n)
		for i, r := range fed {
			ratings := map[string]*float64{}
			for _, c := range crits {
				v := r.Scores[c.name]
				ratings[c.name] = &v
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "system": r.System, "context": r.Context}, Ratings: ratings}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED 60", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "system", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: []string{"Coherent", "Overall"}}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		var ec []evaluator.Criterion
		for _, c := range crits {
			ec = append(ec, evaluator.Criterion{Name: c.name, Description: "Is the dialogue " + strings.ToLower(c.name) + "?", Lo: c.lo, Hi: c.hi, HumanColumn: c.name,
				Levels: evaluator.Levels{Low: "poor", Middle: "fair", High: "good"}})
		}
		rub := models.Rubric{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED rubric", Task: "Rate the dialogues.",
			Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, Criteria: ec}
		must(t, env.db.SaveRubric(ctx, &rub))
		judge := env.demo().judge
		form := url.Values{"dataset": {strconv.FormatInt(ds.ID, 10)}, "rubric": {strconv.FormatInt(rub.ID, 10)},
			"judge": {strconv.FormatInt(judge.ID, 10)}, "criteria_of": {strconv.FormatInt(rub.ID, 10)}, "criteria": {"0", "1"},
			"rounds": {"2"}, "batch_size": {"10"}, "temperature": {"0.2"}, "top_p": {"0.9"}, "seed": {"1"},
			"procedure": {"two"}, "composition": {"heterogeneous"}, "sort_key": {"previous"}, "scoring": {"decimal"}}
		for _, method := range []string{"batcheval", "llmeval"} {
			form.Set("method", method)
			src := env.waitRun(env.launch(form), 60*time.Second)
			if src.Status != models.RunSucceeded {
				t.Fatalf("%s source run %s (%s)", method, src.Status, src.Error)
			}
			for ci, c := range crits {
				t.Run(method+" "+c.name, func(t *testing.T) {
					figures := alignRecomputed(t, env, ds, src, fed, ci, c.name, c.lo, c.hi)
					if len(strings.Fields(figures)) < 15 {
						t.Errorf("too few figures to compare across databases: %q", figures)
					}
					mu.Lock()
					defer mu.Unlock()
					if byDB[db] == nil {
						byDB[db] = map[string]string{}
					}
					byDB[db][method+" "+c.name] = figures
				})
			}
		}
	})
	if len(byDB) < 2 {
		return // one database only: nothing to compare across databases
	}
	var dbs []string
	for d := range byDB {
		dbs = append(dbs, d)
	}
	for what, x := range byDB[dbs[0]] {
		if y := byDB[dbs[1]][what]; x != y {
			t.Errorf("%s: the alignment page's figures differ between %s and %s:\n%s", what, dbs[0], dbs[1], firstDifference(x, y))
		}
	}
}

// alignRecomputed starts an alignment of criterion ci (named name, on the
// rubric's lo to hi) from run src of the FED rows fed, accepts its draft
// and checks the alignment page's figures (TestAlignmentPageFiguresRecomputed).
// It returns every decimal figure the finished page shows, in order.
func alignRecomputed(t *testing.T, env *testEnv, ds models.Dataset, src models.Run, fed []fedRecord, ci int, name string, lo, hi float64) string {
	ctx := context.Background()
	n := len(fed)
	c := struct {
		name   string
		lo, hi float64
	}{name, lo, hi}
	finals := storedFinals(t, env, src.ID, ci)
	// The humans on the judge's scale. LLM-Eval judges on 0 to 5: ratings
	// within the rubric's range are mapped from it, others from their
	// lowest and highest. Otherwise they are taken as given when every one
	// lies within the judge's range, else mapped from the lowest and highest.
	hlo, hhi := math.Inf(1), math.Inf(-1)
	for _, r := range fed {
		hlo, hhi = min(hlo, r.Scores[c.name]), max(hhi, r.Scores[c.name])
	}
	jlo, jhi := c.lo, c.hi
	if src.Method == models.MethodLLMEval {
		jlo, jhi = 0, 5
	}
	from := func(lo, hi float64) func(float64) float64 {
		return func(h float64) float64 { return jlo + (h-lo)/(hi-lo)*(jhi-jlo) }
	}
	onScale, mapped := func(h float64) float64 { return h }, false
	switch {
	case src.Method == models.MethodLLMEval && hlo >= c.lo && hhi <= c.hi:
		onScale, mapped = from(c.lo, c.hi), true
	case src.Method == models.MethodLLMEval || hlo < jlo || hhi > jhi:
		onScale, mapped = from(hlo, hhi), true
	}
	// An example's score is the humans' rating on the rubric's range.
	onRubric := func(j float64) float64 { return c.lo + (j-jlo)/(jhi-jlo)*(c.hi-c.lo) }
	rec := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {strconv.Itoa(ci)}, "seed": {"5"}, "held_out_percent": {"50"}})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("start: status %d\n%s", rec.Code, rec.Body.String())
	}
	aID, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/alignments/"), 10, 64)
	a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
	must(t, err)
	stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
	must(t, err)
	ext := map[int64]string{}
	for _, r := range stored {
		ext[r.ID] = r.ExternalID
	}
	// The split: half held out, the two parts disjoint and covering the dataset.
	seen := map[int64]bool{}
	for _, id := range slices.Concat(a.CalibrationRowIDs, a.HeldOutRowIDs) {
		if seen[id] || ext[id] == "" {
			t.Fatalf("row %d is in both parts or not in the dataset", id)
		}
		seen[id] = true
	}
	if len(a.HeldOutRowIDs) != n/2 || len(seen) != n {
		t.Fatalf("split: %d held out of %d, want %d of %d", len(a.HeldOutRowIDs), len(seen), n/2, n)
	}

	// The disagreements: every calibration sample, furthest first.
	type cas struct {
		id                string
		judge, human, gap float64
	}
	human := map[string]float64{}
	for _, r := range fed {
		human[r.ID] = r.Scores[c.name]
	}
	var cases []cas
	for _, id := range a.CalibrationRowIDs {
		x := ext[id]
		if f, ok := finals[x]; ok {
			h := onScale(human[x])
			cases = append(cases, cas{x, f, h, f - h})
		}
	}
	slices.SortStableFunc(cases, func(p, q cas) int { return cmp.Compare(math.Abs(q.gap), math.Abs(p.gap)) })
	page := env.get(fmt.Sprintf("/alignments/%d", aID)).Body.String()
	section := page[strings.Index(page, `data-testid="disagreements"`):]
	section = section[:strings.Index(section, "</table>")]
	trs := regexp.MustCompile(`(?s)<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>`).FindAllStringSubmatch(section, -1)
	if len(trs) != 8 {
		t.Fatalf("%d disagreements shown, want 8", len(trs))
	}
	for k, m := range trs {
		// Two samples with the same gap (to noise) may come in either order.
		w := cases[k]
		if m[1] != w.id && !(k+1 < len(cases) && math.Abs(math.Abs(cases[k+1].gap)-math.Abs(w.gap)) < 1e-9 && m[1] == cases[k+1].id) &&
			!(k > 0 && math.Abs(math.Abs(cases[k-1].gap)-math.Abs(w.gap)) < 1e-9 && m[1] == cases[k-1].id) {
			t.Errorf("disagreement %d is sample %s, recomputed %s (judge %.3f, humans %.3f)", k+1, m[1], w.id, w.judge, w.human)
			continue
		}
		for _, q := range cases {
			if q.id == m[1] {
				w = q
			}
		}
		shown(t, fmt.Sprintf("disagreement %d (%s) judge", k+1, w.id), m[2], w.judge, 2)
		shown(t, fmt.Sprintf("disagreement %d (%s) humans", k+1, w.id), m[3], w.human, 2)
		shown(t, fmt.Sprintf("disagreement %d (%s) judge − humans", k+1, w.id), m[4], w.gap, 2)
	}
	if strings.Contains(page, `data-testid="human-scale-note"`) != mapped {
		t.Errorf("the page says the humans are mapped onto the judge's scale: %v, want %v", !mapped, mapped)
	}
	// The template's examples are the three largest, labelled with the
	// humans' rating on the criterion's scale, so they can be accepted.
	for k, ex := range a.Draft.Examples {
		w := cases[k]
		if want := onRubric(w.human); ex.SampleID != w.id || math.Abs(ex.Score-want) > 1e-4 || ex.Score < c.lo || ex.Score > c.hi {
			t.Errorf("example %d: sample %s score %v, recomputed sample %s with the humans' %v on %g to %g", k+1, ex.SampleID, ex.Score, w.id, want, c.lo, c.hi)
		}
		// Its reason quotes the person's rating as given (FED's 0.4 to 4),
		// with the mapped value beside it when mapped: it said "A person
		// rated this 1" of a rating of 0.4.
		g3 := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
		want := "A person rated this " + g3(human[w.id]) + "; the judge had scored it " + g3(w.judge) + "."
		if mapped && g3(human[w.id]) != g3(w.human) {
			want = "A person rated this " + g3(human[w.id]) + " (" + g3(w.human) + " on the judge's " + g3(jlo) + " to " + g3(jhi) + " scale); the judge had scored it " + g3(w.judge) + "."
		}
		if ex.Reason != want {
			t.Errorf("example %d (%s): reason %q, want %q", k+1, w.id, ex.Reason, want)
		}
	}

	rec = env.postForm(fmt.Sprintf("/alignments/%d/accept", aID), draftFormValues(a.Draft, "Good throughout: it keeps the conversation going."))
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("accept: status %d\n%s", rec.Code, pageText(rec.Body.String()))
	}
	a, err = env.db.FindAlignment(ctx, env.ws.ID, aID)
	must(t, err)
	before := env.waitRun(*a.BeforeRunID, 60*time.Second)
	after := env.waitRun(*a.AfterRunID, 60*time.Second)
	if before.Status != models.RunSucceeded || after.Status != models.RunSucceeded {
		t.Fatalf("held-out runs %s and %s", before.Status, after.Status)
	}
	// The after run's prompts show the first example scored on the scale
	// they ask for: as stored (the rubric's range) when it is the judge's,
	// else mapped onto the judge's, to one decimal.
	batches, err := env.db.ListBatches(ctx, after.ID)
	must(t, err)
	if len(batches) == 0 {
		t.Fatal("the after run has no batches")
	}
	score := a.Draft.Examples[0].Score
	if jlo != c.lo || jhi != c.hi {
		score = math.Round((jlo+(score-c.lo)/(c.hi-c.lo)*(jhi-jlo))*10) / 10
	}
	want := strconv.FormatFloat(score, 'f', -1, 64)
	if !strings.Contains(batches[0].Request, "Example 1, scored "+want+":") {
		i := strings.Index(batches[0].Request, "Example 1, scored ")
		t.Errorf("the after run's prompt does not show example 1 scored %s (%v on the rubric's %g to %g): %.40q", want, a.Draft.Examples[0].Score, c.lo, c.hi, batches[0].Request[max(i, 0):])
	}
	bf, af := storedFinals(t, env, before.ID, 0), storedFinals(t, env, after.ID, 0)
	var xb, xa, ys []float64
	for _, id := range a.HeldOutRowIDs {
		x := ext[id]
		b, okb := bf[x]
		f, oka := af[x]
		if okb && oka {
			xb, xa, ys = append(xb, b), append(xa, f), append(ys, human[x])
		}
	}
	if len(ys) != n/2 {
		t.Fatalf("%d held-out samples scored by both runs, want %d", len(ys), n/2)
	}
	// The finals as stored, for the interval's bootstrap: it orders the
	// samples by their values, and a mean recomputed in another order may
	// differ in the last bit (checked equal to the recomputed ones to 1e-9).
	storedOf := func(runID int64) map[string]float64 {
		ss, err := env.db.ListRunSampleScores(ctx, runID, 0, true)
		must(t, err)
		out := map[string]float64{}
		for _, s := range ss {
			if s.Final != nil {
				out[s.ExternalID] = *s.Final
			}
		}
		return out
	}
	sb, sa := storedOf(before.ID), storedOf(after.ID)
	var ib, ia []float64
	for k, id := range a.HeldOutRowIDs {
		x := ext[id]
		ib, ia = append(ib, sb[x]), append(ia, sa[x])
		if math.Abs(ib[k]-xb[k]) > 1e-9 || math.Abs(ia[k]-xa[k]) > 1e-9 {
			t.Fatalf("%s: stored finals %v, %v; recomputed from the rounds %v, %v", x, ib[k], ia[k], xb[k], xa[k])
		}
	}
	spearman := func(x, y []float64) float64 { return textbookPearson(averageRanks(x), averageRanks(y)) }
	text := pageText(env.get(fmt.Sprintf("/alignments/%d", aID)).Body.String())
	for _, m := range []struct {
		name, method string
		coef         func(x, y []float64) float64
	}{{"Pearson r", "pearson", textbookPearson}, {"Spearman ρ", "spearman", spearman}, {"Kendall τ-b", "kendall", textbookTauB}} {
		rb, ra := m.coef(xb, ys), m.coef(xa, ys)
		row := regexp.MustCompile(regexp.QuoteMeta(m.name) + ` (\S+) (\S+) (\S+) (\S+) to (\S+) .*? (\d+) `).FindStringSubmatch(text)
		if row == nil {
			t.Errorf("no %s row in the before/after table:\n%s", m.name, text)
			continue
		}
		shown(t, m.name+" before", row[1], rb, 3)
		shown(t, m.name+" after", row[2], ra, 3)
		shown(t, m.name+" after − before", row[3], ra-rb, 3)
		// Its 95% interval, recomputed: Zou's for Pearson, the paired
		// bootstrap of 1,000 draws seeded by the alignment's seed for
		// the rank coefficients (heldOutIntervalOracle).
		lo, hi, _ := heldOutIntervalOracle(m.method, ia, ib, ys, 1000, uint64(a.Seed))
		shown(t, m.name+" interval low", row[4], lo, 3)
		shown(t, m.name+" interval high", row[5], hi, 3)
		if row[6] != strconv.Itoa(len(ys)) {
			t.Errorf("%s: %s samples, recomputed %d", m.name, row[6], len(ys))
		}
	}
	return strings.Join(regexp.MustCompile(`[−+-]?\d+\.\d+|±\d+\.\d+`).FindAllString(text, -1), " ")
}
