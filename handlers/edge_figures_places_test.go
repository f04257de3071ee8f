package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/report"
)

// The awkward dataset of TestEdgeFiguresSameInEveryPlace: twelve samples
// whose ids and texts carry spreadsheet formulas and HTML, three criteria
// on a 1 to 5 scale whose human columns are:
//   - q ("Quality"): negative and fractional ratings on about −2.5 to 3 (not
//     the judge's scale), tied pairs, two samples without a rating, two
//     annotators (q@r1, q@r2) around each rating;
//   - flat ("Flatness"): every sample rated 3, a constant column;
//   - few ("Fewness"): three samples rated, one of them never scored, so
//     two usable pairs.
//
// The fake judge (edgeJudge) never gives sample 3 a readable score, drops
// sample 5's score in round 1 and sample 7's in rounds 0 and 2 (BatchEval),
// or one of sample 5's three sampled ratings (CloserLook).
var (
	edgeIDs = []string{"=1+1", "<script>alert(1)</script>", "+SUM(A1:A2)", "@cmd", "-2+3", "s05",
		"s06", "s07", "s08", "s09", "s10", "s11"}
	edgeTexts = []string{"=1+1", "<script>alert('x')</script> & <b>bold</b>", "+SUM(1,2)", "@here", "-2+3 is five", "plain",
		"=HYPERLINK(\"http://evil\")", "\"quoted\", with a comma", "<img src=x onerror=alert(2)>", "ok", "fine", "last"}
	edgeQ   = []*float64{edgeF(-2.5), edgeF(0.75), nil, edgeF(1.5), edgeF(-1), edgeF(2.25), nil, edgeF(0.75), edgeF(-2.5), edgeF(3), edgeF(1.5), edgeF(2.25)}
	edgeFew = map[int]float64{0: 2, 2: 4, 3: 5}
	// edgeSpread is how far the annotators q@r1 and q@r2 rate sample i
	// below and above q: edgeSpread[i%3].
	edgeSpread = []float64{-0.5, 0, 0.75}
	// edgeSparse are the ratings of "sp" ("Sparseness"): six samples, one
	// never scored, so five pairs, with a tie: exact p-values, Pearson's
	// interval by Fisher's z and none for the rank coefficients.
	edgeSparse = map[int]float64{0: 1, 1: 2, 3: 4, 4: 3.5, 5: -1, 7: 2}
	edgeNames  = []string{"Quality", "Flatness", "Fewness", "Sparseness"}
	edgeCols   = []string{"q", "flat", "few", "sp"}
	// edgeBase is a sample's round-0 score (before the criterion's shift);
	// round r adds edgeDelta[r], clamped to the scale.
	edgeBase  = []float64{1, 3, 2, 0, 4, 3, 2, 4, 1, 5, 2, 3}
	edgeDelta = []float64{0, 1, -1}
)

const edgeSeed = 40

func edgeF(v float64) *float64 { return &v }

// edgeScore is the judge's score of sample row on criterion ci in round
// (BatchEval) or answer (CloserLook) r.
func edgeScore(row, ci, r int) float64 {
	return math.Max(1, math.Min(5, edgeBase[(row+ci)%len(edgeBase)]+edgeDelta[r%len(edgeDelta)]))
}

// edgeUnreadable: the judge writes no readable score for row in round (or
// answer) r; batched says which method asks.
func edgeUnreadable(row, r int, batched bool) bool {
	if row == 3 {
		return true
	}
	if batched {
		return row == 5 && r == 1 || row == 7 && r != 1
	}
	return row == 5 && r == 1
}

var (
	edgeTag   = regexp.MustCompile(`\[k(\d\d)\]`)
	edgeLabel = regexp.MustCompile(`(?m)^Sample(\d+):`)
)

