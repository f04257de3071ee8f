package handlers

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/internal/shareddata"
	"github.com/batcheval/batcheval/models"
)

// topicalChatPath is the shared Topical-Chat (USR) turn-level export.
var topicalChatPath, _ = shareddata.Path("topical-chat-usr.jsonl")

// tcRow is one row of the Topical-Chat export (its README).
type tcRow struct {
	ID        string             `json:"id"`
	ContextID string             `json:"context_id"`
	Context   string             `json:"context"`
	SystemID  string             `json:"system_id"`
	Response  string             `json:"response"`
	Scores    map[string]float64 `json:"scores"`
}

// tcCriterion is a Topical-Chat quality with the judge scale the
// BatchEval paper asks for it.
type tcCriterion struct {
	name   string
	lo, hi float64
}

// tcCriteria: Engaging and Overall on the paper's [1, 3] and [1, 5],
// Understandable on [0, 2] (so G-Eval's form allows 0).
var tcCriteria = []tcCriterion{{"engagingness", 1, 3}, {"understandability", 0, 2}, {"overall", 1, 5}}

// tcFakeJudge is an OpenAI-compatible judge over HTTP for the three
// sample-wise baselines. What it answers a sample depends only on the
// sample and the criterion (never on the order of the calls), and it keeps
// every answer it gave, so a test can recompute each score from them.
type tcFakeJudge struct {
	rows    []tcRow
	section map[string]int // the prompt's "# Sample" text -> row
	mu      sync.Mutex
	calls   int
	prompt  int
	compl   int
	// logprobs[crit][row] is the G-Eval logprobs answer given, if any;
	// texts[method][crit][row] the sampled or plain answers.
	logprobs map[string]map[int]fakeLogprobAnswer
	texts    map[string]map[string]map[int][]string
}

// fakeLogprobAnswer is the score token of a G-Eval answer with logprobs:
// the token generated and its top alternatives (token -> probability);
// none when top is nil.
type fakeLogprobAnswer struct {
	token string
	top   [][2]any // token, probability, in the order sent
}

func newTCFakeJudge(rows []tcRow) *tcFakeJudge {
	f := &tcFakeJudge{rows: rows, section: map[string]int{}, logprobs: map[string]map[int]fakeLogprobAnswer{},
		texts: map[string]map[string]map[int][]string{}}
	for i, r := range rows {
		f.section[tcSection(r)] = i
	}
	return f
}

// tcSection is the "# Sample" part of a prompt for row r, as the product
// writes it (writeSampleSection): one "Label: value" line per field.
func tcSection(r tcRow) string {
	return "Dialogue history: " + strings.TrimSpace(r.Context) + "\nResponse: " + strings.TrimSpace(r.Response)
}

// tcHash is a number in [0, 1) fixed by its parts.
func tcHash(parts ...string) float64 {
	h := fnv.New64a()
	for _, p := range parts {
		io.WriteString(h, p)
		h.Write([]byte{0})
	}
	return float64(h.Sum64()>>11) / (1 << 53)
}

// quality is the judge's view of row i on criterion c, on [0, 1]: the
// human rating on its observed range with some noise.
func (f *tcFakeJudge) quality(i int, c tcCriterion) float64 {
	// The ranges the README observes.
	r := map[string][2]float64{"engagingness": {1, 3}, "understandability": {0, 1}, "overall": {1, 5}}[c.name]
	q := (f.rows[i].Scores[c.name]-r[0])/(r[1]-r[0]) + 0.5*(tcHash("noise", f.rows[i].ID, c.name)-0.5)
	return math.Min(1, math.Max(0, q))
}

