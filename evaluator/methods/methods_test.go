package methods

import (
	"context"
	"errors"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

func TestRegistry(t *testing.T) {
	var names []string
	for _, m := range All() {
		names = append(names, string(m.Name()))
	}
	if got := strings.Join(names, " "); got != "batcheval geval llmeval closerlook" {
		t.Errorf("registered methods in order: %s", got)
	}
	tests := []struct {
		name, label     string
		rounds, batched bool
		unit            string
	}{
		{"", "BatchEval", true, true, "batch"},
		{"batcheval", "BatchEval", true, true, "batch"},
		{"geval", "G-Eval", false, false, "sample"},
		{"llmeval", "LLM-Eval", false, false, "sample"},
		{"closerlook", "CloserLook (analyze-rate)", false, false, "sample"},
	}
	for _, tt := range tests {
		m, err := Lookup(tt.name)
		if err != nil {
			t.Fatalf("%q: %v", tt.name, err)
		}
		w := m.Words()
		if m.Label() != tt.label || (w.Round != "") != tt.rounds || m.Batched() != tt.batched || w.Unit != tt.unit {
			t.Errorf("%q: label %q, words %+v, batched %v", tt.name, m.Label(), w, m.Batched())
		}
	}
	if _, err := Lookup("rouge"); err == nil || !strings.Contains(err.Error(), "batcheval, geval, llmeval, closerlook") {
		t.Errorf("unknown method: %v", err)
	}
	if Label("rouge") != "rouge" || For("rouge").Name() != evaluator.MethodBatchEval {
		t.Errorf("unknown names are shown as they are and run as BatchEval")
	}
}

// TestStandardSetupsComeFromTheMethods checks that the standard comparison
// is every method's own setups in table order, with the launch's settings
// and method settings, and what each method declares it reads.
func TestStandardSetupsComeFromTheMethods(t *testing.T) {
	base := evaluator.DefaultSettings()
	base.Temperature, base.Seed = 0.7, 5
	ms := evaluator.DefaultMethodSettings()
	ms.Samples = 7
	setups := StandardSetups(base, ms)
	want := []struct {
		name   string
		method evaluator.Method
		temp   float64
		check  func(evaluator.Settings) bool
	}{
		{"BatchEval (default)", evaluator.MethodBatchEval, 0.7, func(s evaluator.Settings) bool { return s == base }},
		{"BatchEval, one stage", evaluator.MethodBatchEval, 0.7, func(s evaluator.Settings) bool { return s.Procedure == evaluator.OneStage }},
		{"BatchEval, three stage", evaluator.MethodBatchEval, 0.7, func(s evaluator.Settings) bool { return s.Procedure == evaluator.ThreeStage }},
		{"BatchEval, random batches", evaluator.MethodBatchEval, 0.7, func(s evaluator.Settings) bool { return s.Composition == evaluator.Random }},
		{"BatchEval, homogeneous batches", evaluator.MethodBatchEval, 0.7, func(s evaluator.Settings) bool { return s.Composition == evaluator.Homogeneous }},
		{"BatchEval, integer scores", evaluator.MethodBatchEval, 0.7, func(s evaluator.Settings) bool { return s.Scoring == evaluator.Integer }},
		{"G-Eval", evaluator.MethodGEval, 0.7, func(s evaluator.Settings) bool { return s == base }},
		{"LLM-Eval", evaluator.MethodLLMEval, 0, func(s evaluator.Settings) bool { return s.Seed == 5 }},
		{"CloserLook (analyze-rate)", evaluator.MethodCloserLook, 0.7, func(s evaluator.Settings) bool { return s == base }},
	}
	if len(setups) != len(want) {
		t.Fatalf("%d setups, want %d: %+v", len(setups), len(want), setups)
	}
	for i, w := range want {
		s := setups[i]
		if s.Name != w.name || s.Method != w.method || s.Settings.Temperature != w.temp || !w.check(s.Settings) || s.MethodSettings.Samples != 7 {
			t.Errorf("setup %d: %q %s %+v %+v; want %q %s temperature %g", i, s.Name, s.Method, s.Settings, s.MethodSettings, w.name, w.method, w.temp)
		}
	}

	reads := []struct {
		method           evaluator.Method
		reads, ignores   []Setting
		readsMethodSetts bool
	}{
		{evaluator.MethodBatchEval, []Setting{SettingRounds, SettingBatchSize, SettingTemperature, SettingTopP, SettingSeed, SettingMaxTokens}, []Setting{SettingSamples, SettingGEvalSteps}, false},
		{evaluator.MethodGEval, []Setting{SettingSamples, SettingSampleTemperature, SettingUseLogprobs, SettingGEvalSteps, SettingSeed}, []Setting{SettingRounds, SettingTemperature, SettingTopP, SettingMaxTokens}, true},
		{evaluator.MethodLLMEval, []Setting{SettingTemperature, SettingLLMEvalScale, SettingSeed, SettingMaxTokens}, []Setting{SettingSamples, SettingRounds}, true},
		{evaluator.MethodCloserLook, []Setting{SettingSamples, SettingSampleTemperature, SettingSeed, SettingMaxTokens}, []Setting{SettingTopP, SettingBatchSize}, true},
	}
	for _, tt := range reads {
		m, err := Lookup(string(tt.method))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range tt.reads {
			if !Reads(m, s) {
				t.Errorf("%s does not read %s", tt.method, s)
			}
		}
		for _, s := range tt.ignores {
			if Reads(m, s) {
				t.Errorf("%s reads %s", tt.method, s)
			}
		}
		if MethodSettingsRead(m) != tt.readsMethodSetts {
			t.Errorf("%s: reads method settings %v, want %v", tt.method, !tt.readsMethodSetts, tt.readsMethodSetts)
		}
		if v := m.PromptVersion(); !strings.HasPrefix(v, string(tt.method)+"/") {
			t.Errorf("%s: prompt version %q", tt.method, v)
		}
	}
}

func TestPassesAndPrepare(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "A", Lo: 1, Hi: 3}, {Name: "B", Lo: 1, Hi: 5}}}
	tests := []struct {
		method string
		passes string
		check  func(r Run) string
	}{
		{"batcheval", "[[0] [1]]", func(r Run) string {
			if r.Settings.Rounds != 5 || r.Settings.BatchSize != 10 || r.MethodSettings.Samples != 0 {
				return "BatchEval changed its settings"
			}
			return ""
		}},
		{"geval", "[[0] [1]]", func(r Run) string {
			if r.Settings.Rounds != 1 || r.Settings.BatchSize != 1 || r.MethodSettings.Samples != 20 || r.MethodSettings.MinAllowedMass != evaluator.GEvalMinAllowedMass {
				return "G-Eval: want 1 round of 1 sample, n = 20 and the recorded threshold"
			}
			return ""
		}},
		{"llmeval", "[[0 1]]", func(r Run) string {
			if r.Rubric.Criteria[1].Hi != 5 || r.Rubric.Criteria[0].Lo != 0 {
				return "LLM-Eval: criteria not on its 0-5 scale"
			}
			return ""
		}},
		{"closerlook", "[[0] [1]]", func(r Run) string {
			if r.MethodSettings.CloserLookTopP != 1 || r.MethodSettings.CloserLookScoring != evaluator.Integer {
				return "CloserLook: want top_p 1 and integer ratings recorded"
			}
			return ""
		}},
	}
	for _, tt := range tests {
		m, _ := Lookup(tt.method)
		r := Run{Settings: evaluator.DefaultSettings(), Rubric: rub}
		if err := m.Prepare(&r); err != nil {
			t.Fatalf("%s: %v", tt.method, err)
		}
		if got := fmtPasses(m.Passes(r.Rubric)); got != tt.passes {
			t.Errorf("%s: passes %s, want %s", tt.method, got, tt.passes)
		}
		if msg := tt.check(r); msg != "" {
			t.Errorf("%s: %s", tt.method, msg)
		}
	}
}