// edgeJudge is the fake judge endpoint: a batch prompt (labels Sample1...)
// gets a two-stage answer whose score list leaves out the unreadable
// samples (its repair request gets the same answer); a prompt of one
// sample gets n "Rating: x" answers, the unreadable ones without a rating.
// Each sample is known by the [kNN] tag its text carries.
func edgeJudge(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
		Seed     *int64                           `json:"seed"`
		N        int                              `json:"n"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	prompt := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			prompt = m.Content
			break
		}
	}
	ci := -1
	for i, n := range edgeNames {
		if strings.Contains(prompt, n) {
			if ci >= 0 {
				http.Error(w, "two criteria in one prompt", http.StatusBadRequest)
				return
			}
			ci = i
		}
	}
	if ci < 0 || req.Seed == nil {
		http.Error(w, "no criterion or seed in the request", http.StatusBadRequest)
		return
	}
	row := func(section string) int {
		m := edgeTag.FindStringSubmatch(section)
		if m == nil {
			return -1
		}
		i, _ := strconv.Atoi(m[1])
		return i
	}
	var texts []string
	if labels := edgeLabel.FindAllStringSubmatchIndex(prompt, -1); len(labels) > 0 {
		round := int(*req.Seed - edgeSeed)
		var b strings.Builder
		var scores []string
		for k, at := range labels {
			end := len(prompt)
			if k+1 < len(labels) {
				end = labels[k+1][0]
			}
			i := row(prompt[at[0]:end])
			if i < 0 {
				http.Error(w, "a sample without its tag", http.StatusBadRequest)
				return
			}
			fmt.Fprintf(&b, "Sample%d: it reads as expected.\n", k+1)
			if !edgeUnreadable(i, round, true) {
				scores = append(scores, fmt.Sprintf("Sample%d:%g", k+1, edgeScore(i, ci, round)))
			}
		}
		texts = append(texts, b.String()+"\nFloat Scores: ["+strings.Join(scores, ", ")+"]")
	} else {
		i := row(prompt)
		if i < 0 {
			http.Error(w, "no sample in the request", http.StatusBadRequest)
			return
		}
		for k := range max(1, req.N) {
			text := "I would rather not say."
			if !edgeUnreadable(i, k, false) {
				text = fmt.Sprintf("Analysis: it reads well enough.\nRating: %g", edgeScore(i, ci, k))
			}
			texts = append(texts, text)
		}
	}
	var choices []map[string]any
	for k, text := range texts {
		choices = append(choices, map[string]any{"index": k, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": text}})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "model": "edge", "choices": choices,
		"usage": map[string]int{"prompt_tokens": 50, "completion_tokens": 10 * len(choices), "total_tokens": 50 + 10*len(choices)}})
}

// edgeDataset stores the awkward dataset, grouped by its topic column.
func (env *testEnv) edgeDataset() models.Dataset {
	env.t.Helper()
	rows := make([]models.DatasetRow, len(edgeIDs))
	for i := range rows {
		ratings := map[string]*float64{"flat": edgeF(3)}
		if q := edgeQ[i]; q != nil {
			d := edgeSpread[i%3]
			ratings["q"], ratings["q@r1"], ratings["q@r2"] = q, edgeF(*q-d), edgeF(*q+d)
		}
		if v, ok := edgeFew[i]; ok {
			ratings["few"] = edgeF(v)
		}
		if v, ok := edgeSparse[i]; ok {
			ratings["sp"] = edgeF(v)
		}
		rows[i] = models.DatasetRow{Position: i + 1, ExternalID: edgeIDs[i], Ratings: ratings,
			Data: map[string]string{"id": edgeIDs[i], "text": fmt.Sprintf("%s [k%02d]", edgeTexts[i], i), "topic": []string{"a", "b", "c"}[i%3],
				"system": fmt.Sprintf("S%d", i%4+1)}}
	}
	ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Awkward <data> =1+1", Format: "csv", IDColumn: "id",
		Columns: []string{"id", "text", "topic", "system"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}},
		RatingColumns: []string{"q", "q@r1", "q@r2", "flat", "few", "sp"}, GroupColumn: "topic"}
	if err := env.db.CreateDataset(context.Background(), &ds, rows); err != nil {
		env.t.Fatal(err)
	}
	return ds
}

// edgeRun launches method on ds with the fake judge j (seed edgeSeed,
// batches of 4 in 3 rounds; CloserLook samples 3 answers) and waits for
// its end.
func (env *testEnv) edgeRun(ds models.Dataset, j models.Judge, name, method string) models.Run {
	env.t.Helper()
	s := evaluator.DefaultSettings()
	s.Rounds, s.BatchSize, s.Seed, s.NoCache = 3, 4, edgeSeed, true
	ms := evaluator.DefaultMethodSettings()
	ms.Samples = 3
	var crits []evaluator.Criterion
	for i, n := range edgeNames {
		crits = append(crits, evaluator.Criterion{Name: n, Lo: 1, Hi: 5, HumanColumn: edgeCols[i]})
	}
	run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &j.ID, JudgeSnapshot: j.Snapshot(),
		Name: name, Method: method, Settings: s, MethodSettings: ms,
		RubricSnapshot: evaluator.Rubric{Task: "Rate each text.", Criteria: crits}}
	if err := env.runner.Launch(context.Background(), &run); err != nil {
		env.t.Fatalf("launch %s: %v", name, err)
	}
	run = env.waitRun(run.ID, 90*time.Second)
	if run.Status != models.RunFinishedWithGaps && run.Status != models.RunSucceeded {
		env.t.Fatalf("run %s: %s (%s)", name, run.Status, run.Error)
	}
	return run
}

// TestEdgeFiguresSameInEveryPlace is TestRunFiguresSameInEveryPlace and
// TestBaselineFiguresSameInEveryPlace on awkward data (see edgeIDs), for
// BatchEval and CloserLook, on a fake judge that answers some samples
// unreadably: a sample with no readable score is missing (never 0), and n
// drops by it; samples without a human rating are left out and counted;
// a constant human column and two usable pairs give "undefined" with the
// reason, never NaN, 0 or a blank; ties are ranked by average ranks and
// Kendall's τ-b; negative and fractional ratings on another scale than
// the judge's are correlated as given. For each run: every place (run
// page, share link, downloaded report, CSV and JSON exports, API, command
// line) agrees (figuresSameInEveryPlaceOf); each final score is the mean
// of the readable scores in the answers stored with the run, read here
// from the answers themselves; every coefficient, p-value, 95% interval,
// n and missing equals a computation from those scores and the dataset's
// ratings, as method.md defines them, sharing no code with the product;
// the ids and texts with HTML are escaped on every page and the CSV's
// formula cells are defused as report.SafeCell does everywhere; and a
// second run with the same seed gives the same bytes in every export.
func TestEdgeFiguresSameInEveryPlace(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		srv := httptest.NewServer(http.HandlerFunc(edgeJudge))
		t.Cleanup(srv.Close)
		j := models.Judge{WorkspaceID: env.ws.ID, Name: "Edge judge", BaseURL: srv.URL + "/v1", Model: "edge", TimeoutSeconds: 10,
			Temperature: 0.2, TopP: 0.9, MaxConcurrency: 4}
		must(t, env.db.SaveJudge(ctx, &j))
		ds := env.edgeDataset()
		for _, method := range []string{models.MethodBatchEval, models.MethodCloserLook} {
			t.Run(method, func(t *testing.T) {
				run := env.edgeRun(ds, j, "Edge "+method, method)
				rep := figuresSameInEveryPlaceOf(t, env, run, func(name string) (bool, bool) {
					// Quality has varying ratings on enough samples in
					// every topic, Sparseness in one (topic b).
					used := name == "Quality" || name == "Sparseness"
					return used, used
				})
				finals := edgeFinalsFromAnswers(t, env, run)
				edgeFiguresRecomputed(t, env, run, rep, finals)
				edgeMoreFiguresRecomputed(t, env, run, rep, finals)
				edgeEscapedEverywhere(t, env, run)
				edgeSameSeedSameBytes(t, env, ds, j, run)
			})
		}
	})
}

// edgeFinalsFromAnswers reads each sample's scores from the answers the
// run stored (BatchEval: the score list after "Float Scores:" of the
// answer and, for the labels it lacks, of the repair's answer, label k
// being the batch's k-th sample; CloserLook: the "Rating:" of each
// sampled answer) and returns each criterion's final scores in dataset
// order, the mean of the readable ones (nil when none). It checks the
// stored round scores against what it read, and that the unreadable ones
// are the fake judge's.
func edgeFinalsFromAnswers(t *testing.T, env *testEnv, run models.Run) [][]*float64 {
	t.Helper()
	ctx := context.Background()
	rows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
	must(t, err)
	pos := map[int64]int{}
	for i, r := range rows {
		pos[r.ID] = i
	}
	var batches []models.RunBatch
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Order("id").Find(&batches).Error)
	var stored []models.RunScore
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Find(&stored).Error)
	type key struct{ ci, row, round int }
	read := map[key]*float64{}
	scores := make([][][]float64, len(edgeNames))
	for ci := range scores {
		scores[ci] = make([][]float64, len(rows))
	}
	listRE := regexp.MustCompile(`Sample(\d+):([-+]?\d+(?:\.\d+)?)`)
	ratingRE := regexp.MustCompile(`(?m)^Rating: ([-+]?\d+(?:\.\d+)?)$`)
	list := func(answer string) map[int]float64 {
		out := map[int]float64{}
		i := strings.LastIndex(answer, "Float Scores:")
		if i < 0 {
			return out
		}
		for _, m := range listRE.FindAllStringSubmatch(answer[i:], -1) {
			k, _ := strconv.Atoi(m[1])
			v, err := strconv.ParseFloat(m[2], 64)
			must(t, err)
			out[k] = v
		}
		return out
	}
	for _, b := range batches {
		if b.Status != models.BatchDone {
			t.Fatalf("batch %d: %s (%s)", b.ID, b.Status, b.Error)
		}
		switch run.Method {
		case models.MethodBatchEval:
			got, repaired := list(b.Response), list(b.RepairResponse)
			for k, id := range b.RowIDs {
				row := pos[id]
				v, ok := got[k+1]
				if !ok {
					v, ok = repaired[k+1]
				}
				if ok != !edgeUnreadable(row, b.Round, true) {
					t.Errorf("%s round %d, sample %d: read %v from the stored answers, the judge wrote it unreadable: %v", edgeNames[b.CriterionIndex], b.Round, row, ok, !ok)
				}
				if ok {
					read[key{b.CriterionIndex, row, b.Round}] = edgeF(v)
					scores[b.CriterionIndex][row] = append(scores[b.CriterionIndex][row], v)
				} else {
					read[key{b.CriterionIndex, row, b.Round}] = nil
				}
			}
		case models.MethodCloserLook:
			row := pos[b.RowIDs[0]]
			for _, text := range strings.Split(b.Response, "\n---\n") {
				if m := ratingRE.FindStringSubmatch(text); m != nil {
					v, err := strconv.ParseFloat(m[1], 64)
					must(t, err)
					scores[b.CriterionIndex][row] = append(scores[b.CriterionIndex][row], v)
				}
			}
		}
	}
	finals := make([][]*float64, len(edgeNames))
	for ci := range finals {
		finals[ci] = make([]*float64, len(rows))
		for row, vs := range scores[ci] {
			if len(vs) == 0 {
				continue
			}
			var sum float64
			for _, v := range vs {
				sum += v
			}
			finals[ci][row] = edgeF(sum / float64(len(vs)))
		}
		if finals[ci][3] != nil || finals[ci][0] == nil {
			t.Errorf("%s: sample 3 read as %v, sample 0 as %v: the answers are not the fake judge's", edgeNames[ci], exportedOrNil(finals[ci][3]), exportedOrNil(finals[ci][0]))
		}
	}
	if run.Method == models.MethodBatchEval {
		if len(stored) != len(read) {
			t.Errorf("%d round scores stored, %d read from the answers", len(stored), len(read))
		}
		for _, s := range stored {
			w, ok := read[key{s.CriterionIndex, pos[s.RowID], s.Round}]
			if !ok || (w == nil) != (s.Score == nil) || w != nil && *w != *s.Score {
				t.Errorf("%s round %d, sample %d: stored %v, read from its answer %v", edgeNames[s.CriterionIndex], s.Round, pos[s.RowID], exportedOrNil(s.Score), exportedOrNil(w))
			}
		}
	}
	return finals
}

// edgeFigure is a correlation as recomputed here; nil where undefined.
type edgeFigure struct {
	coef, p, lo, hi *float64
	n, missing      int
}

// edgeCorrelation recomputes a coefficient ("pearson", "spearman",
// "kendall") of finals against humans by the textbook formulas: over the
// samples with both, undefined below 3 pairs or on a constant side; the
// p-value Student's t for Pearson, the exact permutation p up to 8 pairs
// and the t (Spearman) or tie-corrected normal (Kendall) approximation
// above; the 95% interval Fisher's for Pearson from 4 pairs, the
// percentile bootstrap for Spearman and Kendall from 8, none for a
// coefficient of ±1. Every set has fewer than 50 pairs here.
func edgeCorrelation(t *testing.T, method string, finals, humans []*float64) edgeFigure {
	t.Helper()
	var xs, ys []float64
	for i := range finals {
		if finals[i] != nil && humans[i] != nil {
			xs, ys = append(xs, *finals[i]), append(ys, *humans[i])
		}
	}
	f := edgeFigure{n: len(xs), missing: len(finals) - len(xs)}
	if len(xs) >= 50 {
		t.Fatalf("%d pairs: edgeCorrelation covers the small-sample rule only", len(xs))
	}
	constant := func(v []float64) bool {
		for _, x := range v {
			if !sameTenth(x, v[0]) {
				return false
			}
		}
		return true
	}
	if len(xs) < 3 || constant(xs) || constant(ys) {
		return f
	}
	coef := map[string]func(a, b []float64) float64{
		"pearson":  textbookPearson,
		"spearman": func(a, b []float64) float64 { return textbookPearson(averageRanks(a), averageRanks(b)) },
		"kendall":  textbookTauB,
	}[method]
	r := coef(xs, ys)
	f.coef = edgeF(r)
	n := len(xs)
	switch {
	case math.Abs(r) == 1:
		f.p = edgeF(0)
	case method == "pearson" || method == "spearman" && n > 8:
		f.p = edgeF(tTestP(r, n))
	case n <= 8:
		f.p = edgeF(exactP(xs, ys, coef))
	default:
		f.p = edgeF(textbookKendallP(xs, ys))
	}
	if 1-math.Abs(r) <= 1e-12 {
		return f
	}
	switch {
	case method == "pearson" && n >= 4:
		w := 1.959963984540054 / math.Sqrt(float64(n-3))
		f.lo, f.hi = edgeF(math.Tanh(math.Atanh(r)-w)), edgeF(math.Tanh(math.Atanh(r)+w))
	case method != "pearson" && n >= 8:
		lo, hi, used := percentileBootstrap(xs, ys, coef)
		if used > 0 {
			f.lo, f.hi = edgeF(lo), edgeF(hi)
		}
	}
	return f
}

// edgeFiguresRecomputed checks the export's finals, human ratings,
// coefficients, p-values, intervals, n and missing, and the single
// rounds' Pearson r, against the recomputation from finals (read from the
// stored answers) and the dataset's ratings; and that the reason a
// coefficient is undefined is given in every place, with no NaN, and that
// the unreadable and missing counts are stated.
func edgeFiguresRecomputed(t *testing.T, env *testEnv, run models.Run, rep []byte, finals [][]*float64) {
	t.Helper()
	var ex struct {
		Criteria []struct {
			Name                       string
			Pearson, Spearman, Kendall placesCorrelation
			Reading                    string
			Entropy                    *float64 `json:"entropy_bits"`
			Unreadable                 int      `json:"unreadable"`
			Scored                     int      `json:"scored"`
			Rounds                     []struct {
				Round    int               `json:"round"`
				Single   placesCorrelation `json:"single_round_pearson"`
				Ensemble placesCorrelation `json:"ensemble_pearson"`
			} `json:"rounds"`
			Samples []struct {
				ID           string
				Final, Human *float64
			}
		} `json:"criteria"`
	}
	must(t, json.Unmarshal(rep, &ex))
	if len(ex.Criteria) != len(edgeNames) {
		t.Fatalf("the export has %d criteria", len(ex.Criteria))
	}
	near := func(a, b *float64, tol float64) bool {
		return (a == nil) == (b == nil) && (a == nil || math.Abs(*a-*b) <= tol)
	}
	batched := run.Method == models.MethodBatchEval
	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
	places := map[string]string{}
	for _, p := range []string{fmt.Sprintf("/runs/%d", run.ID), link, fmt.Sprintf("/runs/%d/report.html", run.ID), link + "/report.html"} {
		places[p] = env.get(p).Body.String()
	}
	built, err := report.Build(env.localCtx(), env.db, env.ws.ID, run.ID)
	must(t, err)
	cli := built.CorrelationTable()
	for ci, c := range ex.Criteria {
		humans := edgeHumans(ci)
		if c.Name != edgeNames[ci] || len(c.Samples) != len(edgeIDs) {
			t.Fatalf("criterion %d: %q with %d samples", ci, c.Name, len(c.Samples))
		}
		for i, s := range c.Samples {
			if s.ID != edgeIDs[i] || !near(s.Final, finals[ci][i], 1e-12) || !near(s.Human, humans[i], 0) {
				t.Errorf("%s, sample %d (%q): exported %q final %v human %v; read from the answers %v, the dataset's %v", c.Name, i, edgeIDs[i], s.ID,
					exportedOrNil(s.Final), exportedOrNil(s.Human), exportedOrNil(finals[ci][i]), exportedOrNil(humans[i]))
			}
		}
		for _, m := range []struct {
			name string
			got  placesCorrelation
		}{{"pearson", c.Pearson}, {"spearman", c.Spearman}, {"kendall", c.Kendall}} {
			w := edgeCorrelation(t, m.name, finals[ci], humans)
			g := m.got
			if !near(g.Coef, w.coef, 1e-9) || !near(g.P, w.p, 1e-6) || !near(g.CILow, w.lo, 1e-9) || !near(g.CIHigh, w.hi, 1e-9) || g.N != w.n || g.Missing != w.missing {
				t.Errorf("%s %s: exported coef %v p %v interval %v to %v n %d missing %d; recomputed %v, %v, %v to %v, %d, %d", c.Name, m.name,
					exportedOrNil(g.Coef), exportedOrNil(g.P), exportedOrNil(g.CILow), exportedOrNil(g.CIHigh), g.N, g.Missing,
					exportedOrNil(w.coef), exportedOrNil(w.p), exportedOrNil(w.lo), exportedOrNil(w.hi), w.n, w.missing)
			}
		}
		// Each round's own Pearson r (BatchEval): that round's readable
		// scores against the ratings; and the ensemble's up to that round:
		// each sample's mean of its readable scores so far.
		if batched {
			if len(c.Rounds) != 3 {
				t.Errorf("%s: %d rounds exported, want 3", c.Name, len(c.Rounds))
			}
			sums, counts := make([]float64, len(edgeIDs)), make([]int, len(edgeIDs))
			for _, r := range c.Rounds {
				// Rounds are numbered from 1 in the export.
				round, ensemble := make([]*float64, len(edgeIDs)), make([]*float64, len(edgeIDs))
				for i := range round {
					if !edgeUnreadable(i, r.Round-1, true) {
						v := edgeScore(i, ci, r.Round-1)
						round[i] = edgeF(v)
						sums[i], counts[i] = sums[i]+v, counts[i]+1
					}
					if counts[i] > 0 {
						ensemble[i] = edgeF(sums[i] / float64(counts[i]))
					}
				}
				for _, x := range []struct {
					name   string
					got    placesCorrelation
					scores []*float64
				}{{"single-round", r.Single, round}, {"ensemble", r.Ensemble, ensemble}} {
					// A round's figures carry no interval (the export's
					// are null on every data).
					w, g := edgeCorrelation(t, "pearson", x.scores, humans), x.got
					w.lo, w.hi = nil, nil
					if !near(g.Coef, w.coef, 1e-9) || !near(g.P, w.p, 1e-6) || !near(g.CILow, w.lo, 1e-9) || !near(g.CIHigh, w.hi, 1e-9) || g.N != w.n || g.Missing != w.missing {
						t.Errorf("%s round %d: %s Pearson r %v p %v interval %v to %v n %d missing %d; recomputed %v, %v, %v to %v, %d, %d", c.Name, r.Round, x.name,
							exportedOrNil(g.Coef), exportedOrNil(g.P), exportedOrNil(g.CILow), exportedOrNil(g.CIHigh), g.N, g.Missing,
							exportedOrNil(w.coef), exportedOrNil(w.p), exportedOrNil(w.lo), exportedOrNil(w.hi), w.n, w.missing)
					}
				}
			}
		}
		// The unreadable scores, counted as the judge wrote them.
		unreadable, answers := 0, 0
		for i := range edgeIDs {
			for r := range 3 {
				answers++
				if edgeUnreadable(i, r, batched) {
					unreadable++
				}
			}
		}
		if batched {
			if c.Unreadable != unreadable || c.Scored != answers-unreadable {
				t.Errorf("%s: exported %d unreadable of %d scored; the judge wrote %d of %d unreadable", c.Name, c.Unreadable, c.Scored, unreadable, answers)
			}
			want := fmt.Sprintf("unreadable answers of %s: %d of %d answered round scores could not be read", c.Name, unreadable, answers)
			if !strings.Contains(cli, want) {
				t.Errorf("the command line lacks %q:\n%s", want, cli)
			}
		} else if c.Unreadable != 1 || c.Scored != len(edgeIDs)-1 {
			// One sample (3) has no readable answer; sample 5 is scored
			// from two of its three.
			t.Errorf("%s: exported %d unreadable, %d scored; want 1 and %d", c.Name, c.Unreadable, c.Scored, len(edgeIDs)-1)
		}
		// The reading of the coefficients, in the export's words, in every
		// place: how many samples were left out, or why the coefficients
		// are undefined.
		left := fmt.Sprintf("; %d samples without both scores were left out", c.Pearson.Missing)
		if c.Pearson.Missing == 1 {
			left = "; 1 sample without both scores was left out"
		}
		if !strings.Contains(c.Reading, left) {
			t.Errorf("%s: the reading %q does not say %q", c.Name, c.Reading, left)
		}
		// A page writes a number's minus sign (" -0.23" reads " −0.23").
		shown := regexp.MustCompile(`(^|[\s(])-(\d)`).ReplaceAllString(c.Reading, "${1}−${2}")
		for p, body := range places {
			cards := strings.Split(body, `data-testid="criterion-card"`)
			if len(cards) != len(ex.Criteria)+1 || !strings.Contains(pageText(cards[ci+1]), shown) {
				t.Errorf("%s, %s: no %q", p, c.Name, shown)
			}
		}
		// An undefined coefficient says why, in every place, in the
		// export's words.
		if c.Pearson.Coef == nil {
			want := map[string]string{"Flatness": "one side gave the same score to all 11 samples", "Fewness": "Too few samples to say (n = 2)"}[c.Name]
			if want == "" || !strings.Contains(c.Reading, want) {
				t.Errorf("%s: undefined, and the export's reading %q does not say %q", c.Name, c.Reading, want)
			}
			if !strings.Contains(cli, "undefined for "+c.Name+": "+c.Reading) {
				t.Errorf("the command line does not say why %s is undefined (%q):\n%s", c.Name, c.Reading, cli)
			}
		} else if c.Name != "Quality" && c.Name != "Sparseness" {
			t.Errorf("%s: a Pearson r of %v", c.Name, *c.Pearson.Coef)
		}
	}
	// The entropy of the finals, binned to tenths: H = −Σ p log2 p.
	for ci, c := range ex.Criteria {
		counts, n := map[float64]float64{}, 0.0
		for _, f := range finals[ci] {
			if f != nil {
				counts[math.Floor(*f/0.1+1e-9)]++
				n++
			}
		}
		var h float64
		for _, k := range counts {
			h -= k / n * math.Log2(k/n)
		}
		if c.Entropy == nil || math.Abs(*c.Entropy-h) > 1e-9 {
			t.Errorf("%s: exported entropy %v bits; recomputed %v", c.Name, exportedOrNil(c.Entropy), h)
		}
	}
	// The CSV: each sample's round scores (BatchEval) with an empty cell
	// for an unreadable one, and its count of unreadable rounds.
	csvBody := env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String()
	recs, err := csv.NewReader(strings.NewReader(csvBody)).ReadAll()
	must(t, err)
	for ci, name := range edgeNames {
		col := func(h string) int {
			for k, x := range recs[0] {
				if x == name+" "+h {
					return k
				}
			}
			t.Fatalf("the CSV has no column %q: %q", name+" "+h, recs[0])
			return -1
		}
		for i := range edgeIDs {
			rec, unreadable := recs[i+1], 0
			for r := range 3 {
				if edgeUnreadable(i, r, batched) {
					unreadable++
				}
				if !batched {
					continue
				}
				want := strconv.FormatFloat(edgeScore(i, ci, r), 'f', -1, 64)
				if edgeUnreadable(i, r, true) {
					want = ""
				}
				if got := rec[col(fmt.Sprintf("round %d", r+1))]; got != want {
					t.Errorf("the CSV's %s round %d of sample %d: %q, want %q", name, r+1, i, got, want)
				}
			}
			if !batched {
				// One score a sample: unreadable when none of its answers is.
				unreadable = map[bool]int{true: 1}[i == 3]
			}
			if got := rec[col("unreadable rounds")]; got != strconv.Itoa(unreadable) {
				t.Errorf("the CSV's %s unreadable rounds of sample %d: %q, want %d", name, i, got, unreadable)
			}
		}
	}
	if !batched {
		// Per criterion 36 answers sampled, 4 unreadable (sample 3's
		// three, one of sample 5's), in every place.
		sampled := make([][2]int, len(edgeNames))
		for ci := range sampled {
			sampled[ci] = [2]int{3 * len(edgeIDs), 4}
		}
		sampledAnswersInEveryPlace(t, env, run, sampled)
	}
	// No NaN, Inf or unformatted number anywhere.
	for what, body := range map[string]string{"JSON export": string(rep), "CSV": csvBody, "command line": cli} {
		places[what] = body
	}
	for what, body := range places {
		if m := regexp.MustCompile(`\b(NaN|[+-]?Inf)\b`).FindString(body); m != "" {
			t.Errorf("%s shows %q", what, m)
		}
	}
}

// edgeEscapedEverywhere: the ids and texts with HTML are escaped on the
// run page, its share link, the downloaded reports and the sample pages
// (no tag of the data reaches a page as a tag), and the CSV writes every
// cell a spreadsheet would run as a formula with report.SafeCell's quote,
// the same as everywhere else, while the JSON gives the texts back as
// uploaded.
func edgeEscapedEverywhere(t *testing.T, env *testEnv, run models.Run) {
	t.Helper()
	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
	paths := []string{fmt.Sprintf("/runs/%d", run.ID), link, fmt.Sprintf("/runs/%d/report.html", run.ID), link + "/report.html"}
	rows, err := env.db.ListDatasetRows(context.Background(), run.DatasetID, 0, 0)
	must(t, err)
	// The pages of the run, then of the samples with tags in id or text:
	// each shows its tag escaped.
	escaped := []string{"&lt;script&gt;alert(", "&lt;script&gt;alert(", "&lt;script&gt;alert(", "&lt;script&gt;alert("}
	for _, i := range []int{1, 8} {
		paths = append(paths, fmt.Sprintf("/runs/%d/samples/%d", run.ID, rows[i].ID), fmt.Sprintf("%s/samples/%d", link, rows[i].ID))
		escaped = append(escaped, map[int]string{1: "&lt;script&gt;alert(", 8: "&lt;img src=x"}[i], map[int]string{1: "&lt;script&gt;alert(", 8: "&lt;img src=x"}[i])
	}
	for k, p := range paths {
		rec := env.get(p)
		if rec.Code != http.StatusOK {
			t.Errorf("%s: %d", p, rec.Code)
			continue
		}
		body := rec.Body.String()
		for _, raw := range []string{"<script>alert", "<b>bold", "<img src=x"} {
			if strings.Contains(body, raw) {
				t.Errorf("%s writes the data's %q unescaped", p, raw)
			}
		}
		if !strings.Contains(body, escaped[k]) {
			t.Errorf("%s does not show %q", p, escaped[k])
		}
		if k >= 4 {
			continue
		}
		// The judge-versus-human charts' data tables name each point by
		// its sample's whole id ("+SUM(A1:A2)" was cut at its colon).
		named := map[string]bool{}
		for _, m := range regexp.MustCompile(`data-testid="scatter-point">([^<]*)<`).FindAllStringSubmatch(body, -1) {
			named[html.UnescapeString(m[1])] = true
		}
		for id := range named {
			if !slices.Contains(edgeIDs, id) {
				t.Errorf("%s: a chart's data table names a point %q, no sample's id", p, id)
			}
		}
		if !named["+SUM(A1:A2)"] || !named["<script>alert(1)</script>"] {
			t.Errorf("%s: the charts' data tables name %v, not every sample with a colon or a tag in its id", p, named)
		}
	}
	// The CSV: every cell that starts, after blanks, with = or @, or with
	// + or - and is not a number, starts with the quote; the injected ids
	// and texts are there, defused.
	recs, err := csv.NewReader(strings.NewReader(env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String())).ReadAll()
	must(t, err)
	number := regexp.MustCompile(`^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$`)
	cells := map[string]bool{}
	for _, rec := range recs {
		for _, cell := range rec {
			cells[cell] = true
			s := strings.TrimLeft(cell, " \t\r\n\u00a0\ufeff\u200b")
			if s == "" || cell[0] == '\'' {
				continue
			}
			if strings.ContainsRune("=@", rune(s[0])) || strings.ContainsRune("+-", rune(s[0])) && !number.MatchString(strings.TrimSpace(s)) {
				t.Errorf("the CSV has the formula cell %q", cell)
			}
		}
	}
	for i, id := range edgeIDs {
		for _, want := range []string{report.SafeCell(id), report.SafeCell(fmt.Sprintf("%s [k%02d]", edgeTexts[i], i))} {
			if !cells[want] {
				t.Errorf("the CSV has no cell %q", want)
			}
		}
	}
	for _, want := range []string{"'=1+1", "'+SUM(A1:A2)", "'@cmd", "'-2+3", "'=1+1 [k00]", "'=HYPERLINK(\"http://evil\") [k06]"} {
		if !cells[want] {
			t.Errorf("the CSV has no defused cell %q", want)
		}
	}
	// The JSON export gives the ids back as stored.
	var ex struct {
		Report struct {
			Criteria []struct {
				Samples []struct{ ID string } `json:"samples"`
			} `json:"criteria"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &ex))
	for i, s := range ex.Report.Criteria[0].Samples {
		if s.ID != edgeIDs[i] {
			t.Errorf("the JSON export's sample %d is %q, stored as %q", i, s.ID, edgeIDs[i])
		}
	}
}

