package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// TestSystemLevelPerfectAgreementHasNoPointInterval: ten systems whose
// mean judge scores are in the humans' order (the judge gave each sample
// its human rating). The system-level Spearman, Kendall and Pearson are
// exactly 1, and every page and export showed the "95% interval" 1.000 to
// 1.000: Fisher's z of 1 is infinite, so the interval was a point claiming
// certainty that ten systems cannot give. The run page, the shared page,
// the downloaded report and the JSON export now give no interval and say
// why, and keep the coefficient and its p-value.
func TestSystemLevelPerfectAgreementHasNoPointInterval(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := perfectOrderRun(t, env)

		const reason = "the coefficient is exactly 1 over 10 systems"
		page := html.UnescapeString(env.get(fmt.Sprintf("/runs/%d?system=system", run.ID)).Body.String())
		cis := regexp.MustCompile(`data-testid="system-ci">([^<]*)<`).FindAllStringSubmatch(page, -1)
		if len(cis) != 3 {
			t.Fatalf("run page: %d system-level intervals, want 3", len(cis))
		}
		for i, m := range cis {
			if m[1] != "undefined" {
				t.Errorf("run page: system-level interval %d is %q, want undefined at a coefficient of 1", i, m[1])
			}
		}
		if n := strings.Count(page, reason); n != 3 {
			t.Errorf("run page: the reason %q said %d times, want once per coefficient", reason, n)
		}
		for _, m := range regexp.MustCompile(`data-testid="system-coef">([^<]*)<`).FindAllStringSubmatch(page, -1) {
			if m[1] != "1.000" {
				t.Errorf("run page: system-level coefficient %q, want 1.000", m[1])
			}
		}

		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
		for name, path := range map[string]string{"shared page": link, "downloaded report": fmt.Sprintf("/runs/%d/report.html", run.ID)} {
			body := html.UnescapeString(env.get(path).Body.String())
			block := testidBlock(body, "report-system-level")
			if block == "" {
				t.Errorf("%s: no system-level section", name)
				continue
			}
			if strings.Contains(block, "1.000 to 1.000") || strings.Contains(block, "+1.000 to +1.000") {
				t.Errorf("%s: a point interval at a coefficient of 1: %s", name, block)
			}
			if n := strings.Count(body, reason); n != 3 {
				t.Errorf("%s: the reason said %d times, want 3", name, n)
			}
		}

		var doc struct {
			Report struct {
				Criteria []struct {
					SystemLevel map[string]json.RawMessage `json:"system_level"`
				} `json:"criteria"`
			} `json:"report"`
		}
		must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &doc))
		if len(doc.Report.Criteria) != 1 || doc.Report.Criteria[0].SystemLevel == nil {
			t.Fatalf("JSON export: no system level")
		}
		for _, m := range []string{"pearson", "spearman", "kendall"} {
			var c struct {
				Coef   *float64 `json:"coef"`
				P      *float64 `json:"p"`
				Lo     *float64 `json:"ci_low"`
				Hi     *float64 `json:"ci_high"`
				Method string   `json:"interval_method"`
				Note   string   `json:"interval_note"`
			}
			must(t, json.Unmarshal(doc.Report.Criteria[0].SystemLevel[m], &c))
			if c.Coef == nil || *c.Coef != 1 || c.P == nil {
				t.Errorf("JSON export %s: coef %v, p %v; want 1 with its p-value", m, c.Coef, c.P)
			}
			if c.Lo != nil || c.Hi != nil || c.Method != "" || !strings.Contains(c.Note, reason) {
				t.Errorf("JSON export %s: interval %v to %v by %q, note %q; want null with the reason", m, c.Lo, c.Hi, c.Method, c.Note)
			}
		}
	})
}

