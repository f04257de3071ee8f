package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

// gevalFixture is the report fixture run as G-Eval, with evaluation steps
// and a score whose binary value is not the decimal one people read.
func gevalFixture() *Report {
	run, ds, rows, batches, scores := fixture()
	run.Method = string(evaluator.MethodGEval)
	run.MethodSettings = evaluator.DefaultMethodSettings()
	run.MethodSettings.GEvalSteps = map[string]string{"Q": "1. Read.\n2. Score."}
	run.JudgeSnapshot.Model = "sim-1"
	run.Simulated = true
	run.Settings.Seed = 7
	run.PromptTemplateVersion = evaluator.GEvalPromptVersion
	v := 3.0799999999999996 // what 1.54 + 1.54 gives in binary floating point
	scores[1].Score = &v
	third := 2.3333333333333335
	rows[1].Ratings["h"] = &third
	// Every row names the system that wrote it, so the export carries its
	// system-level section.
	ds.Columns = []string{"text", "g", "system"}
	for i := range rows {
		rows[i].Data["system"] = []string{"s1", "s2", "s3", "s3"}[i]
	}
	rep := Compute(run, ds, rows, batches, scores)
	// A run event, so the walks below reach envelope.events' fields.
	rep.Events = []models.RunEvent{{RunID: run.ID, At: time.Date(2026, 3, 4, 10, 0, 11, 0, time.UTC), Kind: models.RunEventTakenOver,
		Worker: "host-2-77/1", Message: "Worker host-2-77 took the run over at 2026-03-04 10:00:11 UTC from worker host-1-42."}}
	return rep
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// walkKeys calls fn with every object key of a decoded JSON value and its path.
func walkKeys(v any, path string, fn func(key, path string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			fn(k, path)
			walkKeys(x, path+"."+k, fn)
		}
	case []any:
		for _, x := range t {
			walkKeys(x, path+"[]", fn)
		}
	}
}

func exportJSON(t *testing.T, r *Report) (raw []byte, decoded any) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &decoded); err != nil {
		t.Fatalf("export does not parse: %v", err)
	}
	return buf.Bytes(), decoded
}

// TestExportJSONKeysAreSnakeCase walks every object of an export holding
// every optional section (histogram, grouped, system level, ceiling, positions, method
// settings with G-Eval steps): one naming convention throughout.
func TestExportJSONKeysAreSnakeCase(t *testing.T) {
	// The G-Eval fixture, and the same run as BatchEval's: only a method
	// that batches exports the position effect.
	batched := gevalFixture()
	batched.Run.Method = models.MethodBatchEval
	seen := map[string]bool{}
	for _, r := range []*Report{gevalFixture(), batched} {
		_, doc := exportJSON(t, r)
		walkKeys(doc, "", func(k, path string) {
			seen[k] = true
			if !snakeKey.MatchString(k) {
				t.Errorf("key %q at %s is not snake_case", k, path)
			}
		})
	}
	// The walk must have reached the sections that used other conventions.
	for _, k := range []string{"lo", "hi", "count", "geval_steps", "krippendorff_alpha", "position_effect", "grouped", "system_level", "systems", "schema_version", "events", "worker"} {
		if !seen[k] {
			t.Errorf("the export has no %q key: the walk missed a section", k)
		}
	}
}

// TestExportSchemaIsDocumented: every key the export writes is described
// in docs/export-schema.md, and the document names the current version.
func TestExportSchemaIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/export-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	_, exp := exportJSON(t, gevalFixture())
	keys := map[string]bool{}
	walkKeys(exp, "", func(k, _ string) { keys[k] = true })
	var missing []string
	for k := range keys {
		if !strings.Contains(string(doc), "`"+k+"`") {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/export-schema.md does not describe %v", missing)
	}
	if v := exp.(map[string]any)["schema_version"]; v != float64(ExportSchemaVersion) {
		t.Errorf("schema_version = %v, want %d", v, ExportSchemaVersion)
	}
	if !strings.Contains(string(doc), "schema_version` is "+strconv.Itoa(ExportSchemaVersion)) {
		t.Errorf("docs/export-schema.md does not state that schema_version is %d", ExportSchemaVersion)
	}
}