// edgeSameSeedSameBytes runs run's method again on the same data, judge
// and seed, and checks that its JSON export's report, the API's results,
// the CSV, the shared and downloaded reports and the command line's
// table are the same bytes as run's.
func edgeSameSeedSameBytes(t *testing.T, env *testEnv, ds models.Dataset, j models.Judge, run models.Run) {
	t.Helper()
	again := env.edgeRun(ds, j, run.Name, run.Method)
	out := func(id int64) map[string]string {
		rep, _ := splitExport(t, env.get(fmt.Sprintf("/runs/%d/export.json", id)).Body.Bytes())
		api, _ := splitExport(t, env.get(fmt.Sprintf("/api/v1/runs/%d/results", id)).Body.Bytes())
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(id)}, "expires": {"7d"}})
		built, err := report.Build(env.localCtx(), env.db, env.ws.ID, id)
		must(t, err)
		return map[string]string{"JSON export": string(rep), "API results": string(api),
			"CSV":               env.get(fmt.Sprintf("/runs/%d/export.csv", id)).Body.String(),
			"shared report":     reportBody(t, env.get(link).Body.String()),
			"downloaded report": reportBody(t, env.get(fmt.Sprintf("/runs/%d/report.html", id)).Body.String()),
			"command line":      built.CorrelationTable()}
	}
	a, b := out(run.ID), out(again.ID)
	for what, x := range a {
		if x != b[what] {
			t.Errorf("%s: two runs with the same seed differ:\n%s", what, firstDifference(x, b[what]))
		}
	}
	if !strings.Contains(a["JSON export"], `"seed": 40`) {
		t.Errorf("the JSON export does not name the seed 40")
	}
}

