package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
	"github.com/batcheval/batcheval/runner"
)

const fedRubric = `task: a whole conversation between a user and a chatbot (the "System" turns)
fields:
  - {column: context, label: Conversation}
criteria:
  - name: Coherent
    description: Does the system keep the conversation coherent and flowing?
    lo: 1
    hi: 3
    levels: {low: often incoherent, middle: mostly coherent with lapses, high: coherent throughout}
    human_column: scores.Coherent
  - name: Overall
    description: Overall impression of the system as a conversation partner.
    lo: 1
    hi: 5
    levels: {low: poor, middle: fair, high: excellent}
    human_column: scores.Overall
`

func sharedDataset(t *testing.T, name string) string {
	t.Helper()
	// Beside the repository (../shared), or beside the folder of worktrees
	// that holds it (../../shared).
	for _, up := range []string{filepath.Join("..", "..", ".."), filepath.Join("..", "..", "..", "..")} {
		p := filepath.Join(up, "shared", "datasets", name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("shared data set %s not found beside the repository", name)
	return ""
}

// TestHeadlessRunOnFED runs `batcheval run` on the real FED set with the
// simulated judge, as the README shows, and checks the JSON result.
func TestHeadlessRunOnFED(t *testing.T) {
	dir := t.TempDir()
	rubric := filepath.Join(dir, "fed.yaml")
	if err := os.WriteFile(rubric, []byte(fedRubric), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "result.json")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--data", sharedDataset(t, "fed-dialog.jsonl"), "--rubric", rubric, "--simulated",
		"--rounds", "2", "--batch-size", "10", "--seed", "3", "--out", out, "--db", filepath.Join(dir, "t.db")}
	if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Coherent") || !strings.Contains(stdout.String(), "simulated judge") {
		t.Errorf("correlation table lacks a criterion or the simulated label:\n%s", stdout.String())
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Report        struct {
			Provenance struct {
				Judge struct {
					Simulated bool `json:"simulated"`
				} `json:"judge"`
			} `json:"provenance"`
			Run struct {
				Status string `json:"status"`
				Calls  int    `json:"calls"`
			} `json:"run"`
			Criteria []struct {
				Name    string `json:"name"`
				Pearson struct {
					N    int      `json:"n"`
					Coef *float64 `json:"coef"`
				} `json:"pearson"`
				Samples []struct {
					ID     string     `json:"id"`
					Final  *float64   `json:"final"`
					Rounds []*float64 `json:"rounds"`
					Human  *float64   `json:"human"`
				} `json:"samples"`
			} `json:"criteria"`
		} `json:"report"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	res := doc.Report
	if doc.SchemaVersion != 2 || !res.Provenance.Judge.Simulated || res.Run.Status != "succeeded" {
		t.Errorf("schema %d, simulated=%v, status=%q, want 2, true, succeeded", doc.SchemaVersion, res.Provenance.Judge.Simulated, res.Run.Status)
	}
	// 125 samples in batches of 10 = 13 batches a round, 2 rounds, 2 criteria.
	if res.Run.Calls < 52 {
		t.Errorf("calls = %d, want at least 52", res.Run.Calls)
	}
	if len(res.Criteria) != 2 {
		t.Fatalf("criteria = %d, want 2", len(res.Criteria))
	}
	c := res.Criteria[0]
	if c.Pearson.N != 125 || c.Pearson.Coef == nil {
		t.Errorf("pearson n=%d coef=%v, want 125 and a value", c.Pearson.N, c.Pearson.Coef)
	}
	if len(c.Samples) != 125 || c.Samples[0].ID != "fed-000" || len(c.Samples[0].Rounds) != 2 {
		t.Fatalf("samples = %d, first %+v", len(c.Samples), c.Samples[0])
	}
	if c.Samples[0].Human == nil || *c.Samples[0].Human != 1.8 {
		t.Errorf("fed-000 human Coherent = %v, want 1.8", c.Samples[0].Human)
	}
	for _, s := range c.Samples {
		if s.Final != nil && (*s.Final < 1 || *s.Final > 3) {
			t.Errorf("%s final %v outside [1, 3]", s.ID, *s.Final)
		}
	}
}

func TestHeadlessRunRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(bad, []byte("task: x\ncriteria:\n  - {name: A, lo: 3, hi: 1}\nfields: [{column: context, label: C}]\n"), 0o644)
	good := filepath.Join(dir, "good.yaml")
	_ = os.WriteFile(good, []byte(fedRubric), 0o644)
	data := filepath.Join(dir, "d.jsonl")
	_ = os.WriteFile(data, []byte("{\"id\":\"a\",\"context\":\"hi\",\"scores\":{\"Coherent\":1,\"Overall\":2}}\n{\"id\":\"a\",\"context\":\"yo\",\"scores\":{\"Coherent\":1,\"Overall\":2}}\n"), 0o644)
	unique := filepath.Join(dir, "u.jsonl")
	_ = os.WriteFile(unique, []byte("{\"id\":\"a\",\"context\":\"hi\",\"scores\":{\"Coherent\":1,\"Overall\":2}}\n"), 0o644)
	simulated := []string{"run", "--data", unique, "--rubric", good, "--simulated"}
	cases := []struct {
		name string
		args []string
		want string
		// opensDB: refused only once the database is open (by the
		// model); every other refusal comes before anything is stored.
		opensDB bool
	}{
		// The missing flags are named, each with what it is (it said
		// "--data and --rubric are required" whichever was missing).
		{"missing flags", []string{"run"}, "run needs --data (the data file: CSV with a header, JSON Lines or a JSON array) and --rubric (the rubric file", false},
		{"missing rubric", []string{"run", "--data", data}, "run needs --rubric (the rubric file, YAML or JSON", false},
		{"no judge", []string{"run", "--data", data, "--rubric", good}, "--judge-url", false},
		{"bad rubric", []string{"run", "--data", data, "--rubric", bad, "--simulated"}, "range", false},
		{"duplicate id", []string{"run", "--data", data, "--rubric", good, "--simulated"}, "line 2", false},
		{"bad batch size", []string{"run", "--data", data, "--rubric", good, "--simulated", "--batch-size", "0"}, `--batch-size="0" cannot be used`, false},
		// Refused by the model after the data was imported, in words that
		// did not name the flag ("a project needs a name").
		{"empty project", append(simulated, "--project", "  "), `--project is empty: give the project the run is stored under a name, e.g. --project "Command-line runs"`, false},
		{"project on two lines", append(simulated, "--project", "a\nb"), "--project: the project name holds a line break", true},
		// Found only after the run was judged (and paid for).
		{"--out in no folder", append(simulated, "--out", filepath.Join(dir, "none", "r.json")), "the folder " + filepath.Join(dir, "none") + " does not exist: create it, or choose another path (nothing was judged)", false},
		{"--out a folder", append(simulated, "--out", dir), "is a folder: give a file's path", false},
		// A stray word stopped the flags being read: the run went on
		// with 5 rounds, in silence.
		{"stray word", append(append([]string(nil), simulated...), "extra", "--rounds", "1"), `run takes no arguments besides its flags: "extra" was not understood, and the flags after it (--rounds) were not read`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var so, se bytes.Buffer
			dbPath := filepath.Join(t.TempDir(), "t.db")
			args := append(append([]string(nil), tc.args...), "--db", dbPath)
			if tc.name == "stray word" {
				args = append([]string{"run", "--db", dbPath}, tc.args[1:]...)
			}
			err := run(context.Background(), args, func(string) string { return "" }, &so, &se)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
			if _, serr := os.Stat(dbPath); !tc.opensDB && serr == nil {
				t.Errorf("the database was made before the refusal")
			}
		})
	}
}

// TestHeadlessRunJudgesOnlyItsOwnRunAndHandsOver: `batcheval run` works a
// private queue, so a dashboard run queued in the same database is left to
// the dashboard; when interrupted, its own run is handed to the shared
// queue, where a worker finishes it.
func TestHeadlessRunJudgesOnlyItsOwnRunAndHandsOver(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "t.db")
	rubric := filepath.Join(dir, "fed.yaml")
	if err := os.WriteFile(rubric, []byte(fedRubric), 0o644); err != nil {
		t.Fatal(err)
	}
	slow := httptest.NewServer(simjudge.NewHandler(simjudge.Options{Seed: 2, Latency: 150 * time.Millisecond}))
	defer slow.Close()

	// A dashboard run queued in the same database, with no worker running.
	ctx := context.Background()
	db, err := models.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.MigrateSchema(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := runner.Migrate(ctx, db, nil); err != nil {
		t.Fatal(err)
	}
	ws, _ := db.EnsureDefaultWorkspace(ctx)
	p, err := demo.Seed(ctx, db, ws)
	if err != nil {
		t.Fatal(err)
	}
	dss, _ := db.ListDatasets(ctx, ws.ID, p.ID)
	rub, _ := demo.Rubric()
	insertOnly, err := runner.New(runner.Config{DB: db})
	if err != nil {
		t.Fatal(err)
	}
	other := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: dss[0].ID, Method: models.MethodBatchEval,
		Settings: evaluator.DefaultSettings(), RubricSnapshot: rub,
		JudgeSnapshot: models.JudgeSnapshot{BaseURL: slow.URL + "/v1", Model: "m", MaxConcurrency: 2, TimeoutSeconds: 10}}
	if err := insertOnly.Launch(ctx, &other); err != nil {
		t.Fatal(err)
	}

	// The command line, interrupted mid-run: once its run has a batch
	// stored (a fixed 1.5 s could come before that on a slow machine:
	// the start, the import and the first answer).
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var so, se bytes.Buffer
	args := []string{"run", "--data", sharedDataset(t, "fed-dialog.jsonl"), "--rubric", rubric, "--judge-url", slow.URL + "/v1",
		"--model", "m", "--rounds", "2", "--concurrency", "2", "--db", dbPath}
	ended := make(chan error, 1)
	go func() { ended <- run(cctx, args, func(string) string { return "" }, &so, &se) }()
	cliRun := func() models.Run {
		runs, _ := db.ListRuns(ctx, ws.ID, 0)
		for _, r := range runs {
			if strings.HasPrefix(r.Name, "BatchEval (CLI)") {
				return r
			}
		}
		return models.Run{}
	}
	for deadline := time.Now().Add(60 * time.Second); cliRun().BatchesDone == 0; time.Sleep(20 * time.Millisecond) {
		select {
		case err := <-ended:
			t.Fatalf("run ended (%v) before its run stored a batch\nstderr:\n%s", err, se.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			<-ended
			t.Fatalf("the command line's run stored no batch in 60 s\nstderr:\n%s", se.String())
		}
	}
	cancel()
	if err := <-ended; err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("run = %v, want interrupted", err)
	}
	if got, _ := db.GetRun(ctx, other.ID); got.Status != models.RunQueued {
		t.Errorf("the dashboard's run is %s, want still queued: the command line must judge only its own", got.Status)
	}
	mine := cliRun()
	if mine.ID == 0 || mine.Finished() || mine.BatchesDone == 0 {
		t.Fatalf("command-line run = %+v, want unfinished with some batches stored", mine)
	}

	// A shared worker picks both up.
	w, err := runner.New(runner.Config{DB: db, Work: true, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(ctx)
	deadline := time.Now().Add(90 * time.Second)
	for _, id := range []int64{mine.ID, other.ID} {
		for {
			got, _ := db.GetRun(ctx, id)
			if got.Finished() {
				if got.Status != models.RunSucceeded {
					t.Errorf("run %d %s: %s", id, got.Status, got.Error)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d not finished by the shared worker (%s, %d/%d)", id, got.Status, got.BatchesDone, got.BatchesTotal)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// TestRunCommandPricesItsJudge: `batcheval run --prices` prices the
// command line's judge, so its run has a cost (QA: cost_usd stayed null,
// and --prices was refused as an unknown flag).
func TestRunCommandPricesItsJudge(t *testing.T) {
	sim, err := simjudge.Start(simjudge.Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	data, rubric := faultData(t, 10)
	dir := t.TempDir()
	out := filepath.Join(dir, "priced.json")
	var stdout, stderr bytes.Buffer
	args := []string{"run", "--data", data, "--rubric", rubric, "--judge-url", sim.URL, "--model", "m", "--prices", "m=3:15",
		"--rounds", "1", "--batch-size", "5", "--out", out, "--db", filepath.Join(dir, "t.db")}
	getenv := func(k string) string {
		if k == "BATCHEVAL_JUDGE_ALLOW_LOOPBACK" {
			return "true"
		}
		return ""
	}
	if err := run(context.Background(), args, getenv, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	var doc struct {
		Report struct {
			Run struct {
				PromptTokens     int      `json:"prompt_tokens"`
				CompletionTokens int      `json:"completion_tokens"`
				CostUSD          *float64 `json:"cost_usd"`
			} `json:"run"`
		} `json:"report"`
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Report.Run
	want := (3*float64(r.PromptTokens) + 15*float64(r.CompletionTokens)) / 1e6
	// The export writes the cost rounded to the micro-dollar.
	if r.PromptTokens == 0 || r.CostUSD == nil || math.Abs(*r.CostUSD-want) > 5e-7 {
		t.Errorf("run cost %v for %d+%d tokens, want %g", r.CostUSD, r.PromptTokens, r.CompletionTokens, want)
	}
	// The summary line states the same cost as the export, to the byte
	// (before, it gave calls and tokens but no cost).
	var raw struct {
		Report struct {
			Run struct {
				CostUSD json.RawMessage `json:"cost_usd"`
			} `json:"run"`
		} `json:"report"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if line := fmt.Sprintf("%d prompt + %d completion tokens, cost $%s\n", r.PromptTokens, r.CompletionTokens, raw.Report.Run.CostUSD); !strings.Contains(stderr.String(), line) {
		t.Errorf("summary lacks %q:\n%s", line, stderr.String())
	}
}

// TestRunCommandHedgeSlowCalls: `batcheval run` re-sends slow calls by
// default (with or without --hedge-slow-calls), and its result says so in
// the run's settings; --hedge-slow-calls=false turns it off, and then the
// result does not mention it.
func TestRunCommandHedgeSlowCalls(t *testing.T) {
	dir := t.TempDir()
	rubric := filepath.Join(dir, "fed.yaml")
	if err := os.WriteFile(rubric, []byte(fedRubric), 0o644); err != nil {
		t.Fatal(err)
	}
	data := sharedDataset(t, "fed-dialog.jsonl")
	for i, tc := range []struct {
		flag  string // "" : none
		hedge bool
	}{{"", true}, {"--hedge-slow-calls", true}, {"--hedge-slow-calls=false", false}} {
		hedge := tc.hedge
		out := filepath.Join(dir, fmt.Sprintf("result-%d.json", i))
		args := []string{"run", "--data", data, "--rubric", rubric, "--simulated", "--rounds", "1", "--batch-size", "25",
			"--seed", "3", "--out", out, "--db", filepath.Join(dir, fmt.Sprintf("t-%d.db", i))}
		if tc.flag != "" {
			args = append(args, tc.flag)
		}
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
			t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Report struct {
				Provenance struct {
					Settings map[string]any `json:"settings"`
				} `json:"provenance"`
			} `json:"report"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		v, ok := doc.Report.Provenance.Settings["hedge_slow_calls"]
		if hedge && v != true {
			t.Errorf("flag %q: the result's settings %v, want hedge_slow_calls true", tc.flag, doc.Report.Provenance.Settings)
		}
		if !hedge && ok {
			t.Errorf("flag %q: the run states hedge_slow_calls=%v in its settings, want it absent", tc.flag, v)
		}
	}
}
