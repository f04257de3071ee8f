package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
)

// safeCell defuses spreadsheet formulas: a text cell starting with = + - @
// or a tab/CR is prefixed with a quote so spreadsheets show it as text.
func safeCell(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}

func num(v *float64) string {
	if v == nil || math.IsNaN(*v) {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// WriteCSV writes one line per sample: its id and fields, then per
// criterion the human rating, the final score, each round's score and the
// count of unreadable rounds. Missing values are empty cells.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if len(r.Criteria) == 0 {
		return fmt.Errorf("the run has no criteria")
	}
	head := []string{"id"}
	for _, f := range r.Criteria[0].Samples0Fields() {
		head = append(head, safeCell(f.Label))
	}
	for _, c := range r.Criteria {
		name := safeCell(c.Criterion.Name)
		head = append(head, name+" human", name+" final")
		for k := range r.Run.Settings.Rounds {
			head = append(head, fmt.Sprintf("%s round %d", name, k+1))
		}
		head = append(head, name+" unreadable rounds")
	}
	if r.Simulated {
		head = append(head, "judge")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for i, s := range r.Criteria[0].Samples {
		line := []string{safeCell(s.ExternalID)}
		for _, f := range s.Fields {
			line = append(line, safeCell(f.Value))
		}
		for _, c := range r.Criteria {
			cs := c.Samples[i]
			line = append(line, num(cs.Human), num(cs.Final))
			for _, v := range cs.Rounds {
				line = append(line, num(v))
			}
			line = append(line, strconv.Itoa(cs.Missing))
		}
		if r.Simulated {
			line = append(line, "simulated judge")
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Samples0Fields returns the field labels of the first sample, for headers.
func (c CriterionReport) Samples0Fields() []evaluator.Text {
	if len(c.Samples) == 0 {
		return nil
	}
	return c.Samples[0].Fields
}

// jsonFloat encodes NaN as null (JSON has no NaN).
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(float64(f), 'g', -1, 64)), nil
}

type jsonCorrelation struct {
	Coef    jsonFloat `json:"coef"`
	P       jsonFloat `json:"p"`
	N       int       `json:"n"`
	Missing int       `json:"missing"`
	CILow   jsonFloat `json:"ci_low"`
	CIHigh  jsonFloat `json:"ci_high"`
}

func jc(c stats.Correlation) jsonCorrelation {
	return jsonCorrelation{jsonFloat(c.Coef), jsonFloat(c.P), c.N, c.Missing, jsonFloat(c.CILow), jsonFloat(c.CIHigh)}
}

// JSON shapes of the export: also what `batcheval run --out` writes.
type (
	// JSONExport is the whole run.
	JSONExport struct {
		Run       JSONRun         `json:"run"`
		Criteria  []JSONCriterion `json:"criteria"`
		Simulated bool            `json:"simulated_judge"`
	}
	// JSONRun describes the run.
	JSONRun struct {
		ID     int64  `json:"id"`
		Name   string `json:"name"`
		Method string `json:"method"`
		Status string `json:"status"`
		// StatusReason says why a run failed or finished with gaps.
		StatusReason     string                    `json:"status_reason,omitempty"`
		Dataset          string                    `json:"dataset"`
		Judge            string                    `json:"judge_model"`
		Settings         evaluator.Settings        `json:"settings"`
		MethodSettings   *evaluator.MethodSettings `json:"method_settings,omitempty"`
		Variant          string                    `json:"variant,omitempty"`
		ParentRunID      *int64                    `json:"parent_run_id,omitempty"`
		Task             string                    `json:"task"`
		Calls            int                       `json:"calls"`
		PromptTokens     int                       `json:"prompt_tokens"`
		CompletionTokens int                       `json:"completion_tokens"`
		CostUSD          *float64                  `json:"cost_usd"`
		BatchesFailed    int                       `json:"batches_failed"`
		MissingScores    int                       `json:"missing_scores"`
		CreatedAt        time.Time                 `json:"created_at"`
		FinishedAt       *time.Time                `json:"finished_at"`
	}
	// JSONCriterion is one criterion's statistics and samples.
	JSONCriterion struct {
		Name           string            `json:"name"`
		Lo             float64           `json:"lo"`
		Hi             float64           `json:"hi"`
		HumanColumn    string            `json:"human_column,omitempty"`
		Pearson        jsonCorrelation   `json:"pearson"`
		Spearman       jsonCorrelation   `json:"spearman"`
		Kendall        jsonCorrelation   `json:"kendall"`
		Reading        string            `json:"reading"`
		Entropy        jsonFloat         `json:"entropy_bits"`
		MeanBatchBias  jsonFloat         `json:"mean_batch_bias"`
		Rounds         []JSONRound       `json:"rounds"`
		Decomposition  JSONDecomposition `json:"ensemble_decomposition"`
		Histogram      []stats.Bin       `json:"histogram"`
		Scored         int               `json:"scored"`
		Unreadable     int               `json:"unreadable"`
		UnreadableRate jsonFloat         `json:"unreadable_rate"`
		Grouped        *JSONGrouped      `json:"grouped,omitempty"`
		HumanCeiling   *JSONCeiling      `json:"human_ceiling,omitempty"`
		Positions      []JSONPosition    `json:"position_effect,omitempty"`
		Samples        []JSONSample      `json:"samples"`
	}
	// JSONGrouped is the correlation within groups of a column, averaged.
	JSONGrouped struct {
		Column   string    `json:"column"`
		Pearson  jsonFloat `json:"pearson"`
		Spearman jsonFloat `json:"spearman"`
		Kendall  jsonFloat `json:"kendall"`
		Groups   int       `json:"groups"`
		Skipped  int       `json:"skipped_groups"`
	}
	// JSONCeiling is the inter-annotator agreement.
	JSONCeiling struct {
		Annotators  int       `json:"annotators"`
		Items       int       `json:"items"`
		Alpha       jsonFloat `json:"krippendorff_alpha"`
		LeaveOneOut jsonFloat `json:"leave_one_out_pearson"`
		Reading     string    `json:"reading"`
	}
	// JSONPosition is the mean score and error at one batch position.
	JSONPosition struct {
		Position      int       `json:"position"`
		N             int       `json:"n"`
		MeanScore     jsonFloat `json:"mean_score"`
		MeanAbsErr    jsonFloat `json:"mean_abs_error"`
		MeanSignedErr jsonFloat `json:"mean_signed_error"`
	}
	// JSONRound is one round's figures.
	JSONRound struct {
		Round     int             `json:"round"`
		Single    jsonCorrelation `json:"single_round_pearson"`
		Ensemble  jsonCorrelation `json:"ensemble_pearson"`
		BatchBias jsonFloat       `json:"batch_bias"`
	}
	// JSONDecomposition is Err(mean,y) = Err(S,y) - Var(S).
	JSONDecomposition struct {
		EnsembleErr  jsonFloat `json:"ensemble_error"`
		MeanRoundErr jsonFloat `json:"mean_round_error"`
		MeanVariance jsonFloat `json:"mean_variance"`
		N            int       `json:"n"`
		Note         string    `json:"note"`
	}
	// JSONSample is one sample's scores.
	JSONSample struct {
		ID     string     `json:"id"`
		Final  *float64   `json:"final"`
		Rounds []*float64 `json:"rounds"`
		Human  *float64   `json:"human"`
	}
)

// Export builds the JSON export value.
func (r *Report) Export() JSONExport {
	run := r.Run
	out := JSONExport{Simulated: r.Simulated, Run: JSONRun{ID: run.ID, Name: run.Name, Method: run.Method, Status: run.Status, StatusReason: run.Error,
		Dataset: r.Dataset.Name, Judge: run.JudgeSnapshot.Model, Settings: run.Settings, Task: run.RubricSnapshot.Task,
		Calls: run.Calls, PromptTokens: run.PromptTokens, CompletionTokens: run.CompletionTokens, CostUSD: run.CostUSD,
		BatchesFailed: run.BatchesFailed, MissingScores: run.MissingScores, CreatedAt: run.CreatedAt, FinishedAt: run.FinishedAt,
		Variant: run.Variant, ParentRunID: run.ParentRunID}}
	if run.MethodSettings.Samples != 0 { // set by the methods that use them (methods.Method.Prepare)
		ms := run.MethodSettings
		out.Run.MethodSettings = &ms
	}
	for _, c := range r.Criteria {
		jcr := JSONCriterion{Name: c.Criterion.Name, Lo: c.Criterion.Lo, Hi: c.Criterion.Hi, HumanColumn: c.Criterion.HumanColumn,
			Pearson: jc(c.Pearson), Spearman: jc(c.Spearman), Kendall: jc(c.Kendall), Reading: c.Reading,
			Entropy: jsonFloat(c.Entropy), MeanBatchBias: jsonFloat(c.MeanBatchBias), Histogram: c.Histogram,
			Scored: c.Scored, Unreadable: c.Missing,
			Decomposition: JSONDecomposition{jsonFloat(c.Decomposition.EnsembleErr), jsonFloat(c.Decomposition.MeanRoundErr),
				jsonFloat(c.Decomposition.MeanVariance), c.Decomposition.N, c.DecompositionNote}}
		jcr.UnreadableRate = jsonFloat(c.UnreadableRate)
		if c.GroupColumn != "" {
			g := c.Grouped
			jcr.Grouped = &JSONGrouped{Column: c.GroupColumn, Pearson: jsonFloat(g[stats.MethodPearson].Coef),
				Spearman: jsonFloat(g[stats.MethodSpearman].Coef), Kendall: jsonFloat(g[stats.MethodKendall].Coef),
				Groups: g[stats.MethodPearson].Groups, Skipped: g[stats.MethodPearson].Skipped}
		}
		if c.Ceiling != nil {
			jcr.HumanCeiling = &JSONCeiling{c.Ceiling.Annotators, c.Ceiling.Items, jsonFloat(c.Ceiling.Alpha), jsonFloat(c.Ceiling.LeaveOneOut), c.Ceiling.Reading}
		}
		for _, p := range c.Positions {
			jcr.Positions = append(jcr.Positions, JSONPosition{p.Position, p.N, jsonFloat(p.MeanScore), jsonFloat(p.MeanAbsErr), jsonFloat(p.MeanSignedErr)})
		}
		for _, rs := range c.Rounds {
			jcr.Rounds = append(jcr.Rounds, JSONRound{rs.Round, jc(rs.Single), jc(rs.Ensemble), jsonFloat(rs.BatchBias)})
		}
		for _, s := range c.Samples {
			jcr.Samples = append(jcr.Samples, JSONSample{ID: s.ExternalID, Final: s.Final, Rounds: s.Rounds, Human: s.Human})
		}
		out.Criteria = append(out.Criteria, jcr)
	}
	return out
}

// WriteJSON writes the whole run as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Export())
}

// CorrelationTable renders a plain-text table per criterion for terminals.
func (r *Report) CorrelationTable() string {
	var b strings.Builder
	if r.Simulated {
		b.WriteString("(scores from the simulated judge, not a language model)\n")
	}
	fmt.Fprintf(&b, "%-20s %8s %8s %8s %8s %8s %6s %8s\n", "criterion", "pearson", "p", "spearman", "p", "kendall", "n", "missing")
	for _, c := range r.Criteria {
		fmt.Fprintf(&b, "%-20s %8s %8s %8s %8s %8s %6d %8d\n", trunc(c.Criterion.Name, 20),
			f3(c.Pearson.Coef), fp(c.Pearson.P), f3(c.Spearman.Coef), fp(c.Spearman.P), f3(c.Kendall.Coef), c.Pearson.N, c.Missing)
	}
	return b.String()
}

func f3(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func fp(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	if v < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func trunc(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