// TestExportMethodSettingsCarryEveryField: a setting added to
// evaluator.MethodSettings must reach the export too.
func TestExportMethodSettingsCarryEveryField(t *testing.T) {
	tags := func(typ reflect.Type) []string {
		var out []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			out = append(out, name)
		}
		return out
	}
	have := tags(reflect.TypeOf(JSONMethodSettings{}))
	for _, name := range tags(reflect.TypeOf(evaluator.MethodSettings{})) {
		if !slices.Contains(have, name) {
			t.Errorf("evaluator.MethodSettings.%s is not exported in JSONMethodSettings", name)
		}
	}
}

// TestExportPrecision: JSON keeps every bit; CSV rounds for people; a
// missing value is null in JSON and an empty cell in CSV, never 0.
func TestExportPrecision(t *testing.T) {
	r := gevalFixture()
	raw, doc := exportJSON(t, r)
	// A score is written as stored, and a final of one round is that
	// round's score (FinalNumber); a third keeps every digit.
	for _, want := range []string{`3.0799999999999996`, `2.3333333333333335`} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("JSON lost precision: %s is not in it", want)
		}
	}
	samples := doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)["samples"].([]any)
	d := samples[3].(map[string]any)
	if d["final"] != nil || d["rounds"].([]any)[0] != nil || d["rounds"].([]any)[1] != nil {
		t.Errorf("sample d = %v, want null final and rounds", d)
	}

	var buf bytes.Buffer
	if err := r.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int {
		i := slices.Index(recs[0], name)
		if i < 0 {
			t.Fatalf("CSV header %v lacks %q", recs[0], name)
		}
		return i
	}
	cases := []struct {
		row  int
		col  string
		want string
	}{
		{2, "Q round 1", "3.08"}, // 3.0799999999999996
		{2, "Q final", "3.08"},   // the one round
		{2, "Q human", "2.3333"}, // 2.3333333333333335
		{1, "Q final", "1.2"},    // (1.0 + 1.4) / 2 = 1.2 in binary noise
		{1, "Q human", "0"},      // a real zero stays 0
		{4, "Q final", ""},       // unreadable: empty, never 0
		{4, "Q round 2", ""},     // not judged
		{3, "Q round 1", "2.5"},  // exact values print as they are
		{1, "seed", "7"},         // provenance on every line
		{4, "method", "geval"},   //
		{4, "judge model", "sim-1 (simulated judge, not a language model)"},
		{4, "prompt template version", evaluator.GEvalPromptVersion},
		{4, "human rating columns", "Q=h (annotators h@r1, h@r2)"},
	}
	for _, tc := range cases {
		if got := recs[tc.row][col(tc.col)]; got != tc.want {
			t.Errorf("CSV line %d %q = %q, want %q", tc.row, tc.col, got, tc.want)
		}
	}
	if got := recs[1][col("settings")]; !strings.Contains(got, "seed=7") || !strings.Contains(got, "samples=20") || strings.Contains(got, "Read.") {
		t.Errorf("CSV settings = %q, want the shared and method settings without the long G-Eval steps", got)
	}
}