func (f *tcFakeJudge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
		N           int  `json:"n"`
		Logprobs    bool `json:"logprobs"`
		TopLogprobs int  `json:"top_logprobs"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	user := req.Messages[len(req.Messages)-1].Content
	n := max(req.N, 1)
	type choice struct {
		Index        int    `json:"index"`
		Message      any    `json:"message"`
		FinishReason string `json:"finish_reason"`
		Logprobs     any    `json:"logprobs"`
	}
	var choices []choice
	text := func(s string) choice {
		return choice{Index: len(choices), Message: map[string]string{"role": "assistant", "content": s}, FinishReason: "stop"}
	}
	crit := -1
	for k, c := range tcCriteria {
		if strings.Contains(user, "criterion, "+c.name) || strings.Contains(user, "\n"+c.name+":") {
			crit = k
			break
		}
	}
	row := -1
	if _, s, ok := strings.Cut(user, "# Sample\n"); ok {
		s, _, _ = strings.Cut(s, "\n\n")
		if i, ok := f.section[s]; ok {
			row = i
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	record := func(method, c string, i int, ts ...string) {
		if f.texts[method] == nil {
			f.texts[method] = map[string]map[int][]string{}
		}
		if f.texts[method][c] == nil {
			f.texts[method][c] = map[int][]string{}
		}
		f.texts[method][c][i] = append(f.texts[method][c][i], ts...)
	}
	switch {
	case strings.Contains(user, "Do not rate anything yet"): // G-Eval's steps
		choices = append(choices, text("Evaluation Steps:\n1. Read the dialogue history.\n2. Read the response.\n3. Rate it."))
	case row < 0:
		http.Error(w, "no sample found in the prompt", http.StatusInternalServerError)
		return
	case strings.Contains(user, "Evaluation Form (scores ONLY):") && crit >= 0 && req.Logprobs:
		c := tcCriteria[crit]
		x := c.lo + f.quality(row, c)*(c.hi-c.lo)
		kind := int(tcHash("geval-kind", f.rows[row].ID, c.name) * 10)
		if row == 0 {
			kind = 0 // the lead unit's answer has logprobs
		}
		// A spread over the allowed scores around x.
		var ps []float64
		var sum float64
		for s := c.lo; s <= c.hi; s++ {
			p := math.Exp(-(s - x) * (s - x))
			ps, sum = append(ps, p), sum+p
		}
		allowed := 0.9 // the share the allowed scores get together
		out := strconv.Itoa(int(c.hi) + 1)
		switch kind {
		case 6:
			allowed = 0.7 // the judge wrote a score off the scale, mostly meant one on it
		case 7:
			allowed = 0.3 // it meant the score off the scale
		}
		var a fakeLogprobAnswer
		best := 0
		for k, p := range ps {
			if p > ps[best] {
				best = k
			}
			// "2" and " 2" both read as 2.
			a.top = append(a.top, [2]any{strconv.Itoa(int(c.lo) + k), allowed * p / sum * 0.8}, [2]any{" " + strconv.Itoa(int(c.lo)+k), allowed * p / sum * 0.2})
		}
		a.top = append(a.top, [2]any{out, (1 - allowed) * 0.6}, [2]any{"The", (1 - allowed) * 0.4})
		a.token = strconv.Itoa(int(c.lo) + best)
		if kind == 6 || kind == 7 {
			a.token = out
		}
		lp := map[string]any{"content": []map[string]any{{"token": a.token, "logprob": math.Log(0.5), "top_logprobs": func() []map[string]any {
			var tops []map[string]any
			for _, t := range a.top {
				tops = append(tops, map[string]any{"token": t[0], "logprob": math.Log(t[1].(float64))})
			}
			return tops
		}()}}}
		if kind == 8 {
			lp, a.top = nil, nil // no logprobs in this answer
		}
		if f.logprobs[c.name] == nil {
			f.logprobs[c.name] = map[int]fakeLogprobAnswer{}
		}
		f.logprobs[c.name][row] = a
		ch := text(a.token)
		ch.Logprobs = lp
		choices = append(choices, ch)
	case strings.Contains(user, "Evaluation Form (scores ONLY):") && crit >= 0:
		c := tcCriteria[crit]
		all := int(tcHash("geval-kind", f.rows[row].ID, c.name)*10) == 9 && row != 0
		for k := range n {
			x := c.lo + f.quality(row, c)*(c.hi-c.lo) + 1.2*(tcHash("draw", f.rows[row].ID, c.name, strconv.Itoa(len(f.texts["geval"][c.name][row])+k))-0.5)
			s := strconv.Itoa(int(math.Round(math.Min(c.hi, math.Max(c.lo, x)))))
			switch h := tcHash("garble", f.rows[row].ID, c.name, strconv.Itoa(k)); {
			case all || h < 0.08:
				s = "good" // no number
			case h < 0.14:
				s = strconv.Itoa(int(c.hi) + 2) // off the scale
			case h < 0.18:
				s = s + ".5" // not an integer
			}
			record("geval", c.name, row, s)
			choices = append(choices, text(s))
		}
	case strings.Contains(user, "Rating: <score>") && crit >= 0: // CloserLook
		c := tcCriteria[crit]
		none := tcHash("cl-none", f.rows[row].ID, c.name) < 0.05
		for k := range n {
			x := c.lo + f.quality(row, c)*(c.hi-c.lo) + 1.2*(tcHash("cl-draw", f.rows[row].ID, c.name, strconv.Itoa(len(f.texts["closerlook"][c.name][row])+k))-0.5)
			s := "The response is on topic.\nRating: " + strconv.Itoa(int(math.Round(math.Min(c.hi, math.Max(c.lo, x)))))
			switch h := tcHash("cl-garble", f.rows[row].ID, c.name, strconv.Itoa(k)); {
			case none || h < 0.1:
				s = "The response is on topic.\nRating: rather good"
			case h < 0.15:
				s = "The response is on topic.\nRating: " + strconv.Itoa(int(c.hi)+3)
			}
			record("closerlook", c.name, row, s)
			choices = append(choices, text(s))
		}
	case strings.Contains(user, "single JSON object"): // LLM-Eval, 0 to 5
		var parts []string
		for _, c := range tcCriteria {
			v := strconv.FormatFloat(math.Round(f.quality(row, c)*50)/10, 'f', 1, 64)
			switch h := tcHash("llm-garble", f.rows[row].ID, c.name); {
			case h < 0.07:
				continue // left out
			case h < 0.12:
				v = `"high"`
			case h < 0.16:
				v = "7.5" // off the 0-5 scale
			}
			parts = append(parts, fmt.Sprintf("%q: %s", c.name, v))
		}
		s := "{" + strings.Join(parts, ", ") + "}"
		record("llmeval", "", row, s)
		choices = append(choices, text(s))
	default:
		http.Error(w, "unknown prompt", http.StatusInternalServerError)
		return
	}
	pt, ct := 40+len(user)/4, 3*len(choices)+len(choices[0].Message.(map[string]string)["content"])/4
	f.calls++
	f.prompt += pt
	f.compl += ct
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": choices,
		"usage": map[string]int{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}})
}

// TestTopicalChatBaselineFiguresRecomputed runs the three sample-wise
// baselines (G-Eval, LLM-Eval, CloserLook) through the runner on the first
// 60 Topical-Chat samples (ten contexts of six candidate turns; three
// criteria on the BatchEval paper's judge scales), with the built-in
// simulated judge and with a priced judge over HTTP (tcFakeJudge) that
// answers G-Eval with log-probabilities for most samples (some with a
// written score off the scale, enough or too little probability left on
// it, some with none, which sends them to sampling) and drops, garbles or
// puts off the scale some scores of every method. In one experiment per
// judge it recomputes, sharing no code with the product, each score from
// the answers stored (and those the judge over HTTP says it sent) as
// method.md defines it: G-Eval's sum of s·p(s) over the allowed integers,
// p from the top log-probabilities renormalised over them, or the shares of
// the readable sampled answers; LLM-Eval's JSON number per criterion on
// 0 to 5; CloserLook's mean of the readable ratings. From those and the
// human ratings it recomputes every figure the run page, the JSON export
// and the CSV show: Pearson r, Spearman ρ and Kendall τ-b with p-values,
// 95% intervals by the rule the page names (the percentile bootstrap
// from 50 pairs, Fisher's z for Pearson below), n and missing, the
// unreadable counts and shares, the correlations within contexts and at
// the system level, and the calls, tokens and cost; then the experiment
// page's table and its headline: the differences in average Pearson
// with their paired bootstrap intervals, permutation p-values and Holm's
// correction, and the verdict's wording.
func TestTopicalChatBaselineFiguresRecomputed(t *testing.T) {
	f, err := os.Open(topicalChatPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dataset %s is absent; this test needs the shared datasets checkout", topicalChatPath)
	}
	must(t, err)
	var tc []tcRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var r tcRow
		must(t, json.Unmarshal(sc.Bytes(), &r))
		tc = append(tc, r)
	}
	must(t, sc.Err())
	f.Close()
	if len(tc) != 360 {
		t.Fatalf("Topical-Chat has %d rows, its README says 360", len(tc))
	}
	tc = tc[:60]
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, fake := range []bool{false, true} {
			t.Run(map[bool]string{false: "built-in simulated judge", true: "judge over HTTP"}[fake], func(t *testing.T) {
				ctx := context.Background()
				rows := make([]models.DatasetRow, len(tc))
				var cols []string
				for _, c := range tcCriteria {
					cols = append(cols, c.name)
				}
				for i, r := range tc {
					ratings := map[string]*float64{}
					for _, c := range tcCriteria {
						v := r.Scores[c.name]
						ratings[c.name] = &v
					}
					rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "context_id": r.ContextID,
						"system_id": r.SystemID, "context": r.Context, "response": r.Response}, Ratings: ratings}
				}
				ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Topical-Chat", Format: "jsonl", IDColumn: "id",
					Columns: []string{"id", "context_id", "system_id", "context", "response"}, GroupColumn: "context_id",
					Fields: []evaluator.Field{{Column: "context", Label: "Dialogue history"}, {Column: "response", Label: "Response"}}, RatingColumns: cols}
				must(t, env.db.CreateDataset(ctx, &ds, rows))
				e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, Name: "Baselines"}
				must(t, env.db.CreateExperiment(ctx, &e))
				d := env.demo()
				var ec []evaluator.Criterion
				for _, c := range tcCriteria {
					ec = append(ec, evaluator.Criterion{Name: c.name, Description: "How good is the response for " + c.name + "?", Lo: c.lo, Hi: c.hi, HumanColumn: c.name,
						Levels: evaluator.Levels{Low: "poor", Middle: "fair", High: "good"}})
				}
				judgeID, snap, simulated := &d.judge.ID, d.judge.Snapshot(), true
				var fj *tcFakeJudge
				priceIn, priceOut := 2.5, 10.0
				if fake {
					fj = newTCFakeJudge(tc)
					srv := httptest.NewServer(fj)
					t.Cleanup(srv.Close)
					j := models.Judge{WorkspaceID: env.ws.ID, Name: "fake", BaseURL: srv.URL + "/v1", Model: "m", TimeoutSeconds: 5,
						Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, PriceInputPerMTok: &priceIn, PriceOutputPerMTok: &priceOut}
					must(t, env.db.SaveJudge(ctx, &j))
					judgeID, snap, simulated = &j.ID, j.Snapshot(), false
				}
				var runs []models.Run
				finals := map[string][][]*float64{}
				for _, m := range []string{models.MethodGEval, models.MethodLLMEval, models.MethodCloserLook} {
					run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, ExperimentID: &e.ID, JudgeID: judgeID, Name: string(m),
						Method: m, Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(),
						RubricSnapshot: evaluator.Rubric{Task: "Rate the next turn of a chat.", Criteria: ec}, JudgeSnapshot: snap, Simulated: simulated}
					must(t, env.runner.Launch(ctx, &run))
					run = env.waitRun(run.ID, 60*time.Second)
					runs = append(runs, run)
					finals[m] = checkTCRun(t, env, run, fj, tc, priceIn, priceOut)
				}
				checkTCExperiment(t, env, e, runs, finals, tc)
			})
		}
	})
}

// tcRecomputed is what a run's stored answers give, recomputed here:
// score[ci][i] for criterion ci and sample i (nil when unreadable).
// checkTCRun recomputes every figure of run's page and exports from the
// stored answers (and, for the judge over HTTP, the answers fj recorded)
// and the human ratings, and returns the recomputed scores.
func checkTCRun(t *testing.T, env *testEnv, run models.Run, fj *tcFakeJudge, tc []tcRow, priceIn, priceOut float64) [][]*float64 {
	t.Helper()
	ctx := context.Background()
	if want := models.RunFinishedWithGaps; fj != nil && run.Status != want || fj == nil && !run.Completed() {
		t.Fatalf("%s: run %s (%s)", run.Name, run.Status, run.Error)
	}
	var batches []models.RunBatch
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Order("id").Find(&batches).Error)
	var stored []models.RunScore
	must(t, env.db.Gorm.Where("run_id = ?", run.ID).Find(&stored).Error)
	dsRows, err := env.db.ListDatasetRows(ctx, run.DatasetID, 0, 0)
	must(t, err)
	index := map[int64]int{}
	for i, r := range dsRows {
		index[r.ID] = i
	}
	nc := len(tcCriteria)
	got := make([][]*float64, nc)  // stored
	want := make([][]*float64, nc) // recomputed from the answers
	for ci := range nc {
		got[ci], want[ci] = make([]*float64, len(tc)), make([]*float64, len(tc))
	}
	for _, s := range stored {
		got[s.CriterionIndex][index[s.RowID]] = s.Score
	}
	ptr := func(v float64) *float64 { return &v }
	mean := func(vs []float64) *float64 {
		if len(vs) == 0 {
			return nil
		}
		var sum float64
		for _, v := range vs {
			sum += v
		}
		return ptr(sum / float64(len(vs)))
	}
	// rating reads a CloserLook answer's last "Rating: x" line on [lo, hi].
	ratingRE := regexp.MustCompile(`(?im)^\s*rating\s*:\s*([-+]?\d+(?:\.\d+)?)\s*$`)
	rating := func(text string, lo, hi float64) (float64, bool) {
		m := ratingRE.FindAllStringSubmatch(text, -1)
		if m == nil {
			return 0, false
		}
		v, err := strconv.ParseFloat(m[len(m)-1][1], 64)
		return v, err == nil && v >= lo && v <= hi
	}
	// formScore reads a sampled G-Eval answer: one integer on the scale.
	formScore := func(text string, lo, hi float64) (float64, bool) {
		v, err := strconv.Atoi(strings.TrimSpace(text))
		return float64(v), err == nil && float64(v) >= lo && float64(v) <= hi
	}
	// llmScores reads an LLM-Eval answer: a JSON object whose criterion
	// keys hold numbers from 0 to 5.
	llmScores := func(text string) []*float64 {
		var obj map[string]any
		out := make([]*float64, nc)
		if json.Unmarshal([]byte(text), &obj) != nil {
			return out
		}
		for ci, c := range tcCriteria {
			if v, ok := obj[c.name].(float64); ok && v >= 0 && v <= 5 {
				out[ci] = ptr(v)
			}
		}
		return out
	}
	paths := map[string]int{} // how the judge over HTTP's G-Eval scores were formed
	// sampled[ci] counts the sampled answers behind criterion ci's scores
	// and the unreadable ones among them.
	sampled := make([][2]int, nc)
	for _, b := range batches {
		if len(b.RowIDs) != 1 || b.Status != models.BatchDone {
			t.Errorf("%s: unit %d holds %d samples, status %s", run.Name, b.ID, len(b.RowIDs), b.Status)
			continue
		}
		i, ci := index[b.RowIDs[0]], b.CriterionIndex
		c := tcCriteria[ci]
		switch run.Method {
		case models.MethodGEval:
			lp, hadLP := fj.logprobAnswer(c.name, i)
			switch {
			case fj != nil && hadLP && lp.top != nil:
				// p(s) sums the alternatives that read as s, renormalised
				// over the allowed scores; the generated token off the
				// scale needs half the probability on the scale.
				mass := map[int]float64{}
				var total float64
				for _, a := range lp.top {
					if s, err := strconv.Atoi(strings.TrimSpace(a[0].(string))); err == nil && float64(s) >= c.lo && float64(s) <= c.hi {
						mass[s] += a[1].(float64)
						total += a[1].(float64)
					}
				}
				g, err := strconv.Atoi(lp.token)
				onScale := err == nil && float64(g) >= c.lo && float64(g) <= c.hi
				if onScale || total >= 0.5 {
					paths[map[bool]string{true: "logprobs", false: "logprobs, written off the scale"}[onScale]]++
					var sum float64
					for s := int(c.lo); s <= int(c.hi); s++ {
						sum += float64(s) * mass[s] / total
					}
					want[ci][i] = ptr(sum)
					if b.Details["source"] != evaluator.GEvalSourceLogprobs {
						t.Errorf("%s %s %s: scored from %v, want logprobs", run.Name, tc[i].ID, c.name, b.Details["source"])
					}
					break
				}
				fallthrough
			case fj != nil:
				paths["sampled"]++
				texts := fj.texts["geval"][c.name][i]
				if b.Response != strings.Join(texts, "\n---\n") {
					t.Errorf("%s %s %s: stored answer %q, the judge sent %q", run.Name, tc[i].ID, c.name, b.Response, texts)
				}
				var vs []float64
				for _, x := range texts {
					if v, ok := formScore(x, c.lo, c.hi); ok {
						vs = append(vs, v)
					}
				}
				want[ci][i] = mean(vs)
				sampled[ci][0], sampled[ci][1] = sampled[ci][0]+len(texts), sampled[ci][1]+len(texts)-len(vs)
			default:
				// The built-in judge's probabilities, as stored: one per
				// allowed score, summing to 1.
				probs, _ := b.Details["probabilities"].(map[string]any)
				var sum, total float64
				for s := int(c.lo); s <= int(c.hi); s++ {
					p, ok := probs[strconv.Itoa(s)].(float64)
					if !ok {
						t.Errorf("%s %s %s: no probability of %d in %v", run.Name, tc[i].ID, c.name, s, probs)
					}
					sum, total = sum+float64(s)*p, total+p
				}
				if len(probs) != int(c.hi-c.lo)+1 || math.Abs(total-1) > 1e-9 {
					t.Errorf("%s %s %s: probabilities %v do not cover the scale once", run.Name, tc[i].ID, c.name, probs)
				}
				want[ci][i] = ptr(sum)
			}
		case models.MethodCloserLook:
			texts := strings.Split(b.Response, "\n---\n")
			if fj != nil && !slices.Equal(texts, fj.texts["closerlook"][c.name][i]) {
				t.Errorf("%s %s %s: stored answers differ from those the judge sent", run.Name, tc[i].ID, c.name)
			}
			if len(texts) != 20 {
				t.Errorf("%s %s %s: %d sampled answers stored, want 20", run.Name, tc[i].ID, c.name, len(texts))
			}
			var vs []float64
			for _, x := range texts {
				if v, ok := rating(x, c.lo, c.hi); ok {
					vs = append(vs, v)
				}
			}
			want[ci][i] = mean(vs)
			sampled[ci][0], sampled[ci][1] = sampled[ci][0]+len(texts), sampled[ci][1]+len(texts)-len(vs)
		case models.MethodLLMEval:
			if fj != nil && b.Response != fj.texts["llmeval"][""][i][0] {
				t.Errorf("%s %s: stored answer %q, the judge sent %q", run.Name, tc[i].ID, b.Response, fj.texts["llmeval"][""][i])
			}
			for k, v := range llmScores(b.Response) {
				want[k][i] = v
			}
		}
	}
	if fj != nil && run.Method == models.MethodGEval && (paths["logprobs"] == 0 || paths["logprobs, written off the scale"] == 0 || paths["sampled"] == 0) {
		t.Errorf("%s: the judge's answers did not take every path: %v", run.Name, paths)
	}
	// The page says which way G-Eval's scores were estimated (method.md:
	// "report which way was used"), and how many each way.
	if run.Method == models.MethodGEval {
		want := fmt.Sprintf("Every score (%d) was estimated from the endpoint's log-probabilities.", len(tc)*nc)
		if fj != nil {
			lp := paths["logprobs"] + paths["logprobs, written off the scale"]
			want = fmt.Sprintf("Scores estimated from the endpoint's log-probabilities: %d of %d; from 20 sampled answers: %d,", lp, len(tc)*nc, paths["sampled"])
		}
		if page := pageText(env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()); !strings.Contains(page, want) {
			t.Errorf("%s: the run page does not say %q", run.Name, want)
		}
		var export struct {
			Report struct {
				Run struct {
					GEvalSources *struct{ Logprobs, Samples int } `json:"geval_sources"`
				} `json:"run"`
			} `json:"report"`
		}
		must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &export))
		lp, sampled := len(tc)*nc, 0
		if fj != nil {
			lp, sampled = paths["logprobs"]+paths["logprobs, written off the scale"], paths["sampled"]
		}
		if g := export.Report.Run.GEvalSources; g == nil || g.Logprobs != lp || g.Samples != sampled {
			t.Errorf("%s: the export's geval_sources %+v, recomputed %d from log-probabilities and %d sampled", run.Name, g, lp, sampled)
		}
	}
	for ci, c := range tcCriteria {
		for i := range tc {
			g, w := got[ci][i], want[ci][i]
			if (g == nil) != (w == nil) || g != nil && math.Abs(*g-*w) > 1e-12 {
				t.Errorf("%s %s %s: stored score %v, recomputed %v", run.Name, tc[i].ID, c.name, exportedOrNil(g), exportedOrNil(w))
			}
		}
	}
	// Each criterion says how many of the sampled answers behind its
	// scores could not be read.
	cards := strings.Split(env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String(), `data-testid="criterion-card"`)[1:]
	for ci, c := range tcCriteria {
		if ci >= len(cards) || sampled[ci][0] == 0 {
			continue
		}
		share, _ := new(big.Rat).SetString(strconv.FormatFloat(float64(sampled[ci][1])/float64(sampled[ci][0]), 'g', -1, 64))
		share.Mul(share, big.NewRat(100, 1))
		pct := share.FloatString(0) // one decimal below 1%, as the page writes shares
		if share.Sign() > 0 && share.Cmp(big.NewRat(1, 1)) < 0 {
			pct = share.FloatString(1)
		}
		if w := fmt.Sprintf("Of the %s answers sampled for this criterion, those of its missing scores included, %s (%s%%) could not be read;", groupThousands(sampled[ci][0]), groupThousands(sampled[ci][1]), pct); !strings.Contains(pageText(cards[ci]), w) {
			t.Errorf("%s %s: the page does not say %q", run.Name, c.name, w)
		}
	}
	var sampledExport struct {
		Report struct {
			Criteria []struct {
				SampledAnswers *struct{ Answers, Unreadable int } `json:"sampled_answers"`
			} `json:"criteria"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &sampledExport))
	for ci, c := range tcCriteria {
		got := sampledExport.Report.Criteria[ci].SampledAnswers
		if sampled[ci][0] == 0 && got != nil || sampled[ci][0] > 0 && (got == nil || got.Answers != sampled[ci][0] || got.Unreadable != sampled[ci][1]) {
			t.Errorf("%s %s: the export's sampled answers %+v, recomputed %d of which %d unreadable", run.Name, c.name, got, sampled[ci][0], sampled[ci][1])
		}
	}
	if fj != nil && run.Method == models.MethodCloserLook && sampled[0][1] == 0 {
		t.Errorf("%s: every sampled rating was readable; the test needs some that are not", run.Name)
	}
	checkTCRunFigures(t, env, run, batches, want, fj, tc, priceIn, priceOut)
	return want
}