func fmtPasses(p [][]int) string {
	var parts []string
	for _, pass := range p {
		var s []string
		for _, c := range pass {
			s = append(s, string(rune('0'+c)))
		}
		parts = append(parts, "["+strings.Join(s, " ")+"]")
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestMemoDecidesOnce: of many concurrent units, one probes and the others
// wait for its answer; a probe that learns nothing lets the next one try.
func TestMemoDecidesOnce(t *testing.T) {
	m := NewMemo(nil)
	var probes atomic.Int32
	var wg sync.WaitGroup
	results := make(chan string, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				v, mine, err := m.Await(context.Background(), "mode")
				if err != nil {
					t.Error(err)
					return
				}
				if !mine {
					results <- v
					return
				}
				time.Sleep(10 * time.Millisecond)
				if probes.Add(1) == 1 {
					m.Settle("mode", "") // the first probe learns nothing
					continue
				}
				m.Settle("mode", "json_object")
			}
		}()
	}
	wg.Wait()
	close(results)
	n := 0
	for v := range results {
		n++
		if v != "json_object" {
			t.Errorf("a unit got %q", v)
		}
	}
	if p := probes.Load(); p != 2 || n != 20 {
		t.Errorf("%d probes and %d answers, want 2 probes (one that learned nothing, then one more) and 20 answers", p, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m2 := NewMemo(nil)
	_, _, _ = m2.Await(context.Background(), "k") // held by someone
	if _, _, err := m2.Await(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("waiting on a cancelled context: %v", err)
	}
}

// TestMemoLeadFindsOutFirst: with a lead unit named (StartLead), the
// lead probes even when other units ask first, so that identical runs
// probe with the same request (regression: whichever unit asked first
// probed, and an identical re-run's probe missed the answer cache). The
// others get the lead's answer; when the lead learned nothing, or has
// judged without asking (EndLead), the next unit to ask probes.
func TestMemoLeadFindsOutFirst(t *testing.T) {
	for _, settle := range []string{"absent", ""} {
		t.Run("lead settles "+strconv.Quote(settle), func(t *testing.T) {
			m := NewMemo(nil)
			m.StartLead()
			type got struct {
				v    string
				mine bool
			}
			others := make(chan got, 5)
			for range 5 {
				go func() {
					v, mine, err := m.Await(context.Background(), "logprobs")
					if err != nil {
						t.Error(err)
					}
					if mine {
						m.Settle("logprobs", "available")
					}
					others <- got{v, mine}
				}()
			}
			time.Sleep(30 * time.Millisecond) // the others ask first
			select {
			case g := <-others:
				t.Fatalf("a unit that is not the lead went on (%+v) before the lead asked", g)
			default:
			}
			v, mine, err := m.AwaitAs(context.Background(), "logprobs", true)
			if err != nil || !mine || v != "" {
				t.Fatalf("the lead got %q, mine %v, %v: want to find out", v, mine, err)
			}
			m.Settle("logprobs", settle)
			m.EndLead()
			probed := 0
			for range 5 {
				g := <-others
				if g.mine {
					probed++
				} else if want := map[string]string{"absent": "absent", "": "available"}[settle]; g.v != want {
					t.Errorf("a unit got %q, want %q", g.v, want)
				}
			}
			if want := map[string]int{"absent": 0, "": 1}[settle]; probed != want {
				t.Errorf("%d other units probed, want %d", probed, want)
			}
		})
	}
	t.Run("the lead judges without asking", func(t *testing.T) {
		m := NewMemo(nil)
		m.StartLead()
		done := make(chan bool)
		go func() {
			_, mine, _ := m.Await(context.Background(), "k")
			done <- mine
		}()
		time.Sleep(20 * time.Millisecond)
		m.EndLead()
		m.EndLead() // twice is harmless
		if !<-done {
			t.Error("after the lead ended, the waiting unit did not find out")
		}
	})
}

// completer answers from a function, counting calls.
type completer struct {
	calls atomic.Int32
	fn    func(r judge.Request) (judge.Response, error)
}

func (c *completer) Complete(_ context.Context, r judge.Request) (judge.Response, error) {
	c.calls.Add(1)
	return c.fn(r)
}

// TestLLMEvalRemembersTheMode: without json_schema, the first sample costs
// one refused call and every later sample one call.
func TestLLMEvalRemembersTheMode(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 0, Hi: 5}}}
	c := &completer{fn: func(r judge.Request) (judge.Response, error) {
		if r.JSONSchema != nil {
			return judge.Response{}, &judge.Error{Kind: judge.KindBadRequest, Status: http.StatusBadRequest, Attempts: 1, Message: "no json_schema"}
		}
		return judge.Response{Choices: []judge.Choice{{Text: `{"Coherence": 3.5}`}}, Attempts: 1}, nil
	}}
	r := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rub}
	memo := NewMemo(nil)
	for i := range 5 {
		o := LLMEval{}.Judge(context.Background(), c, Unit{Run: r, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: memo})
		want := 1
		if i == 0 {
			want = 2
		}
		if o.Failed || o.Calls != want || o.Details["structured_output"] != "json_object" || o.Scores[0].Value == nil || *o.Scores[0].Value != 3.5 {
			t.Fatalf("sample %d: failed %v, calls %d (want %d), details %v", i, o.Failed, o.Calls, want, o.Details)
		}
	}
	if n := c.calls.Load(); n != 6 {
		t.Errorf("%d calls for 5 samples, want 6", n)
	}
}