func TestNumFormatsForPeople(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{{3.0799999999999996, "3.08"}, {2.3333333333333335, "2.3333"}, {2.25, "2.25"}, {2, "2"}, {0, "0"}, {-0.00001, "0"}, {1e-4, "0.0001"}, {4.99999, "5"}, {-1.5, "-1.5"}} {
		if got := num(&tc.in); got != tc.want {
			t.Errorf("num(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := num(nil); got != "" {
		t.Errorf("num(nil) = %q, want empty", got)
	}
}

// TestProvenance: the report states what produced it, in JSON and in the
// command line's table.
func TestProvenance(t *testing.T) {
	r := gevalFixture()
	_, doc := exportJSON(t, r)
	p := doc.(map[string]any)["report"].(map[string]any)["provenance"].(map[string]any)
	want := map[string]any{"product_version": ProductVersion(), "method": "geval", "method_label": "G-Eval",
		"prompt_template_version": evaluator.GEvalPromptVersion, "seed": float64(7)}
	for k, w := range want {
		if p[k] != w {
			t.Errorf("provenance %s = %v, want %v", k, p[k], w)
		}
	}
	if j := p["judge"].(map[string]any); j["model"] != "sim-1" || j["simulated"] != true {
		t.Errorf("judge = %v, want sim-1, simulated", j)
	}
	hc := p["human_columns"].([]any)[0].(map[string]any)
	if hc["criterion"] != "Q" || hc["human_column"] != "h" || len(hc["annotator_columns"].([]any)) != 2 {
		t.Errorf("human columns = %v, want Q from h with two annotators", hc)
	}
	ms := p["method_settings"].(map[string]any)
	steps := ms["geval_steps"].([]any)[0].(map[string]any)
	if ms["samples"] != float64(20) || steps["criterion"] != "Q" || steps["steps"] != "1. Read.\n2. Score." {
		t.Errorf("method settings = %v", ms)
	}
	if ProductVersion() == "" {
		t.Error("empty product version")
	}
	table := r.CorrelationTable()
	for _, w := range []string{"G-Eval", "sim-1 (simulated judge", evaluator.GEvalPromptVersion, "seed 7"} {
		if !strings.Contains(table, w) {
			t.Errorf("correlation table lacks %q:\n%s", w, table)
		}
	}

	// BatchEval has no method settings: null, not an empty object.
	run, ds, rows, batches, scores := fixture()
	run.PromptTemplateVersion = evaluator.BatchEvalPromptVersion
	_, doc = exportJSON(t, Compute(run, ds, rows, batches, scores))
	p = doc.(map[string]any)["report"].(map[string]any)["provenance"].(map[string]any)
	if v, ok := p["method_settings"]; !ok || v != nil || p["method"] != "batcheval" || p["prompt_template_version"] != evaluator.BatchEvalPromptVersion {
		t.Errorf("BatchEval provenance = %v", p)
	}
	// A method this version does not know keeps its name and claims no
	// other method's prompt version.
	run.Method, run.PromptTemplateVersion = "rouge", ""
	_, doc = exportJSON(t, Compute(run, ds, rows, batches, scores))
	p = doc.(map[string]any)["report"].(map[string]any)["provenance"].(map[string]any)
	if v, ok := p["prompt_template_version"]; p["method"] != "rouge" || !ok || v != nil {
		t.Errorf("unknown method's provenance = %v", p)
	}
}

// TestProvenancePromptVersionIsTheRuns: every report states the prompt
// template version stored with the run when it was launched, not the
// code's current one (a run launched before a prompt change was built the
// old way), and "not recorded" (null in JSON) for a run stored before
// versions were kept, never a guess from the code.
func TestProvenancePromptVersionIsTheRuns(t *testing.T) {
	const old = "llmeval/2026-12-01.examples" // LLM-Eval's version before this morning's change
	for _, tt := range []struct {
		name, method, stored string
		wantText             string
		wantJSON             any
	}{
		{"launched before a prompt change", "llmeval", old, old, old},
		{"launched now", "llmeval", evaluator.LLMEvalPromptVersion, evaluator.LLMEvalPromptVersion, evaluator.LLMEvalPromptVersion},
		{"stored before versions were kept", "llmeval", "", "not recorded", nil},
		{"BatchEval stored before versions were kept", "batcheval", "", "not recorded", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			run.Method, run.PromptTemplateVersion = tt.method, tt.stored
			r := Compute(run, ds, rows, batches, scores)
			if got := r.Provenance().PromptVersionText(); got != tt.wantText {
				t.Errorf("PromptVersionText = %q, want %q", got, tt.wantText)
			}
			_, doc := exportJSON(t, r)
			p := doc.(map[string]any)["report"].(map[string]any)["provenance"].(map[string]any)
			if v, ok := p["prompt_template_version"]; !ok || v != tt.wantJSON {
				t.Errorf("JSON prompt_template_version = %v, want %v", v, tt.wantJSON)
			}
			var csvOut bytes.Buffer
			if err := r.WriteCSV(&csvOut); err != nil {
				t.Fatal(err)
			}
			lines, err := csv.NewReader(&csvOut).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := slices.Index(lines[0], "prompt template version")
			if col < 0 || lines[1][col] != tt.wantText {
				t.Errorf("CSV prompt template version = %q, want %q", lines[1][col], tt.wantText)
			}
			if table := r.CorrelationTable(); !strings.Contains(table, "prompt template "+tt.wantText+" ·") {
				t.Errorf("correlation table does not say prompt template %q:\n%s", tt.wantText, table)
			}
		})
	}
}

// TestExportSystemLevel: the JSON export carries the system-level
// correlation per criterion, equal to a Pearson computed here by hand over
// the systems' means, and null where it cannot be measured.
func TestExportSystemLevel(t *testing.T) {
	// gevalFixture: systems s1 (a), s2 (b), s3 (c, d; d has no score).
	// Final scores a 1.2, b 3.0799999999999996, c 2.7; humans a 0,
	// b 2.3333333333333335, c 3.
	xs := []float64{1.2, 3.0799999999999996, 2.7}
	ys := []float64{0, 2.3333333333333335, 3}
	mean := func(v []float64) float64 { return (v[0] + v[1] + v[2]) / 3 }
	mx, my := mean(xs), mean(ys)
	var sxy, sxx, syy float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
		syy += (ys[i] - my) * (ys[i] - my)
	}
	want := sxy / math.Sqrt(sxx*syy)

	_, doc := exportJSON(t, gevalFixture())
	crit := doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)
	sl, ok := crit["system_level"].(map[string]any)
	if !ok {
		t.Fatalf("criterion has no system_level: %v", crit)
	}
	p := sl["pearson"].(map[string]any)
	if sl["column"] != "system" || p["systems"] != float64(3) || p["n"] != float64(3) {
		t.Errorf("system_level = %v, want column system, 3 systems, 3 samples", sl)
	}
	if got, ok := p["coef"].(float64); !ok || math.Abs(got-want) > 1e-12 {
		t.Errorf("system-level pearson = %v, want %v", p["coef"], want)
	}
	// Spearman over three means is +-1, 0.5 or similar: ranks x (1,3,2),
	// y (1,2,3) give 0.5.
	if got := sl["spearman"].(map[string]any)["coef"]; got != 0.5 {
		t.Errorf("system-level spearman = %v, want 0.5", got)
	}
	if _, has := crit["grouped"]; !has {
		t.Errorf("criterion lacks its grouped figures beside the system level")
	}

	// Two systems only: undefined, so null, never a number.
	run, ds, rows, batches, scores := fixture()
	ds.Columns = []string{"text", "g", "system"}
	for i := range rows {
		rows[i].Data["system"] = []string{"s1", "s1", "s2", "s2"}[i]
	}
	_, doc = exportJSON(t, Compute(run, ds, rows, batches, scores))
	crit = doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)
	for _, m := range []string{"pearson", "spearman", "kendall"} {
		c := crit["system_level"].(map[string]any)[m].(map[string]any)
		for _, k := range []string{"coef", "p", "ci_low", "ci_high"} {
			if v, has := c[k]; !has || v != nil {
				t.Errorf("two systems: %s %s = %v, want null", m, k, v)
			}
		}
	}
	// Without a system column there is no section at all.
	run, ds, rows, batches, scores = fixture()
	_, doc = exportJSON(t, Compute(run, ds, rows, batches, scores))
	crit = doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)
	if _, has := crit["system_level"]; has {
		t.Errorf("system_level present without a system column")
	}
}

