package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/stats"
	"github.com/batcheval/batcheval/models"
)

func f(v float64) *float64 { return &v }

// fixture: 4 samples, 2 rounds, batches of 2, one criterion on [1, 3]
// with human ratings on [0, 4] in column "h" and two annotators.
func fixture() (models.Run, models.Dataset, []models.DatasetRow, []models.RunBatch, []models.RunScore) {
	run := models.Run{ID: 1, Settings: evaluator.Settings{Rounds: 2, BatchSize: 2},
		RubricSnapshot: evaluator.Rubric{Task: "t", Criteria: []evaluator.Criterion{{Name: "Q", Lo: 1, Hi: 3, HumanColumn: "h"}}}}
	ds := models.Dataset{ID: 1, Fields: []evaluator.Field{{Column: "text", Label: "Text"}}, GroupColumn: "g"}
	rows := []models.DatasetRow{
		{ID: 10, Position: 1, ExternalID: "a", Data: map[string]string{"text": "=cmd()", "g": "x"}, Ratings: map[string]*float64{"h": f(0), "h@r1": f(0), "h@r2": f(0)}},
		{ID: 11, Position: 2, ExternalID: "b", Data: map[string]string{"text": "two", "g": "x"}, Ratings: map[string]*float64{"h": f(1), "h@r1": f(1), "h@r2": f(1)}},
		{ID: 12, Position: 3, ExternalID: "c", Data: map[string]string{"text": "three", "g": "y"}, Ratings: map[string]*float64{"h": f(3), "h@r1": f(2), "h@r2": f(4)}},
		{ID: 13, Position: 4, ExternalID: "d", Data: map[string]string{"text": "four", "g": "y"}, Ratings: map[string]*float64{"h": f(4), "h@r1": f(4), "h@r2": f(4)}},
	}
	batches := []models.RunBatch{
		{ID: 1, Round: 0, BatchIndex: 0, RowIDs: []int64{10, 11}},
		{ID: 2, Round: 0, BatchIndex: 1, RowIDs: []int64{12, 13}},
		{ID: 3, Round: 1, BatchIndex: 0, RowIDs: []int64{10, 12}},
	}
	scores := []models.RunScore{
		{BatchID: 1, Round: 0, RowID: 10, Label: 1, Score: f(1.0)},
		{BatchID: 1, Round: 0, RowID: 11, Label: 2, Score: f(1.5)},
		{BatchID: 2, Round: 0, RowID: 12, Label: 1, Score: f(2.5)},
		{BatchID: 2, Round: 0, RowID: 13, Label: 2, Score: nil}, // judged, unreadable
		{BatchID: 3, Round: 1, RowID: 10, Label: 1, Score: f(1.4)},
		{BatchID: 3, Round: 1, RowID: 12, Label: 2, Score: f(2.9)},
		// rows 11 and 13 have no round-2 score yet: not judged, not unreadable
	}
	return run, ds, rows, batches, scores
}

func TestComputeFinalScoresAndMissing(t *testing.T) {
	rep := Compute(fixture())
	c := rep.Criteria[0]
	want := map[string]struct {
		final   *float64
		missing int
	}{"a": {f(1.2), 0}, "b": {f(1.5), 0}, "c": {f(2.7), 0}, "d": {nil, 1}}
	for _, s := range c.Samples {
		w := want[s.ExternalID]
		switch {
		case (s.Final == nil) != (w.final == nil):
			t.Errorf("%s final = %v, want %v", s.ExternalID, s.Final, w.final)
		case s.Final != nil && math.Abs(*s.Final-*w.final) > 1e-12:
			t.Errorf("%s final = %v, want %v", s.ExternalID, *s.Final, *w.final)
		}
		if int(s.Missing) != w.missing {
			t.Errorf("%s missing = %d, want %d", s.ExternalID, s.Missing, w.missing)
		}
	}
	if c.Scored != 5 || c.Missing != 1 {
		t.Errorf("scored/missing = %d/%d, want 5/1", c.Scored, c.Missing)
	}
	if math.Abs(c.UnreadableRate-1.0/6) > 1e-12 {
		t.Errorf("unreadable rate = %v, want 1/6", c.UnreadableRate)
	}
	// Human 0..4 mapped onto 1..3: sample c (human 3 -> 2.5) has |2.7-2.5| = 0.2.
	if d := c.Samples[2].AbsDiff; d == nil || math.Abs(*d-0.2) > 1e-12 {
		t.Errorf("c AbsDiff = %v, want 0.2", d)
	}
	if c.Pearson.N != 3 || c.Pearson.Missing != 1 {
		t.Errorf("pearson n/missing = %d/%d, want 3/1", c.Pearson.N, c.Pearson.Missing)
	}
	// Three pairs: a coefficient and p, but no bootstrap interval (every
	// resample is the sample itself or two distinct points).
	if !(c.Pearson.Coef > 0.9) || math.IsNaN(c.Pearson.P) || !math.IsNaN(c.Pearson.CILow) || !math.IsNaN(c.Pearson.CIHigh) {
		t.Errorf("pearson = %+v, want a strong positive value with p and no interval on 3 pairs", c.Pearson)
	}
}