// TestLLMEvalKeepsTheJudgesReasons: an answer with one object per
// criterion ({"Coherence": {"score": 3, "reason": "..."}}) was read as
// "is not a number"; its scores are read and each reason is kept as the
// criterion's analysis. One whose score cannot be told stays missing, with
// its problem and its reason.
func TestLLMEvalKeepsTheJudgesReasons(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}, {Name: "Fluency", Lo: 1, Hi: 3}, {Name: "Overall", Lo: 1, Hi: 5}}}
	c := &completer{fn: func(judge.Request) (judge.Response, error) {
		return judge.Response{Choices: []judge.Choice{{Text: `{"Coherence": {"score": 3.5, "reason": "Stays on topic."}, "Fluency": {"rating": 4}, "Overall": {"a": 1, "b": 2, "reason": "unsure"}}`}}, Attempts: 1}, nil
	}}
	r := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rub}
	if err := (LLMEval{}).Prepare(&r); err != nil {
		t.Fatal(err)
	}
	o := LLMEval{}.Judge(context.Background(), c, Unit{Run: r, Criteria: []int{0, 1, 2}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
	if o.Failed || len(o.Scores) != 3 {
		t.Fatalf("failed %v, %d scores: %+v", o.Failed, len(o.Scores), o)
	}
	tests := []struct {
		score    string
		analysis string
	}{{"3.5", "Stays on topic."}, {"4", ""}, {"missing", "unsure"}}
	for i, tt := range tests {
		sc := o.Scores[i]
		got := "missing"
		if sc.Value != nil {
			got = strconv.FormatFloat(*sc.Value, 'g', -1, 64)
		}
		if sc.Criterion != i || got != tt.score || sc.Analysis != tt.analysis {
			t.Errorf("%s: criterion %d, score %s, analysis %q; want %s, %q", rub.Criteria[i].Name, sc.Criterion, got, sc.Analysis, tt.score, tt.analysis)
		}
	}
	if len(o.Problems) != 1 || !strings.HasPrefix(o.Problems[0], "Overall: the object holds") {
		t.Errorf("problems %q, want one saying Overall's score cannot be told", o.Problems)
	}
}

// TestLLMEvalKeepsReasonsGivenApart: an answer giving the scores and the
// reasons as separate objects ({"scores": {...}, "reasons": {"Coherence":
// "..."}}) had its scores read and its reasons dropped; each reason is now
// kept as its criterion's analysis, as TestLLMEvalKeepsTheJudgesReasons
// has it for per-criterion objects.
func TestLLMEvalKeepsReasonsGivenApart(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}, {Name: "Fluency", Lo: 1, Hi: 3}, {Name: "Overall", Lo: 1, Hi: 5}}}
	tests := []struct {
		name, answer string
		analyses     []string
	}{
		{"reasons after the scores", `{"scores": {"Coherence": 3.5, "Fluency": 4, "Overall": 2}, "reasons": {"Coherence": "Stays on topic.", "Overall": "Too short."}}`,
			[]string{"Stays on topic.", "", "Too short."}},
		{"explanations first, wrapped", "```json\n" + `{"result": {"explanations": {"fluency": "Reads well."}, "scores": {"Coherence": 3.5, "Fluency": 4, "Overall": 2}}}` + "\n```",
			[]string{"", "Reads well.", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &completer{fn: func(judge.Request) (judge.Response, error) {
				return judge.Response{Choices: []judge.Choice{{Text: tt.answer}}, Attempts: 1}, nil
			}}
			r := Run{Settings: evaluator.DefaultSettings(), MethodSettings: evaluator.DefaultMethodSettings(), Rubric: rub}
			if err := (LLMEval{}).Prepare(&r); err != nil {
				t.Fatal(err)
			}
			o := LLMEval{}.Judge(context.Background(), c, Unit{Run: r, Criteria: []int{0, 1, 2}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
			if o.Failed || len(o.Scores) != 3 || len(o.Problems) != 0 {
				t.Fatalf("failed %v, %d scores, problems %q: %+v", o.Failed, len(o.Scores), o.Problems, o)
			}
			for i, want := range []float64{3.5, 4, 2} {
				sc := o.Scores[i]
				got := "missing"
				if sc.Value != nil {
					got = strconv.FormatFloat(*sc.Value, 'g', -1, 64)
				}
				if sc.Criterion != i || sc.Value == nil || *sc.Value != want || sc.Analysis != tt.analyses[i] {
					t.Errorf("%s: criterion %d, score %s, analysis %q; want %g, %q", rub.Criteria[i].Name, sc.Criterion, got, sc.Analysis, want, tt.analyses[i])
				}
			}
		})
	}
}

// TestPackageImportsNoStorage keeps the README's rule: evaluator packages
// import neither storage, handlers nor web.
func TestPackageImportsNoStorage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const mod = "github.com/batcheval/batcheval/"
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{mod + "models", mod + "handlers", mod + "web", mod + "runner", "github.com/labstack/echo", "gorm.io/"} {
			if dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/") {
				t.Errorf("evaluator/methods depends on %s", dep)
			}
		}
	}
}