// TestCorrelationTableSaysUndefined: the command line's table prints
// "undefined" for a correlation that cannot be measured (constant scores),
// never "n/a" or a number.
func TestCorrelationTableSaysUndefined(t *testing.T) {
	run, ds, rows, batches, scores := fixture()
	for i := range scores {
		scores[i].Score = f(2)
	}
	table := Compute(run, ds, rows, batches, scores).CorrelationTable()
	var line string
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "Q ") {
			line = l
		}
	}
	fields := strings.Fields(line)
	if len(fields) != 8 || strings.Contains(table, "n/a") {
		t.Fatalf("row of Q: %q in\n%s", line, table)
	}
	for i, name := range []string{"pearson", "p", "spearman", "p", "kendall"} {
		if fields[1+i] != "undefined" {
			t.Errorf("%s = %q, want undefined", name, fields[1+i])
		}
	}
}

// TestCorrelationTablePrintsPByTheOneRule: the command line's p columns
// print a p-value as every page and sentence does (stats.PCell: two
// decimals from 0.10 on, three below), not three decimals at every size
// (the fixture's Spearman p of 1/3 printed "0.333" beside "p = 0.33").
func TestCorrelationTablePrintsPByTheOneRule(t *testing.T) {
	r := Compute(fixture())
	c := r.Criteria[0]
	var fields []string
	for _, l := range strings.Split(r.CorrelationTable(), "\n") {
		if strings.HasPrefix(l, "Q ") {
			fields = strings.Fields(l)
		}
	}
	if len(fields) != 8 {
		t.Fatalf("row of Q: %q", fields)
	}
	for _, tt := range []struct {
		name string
		got  string
		p    float64
		want string
	}{
		{"pearson's p", fields[2], c.Pearson.P, "0.091"},
		{"spearman's p", fields[4], c.Spearman.P, "0.33"},
	} {
		if tt.got != tt.want || tt.got != stats.PCell(tt.p) {
			t.Errorf("%s = %q, want %q (stats.PCell(%g) = %q)", tt.name, tt.got, tt.want, tt.p, stats.PCell(tt.p))
		}
	}
	if got := fp(0.0004); got != "<0.001" {
		t.Errorf("fp(0.0004) = %q, want <0.001 (one field, no space)", got)
	}
	if got := fp(50.0 / 1001); got != "<0.050" {
		t.Errorf("fp(50/1001) = %q, want <0.050 (below the 5%% line, not rounded up to it)", got)
	}
}