func TestComputeBatchBiasByHand(t *testing.T) {
	c := Compute(fixture()).Criteria[0]
	// Round 1: batch {a 1.0 (mean 1.2), b 1.5 (1.5)} -> |2.5-2.7|/2 = 0.1;
	// batch {c 2.5 (2.7); d unreadable, left out} -> |2.5-2.7|/1 = 0.2.
	// Round 2: batch {a 1.4 (1.2), c 2.9 (2.7)} -> |4.3-3.9|/2 = 0.2.
	if got := c.Rounds[0].BatchBias; math.Abs(got-0.15) > 1e-12 {
		t.Errorf("round 1 bias = %v, want 0.15", got)
	}
	if got := c.Rounds[1].BatchBias; math.Abs(got-0.2) > 1e-12 {
		t.Errorf("round 2 bias = %v, want 0.2", got)
	}
	if got := c.MeanBatchBias; math.Abs(got-0.5/3) > 1e-12 {
		t.Errorf("mean bias = %v, want 1/6", got)
	}
}

func TestComputeExtras(t *testing.T) {
	c := Compute(fixture()).Criteria[0]
	if c.Ceiling == nil || c.Ceiling.Annotators != 2 || c.Ceiling.Items != 4 {
		t.Fatalf("ceiling = %+v, want 2 annotators over 4 items", c.Ceiling)
	}
	if c.GroupColumn != "g" || c.Grouped == nil {
		t.Fatalf("grouped correlation not computed")
	}
	// Positions: label 1 has a 1.0, c 2.5, a 1.4; label 2 has b 1.5, c 2.9 (d unreadable).
	if len(c.Positions) != 2 || c.Positions[0].N != 3 || c.Positions[1].N != 2 {
		t.Errorf("positions = %+v", c.Positions)
	}
	if got := c.Positions[0].MeanScore; math.Abs(got-(1.0+2.5+1.4)/3) > 1e-12 {
		t.Errorf("position 1 mean = %v", got)
	}
}

// Samples with an empty or whitespace-only group value belong to no group:
// the three here (a, b, c, every sample with both scores) once formed one
// group of their own, the only one used.
func TestComputeGroupedLeavesOutEmptyGroupValues(t *testing.T) {
	run, ds, rows, batches, scores := fixture()
	rows[0].Data["g"], rows[1].Data["g"], rows[2].Data["g"] = "", "", ""
	rep := Compute(run, ds, rows, batches, scores)
	g := rep.Criteria[0].Grouped[stats.MethodPearson]
	if g.Groups != 0 || !math.IsNaN(g.Coef) || g.Ungrouped != 3 {
		t.Errorf("grouped = %+v, want no group used, an undefined mean and 3 samples without a group", g)
	}
	j := rep.Export().Report.Criteria[0].Grouped
	if j == nil || j.Groups != 0 || j.Ungrouped != 3 {
		t.Fatalf("exported grouped = %+v, want 0 groups and 3 samples without a group", j)
	}
	b, err := json.Marshal(j)
	if err != nil || !strings.Contains(string(b), `"samples_without_group":3`) || !strings.Contains(string(b), `"pearson":null`) {
		t.Errorf("exported grouped JSON = %s (%v)", b, err)
	}
}

// A group none of whose samples has both a final score and a human rating
// (every score unreadable, or no rating) is too small for a coefficient:
// it is counted among the skipped groups. It vanished from the counts, so
// a dataset of three groups read "0 groups used, 2 skipped".
func TestComputeGroupedCountsGroupsWithoutAPair(t *testing.T) {
	for _, tc := range []struct {
		name             string
		dGroup           string
		dHuman           bool // d keeps its rating (it has no final score)
		skipped, without int
	}{
		{"d unscored, alone in its group", "z", true, 3, 0},
		{"d unscored and unrated, alone in its group", "z", false, 3, 0},
		{"d unscored, in a group with c", "y", true, 2, 0},
		{"d unscored, without a group", "", true, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			rows[3].Data["g"] = tc.dGroup
			if !tc.dHuman {
				delete(rows[3].Ratings, "h")
			}
			rep := Compute(run, ds, rows, batches, scores)
			for _, m := range stats.Methods() {
				g := rep.Criteria[0].Grouped[m]
				if g.Groups != 0 || g.Skipped != tc.skipped || g.Ungrouped != tc.without || g.N != 0 || !math.IsNaN(g.Coef) {
					t.Errorf("%s: grouped = %+v, want no group used, %d skipped, %d samples without a group", m, g, tc.skipped, tc.without)
				}
			}
			j := rep.Export().Report.Criteria[0].Grouped
			if j == nil || j.Skipped != tc.skipped {
				t.Errorf("exported grouped = %+v, want %d skipped groups", j, tc.skipped)
			}
		})
	}
}