// edgeHumans are criterion ci's human ratings in dataset order.
func edgeHumans(ci int) []*float64 {
	out := make([]*float64, len(edgeIDs))
	for i := range out {
		switch ci {
		case 0:
			out[i] = edgeQ[i]
		case 1:
			out[i] = edgeF(3)
		case 2:
			if v, ok := edgeFew[i]; ok {
				out[i] = edgeF(v)
			}
		default:
			if v, ok := edgeSparse[i]; ok {
				out[i] = edgeF(v)
			}
		}
	}
	return out
}

// edgeMoreFiguresRecomputed recomputes the rest of a criterion's figures
// from the judge's scores (the fake judge's, which edgeFinalsFromAnswers
// found in the stored answers) and the dataset's ratings: the correlation
// within topics (the unweighted mean of each topic's coefficient, a
// topic with fewer than 3 pairs or a constant side skipped); and, for
// BatchEval, each round's batch bias and their mean over every batch
// (|Σ s − Σ mean| / |b| over the batch's samples with a readable score in
// the round and a final, method.md) and the ensemble decomposition
// (method.md's Theorem 2 averaged over the rated samples with a readable
// round, the ratings outside the judge's 1 to 5 mapped linearly from
// their lowest and highest values onto it, as the note says).
func edgeMoreFiguresRecomputed(t *testing.T, env *testEnv, run models.Run, rep []byte, finals [][]*float64) {
	t.Helper()
	var ex struct {
		Criteria []struct {
			Name          string
			MeanBatchBias *float64 `json:"mean_batch_bias"`
			Rounds        []struct {
				Round     int      `json:"round"`
				BatchBias *float64 `json:"batch_bias"`
			} `json:"rounds"`
			Decomposition struct {
				EnsembleErr  *float64 `json:"ensemble_error"`
				MeanRoundErr *float64 `json:"mean_round_error"`
				MeanVariance *float64 `json:"mean_variance"`
				N            int      `json:"n"`
				Note         string   `json:"note"`
			} `json:"ensemble_decomposition"`
			SystemLevel *struct {
				Column                     string
				Pearson, Spearman, Kendall struct {
					Coef    *float64 `json:"coef"`
					P       *float64 `json:"p"`
					CILow   *float64 `json:"ci_low"`
					CIHigh  *float64 `json:"ci_high"`
					Systems int      `json:"systems"`
					N       int      `json:"n"`
					Note    string   `json:"interval_note"`
					Undef   string   `json:"undefined_note"`
				}
			} `json:"system_level"`
			Positions []struct {
				Position int      `json:"position"`
				N        int      `json:"n"`
				Rated    int      `json:"n_rated"`
				Mean     *float64 `json:"mean_score"`
				Abs      *float64 `json:"mean_abs_error"`
				Signed   *float64 `json:"mean_signed_error"`
			} `json:"position_effect"`
			Grouped *struct {
				Pearson, Spearman, Kendall *float64
				Groups                     int
				Skipped                    int `json:"skipped_groups"`
				Ungrouped                  int `json:"samples_without_group"`
			} `json:"grouped"`
		} `json:"criteria"`
	}
	must(t, json.Unmarshal(rep, &ex))
	near := func(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || math.Abs(*a-*b) <= 1e-9) }
	rows, err := env.db.ListDatasetRows(context.Background(), run.DatasetID, 0, 0)
	must(t, err)
	pos := map[int64]int{}
	for i, r := range rows {
		pos[r.ID] = i
	}
	var batches []models.RunBatch
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Order("id").Find(&batches).Error)
	link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
	places := map[string]string{}
	for _, p := range []string{fmt.Sprintf("/runs/%d", run.ID), link, fmt.Sprintf("/runs/%d/report.html", run.ID), link + "/report.html"} {
		places[p] = env.get(p).Body.String()
	}
	mean := func(vs []float64) *float64 {
		if len(vs) == 0 {
			return nil
		}
		var sum float64
		for _, v := range vs {
			sum += v
		}
		return edgeF(sum / float64(len(vs)))
	}
	for ci, c := range ex.Criteria {
		humans := edgeHumans(ci)
		// Within topics.
		g := c.Grouped
		if g == nil {
			t.Errorf("%s: no correlation within topics exported", c.Name)
			continue
		}
		for _, m := range []struct {
			name string
			got  *float64
			coef func(a, b []float64) float64
		}{{"pearson", g.Pearson, textbookPearson}, {"spearman", g.Spearman, func(a, b []float64) float64 { return textbookPearson(averageRanks(a), averageRanks(b)) }},
			{"kendall", g.Kendall, textbookTauB}} {
			var coefs []float64
			skipped := 0
			for topic := range 3 {
				var xs, ys []float64
				for i := topic; i < len(edgeIDs); i += 3 {
					if finals[ci][i] != nil && humans[i] != nil {
						xs, ys = append(xs, *finals[ci][i]), append(ys, *humans[i])
					}
				}
				r := math.NaN()
				if len(xs) >= 3 {
					r = m.coef(xs, ys)
				}
				if math.IsNaN(r) {
					skipped++
					continue
				}
				coefs = append(coefs, r)
			}
			if w := mean(coefs); !near(m.got, w) || g.Groups != len(coefs) || g.Skipped != skipped || g.Ungrouped != 0 {
				t.Errorf("%s within topics, %s: exported %v over %d topics (%d skipped, %d without); recomputed %v over %d (%d skipped)", c.Name, m.name,
					exportedOrNil(m.got), g.Groups, g.Skipped, g.Ungrouped, exportedOrNil(w), len(coefs), skipped)
			}
		}
		edgeCeilingRecomputed(t, ci, c.Name, rep)
		// The system level: each system's mean final and mean rating over
		// its samples with both; the coefficients of those means, Pearson's
		// p by Student's t and the rank coefficients' exact (at most 8
		// systems); Pearson's interval Fisher's from 4 systems, the rank
		// coefficients' none below 8 (each says why).
		if sl := c.SystemLevel; sl == nil || sl.Column != "system" {
			t.Errorf("%s: exported system level %+v, want one over the system column", c.Name, sl)
		} else {
			sums := map[string]*[3]float64{}
			var names []string
			for i := range edgeIDs {
				if finals[ci][i] == nil || humans[i] == nil {
					continue
				}
				name := fmt.Sprintf("S%d", i%4+1)
				if sums[name] == nil {
					sums[name] = &[3]float64{}
					names = append(names, name)
				}
				a := sums[name]
				a[0], a[1], a[2] = a[0]+*finals[ci][i], a[1]+*humans[i], a[2]+1
			}
			slices.Sort(names)
			var mx, my []*float64
			n := 0
			for _, name := range names {
				a := sums[name]
				mx, my = append(mx, edgeF(a[0]/a[2])), append(my, edgeF(a[1]/a[2]))
				n += int(a[2])
			}
			for _, m := range []struct {
				name string
				got  struct {
					Coef    *float64 `json:"coef"`
					P       *float64 `json:"p"`
					CILow   *float64 `json:"ci_low"`
					CIHigh  *float64 `json:"ci_high"`
					Systems int      `json:"systems"`
					N       int      `json:"n"`
					Note    string   `json:"interval_note"`
					Undef   string   `json:"undefined_note"`
				}
			}{{"pearson", sl.Pearson}, {"spearman", sl.Spearman}, {"kendall", sl.Kendall}} {
				w := edgeCorrelation(t, m.name, mx, my)
				k := len(names)
				switch {
				case w.coef == nil:
				case m.name == "pearson" && k < 4:
					w.lo, w.hi = nil, nil
				case m.name == "spearman" && k >= 8:
					se := math.Sqrt((1 + *w.coef**w.coef/2) / float64(k-3))
					w.lo, w.hi = edgeF(math.Tanh(math.Atanh(*w.coef)-1.959963984540054*se)), edgeF(math.Tanh(math.Atanh(*w.coef)+1.959963984540054*se))
				case m.name != "pearson" && k >= 8:
					t.Fatalf("%s: %d systems: the Kendall bootstrap over systems is not recomputed here", c.Name, k)
				}
				g := m.got
				if !near(g.Coef, w.coef) || (g.P == nil) != (w.p == nil) || g.P != nil && math.Abs(*g.P-*w.p) > 1e-6 || !near(g.CILow, w.lo) || !near(g.CIHigh, w.hi) ||
					g.Systems != k || g.N != n {
					t.Errorf("%s system level, %s: exported %v p %v interval %v to %v over %d systems (%d samples); recomputed %v, %v, %v to %v, %d (%d)", c.Name, m.name,
						exportedOrNil(g.Coef), exportedOrNil(g.P), exportedOrNil(g.CILow), exportedOrNil(g.CIHigh), g.Systems, g.N,
						exportedOrNil(w.coef), exportedOrNil(w.p), exportedOrNil(w.lo), exportedOrNil(w.hi), k, n)
				}
				if m.name == "pearson" && g.Undef != "" {
					for p, body := range places {
						cards := strings.Split(body, `data-testid="criterion-card"`)
						if want := "Pearson r, Spearman ρ and Kendall τ-b are " + g.Undef + "."; len(cards) <= ci+1 || !strings.Contains(pageText(cards[ci+1]), want) {
							t.Errorf("%s, %s: the system level does not say %q", p, c.Name, want)
						}
					}
				}
				if w.coef != nil && w.lo == nil && (g.Note == "" || !strings.HasPrefix(g.Note, "no interval")) {
					t.Errorf("%s system level, %s: no interval, and the note %q does not say why", c.Name, m.name, g.Note)
				}
				// An undefined coefficient says why: too few systems
				// (Fewness: 2), or constant means (Flatness: every rating 3).
				wantUndef := map[string]string{
					"Flatness": "undefined: the 4 systems' mean judge scores, or their mean human ratings, are all the same",
					"Fewness":  "undefined: only 2 systems have a sample with both a judge score and a human rating, and a correlation needs 3"}[c.Name]
				if (w.coef == nil) != (wantUndef != "") || g.Undef != wantUndef {
					t.Errorf("%s system level, %s: the export says %q of an undefined coefficient, want %q", c.Name, m.name, g.Undef, wantUndef)
				}
				// Each place states the note.
				if g.Note != "" {
					for p, body := range places {
						cards := strings.Split(body, `data-testid="criterion-card"`)
						if len(cards) <= ci+1 || !strings.Contains(pageText(cards[ci+1]), g.Note) {
							t.Errorf("%s, %s: the system level's %s note %q is not shown", p, c.Name, m.name, g.Note)
						}
					}
				}
			}
		}
		if run.Method != models.MethodBatchEval {
			continue
		}
		// Batch bias, each round's and the mean over every batch.
		var all []float64
		for r := range 3 {
			var round []float64
			for _, b := range batches {
				if b.CriterionIndex != ci || b.Round != r {
					continue
				}
				var ss, ms float64
				k := 0
				for _, id := range b.RowIDs {
					i := pos[id]
					if edgeUnreadable(i, r, true) || finals[ci][i] == nil {
						continue
					}
					ss, ms, k = ss+edgeScore(i, ci, r), ms+*finals[ci][i], k+1
				}
				if k > 0 {
					round = append(round, math.Abs(ss-ms)/float64(k))
				}
			}
			all = append(all, round...)
			if r >= len(c.Rounds) || c.Rounds[r].Round != r+1 || !near(c.Rounds[r].BatchBias, mean(round)) {
				t.Errorf("%s round %d: exported batch bias %+v; recomputed %v", c.Name, r+1, c.Rounds, exportedOrNil(mean(round)))
			}
		}
		if !near(c.MeanBatchBias, mean(all)) {
			t.Errorf("%s: exported mean batch bias %v; recomputed %v", c.Name, exportedOrNil(c.MeanBatchBias), exportedOrNil(mean(all)))
		}
		// The ensemble decomposition, on the judge's scale.
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, h := range humans {
			if h != nil {
				lo, hi = math.Min(lo, *h), math.Max(hi, *h)
			}
		}
		onScale := func(h float64) float64 { return h }
		if (lo < 1 || hi > 5) && hi > lo {
			onScale = func(h float64) float64 { return 1 + (h-lo)/(hi-lo)*4 }
		}
		var ens, roundErr, spread []float64
		for i, h := range humans {
			var ss []float64
			for r := range 3 {
				if !edgeUnreadable(i, r, true) {
					ss = append(ss, edgeScore(i, ci, r))
				}
			}
			if h == nil || len(ss) == 0 {
				continue
			}
			y, m := onScale(*h), *mean(ss)
			var e, v float64
			for _, s := range ss {
				e, v = e+(s-y)*(s-y), v+(s-m)*(s-m)
			}
			ens, roundErr, spread = append(ens, (m-y)*(m-y)), append(roundErr, e/float64(len(ss))), append(spread, v/float64(len(ss)))
		}
		d := c.Decomposition
		if !near(d.EnsembleErr, mean(ens)) || !near(d.MeanRoundErr, mean(roundErr)) || !near(d.MeanVariance, mean(spread)) || d.N != len(ens) {
			t.Errorf("%s: exported decomposition %v = %v − %v over %d; recomputed %v = %v − %v over %d", c.Name, exportedOrNil(d.EnsembleErr), exportedOrNil(d.MeanRoundErr),
				exportedOrNil(d.MeanVariance), d.N, exportedOrNil(mean(ens)), exportedOrNil(mean(roundErr)), exportedOrNil(mean(spread)), len(ens))
		}
		// The position effect: label k of a batch is position k; over
		// every round's readable scores, n, those rated, the mean score
		// and the mean absolute and signed errors (score − rating on the
		// judge's scale).
		type acc struct {
			n, rated         int
			sum, abs, signed float64
		}
		byPos := map[int]*acc{}
		maxPos := 0
		for _, b := range batches {
			if b.CriterionIndex != ci {
				continue
			}
			for k, id := range b.RowIDs {
				i := pos[id]
				if edgeUnreadable(i, b.Round, true) {
					continue
				}
				a := byPos[k+1]
				if a == nil {
					a = &acc{}
					byPos[k+1] = a
				}
				v := edgeScore(i, ci, b.Round)
				a.n, a.sum = a.n+1, a.sum+v
				if h := humans[i]; h != nil {
					e := v - onScale(*h)
					a.rated, a.abs, a.signed = a.rated+1, a.abs+math.Abs(e), a.signed+e
				}
				maxPos = max(maxPos, k+1)
			}
		}
		if len(c.Positions) != maxPos {
			t.Errorf("%s: %d positions exported, want %d", c.Name, len(c.Positions), maxPos)
		}
		for _, p := range c.Positions {
			a := byPos[p.Position]
			if a == nil {
				t.Errorf("%s: position %d exported, no score there", c.Name, p.Position)
				continue
			}
			var abs, signed *float64
			if a.rated > 0 {
				abs, signed = edgeF(a.abs/float64(a.rated)), edgeF(a.signed/float64(a.rated))
			}
			if p.N != a.n || p.Rated != a.rated || !near(p.Mean, edgeF(a.sum/float64(a.n))) || !near(p.Abs, abs) || !near(p.Signed, signed) {
				t.Errorf("%s position %d: exported n %d, rated %d, mean %v, errors %v / %v; recomputed %d, %d, %v, %v / %v", c.Name, p.Position, p.N, p.Rated,
					exportedOrNil(p.Mean), exportedOrNil(p.Abs), exportedOrNil(p.Signed), a.n, a.rated, a.sum/float64(a.n), exportedOrNil(abs), exportedOrNil(signed))
			}
		}
		if ci == 0 && !strings.Contains(d.Note, "mapped linearly from their lowest and highest values") {
			t.Errorf("%s: the decomposition's note %q does not say the ratings were mapped onto the judge's scale", c.Name, d.Note)
		}
	}
}