// TestCorrelationTableSaysWhyUndefined: the command line's "undefined"
// comes with its reason, as the run page gives it (the table printed the
// word alone): a constant side, too few samples, no human ratings. A
// defined figure gets no such line.
func TestCorrelationTableSaysWhyUndefined(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(rows []models.DatasetRow, scores []models.RunScore)
		want   string
	}{
		{"constant judge scores", func(_ []models.DatasetRow, scores []models.RunScore) {
			for i := range scores {
				scores[i].Score = f(2)
			}
		}, "undefined for Q: Agreement cannot be measured: one side gave the same score to all 4 samples."},
		{"too few samples", func(rows []models.DatasetRow, _ []models.RunScore) {
			delete(rows[0].Ratings, "h")
		}, "undefined for Q: Too few samples to say (n = 2); 2 samples without both scores were left out."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			tc.change(rows, scores)
			table := Compute(run, ds, rows, batches, scores).CorrelationTable()
			if !strings.Contains(table, tc.want+"\n") {
				t.Errorf("table lacks %q:\n%s", tc.want, table)
			}
		})
	}
	run, ds, rows, batches, scores := fixture()
	if table := Compute(run, ds, rows, batches, scores).CorrelationTable(); strings.Contains(table, "undefined") {
		t.Errorf("a defined correlation's table says undefined:\n%s", table)
	}
}