// logprobAnswer is the logprobs answer the judge gave, if it gave one.
func (f *tcFakeJudge) logprobAnswer(crit string, row int) (fakeLogprobAnswer, bool) {
	if f == nil {
		return fakeLogprobAnswer{}, false
	}
	a, ok := f.logprobs[crit][row]
	return a, ok
}

// checkTCRunFigures checks the run page's and the exports' figures against
// those recomputed from score (criterion, sample) and the human ratings.
func checkTCRunFigures(t *testing.T, env *testEnv, run models.Run, batches []models.RunBatch, score [][]*float64, fj *tcFakeJudge, tc []tcRow, priceIn, priceOut float64) {
	t.Helper()
	page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
	text := pageText(page)
	var export struct {
		Report struct {
			Run struct {
				Calls            int     `json:"calls"`
				PromptTokens     int     `json:"prompt_tokens"`
				CompletionTokens int     `json:"completion_tokens"`
				CostUSD          float64 `json:"cost_usd"`
				MissingScores    int     `json:"missing_scores"`
			} `json:"run"`
			Criteria []struct {
				Pearson, Spearman, Kendall struct {
					Coef    *float64 `json:"coef"`
					P       *float64 `json:"p"`
					CILow   *float64 `json:"ci_low"`
					CIHigh  *float64 `json:"ci_high"`
					N       int      `json:"n"`
					Missing int      `json:"missing"`
				}
				IntervalMethod string  `json:"interval_method"`
				Scored         int     `json:"scored"`
				Unreadable     int     `json:"unreadable"`
				UnreadableRate float64 `json:"unreadable_rate"`
				Grouped        struct {
					Pearson, Spearman, Kendall float64
					Groups                     int `json:"groups"`
					Skipped                    int `json:"skipped_groups"`
				} `json:"grouped"`
				SystemLevel struct {
					Pearson, Spearman, Kendall struct {
						Coef    float64 `json:"coef"`
						P       float64 `json:"p"`
						Systems int     `json:"systems"`
					}
				} `json:"system_level"`
				Samples []struct {
					ID    string   `json:"id"`
					Final *float64 `json:"final"`
				} `json:"samples"`
			} `json:"criteria"`
		} `json:"report"`
	}
	must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &export))

	// Calls, tokens and cost: every call the judge answered, as it
	// counted them; the built-in judge's as the units stored them, free.
	calls, tokens, cost := 0, 0, 0.0
	if fj != nil {
		fj.mu.Lock()
		calls, tokens = fj.calls, fj.prompt+fj.compl
		cost = (float64(fj.prompt)*priceIn + float64(fj.compl)*priceOut) / 1e6
		fj.calls, fj.prompt, fj.compl = 0, 0, 0
		fj.mu.Unlock()
	} else {
		for _, b := range batches {
			calls += b.Calls
			tokens += b.PromptTokens + b.CompletionTokens
		}
	}
	ex := export.Report.Run
	if fj == nil && run.Method == models.MethodGEval {
		// The steps, one call per criterion, whose tokens only the run
		// counts.
		calls += len(tcCriteria)
		if steps := ex.PromptTokens + ex.CompletionTokens - tokens; steps > 0 && steps < 3000*len(tcCriteria) {
			tokens += steps
		}
	}
	// The export writes the cost to the micro-dollar (docs/export-schema.md).
	if ex.Calls != calls || ex.PromptTokens+ex.CompletionTokens != tokens || math.Abs(ex.CostUSD-cost) > 0.5e-6+1e-12 {
		t.Errorf("%s: export %+v; the judge answered %d calls, %d tokens, cost %v", run.Name, ex, calls, tokens, cost)
	}
	for _, w := range []string{fmt.Sprintf("Calls %s ", groupThousands(calls)), "Tokens " + groupThousands(tokens) + " "} {
		if !strings.Contains(text, w) {
			t.Errorf("%s: the run page does not say %q", run.Name, w)
		}
	}
	if m := regexp.MustCompile(`Cost (\$\S+)`).FindStringSubmatch(text); fj != nil && (m == nil || !sameMoney(m[1], cost)) {
		t.Errorf("%s: the run page's cost %v, recomputed $%v", run.Name, m, cost)
	}
	missingAll := 0
	for ci := range tcCriteria {
		for i := range tc {
			if score[ci][i] == nil {
				missingAll++
			}
		}
	}
	if ex.MissingScores != missingAll || !strings.Contains(text, fmt.Sprintf("Unreadable scores %d ", missingAll)) {
		t.Errorf("%s: export's missing scores %d, recomputed %d (also on the page as unreadable answers)", run.Name, ex.MissingScores, missingAll)
	}

	// The CSV: one line per sample, its final score per criterion.
	csvRows := readCSV(t, env.get(fmt.Sprintf("/runs/%d/export.csv", run.ID)).Body.String())
	cards := strings.Split(page, `data-testid="criterion-card"`)[1:]
	if len(cards) != len(tcCriteria) {
		t.Fatalf("%s: %d criterion cards, want %d", run.Name, len(cards), len(tcCriteria))
	}
	for ci, c := range tcCriteria {
		name := run.Name + " " + c.name
		card := strings.ReplaceAll(pageText(cards[ci]), "< 0.001", "<")
		ec := export.Report.Criteria[ci]
		var xs, ys []float64
		var groups, systems []string
		for i, r := range tc {
			final := ec.Samples[i].Final
			if ec.Samples[i].ID != r.ID || (final == nil) != (score[ci][i] == nil) || final != nil && math.Abs(*final-*score[ci][i]) > 1e-12 {
				t.Errorf("%s: the export's sample %d is %s with %v, recomputed %s with %v", name, i, ec.Samples[i].ID, exportedOrNil(final), r.ID, exportedOrNil(score[ci][i]))
			}
			cell := csvRows[i+1][slices.Index(csvRows[0], c.name+" final")]
			if score[ci][i] == nil && cell != "" || score[ci][i] != nil && (cell == "" || !sameFloat(cell, *score[ci][i])) {
				t.Errorf("%s: the CSV's final of %s is %q, recomputed %v", name, r.ID, cell, exportedOrNil(score[ci][i]))
			}
			if score[ci][i] != nil {
				xs, ys = append(xs, *score[ci][i]), append(ys, r.Scores[c.name])
				groups, systems = append(groups, r.ContextID), append(systems, r.SystemID)
			}
		}
		n, missing := len(xs), len(tc)-len(xs)
		rank := func(a, b []float64) float64 { return textbookPearson(averageRanks(a), averageRanks(b)) }
		r, rho, tau := textbookPearson(xs, ys), rank(xs, ys), textbookTauB(xs, ys)
		// Below 50 pairs Pearson's interval is Fisher's z; else all three
		// are the percentile bootstrap (stats.SmallSampleBelow).
		rlo, rhi, _ := percentileBootstrap(xs, ys, textbookPearson)
		wantMethod := "bootstrap"
		if n < 50 {
			rlo, rhi = math.Tanh(math.Atanh(r)-1.959963984540054/math.Sqrt(float64(n-3))), math.Tanh(math.Atanh(r)+1.959963984540054/math.Sqrt(float64(n-3)))
			wantMethod = "small-sample"
		}
		if ec.IntervalMethod != wantMethod {
			t.Errorf("%s: intervals by %q on %d pairs, want %q", name, ec.IntervalMethod, n, wantMethod)
		}
		slo, shi, _ := percentileBootstrap(xs, ys, rank)
		klo, khi, _ := percentileBootstrap(xs, ys, textbookTauB)
		type fig struct {
			name            string
			coef, p, lo, hi float64
			ex              struct {
				Coef    *float64 `json:"coef"`
				P       *float64 `json:"p"`
				CILow   *float64 `json:"ci_low"`
				CIHigh  *float64 `json:"ci_high"`
				N       int      `json:"n"`
				Missing int      `json:"missing"`
			}
		}
		for _, g := range []fig{{"Pearson r", r, tTestP(r, n), rlo, rhi, ec.Pearson}, {"Spearman ρ", rho, tTestP(rho, n), slo, shi, ec.Spearman},
			{"Kendall τ-b", tau, textbookKendallP(xs, ys), klo, khi, ec.Kendall}} {
			for _, v := range []struct {
				what      string
				got       *float64
				want, tol float64
			}{{"coefficient", g.ex.Coef, g.coef, 1e-12}, {"p-value", g.ex.P, g.p, 1e-9 * math.Max(1, g.p)}, {"interval low", g.ex.CILow, g.lo, 1e-9}, {"interval high", g.ex.CIHigh, g.hi, 1e-9}} {
				if v.got == nil || math.Abs(*v.got-v.want) > v.tol && math.Abs(*v.got-v.want) > 1e-9*math.Abs(v.want) {
					t.Errorf("%s %s: the export's %s %v, recomputed %v", name, g.name, v.what, exportedOrNil(v.got), v.want)
				}
			}
			if g.ex.N != n || g.ex.Missing != missing {
				t.Errorf("%s %s: the export's n %d missing %d, recomputed %d and %d", name, g.name, g.ex.N, g.ex.Missing, n, missing)
			}
			m := regexp.MustCompile(regexp.QuoteMeta(g.name) + ` (\S+) (\S+) (\S+) to (\S+) (\d+) (\d+)`).FindStringSubmatch(card)
			if m == nil {
				t.Errorf("%s: no %s row on the page", name, g.name)
				continue
			}
			shown(t, name+" "+g.name+" coefficient", m[1], g.coef, 3)
			shownP(t, name+" "+g.name+" p-value", m[2], g.p)
			shown(t, name+" "+g.name+" interval low", m[3], g.lo, 3)
			shown(t, name+" "+g.name+" interval high", m[4], g.hi, 3)
			if m[5] != strconv.Itoa(n) || m[6] != strconv.Itoa(missing) {
				t.Errorf("%s %s: the page's n %s missing %s, recomputed %d and %d", name, g.name, m[5], m[6], n, missing)
			}
		}

		// Missing scores: every sample was answered, so each missing one
		// is an unreadable answer.
		pct := readerRounds(100*float64(missing)/float64(len(tc)), 0, false)
		if ec.Scored != n || ec.Unreadable != missing || math.Abs(ec.UnreadableRate-float64(missing)/float64(len(tc))) > 1e-15 ||
			!strings.Contains(card, fmt.Sprintf("Unreadable scores: %d of %d answered scores (%s%%)", missing, len(tc), pct)) {
			t.Errorf("%s: the export's scored %d unreadable %d (%v); want %d and %d, said on the page (%s%%)", name, ec.Scored, ec.Unreadable, ec.UnreadableRate, n, missing, pct)
		}

		// Within contexts: each context's coefficient (at least three
		// pairs, neither side constant), unweighted mean over contexts.
		byGroup := map[string][2][]float64{}
		for k, g := range groups {
			p := byGroup[g]
			p[0], p[1] = append(p[0], xs[k]), append(p[1], ys[k])
			byGroup[g] = p
		}
		gcoef := func(coef func(a, b []float64) float64) (float64, int, int) {
			var sum float64
			used, skipped := 0, 0
			for _, p := range byGroup {
				v := math.NaN()
				if len(p[0]) >= 3 {
					v = coef(p[0], p[1])
				}
				if math.IsNaN(v) || math.IsInf(v, 0) {
					skipped++
					continue
				}
				sum, used = sum+v, used+1
			}
			return sum / float64(used), used, skipped
		}
		within := regexp.MustCompile(`Coefficient All samples Within groups \(mean\) Groups used Groups skipped Samples without a group (.*?) A group is skipped`).FindStringSubmatch(card)
		for _, w := range []struct {
			name string
			coef func(a, b []float64) float64
			ex   float64
		}{{"Pearson r", textbookPearson, ec.Grouped.Pearson}, {"Spearman ρ", rank, ec.Grouped.Spearman}, {"Kendall τ-b", textbookTauB, ec.Grouped.Kendall}} {
			v, used, skipped := gcoef(w.coef)
			if math.Abs(w.ex-v) > 1e-12 || ec.Grouped.Groups != used || ec.Grouped.Skipped != skipped {
				t.Errorf("%s: the export's within-context %s %v over %d groups (%d skipped), recomputed %v over %d (%d)", name, w.name, w.ex, ec.Grouped.Groups, ec.Grouped.Skipped, v, used, skipped)
			}
			var m []string
			if within != nil {
				m = regexp.MustCompile(regexp.QuoteMeta(w.name) + ` (\S+) (\S+) (\d+) (\d+) (\d+)`).FindStringSubmatch(within[1])
			}
			if m == nil {
				t.Errorf("%s: no within-context %s on the page", name, w.name)
				continue
			}
			shown(t, name+" within-context "+w.name, m[2], v, 3)
			if m[3] != strconv.Itoa(used) || m[4] != strconv.Itoa(skipped) {
				t.Errorf("%s: within-context %s over %s groups (%s skipped) on the page, recomputed %d (%d)", name, w.name, m[3], m[4], used, skipped)
			}
		}

		// The system level: each system's mean score and mean rating over
		// its samples with both, correlated over the six systems.
		sys := map[string][3]float64{}
		for k, s := range systems {
			v := sys[s]
			v[0], v[1], v[2] = v[0]+xs[k], v[1]+ys[k], v[2]+1
			sys[s] = v
		}
		var sx, sy []float64
		for _, s := range slices.Sorted(func(yield func(string) bool) {
			for k := range sys {
				if !yield(k) {
					return
				}
			}
		}) {
			sx, sy = append(sx, sys[s][0]/sys[s][2]), append(sy, sys[s][1]/sys[s][2])
		}
		sysText := card[strings.Index(card, "Coefficient All samples Within groups (mean) Systems (means)"):]
		for _, w := range []struct {
			name    string
			coef, p float64
			ex      struct {
				Coef    float64 `json:"coef"`
				P       float64 `json:"p"`
				Systems int     `json:"systems"`
			}
		}{
			{"Pearson r", textbookPearson(sx, sy), tTestP(textbookPearson(sx, sy), len(sx)), ec.SystemLevel.Pearson},
			{"Spearman ρ", rank(sx, sy), exactP(sx, sy, rank), ec.SystemLevel.Spearman},
			{"Kendall τ-b", textbookTauB(sx, sy), exactP(sx, sy, textbookTauB), ec.SystemLevel.Kendall},
		} {
			if math.Abs(w.ex.Coef-w.coef) > 1e-12 || math.Abs(w.ex.P-w.p) > 1e-9 || w.ex.Systems != len(sx) {
				t.Errorf("%s: the export's system-level %s %+v, recomputed %v (p %v) over %d systems", name, w.name, w.ex, w.coef, w.p, len(sx))
			}
			m := regexp.MustCompile(regexp.QuoteMeta(w.name) + ` \S+ \S+ (\S+) (\S+ to \S+|undefined) (\S+) (\d+)`).FindStringSubmatch(sysText)
			if m == nil {
				t.Errorf("%s: no system-level %s on the page", name, w.name)
				continue
			}
			shown(t, name+" system-level "+w.name, m[1], w.coef, 3)
			// Pearson's and Spearman's intervals are Fisher's over the
			// systems' means; a rank coefficient over fewer than 8
			// systems has none (stats.RankBootstrapMin), as over fewer
			// samples.
			systemIntervalShown(t, name+" system-level "+w.name, m[2], w.name, w.coef, len(sx))
			shownP(t, name+" system-level "+w.name+" p-value", m[3], w.p)
			if m[4] != strconv.Itoa(len(sx)) {
				t.Errorf("%s: %s systems on the page, recomputed %d", name, m[4], len(sx))
			}
		}
	}
}