// edgeCeilingRecomputed checks criterion ci's human ceiling in the export
// (rep) against its textbook figures over the annotator columns q@r1 and
// q@r2 (Quality only; the others have none): Krippendorff's alpha with
// the interval metric over the samples rated by both, 1 − Do/De with
// Do = Σ_u Σ_{i≠j} (v_i − v_j)² / (m_u − 1) / n and De = Σ_{i≠j}
// (v_i − v_j)² / (n(n − 1)) over all n pairable values; and the
// leave-one-annotator-out Pearson r (each annotator with the others'
// mean, averaged: with two, r of one with the other).
func edgeCeilingRecomputed(t *testing.T, ci int, name string, rep []byte) {
	t.Helper()
	var ex struct {
		Criteria []struct {
			HumanCeiling *struct {
				Annotators  int
				Items       int      `json:"items"`
				Alpha       *float64 `json:"krippendorff_alpha"`
				LeaveOneOut *float64 `json:"leave_one_out_pearson"`
			} `json:"human_ceiling"`
		} `json:"criteria"`
	}
	must(t, json.Unmarshal(rep, &ex))
	hc := ex.Criteria[ci].HumanCeiling
	if ci != 0 {
		if hc != nil {
			t.Errorf("%s: a human ceiling %+v without annotator columns", name, *hc)
		}
		return
	}
	var r1, r2 []float64
	for i, q := range edgeQ {
		if q != nil {
			d := edgeSpread[i%3]
			r1, r2 = append(r1, *q-d), append(r2, *q+d)
		}
	}
	var do, de float64
	all := append(append([]float64{}, r1...), r2...)
	n := float64(len(all))
	for u := range r1 {
		do += 2 * (r1[u] - r2[u]) * (r1[u] - r2[u]) // i≠j both ways, m_u − 1 = 1
	}
	for i := range all {
		for j := range all {
			de += (all[i] - all[j]) * (all[i] - all[j])
		}
	}
	alpha := 1 - (do/n)/(de/(n*(n-1)))
	loo := textbookPearson(r1, r2)
	if hc == nil || hc.Annotators != 2 || hc.Items != len(r1) || hc.Alpha == nil || math.Abs(*hc.Alpha-alpha) > 1e-9 ||
		hc.LeaveOneOut == nil || math.Abs(*hc.LeaveOneOut-loo) > 1e-9 {
		t.Errorf("%s: exported human ceiling %+v; recomputed 2 annotators over %d items, alpha %v, leave-one-out %v", name, hc, len(r1), alpha, loo)
	}
}