// TestCorrelationTableMissingIsTheCorrelations: the command line's n and
// missing are the correlation's, as the run page and the JSON export state
// them, also when a sample has no human rating; unreadable round scores
// are said on a line of their own. The table printed the unreadable count
// as "missing" (0 where the page said 3 for three unrated samples).
func TestCorrelationTableMissingIsTheCorrelations(t *testing.T) {
	for _, tc := range []struct {
		name        string
		unrated     string // the external id of a row whose human rating is removed
		wantN       int
		wantMissing int
	}{
		{"every sample rated", "", 3, 1},
		{"one sample without a human rating", "b", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			for i := range rows {
				if rows[i].ExternalID == tc.unrated {
					delete(rows[i].Ratings, "h")
				}
			}
			rep := Compute(run, ds, rows, batches, scores)
			c := rep.Criteria[0]
			if c.Pearson.N != tc.wantN || c.Pearson.Missing != tc.wantMissing {
				t.Fatalf("report n/missing = %d/%d, want %d/%d", c.Pearson.N, c.Pearson.Missing, tc.wantN, tc.wantMissing)
			}
			table := rep.CorrelationTable()
			var fields []string
			for _, l := range strings.Split(table, "\n") {
				if strings.HasPrefix(l, "Q ") {
					fields = strings.Fields(l)
				}
			}
			if len(fields) != 8 {
				t.Fatalf("row of Q: %q in\n%s", fields, table)
			}
			if got, want := fields[6]+"/"+fields[7], strconv.Itoa(tc.wantN)+"/"+strconv.Itoa(tc.wantMissing); got != want {
				t.Errorf("table n/missing = %s, want %s (the export's)\n%s", got, want, table)
			}
			if want := "unreadable answers of Q: 1 of 6 answered round scores"; !strings.Contains(table, want) {
				t.Errorf("table lacks %q:\n%s", want, table)
			}
		})
	}
}

// TestCorrelationTableWithoutReadableScores: a run that produced no
// readable score printed a table of "undefined" on the command line; it
// now prints one line saying no scores could be read, and why.
func TestCorrelationTableWithoutReadableScores(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		done, failed, total  int
		err                  string
		keepScores, noScores bool
		want                 string
	}{
		{name: "answers unreadable", done: 3, total: 3,
			want: "no scores could be read, so there are no correlations: 3 of 3 batches got the judge's answer, but no score could be read from it (each batch's page in the dashboard shows the answer and what was wrong)"},
		{name: "every call failed", done: 3, failed: 3, total: 3, err: "judge call failed: HTTP 401: bad key",
			want: "no scores could be read, so there are no correlations: every judge call failed (3 of 3 batches): judge call failed: HTTP 401: bad key"},
		{name: "nothing judged", total: 3, noScores: true,
			want: "no scores could be read, so there are no correlations: nothing was judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			run.BatchesDone, run.BatchesFailed, run.BatchesTotal, run.Error = tc.done, tc.failed, tc.total, tc.err
			for i := range scores {
				scores[i].Score = nil
			}
			if tc.noScores {
				scores = nil
			}
			table := Compute(run, ds, rows, batches, scores).CorrelationTable()
			if !strings.Contains(table, tc.want+"\n") {
				t.Errorf("table lacks %q:\n%s", tc.want, table)
			}
			if strings.Contains(table, "undefined") || strings.Contains(table, "kendall") {
				t.Errorf("table still prints correlations:\n%s", table)
			}
		})
	}
}

