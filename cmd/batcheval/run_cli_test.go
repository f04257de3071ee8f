package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// annotatedRubric rates one criterion whose human rating is the mean of
// three annotators' columns.
const annotatedRubric = `task: a short reply to a greeting
fields:
  - {column: text, label: Reply}
criteria:
  - name: Friendly
    description: Is the reply friendly?
    lo: 1
    hi: 5
    levels: {low: cold, middle: polite, high: warm}
    human_column: friendly
    annotator_columns: [rater_a, rater_b, rater_c]
`

// perRowRubric is the same criterion for a file with one row per annotator.
const perRowRubric = `task: a short reply to a greeting
fields:
  - {column: text, label: Reply}
criteria:
  - name: Friendly
    description: Is the reply friendly?
    lo: 1
    hi: 5
    levels: {low: cold, middle: polite, high: warm}
    human_column: friendly
`

// writeAnnotated writes 16 replies rated by three annotators, once as one
// row per reply with a column per annotator, once as one row per annotator.
func writeAnnotated(t *testing.T, dir string) (wide, long string) {
	t.Helper()
	var w, l strings.Builder
	for i := range 16 {
		text := fmt.Sprintf("Hello there, friend number %d!%s", i, strings.Repeat(" Nice to see you.", i%4))
		a, b, c := 1+i%5, 1+(i+1)%5, 1+(i*3)%5
		mean := float64(a+b+c) / 3
		row := map[string]any{"id": fmt.Sprintf("r%02d", i), "text": text, "friendly": mean, "rater_a": a, "rater_b": b, "rater_c": c}
		line, _ := json.Marshal(row)
		w.Write(append(line, '\n'))
		for k, v := range map[string]int{"ann1": a, "ann2": b, "ann3": c} {
			_ = k
			line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("r%02d", i), "text": text, "annotator": k, "friendly": v})
			l.Write(append(line, '\n'))
		}
	}
	wide, long = filepath.Join(dir, "wide.jsonl"), filepath.Join(dir, "long.jsonl")
	if err := os.WriteFile(wide, []byte(w.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, []byte(l.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return wide, long
}

func writeFile(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cliResult is the part of `batcheval run --out` these tests read.
type cliResult struct {
	Report struct {
		Provenance struct {
			Settings struct {
				SortKey string `json:"sort_key"`
				Seed    int64  `json:"seed"`
			} `json:"settings"`
			HumanColumns []struct {
				HumanColumn      *string  `json:"human_column"`
				AnnotatorColumns []string `json:"annotator_columns"`
			} `json:"human_columns"`
		} `json:"provenance"`
		Run struct {
			Status string `json:"status"`
		} `json:"run"`
		Criteria []struct {
			HumanCeiling *struct {
				Annotators int      `json:"annotators"`
				Items      int      `json:"items"`
				Alpha      *float64 `json:"krippendorff_alpha"`
			} `json:"human_ceiling"`
		} `json:"criteria"`
	} `json:"report"`
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var so, se bytes.Buffer
	err = run(context.Background(), args, func(string) string { return "" }, &so, &se)
	return so.String(), se.String(), err
}

// TestRunHonoursAnnotatorColumns: the rubric file's annotator_columns (or
// --annotator-column for one row per annotator) give the human ceiling, in
// the JSON result and in the table printed.
func TestRunHonoursAnnotatorColumns(t *testing.T) {
	dir := t.TempDir()
	wide, long := writeAnnotated(t, dir)
	cases := []struct {
		name, rubric, data string
		extra              []string
		annotatorCols      int // named in the provenance
	}{
		{"a column per annotator", annotatedRubric, wide, nil, 3},
		{"a row per annotator", perRowRubric, long, []string{"--annotator-column", "annotator"}, 3},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rubric := writeFile(t, filepath.Join(dir, fmt.Sprintf("r%d.yaml", i)), tc.rubric)
			out := filepath.Join(dir, fmt.Sprintf("out%d.json", i))
			args := append([]string{"run", "--data", tc.data, "--rubric", rubric, "--simulated", "--rounds", "1", "--batch-size", "4",
				"--out", out, "--db", filepath.Join(dir, fmt.Sprintf("t%d.db", i))}, tc.extra...)
			stdout, stderr, err := runCLI(t, args...)
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			var res cliResult
			b, _ := os.ReadFile(out)
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			c := res.Report.Criteria[0].HumanCeiling
			if c == nil || c.Annotators != 3 || c.Items != 16 || c.Alpha == nil {
				t.Fatalf("human ceiling = %+v, want 3 annotators over 16 samples with an alpha", c)
			}
			hc := res.Report.Provenance.HumanColumns[0]
			if hc.HumanColumn == nil || *hc.HumanColumn != "friendly" || len(hc.AnnotatorColumns) != tc.annotatorCols {
				t.Errorf("provenance human columns = %+v", hc)
			}
			if !strings.Contains(stdout, "human ceiling of Friendly: Krippendorff's alpha") {
				t.Errorf("the table lacks the human ceiling:\n%s", stdout)
			}
		})
	}
}

// TestRunExplainsARefusedHeaderRow: a CSV whose first row is data is
// refused with what the command line can do about it, not the web form's
// "The first row is data" checkbox (QA: the message said to tick it).
func TestRunExplainsARefusedHeaderRow(t *testing.T) {
	dir := t.TempDir()
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	data := writeFile(t, filepath.Join(dir, "noheader.csv"), "r01,3,3\nr02,4,5\n")
	_, stderr, err := runCLI(t, "run", "--data", data, "--rubric", rubric, "--simulated", "--db", filepath.Join(dir, "t.db"))
	if err == nil || !strings.Contains(err.Error(), "header row of unique column names") || strings.Contains(err.Error()+stderr, "ticked") {
		t.Fatalf("run on a file without a header row: %v\n%s", err, stderr)
	}
}

// TestRunSortKey: --sort-key reaches the run's settings; a wrong value is refused.
func TestRunSortKey(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	for _, tc := range []struct{ key, want, err string }{
		{"", "previous", ""},
		{"mean", "mean", ""},
		{"previous", "previous", ""},
		{"median", "", `--sort-key="median" cannot be used: write previous or mean`},
	} {
		t.Run("key="+tc.key, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.json")
			args := []string{"run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "2", "--batch-size", "4", "--out", out,
				"--db", filepath.Join(t.TempDir(), "t.db")}
			if tc.key != "" {
				args = append(args, "--sort-key", tc.key)
			}
			_, stderr, err := runCLI(t, args...)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			var res cliResult
			b, _ := os.ReadFile(out)
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if got := res.Report.Provenance.Settings.SortKey; got != tc.want {
				t.Errorf("sort_key = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCommandHelpListsItsOwnFlags: each subcommand's --help lists the
// flags that apply to it and none of the others'.
func TestCommandHelpListsItsOwnFlags(t *testing.T) {
	serverOnly := []string{"-addr", "-max-upload-mb", "-max-upload-rows", "-seed-demo", "-max-runs", "-sim-latency"}
	cases := []struct {
		cmd       string
		want, not []string
	}{
		// -prices: wherever runs are launched (run prices its --model).
		{"run", []string{"-data", "-rubric", "-sort-key", "-annotator-column", "-simulated", "-db", "-database-url", "-log-level", "-prices", "-spend-cap-usd", "-token-limit", "-default-sampling-only", "-reasoning-effort"}, serverOnly},
		{"resume", []string{"-queue-only", "-spend-cap-usd", "-db"}, append([]string{"-data", "-sort-key"}, serverOnly...)},
		{"migrate", []string{"-db", "-database-url"}, append([]string{"-data", "-sort-key", "-prices"}, serverOnly...)},
		{"serve", append([]string{"-db", "-prices"}, serverOnly...), []string{"-data", "-sort-key", "-rubric"}},
		{"worker", []string{"-db", "-max-runs"}, []string{"-data", "-sort-key"}},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			help, _, err := runCLI(t, tc.cmd, "--help") // asked for, the help is on stdout
			if err != nil {                             // help asked for is no error, for every command
				t.Errorf("%s --help: %v, want no error", tc.cmd, err)
			}
			flags := map[string]bool{}
			for _, m := range regexp.MustCompile(`(?m)^  -(-[a-z-]+)`).FindAllStringSubmatch(help, -1) {
				flags[m[1]] = true
			}
			for _, f := range tc.want {
				if !flags[f] {
					t.Errorf("%s --help lacks %s:\n%s", tc.cmd, f, help)
				}
			}
			for _, f := range tc.not {
				if flags[f] {
					t.Errorf("%s --help lists %s, which does not apply to it", tc.cmd, f)
				}
			}
		})
	}
}

// TestRunProgressIsOneLinePerUpdateWhenNotATerminal: progress into a
// buffer (as into a log file) is plain lines, not one line of \r updates.
func TestRunProgressIsOneLinePerUpdateWhenNotATerminal(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	_, stderr, err := runCLI(t, "run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "3", "--batch-size", "2",
		"--db", filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	if strings.ContainsAny(stderr, "\r\x1b") {
		t.Errorf("progress into a non-terminal holds carriage returns or escapes: %q", stderr)
	}
	line := regexp.MustCompile(`^batches (\d+)/(\d+) \((\d+)%\)$`)
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.HasPrefix(l, "batches") {
			if !line.MatchString(l) {
				t.Errorf("progress line %q is not one plain update", l)
			}
			got = append(got, l)
		}
	}
	// 16 samples in batches of 2, 3 rounds: 24 batches.
	if len(got) == 0 || got[len(got)-1] != "batches 24/24 (100%)" {
		t.Errorf("progress lines = %q, want them to end with batches 24/24 (100%%)", got)
	}
}

func TestProgressBarOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &progress{w: &buf, terminal: true, now: func() time.Time { return clock }, last: -1}
	logs := p.logs()
	p.update(0, 10)
	clock = clock.Add(10 * time.Second)
	p.update(5, 10)
	p.update(5, 10) // unchanged: nothing drawn
	fmt.Fprint(logs, "level=INFO msg=hello\n")
	clock = clock.Add(10 * time.Second)
	p.update(10, 10)
	p.done()
	fmt.Fprint(logs, "level=INFO msg=after\n")

	half := "\r" + strings.Repeat("█", 15) + strings.Repeat("░", 15) + " 5/10 batches  50% · about 10s left\x1b[K"
	want := "\r" + strings.Repeat("░", 30) + " 0/10 batches   0%\x1b[K" +
		half +
		"\r\x1b[Klevel=INFO msg=hello\n" + half + // a log line replaces the bar, which is drawn again below it
		"\r" + strings.Repeat("█", 30) + " 10/10 batches 100%\x1b[K\n" +
		"level=INFO msg=after\n" // no bar left to redraw
	if got := buf.String(); got != want {
		t.Errorf("terminal output =\n%q\nwant\n%q", got, want)
	}
}

// TestRunTwiceGivesTheSameReport: `batcheval run --out` on the same inputs
// writes byte-identical report parts (the envelope holds the run ids). The
// runs ask the judge each time (--no-cache), or the second would replay
// the first's answers and prove nothing about determinism.
func TestRunTwiceGivesTheSameReport(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	var reports, envelopes [2]string
	for i := range reports {
		out := filepath.Join(dir, fmt.Sprintf("out%d.json", i))
		if _, stderr, err := runCLI(t, "run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "3", "--batch-size", "4",
			"--seed", "5", "--out", out, "--db", filepath.Join(dir, "t.db"), "--no-cache"); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		b, _ := os.ReadFile(out)
		var parts map[string]json.RawMessage
		if err := json.Unmarshal(b, &parts); err != nil {
			t.Fatal(err)
		}
		reports[i], envelopes[i] = string(parts["report"]), string(parts["envelope"])
	}
	if envelopes[0] == envelopes[1] {
		t.Errorf("both envelopes name the same run")
	}
	if reports[0] != reports[1] {
		t.Errorf("reports differ:\n%s\n---\n%s", reports[0], reports[1])
	}
	if !strings.Contains(reports[0], `"krippendorff_alpha"`) || !strings.Contains(reports[0], `"seed": 5`) {
		t.Errorf("report lacks the ceiling or the seed")
	}
}

// TestRunTwiceReusesAnswers: without --no-cache, the second identical
// `batcheval run` is answered from the answer cache: every call cached, no
// tokens, and the same scores.
func TestRunTwiceReusesAnswers(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	type runPart struct {
		Calls        int `json:"calls"`
		CachedCalls  int `json:"cached_calls"`
		PromptTokens int `json:"prompt_tokens"`
	}
	var runs [2]runPart
	var criteria [2]string
	for i := range runs {
		out := filepath.Join(dir, fmt.Sprintf("out%d.json", i))
		if _, stderr, err := runCLI(t, "run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "2", "--batch-size", "4",
			"--seed", "5", "--out", out, "--db", filepath.Join(dir, "t.db")); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		b, _ := os.ReadFile(out)
		var exp struct {
			Report struct {
				Run      runPart         `json:"run"`
				Criteria json.RawMessage `json:"criteria"`
			} `json:"report"`
		}
		if err := json.Unmarshal(b, &exp); err != nil {
			t.Fatal(err)
		}
		runs[i], criteria[i] = exp.Report.Run, string(exp.Report.Criteria)
	}
	if runs[0].Calls == 0 || runs[0].CachedCalls != 0 || runs[0].PromptTokens == 0 {
		t.Errorf("first run %+v: want calls with tokens, none cached", runs[0])
	}
	if runs[1].Calls != runs[0].Calls || runs[1].CachedCalls != runs[1].Calls || runs[1].PromptTokens != 0 {
		t.Errorf("second run %+v: want all %d calls cached and no tokens", runs[1], runs[0].Calls)
	}
	if criteria[0] != criteria[1] {
		t.Errorf("the replayed run's figures differ from the first's")
	}
}

// TestRunGroupColumn: --group-column gives the JSON result each
// criterion's within-group correlation, as the dashboard's run of the
// same data does; a column the file lacks is refused, naming it, before
// anything is stored.
func TestRunGroupColumn(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 16 {
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("r%02d", i), "dialogue": fmt.Sprintf("d%d", i/4),
			"text": fmt.Sprintf("Hello there, friend number %d!%s", i, strings.Repeat(" Nice to see you.", i%4)), "friendly": 1 + (i*7)%5})
		b.Write(append(line, '\n'))
	}
	data := writeFile(t, filepath.Join(dir, "grouped.jsonl"), b.String())
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), perRowRubric)
	for _, tc := range []struct {
		name, column string
		wantErr      string // "" when the run succeeds
	}{
		{"a column of the file", "dialogue", ""},
		{"a column the file lacks", "conversation", `--group-column: ` + data + ` has no column "conversation"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.column+".json")
			db := filepath.Join(dir, tc.column+".db")
			_, stderr, err := runCLI(t, "run", "--data", data, "--rubric", rubric, "--simulated", "--rounds", "1", "--batch-size", "4",
				"--group-column", tc.column, "--out", out, "--db", db)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "dialogue") {
					t.Fatalf("err = %v, want one containing %q and the file's columns", err, tc.wantErr)
				}
				if _, statErr := os.Stat(out); statErr == nil {
					t.Errorf("a refused run wrote %s", out)
				}
				return
			}
			if err != nil {
				t.Fatalf("run: %v\n%s", err, stderr)
			}
			var res struct {
				Report struct {
					Criteria []struct {
						Grouped *struct {
							Column  string   `json:"column"`
							Pearson *float64 `json:"pearson"`
							Groups  int      `json:"groups"`
						} `json:"grouped"`
					} `json:"criteria"`
				} `json:"report"`
			}
			raw, _ := os.ReadFile(out)
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			g := res.Report.Criteria[0].Grouped
			if g == nil || g.Column != "dialogue" || g.Groups != 4 || g.Pearson == nil {
				t.Fatalf("grouped = %+v, want the correlation within the 4 dialogues", g)
			}
		})
	}
}

// TestRunJudgesTheSameFileAsOneDataset: the same file run twice into one
// database judges one dataset, so the two runs compare as runs on the
// same samples; a file changed in one rating is a dataset of its own.
func TestRunJudgesTheSameFileAsOneDataset(t *testing.T) {
	dir := t.TempDir()
	wide, _ := writeAnnotated(t, dir)
	rubric := writeFile(t, filepath.Join(dir, "r.yaml"), annotatedRubric)
	dbPath := filepath.Join(dir, "t.db")
	cli := func(seed string) string {
		t.Helper()
		_, stderr, err := runCLI(t, "run", "--data", wide, "--rubric", rubric, "--simulated", "--rounds", "1", "--batch-size", "4",
			"--seed", seed, "--db", dbPath)
		if err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		return stderr
	}
	if first := cli("1"); strings.Contains(first, "holds the same rows") {
		t.Errorf("the first run says it reuses a dataset:\n%s", first)
	}
	if second := cli("2"); !strings.Contains(second, "holds the same rows as dataset 1 ") {
		t.Errorf("the second run of the same file does not say it judges the first one's dataset:\n%s", second)
	}
	b, err := os.ReadFile(wide)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), `"rater_a":1`, `"rater_a":2`, 1)
	if changed == string(b) {
		t.Fatal("the test's change did not apply")
	}
	writeFile(t, wide, changed)
	cli("3")

	ctx := context.Background()
	db, err := models.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var runs []models.Run
	if err := db.Gorm.Order("id").Find(&runs).Error; err != nil {
		t.Fatal(err)
	}
	var datasets int64
	if err := db.Gorm.Model(&models.Dataset{}).Count(&datasets).Error; err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || datasets != 2 {
		t.Fatalf("%d runs on %d datasets, want 3 runs on 2", len(runs), datasets)
	}
	if runs[0].DatasetID != runs[1].DatasetID || runs[2].DatasetID == runs[0].DatasetID {
		t.Errorf("datasets of the runs: %d, %d, %d; want the first two the same and the third another",
			runs[0].DatasetID, runs[1].DatasetID, runs[2].DatasetID)
	}
}