func TestSortSamplesPutsMissingLast(t *testing.T) {
	c := Compute(fixture()).Criteria[0]
	for _, desc := range []bool{false, true} {
		ss := append([]SampleResult(nil), c.Samples...)
		SortSamples(ss, "score", desc)
		if ss[len(ss)-1].ExternalID != "d" {
			t.Errorf("desc=%v: last = %s, want d (no score)", desc, ss[len(ss)-1].ExternalID)
		}
		first := map[bool]string{false: "a", true: "c"}[desc]
		if ss[0].ExternalID != first {
			t.Errorf("desc=%v: first = %s, want %s", desc, ss[0].ExternalID, first)
		}
	}
}

func TestExportsAreSafe(t *testing.T) {
	rep := Compute(fixture())
	var buf bytes.Buffer
	if err := rep.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("csv lines = %d, want header + 4", len(recs))
	}
	if got := recs[1][1]; got != "'=cmd()" {
		t.Errorf("formula cell = %q, want it defused with a quote", got)
	}
	if got := strings.Join(recs[0], "|"); !strings.Contains(got, "Q round 2") {
		t.Errorf("header lacks per-round columns: %s", got)
	}
	// d: human 4, no final, round 1 unreadable, round 2 not judged.
	if got := recs[4]; got[3] != "" || got[4] != "" || got[6] != "1" {
		t.Errorf("row d = %v, want empty final and round, 1 unreadable", got)
	}

	buf.Reset()
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("JSON export does not parse (NaN must become null): %v", err)
	}
	crit := out["report"].(map[string]any)["criteria"].([]any)[0].(map[string]any)
	if _, ok := crit["human_ceiling"]; !ok {
		t.Errorf("JSON export lacks the human ceiling")
	}
	d := crit["samples"].([]any)[3].(map[string]any)
	if d["final"] != nil {
		t.Errorf("missing final exported as %v, want null", d["final"])
	}
}

// TestDecompositionNoteNamesANarrowHumanScale: human ratings inside the
// judge's range but spanning little of it (0 to 1 under a judge's 0 to 2)
// may be on a scale of their own; the ensemble decomposition compares raw
// squared errors, so its note says so, naming both ranges (before, only
// ratings outside the judge's range were said to mix scales).
func TestDecompositionNoteNamesANarrowHumanScale(t *testing.T) {
	for _, tc := range []struct {
		name    string
		humans  [4]float64
		want    string
		notWant []string
	}{
		{"the judge's scale", [4]float64{1, 1.5, 2.5, 3}, "", []string{"two scales"}},
		{"outside the judge's range", [4]float64{0, 1, 3, 4}, "lie outside the judge's 1 to 3, so for the errors they are mapped linearly", []string{"span only"}},
		{"a narrow span inside it", [4]float64{1, 1.2, 1.6, 1.8}, "span only 1 to 1.8 of the judge's 1 to 3", []string{"outside"}},
		// A constant column read "span only 1.5 to 1.5 of the judge's 1 to 3".
		{"one rating for every sample", [4]float64{1.5, 1.5, 1.5, 1.5}, "The human ratings are all 1.5, within the judge's 1 to 3", []string{"outside", "span only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, ds, rows, batches, scores := fixture()
			for i := range rows {
				rows[i].Ratings["h"] = f(tc.humans[i])
			}
			note := Compute(run, ds, rows, batches, scores).Criteria[0].DecompositionNote
			if tc.want != "" && !strings.Contains(note, tc.want) {
				t.Errorf("note %q lacks %q", note, tc.want)
			}
			for _, w := range tc.notWant {
				if strings.Contains(note, w) {
					t.Errorf("note %q should not say %q", note, w)
				}
			}
		})
	}
}

// TestSystemUndefinedWhy: an undefined system-level coefficient says why
// (fewer than 3 systems with a complete sample, or constant means); a
// defined one says nothing.
func TestSystemUndefinedWhy(t *testing.T) {
	for _, tc := range []struct {
		sl   stats.SystemLevel
		want string
	}{
		{stats.SystemLevel{Coef: 0.4, Systems: 4}, ""},
		{stats.SystemLevel{Coef: math.NaN(), Systems: 0}, "undefined: only 0 systems have a sample with both a judge score and a human rating, and a correlation needs 3"},
		{stats.SystemLevel{Coef: math.NaN(), Systems: 1}, "undefined: only 1 system has a sample with both a judge score and a human rating, and a correlation needs 3"},
		{stats.SystemLevel{Coef: math.NaN(), Systems: 2}, "undefined: only 2 systems have a sample with both a judge score and a human rating, and a correlation needs 3"},
		{stats.SystemLevel{Coef: math.NaN(), Systems: 5}, "undefined: the 5 systems' mean judge scores, or their mean human ratings, are all the same"},
	} {
		if got := SystemUndefinedWhy(tc.sl); got != tc.want {
			t.Errorf("SystemUndefinedWhy(%+v) = %q, want %q", tc.sl, got, tc.want)
		}
	}
}