// TestExportUnreadableRateUndefinedWithoutScores: a criterion with no score
// asked for yet (a run cancelled before its first answer) exports its
// unreadable_rate as null, not 0; with scores it is unreadable / all.
// (QA: GET /api/v1/runs/{id}/results of such a run said 0.)
func TestExportUnreadableRateUndefinedWithoutScores(t *testing.T) {
	for _, tc := range []struct {
		scored, missing int
		want            any
	}{
		{0, 0, nil},
		{3, 1, 0.25},
		{4, 0, 0.0},
	} {
		r := gevalFixture()
		r.Criteria[0].Scored, r.Criteria[0].Missing = tc.scored, tc.missing
		r.Criteria[0].UnreadableRate = 0
		if all := tc.scored + tc.missing; all > 0 {
			r.Criteria[0].UnreadableRate = float64(tc.missing) / float64(all)
		}
		_, doc := exportJSON(t, r)
		got := doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)["unreadable_rate"]
		if got != tc.want {
			t.Errorf("scored %d, unreadable %d: unreadable_rate = %v, want %v", tc.scored, tc.missing, got, tc.want)
		}
	}
}

// TestProvenanceHumanColumnsAreTheOnesUsed: provenance names a criterion's
// human-rating column only when the report read ratings from it. A rubric
// naming a column the dataset lacks (FED dialogues uploaded without their
// "scores") compared nothing, as the run page says; the run page's
// "Produced by", the CSV and the JSON export must not claim the column.
func TestProvenanceHumanColumnsAreTheOnesUsed(t *testing.T) {
	for _, tt := range []struct {
		name     string
		column   string
		wantText string
		wantJSON any
	}{
		{"column with ratings", "h", "Q=h (annotators h@r1, h@r2)", "h"},
		{"column the dataset lacks", "scores.Coherent", "Q=none (the rubric names scores.Coherent, from which no rating was read)", nil},
		{"no column", "", "Q=none", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			run.RubricSnapshot.Criteria[0].HumanColumn = tt.column
			r := Compute(run, ds, rows, batches, scores)
			if got := r.Provenance().HumanColumnsText(); got != tt.wantText {
				t.Errorf("HumanColumnsText = %q, want %q", got, tt.wantText)
			}
			if got := r.Provenance().WithoutReviewerNames().HumanColumnsText(); got != tt.wantText {
				t.Errorf("shared HumanColumnsText = %q, want %q", got, tt.wantText)
			}
			_, doc := exportJSON(t, r)
			p := doc.(map[string]any)["report"].(map[string]any)["provenance"].(map[string]any)
			hc := p["human_columns"].([]any)[0].(map[string]any)
			if v, ok := hc["human_column"]; !ok || v != tt.wantJSON {
				t.Errorf("JSON human_column = %v, want %v", v, tt.wantJSON)
			}
			// The criterion's own human_column is the column read, as
			// provenance says: it named the rubric's column even when the
			// dataset lacks it. Null then, with the reason beside it.
			crit := doc.(map[string]any)["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)
			if v, ok := crit["human_column"]; !ok || v != tt.wantJSON {
				t.Errorf("JSON criteria[0].human_column = %v (present %v), want %v", v, ok, tt.wantJSON)
			}
			note, _ := crit["human_column_note"].(string)
			if wantNote := tt.wantJSON == nil; (note != "") != wantNote || (tt.column != "" && wantNote && !strings.Contains(note, tt.column)) {
				t.Errorf("JSON criteria[0].human_column_note = %q; want a reason naming %q when no column was read, none otherwise", note, tt.column)
			}
			var csvOut bytes.Buffer
			if err := r.WriteCSV(&csvOut); err != nil {
				t.Fatal(err)
			}
			lines, err := csv.NewReader(&csvOut).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			col := slices.Index(lines[0], "human rating columns")
			if col < 0 || lines[1][col] != tt.wantText {
				t.Errorf("CSV human rating columns = %q, want %q", lines[1][col], tt.wantText)
			}
		})
	}
}