// sameFloat says whether a CSV cell is v as the CSV writes scores for
// people: rounded to at most four decimals (report.HumanNumber).
func sameFloat(cell string, v float64) bool {
	f, err := strconv.ParseFloat(cell, 64)
	_, frac, _ := strings.Cut(cell, ".")
	return err == nil && len(frac) <= 4 && math.Abs(f-v) <= 0.5e-4+1e-12
}

// readCSV reads a CSV export into its records.
func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	must(t, err)
	return recs
}

// checkTCExperiment checks the experiment page's table and headline
// against the runs' recomputed scores: each run's Pearson r and Spearman ρ
// per criterion and their averages, tokens and cost per sample, calls and
// failures; and, as the page says it decides, the best row against each
// other on the samples both scored: the difference in average Pearson,
// its 95% paired bootstrap interval, the paired permutation test (1000
// swaps of the two runs' scores per sample, seeded as the report package
// documents) and Holm's correction, and the headline's wording.
func checkTCExperiment(t *testing.T, env *testEnv, e models.Experiment, runs []models.Run, finals map[string][][]*float64, tc []tcRow) {
	t.Helper()
	page := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
	text := strings.ReplaceAll(pageText(page), "< 0.001", "<")
	nc := len(tcCriteria)
	human := make([][]float64, nc)
	for ci, c := range tcCriteria {
		for _, r := range tc {
			human[ci] = append(human[ci], r.Scores[c.name])
		}
	}
	// scale is the range a run's scores are on: LLM-Eval's 0 to 5, the
	// others' the criterion's.
	scale := func(run models.Run, ci int) (float64, float64) {
		if run.Method == models.MethodLLMEval {
			return 0, 5
		}
		return tcCriteria[ci].lo, tcCriteria[ci].hi
	}
	pearsonOf := func(v []*float64, h []float64) (float64, float64) {
		var xs, ys []float64
		for i := range v {
			if v[i] != nil {
				xs, ys = append(xs, *v[i]), append(ys, h[i])
			}
		}
		return textbookPearson(xs, ys), textbookPearson(averageRanks(xs), averageRanks(ys))
	}
	avgP := map[int64]float64{}
	for _, run := range runs {
		at := strings.Index(text, " "+run.Name+" "+map[bool]string{false: "finished with gaps", true: "succeeded simulated judge"}[run.Simulated]+" ")
		if at < 0 {
			t.Errorf("the experiment page has no row for %s", run.Name)
			continue
		}
		m := regexp.MustCompile(`^ \S+ (?:finished with gaps|succeeded simulated judge) \S+(?: \(analyze-rate\))? ((?:\S+ ){8})(\d+) \$(\S+(?: \(simulated\))?) (\d+) (\d+)`).FindStringSubmatch(text[at:])
		if m == nil {
			t.Errorf("the experiment page has no row for %s: %.200s", run.Name, text[at:])
			continue
		}
		cells := strings.Fields(m[1])
		var sumR, sumS float64
		for ci := range nc {
			r, rho := pearsonOf(finals[run.Name][ci], human[ci])
			shown(t, run.Name+" "+tcCriteria[ci].name+" r in the experiment table", cells[2*ci], r, 3)
			shown(t, run.Name+" "+tcCriteria[ci].name+" ρ in the experiment table", cells[2*ci+1], rho, 3)
			sumR, sumS = sumR+r, sumS+rho
		}
		avgP[run.ID] = sumR / float64(nc)
		shown(t, run.Name+" average r", cells[6], avgP[run.ID], 3)
		shown(t, run.Name+" average ρ", cells[7], sumS/float64(nc), 3)
		missing := 0
		for ci := range nc {
			for _, v := range finals[run.Name][ci] {
				if v == nil {
					missing++
				}
			}
		}
		perSample := float64(run.PromptTokens+run.CompletionTokens) / float64(len(tc))
		if m[2] != readerRounds(perSample, 0, false) || m[4] != strconv.Itoa(run.Calls) || m[5] != strconv.Itoa(missing) {
			t.Errorf("%s: tokens per sample %s, calls %s, failures %s; recomputed %v, %d, %d", run.Name, m[2], m[4], m[5], perSample, run.Calls, missing)
		}
		if run.Simulated && m[3] != "0 (simulated)" || !run.Simulated && !sameMoney("$"+m[3], *run.CostUSD/float64(len(tc))) {
			t.Errorf("%s: cost per sample $%s, recomputed %v", run.Name, m[3], *run.CostUSD/float64(len(tc)))
		}
	}

	// The best row, and the paired tests against it.
	order := slices.Clone(runs)
	slices.SortStableFunc(order, func(a, b models.Run) int { return -cmpFloat(avgP[a.ID], avgP[b.ID]) })
	best := order[0]
	type test struct {
		run                   models.Run
		a, b, diff, lo, hi, p float64
	}
	var tests []test
	for _, other := range order[1:] {
		// Per criterion the samples with both scores and a rating; the
		// other run's scores put on the best run's scale.
		a, b := make([][]float64, nc), make([][]float64, nc)
		for ci := range nc {
			alo, ahi := scale(best, ci)
			blo, bhi := scale(other, ci)
			for i := range tc {
				va, vb := math.NaN(), math.NaN()
				if v := finals[best.Name][ci][i]; v != nil {
					va = *v
				}
				if v := finals[other.Name][ci][i]; v != nil {
					vb = alo + (*v-blo)*(ahi-alo)/(bhi-blo)
				}
				a[ci], b[ci] = append(a[ci], va), append(b[ci], vb)
			}
		}
		// The samples in the order of their values (criterion by
		// criterion: rating, A's score, B's score), as the comparison
		// resamples them.
		idx := make([]int, len(tc))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(x, y int) int {
			for ci := range nc {
				for _, s := range [][]float64{human[ci], a[ci], b[ci]} {
					if c := cmpFloat(s[x], s[y]); c != 0 {
						return c
					}
				}
			}
			return 0
		})
		diffOf := func(pick []int, swap []bool) (float64, float64, float64) {
			var sa, sb float64
			for ci := range nc {
				var xa, xb, xh []float64
				for k, j := range pick {
					va, vb := a[ci][idx[j]], b[ci][idx[j]]
					if swap != nil && swap[k] {
						va, vb = vb, va
					}
					if !math.IsNaN(va) && !math.IsNaN(vb) {
						xa, xb, xh = append(xa, va), append(xb, vb), append(xh, human[ci][idx[j]])
					}
				}
				ra, rb := textbookPearson(xa, xh), textbookPearson(xb, xh)
				if math.IsNaN(ra) || math.IsNaN(rb) {
					return math.NaN(), 0, 0
				}
				sa, sb = sa+ra, sb+rb
			}
			return (sa - sb) / float64(nc), sa / float64(nc), sb / float64(nc)
		}
		all := make([]int, len(tc))
		for i := range all {
			all[i] = i
		}
		diff, ma, mb := diffOf(all, nil)
		perm := rand.New(rand.NewPCG(20240102, 0x7065726d75746521))
		swap := make([]bool, len(tc))
		extreme := 0
		for range 1000 {
			for i := range swap {
				swap[i] = perm.IntN(2) == 1
			}
			if d, _, _ := diffOf(all, swap); !math.IsNaN(d) && math.Abs(d) >= math.Abs(diff)-1e-12 {
				extreme++
			}
		}
		boot := rand.New(rand.NewPCG(20240102, 0x70616972656462))
		var diffs []float64
		pick := make([]int, len(tc))
		for range 1000 {
			for i := range pick {
				pick[i] = boot.IntN(len(tc))
			}
			if d, _, _ := diffOf(pick, nil); !math.IsNaN(d) {
				diffs = append(diffs, d)
			}
		}
		slices.Sort(diffs)
		q := func(p float64) float64 {
			pos := float64(len(diffs)-1) * p
			l := math.Floor(pos)
			return diffs[int(l)] + (pos-l)*(diffs[int(math.Ceil(pos))]-diffs[int(l)])
		}
		tests = append(tests, test{other, ma, mb, diff, q(0.025), q(0.975), float64(1+extreme) / 1001})
	}
	// Holm: the k-th smallest p times (m − k), capped at 1, never below
	// the one before.
	adj := make([]float64, len(tests))
	byP := make([]int, len(tests))
	for i := range byP {
		byP[i] = i
	}
	slices.SortStableFunc(byP, func(x, y int) int { return cmpFloat(tests[x].p, tests[y].p) })
	running := 0.0
	for k, i := range byP {
		running = math.Max(running, math.Min(1, float64(len(tests)-k)*tests[i].p))
		adj[i] = running
	}
	pText := func(p float64) string {
		switch {
		case p < 0.001:
			return "p <"
		case p < 0.0995:
			return "p = " + readerRounds(p, 3, false)
		}
		return "p = " + readerRounds(p, 2, false)
	}
	for k, c := range tests {
		line := regexp.MustCompile(regexp.QuoteMeta(best.Name+" − "+c.run.Name+": ") + `(\S+) in average Pearson \(95% interval (\S+) to (\S+), permutation (p = \S+|p <), Holm-adjusted (p = \S+|p <)\)`).FindStringSubmatch(text)
		if line == nil {
			t.Errorf("the headline's tests have no line %s − %s", best.Name, c.run.Name)
			continue
		}
		shown(t, best.Name+" − "+c.run.Name+" difference", line[1], c.diff, 3)
		shown(t, best.Name+" − "+c.run.Name+" interval low", line[2], c.lo, 3)
		shown(t, best.Name+" − "+c.run.Name+" interval high", line[3], c.hi, 3)
		if strings.TrimSuffix(line[4], ")") != pText(c.p) || strings.TrimSuffix(line[5], ")") != pText(adj[k]) {
			t.Errorf("%s − %s: permutation %s, Holm-adjusted %s; recomputed %v (%s) and %v (%s)", best.Name, c.run.Name, line[4], line[5], c.p, pText(c.p), adj[k], pText(adj[k]))
		}
		// Where the samples both runs scored give other averages than the
		// table's (at its three decimals), the line says them.
		both := regexp.MustCompile(regexp.QuoteMeta(line[0]) + `; on the samples both runs scored, (\S+) against (\S+) \(`).FindStringSubmatch(text)
		differs := readerRounds(c.a, 3, false) != readerRounds(avgP[best.ID], 3, false) || readerRounds(c.b, 3, false) != readerRounds(avgP[c.run.ID], 3, false)
		if differs != (both != nil) {
			t.Errorf("%s − %s: the line gives the shared samples' averages: %v; they differ from the table's: %v (%v, %v)", best.Name, c.run.Name, both != nil, differs, c.a, c.b)
		} else if both != nil {
			shown(t, best.Name+" on the samples both scored", both[1], c.a, 3)
			shown(t, c.run.Name+" on the samples both scored", both[2], c.b, 3)
		}
	}
	// The cost line sets the best run against the next best (every run
	// is of another method): its cost per sample and how many times as
	// much the other's is, one decimal.
	if next := order[1]; !best.Simulated {
		m := regexp.MustCompile(`Cost: ` + regexp.QuoteMeta(best.Name) + ` \(average Pearson (\S+)\) costs (\$\S+) per sample; ` + regexp.QuoteMeta(next.Name) +
			` \(average Pearson (\S+)\) costs (\S+)× as much per sample\.`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("the experiment page has no cost line for %s against %s", best.Name, next.Name)
		} else {
			shown(t, "the cost line's average Pearson of "+best.Name, m[1], avgP[best.ID], 2)
			shown(t, "the cost line's average Pearson of "+next.Name, m[3], avgP[next.ID], 2)
			if !sameMoney(m[2], *best.CostUSD/float64(len(tc))) {
				t.Errorf("the cost line says %s per sample, recomputed %v", m[2], *best.CostUSD/float64(len(tc)))
			}
			shown(t, "the cost line's ratio", m[4], *next.CostUSD / *best.CostUSD, 1)
		}
	}
	// The headline: the best is named only when it is significantly
	// better (Holm-adjusted p below 0.05) than every other row.
	beatsAll := true
	for k, c := range tests {
		if !(adj[k] < 0.05 && c.diff > 0) {
			beatsAll = false
		}
	}
	if beatsAll {
		next := tests[0]
		want := fmt.Sprintf("On your data, %s agrees best with your ratings (average Pearson %s): significantly better than the next, %s (%s; difference %s, Holm-adjusted %s).",
			best.Name, readerRounds(avgP[best.ID], 2, false), next.run.Name, readerRounds(avgP[next.run.ID], 2, false), readerRounds(next.diff, 3, true), strings.Replace(pText(adj[0]), "p <", "p < 0.001", 1))
		if !strings.Contains(pageText(page), want) {
			t.Errorf("the headline does not say %q", want)
		}
	} else if slices.IndexFunc(adj, func(p float64) bool { return p < 0.05 }) < 0 {
		names := make([]string, len(order))
		for k, r := range order {
			names[k] = fmt.Sprintf("%s (%s)", r.Name, readerRounds(avgP[r.ID], 2, false))
		}
		want := fmt.Sprintf("On your data, %s and %s are statistically tied in average Pearson with your ratings: the differences are within what chance gives on these samples (Holm-adjusted p ≥ 0.05).",
			strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
		if !strings.Contains(pageText(page), want) {
			t.Errorf("the headline does not say %q", want)
		}
	} else if !strings.Contains(text, "On your data, no run can be named best") {
		t.Errorf("the headline names a best run though it does not beat every other significantly")
	}
}

// cmpFloat orders floats with NaN first, as cmp.Compare does.
func cmpFloat(a, b float64) int { return cmp.Compare(a, b) }