// TestCloserLookOriginalSettings: a new CloserLook run samples with top_p 1
// and asks for integer ratings; a run stored before those were recorded
// keeps its own top_p and decimal prompt.
func TestCloserLookOriginalSettings(t *testing.T) {
	rub := evaluator.Rubric{Criteria: []evaluator.Criterion{{Name: "Coherence", Lo: 1, Hi: 3}}}
	var got judge.Request
	c := &completer{fn: func(r judge.Request) (judge.Response, error) {
		got = r
		return judge.Response{Choices: []judge.Choice{{Text: "Fine.\nRating: 2"}, {Text: "Good.\nRating: 3"}}, Attempts: 1}, nil
	}}
	s := evaluator.DefaultSettings() // top_p 0.9
	fresh := Run{Settings: s, Rubric: rub}
	if err := (CloserLook{}).Prepare(&fresh); err != nil {
		t.Fatal(err)
	}
	old := Run{Settings: s, Rubric: rub, MethodSettings: evaluator.MethodSettings{Samples: 2, SampleTemperature: 1, LLMEvalScale: evaluator.LLMEvalFive}}
	tests := []struct {
		name   string
		run    Run
		topP   float64
		prompt string
	}{
		{"new run", fresh, 1, "whole numbers only"},
		{"run stored before", old, 0.9, "decimal scores are allowed"},
	}
	for _, tt := range tests {
		o := CloserLook{}.Judge(context.Background(), c, Unit{Run: tt.run, Criteria: []int{0}, Samples: []evaluator.Sample{{}}, Memo: NewMemo(nil)})
		if got.TopP != tt.topP || !strings.Contains(got.Messages[1].Content, tt.prompt) {
			t.Errorf("%s: top_p %v, prompt has %q: %v", tt.name, got.TopP, tt.prompt, strings.Contains(got.Messages[1].Content, tt.prompt))
		}
		if o.Scores[0].Value == nil || *o.Scores[0].Value != 2.5 {
			t.Errorf("%s: score %v, want the mean 2.5", tt.name, o.Scores[0].Value)
		}
	}
}