// perfectOrderRun stores a run over ten systems of two samples each whose
// judge gave every sample its human rating: every coefficient, over the
// samples and over the systems' means, is exactly 1.
func perfectOrderRun(t *testing.T, env *testEnv) models.Run {
	t.Helper()
	ctx := context.Background()
	const systems, per = 10, 2
	var rows []models.DatasetRow
	var human []float64
	for s := range systems {
		for j := range per {
			i := len(rows)
			// Means 1.3, 1.6, ... rising with the system; the
			// samples of a system differ.
			h := 1 + 0.3*float64(s+1) + 0.2*float64(j)
			human = append(human, h)
			id := fmt.Sprintf("s%03d", i)
			rows = append(rows, models.DatasetRow{Position: i + 1, ExternalID: id,
				Data:    map[string]string{"id": id, "text": fmt.Sprintf("sample %d", i), "system": fmt.Sprintf("sys%02d", s)},
				Ratings: map[string]*float64{"q": &human[i]}})
		}
	}
	ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "Ten systems", Format: "csv", IDColumn: "id",
		Columns: []string{"id", "text", "system"}, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, RatingColumns: []string{"q"}}
	must(t, env.db.CreateDataset(ctx, &ds, rows))
	stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
	must(t, err)
	d := ratedData{ds: ds, human: human}
	for _, r := range stored {
		d.rowIDs = append(d.rowIDs, r.ID)
	}
	return env.storedRun(d, "Perfect order", human, nil)
}

// TestSampleLevelPerfectAgreementHasNoPointInterval: the same run's
// agreement over its 20 samples is exactly 1 on all three coefficients,
// and the run page, the shared page, the downloaded report and the JSON
// export showed the "95% interval" 1.000 to 1.000 (Fisher's interval of
// r = 1 on 20 pairs is that point; so is the bootstrap of pairs on one
// line). They now show none, say why once, and keep coefficient and p.
func TestSampleLevelPerfectAgreementHasNoPointInterval(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		run := perfectOrderRun(t, env)
		const reason = "exactly ±1 over 20 samples, so no interval is shown"
		link := env.createShareVia(url.Values{"kind": {"run"}, "run_id": {fmt.Sprint(run.ID)}, "expires": {"7d"}})
		for name, path := range map[string]string{
			"run page":          fmt.Sprintf("/runs/%d", run.ID),
			"shared page":       link,
			"downloaded report": fmt.Sprintf("/runs/%d/report.html", run.ID),
		} {
			body := html.UnescapeString(env.get(path).Body.String())
			block := testidBlock(body, "correlations")
			if block == "" {
				t.Errorf("%s: no agreement table", name)
				continue
			}
			if strings.Contains(block, "1.000 to") {
				t.Errorf("%s: a point interval at a coefficient of 1: %s", name, block)
			}
			if n := strings.Count(block, "undefined"); n != 3 {
				t.Errorf("%s: %d intervals undefined, want all 3: %s", name, n, block)
			}
			if n := strings.Count(body, reason); n != 1 {
				t.Errorf("%s: the reason %q said %d times, want once", name, reason, n)
			}
			if !strings.Contains(body, "Pearson r, Spearman ρ and Kendall τ-b are exactly ±1") {
				t.Errorf("%s: the note does not name the three coefficients", name)
			}
		}
		var doc struct {
			Report struct {
				Criteria []struct {
					Pearson, Spearman, Kendall struct {
						Coef *float64 `json:"coef"`
						P    *float64 `json:"p"`
						Lo   *float64 `json:"ci_low"`
						Hi   *float64 `json:"ci_high"`
					}
				} `json:"criteria"`
			} `json:"report"`
		}
		must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &doc))
		if len(doc.Report.Criteria) != 1 {
			t.Fatalf("JSON export: %d criteria", len(doc.Report.Criteria))
		}
		cr := doc.Report.Criteria[0]
		for name, c := range map[string]struct {
			Coef *float64 `json:"coef"`
			P    *float64 `json:"p"`
			Lo   *float64 `json:"ci_low"`
			Hi   *float64 `json:"ci_high"`
		}{"pearson": cr.Pearson, "spearman": cr.Spearman, "kendall": cr.Kendall} {
			if c.Coef == nil || *c.Coef != 1 || c.P == nil {
				t.Errorf("JSON export %s: coef %v, p %v; want 1 with its p-value", name, c.Coef, c.P)
			}
			if c.Lo != nil || c.Hi != nil {
				t.Errorf("JSON export %s: interval %v to %v, want null", name, *c.Lo, *c.Hi)
			}
		}
	})
}
