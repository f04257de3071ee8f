package handlers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/batcheval/batcheval/internal/shareddata"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
)

// fedDialogPath is the shared FED dialogue-level export (125 dialogues,
// human ratings only), relative to this package's directory.
var fedDialogPath, _ = shareddata.Path("fed-dialog.jsonl")

// fedCriteria are the four qualities the BatchEval paper evaluates on FED.
var fedCriteria = []string{"Coherent", "Likeable", "Understanding", "Overall"}

// TestExperimentAveragePearsonOnFEDRecomputed checks the experiment page's
// average Pearson column and its headline's difference in average Pearson
// against a computation that shares no code with the product: the human
// ratings read straight from the FED file, each sample's final score
// taken as the mean of its readable rounds here, Pearson's r from gonum's
// stat.Correlation, averaged over the criteria both runs have a figure for.
// One run gives every dialogue the same Likeable score (no Pearson r), so
// the table must average both runs over the other three criteria.
func TestExperimentAveragePearsonOnFEDRecomputed(t *testing.T) {
	f, err := os.Open(fedDialogPath)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("dataset %s is absent; this test needs the shared datasets checkout", fedDialogPath)
	}
	must(t, err)
	type fedRow struct {
		ID      string             `json:"id"`
		System  string             `json:"system"`
		Context string             `json:"context"`
		Scores  map[string]float64 `json:"scores"`
	}
	var fed []fedRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var r fedRow
		must(t, json.Unmarshal(sc.Bytes(), &r))
		fed = append(fed, r)
	}
	must(t, sc.Err())
	f.Close()
	if len(fed) != 125 {
		t.Fatalf("FED has %d rows, its README says 125", len(fed))
	}

	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		rows := make([]models.DatasetRow, len(fed))
		for i, r := range fed {
			ratings := map[string]*float64{}
			for _, c := range fedCriteria {
				v := r.Scores[c]
				ratings[c] = &v
			}
			rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "system": r.System, "context": r.Context}, Ratings: ratings}
		}
		ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED", Format: "jsonl", IDColumn: "id",
			Columns: []string{"id", "system", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: fedCriteria}
		must(t, env.db.CreateDataset(ctx, &ds, rows))
		stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
		must(t, err)
		rowIDs := make([]int64, len(stored))
		for i, r := range stored {
			if r.ExternalID != fed[i].ID {
				t.Fatalf("row %d stored as %s, want %s", i, r.ExternalID, fed[i].ID)
			}
			rowIDs[i] = r.ID
		}
		e := models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, Name: "FED judges"}
		must(t, env.db.CreateExperiment(ctx, &e))

		// Two rounds per criterion: the human rating on the judge's 1-3
		// scale plus noise, rounded to a tenth as a judge writes it; every
		// 17th sample's second round unreadable.
		const rounds = 2
		judge := func(seed uint64, sd float64, flatLikeable bool) [][][]*float64 { // [criterion][round][sample]
			rng := rand.New(rand.NewPCG(seed, 7))
			out := make([][][]*float64, len(fedCriteria))
			for k, c := range fedCriteria {
				out[k] = make([][]*float64, rounds)
				for r := range rounds {
					out[k][r] = make([]*float64, len(fed))
					for i, row := range fed {
						if r == 1 && i%17 == 0 {
							continue
						}
						hi := 2.0
						if c == "Overall" {
							hi = 4
						}
						v := 1 + 2*row.Scores[c]/hi + sd*rng.NormFloat64()
						v = math.Round(math.Min(3, math.Max(1, v))*10) / 10
						if flatLikeable && c == "Likeable" {
							v = 2
						}
						out[k][r][i] = &v
					}
				}
			}
			return out
		}
		store := func(name string, scores [][][]*float64) models.Run {
			s := evaluator.DefaultSettings()
			s.Rounds = rounds
			var crits []evaluator.Criterion
			for _, c := range fedCriteria {
				crits = append(crits, evaluator.Criterion{Name: c, Lo: 1, Hi: 3, HumanColumn: c})
			}
			run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, ExperimentID: &e.ID, Name: name,
				Method: models.MethodBatchEval, Settings: s, Simulated: true, RubricSnapshot: evaluator.Rubric{Task: "Rate the dialogues.", Criteria: crits}}
			must(t, env.db.CreateRun(ctx, &run, nil))
			for k := range fedCriteria {
				for r := range rounds {
					bs, err := env.db.CreateRoundBatches(ctx, run.ID, k, r, [][]int64{rowIDs})
					must(t, err)
					b := bs[0]
					b.Status = models.BatchDone
					rs := make([]models.RunScore, len(rowIDs))
					for i, id := range rowIDs {
						rs[i] = models.RunScore{RunID: run.ID, BatchID: b.ID, CriterionIndex: k, Round: r, RowID: id, Label: i + 1, Score: scores[k][r][i]}
					}
					must(t, env.db.SaveBatchResult(ctx, models.BatchResult{Batch: b, Scores: rs}))
				}
			}
			must(t, env.db.FinishRun(ctx, run.ID, models.RunSucceeded, ""))
			run, err := env.db.GetRun(ctx, run.ID)
			must(t, err)
			return run
		}
		sharpScores, flatScores := judge(1, 0.35, false), judge(2, 0.5, true)
		sharp, flat := store("Sharp", sharpScores), store("Flat", flatScores)

		// The independent figures.
		pearson := func(scores [][][]*float64, k int) float64 {
			var xs, ys []float64
			for i, row := range fed {
				var sum float64
				var n int
				for r := range rounds {
					if v := scores[k][r][i]; v != nil {
						sum += *v
						n++
					}
				}
				xs = append(xs, sum/float64(n))
				ys = append(ys, row.Scores[fedCriteria[k]])
			}
			if stat.StdDev(xs, nil) == 0 {
				return math.NaN()
			}
			return stat.Correlation(xs, ys, nil)
		}
		average := func(scores [][][]*float64) float64 {
			var sum float64
			var n int
			for k := range fedCriteria {
				if math.IsNaN(pearson(flatScores, k)) || math.IsNaN(pearson(sharpScores, k)) {
					continue // left out for both runs
				}
				sum += pearson(scores, k)
				n++
			}
			if n != 3 {
				t.Fatalf("%d criteria averaged, want 3 (Likeable left out)", n)
			}
			return sum / float64(n)
		}
		wantSharp, wantFlat := average(sharpScores), average(flatScores)

		body := env.get(fmt.Sprintf("/experiments/%d", e.ID)).Body.String()
		cell := func(run models.Run) string {
			i := strings.Index(body, fmt.Sprintf(`href="/runs/%d">`, run.ID))
			if i < 0 {
				t.Fatalf("the experiment page has no row for %s", run.Name)
			}
			m := regexp.MustCompile(`data-testid="avg-pearson">([^<]*)<`).FindStringSubmatch(body[i:])
			if m == nil {
				t.Fatalf("%s's row has no average Pearson", run.Name)
			}
			return m[1]
		}
		for _, c := range []struct {
			run  models.Run
			want float64
		}{{sharp, wantSharp}, {flat, wantFlat}} {
			if got, want := cell(c.run), readerRounds(c.want, 3, false); got != want {
				t.Errorf("%s's average Pearson on the page %s, recomputed %s", c.run.Name, got, want)
			}
		}
		// The API gives the full figure.
		var api struct {
			Runs []struct {
				Run struct {
					ID int64 `json:"id"`
				} `json:"run"`
				AveragePearson *float64 `json:"average_pearson"`
			} `json:"runs"`
		}
		must(t, json.Unmarshal(env.get(fmt.Sprintf("/api/v1/experiments/%d", e.ID)).Body.Bytes(), &api))
		for _, r := range api.Runs {
			want := map[int64]float64{sharp.ID: wantSharp, flat.ID: wantFlat}[r.Run.ID]
			if r.AveragePearson == nil || math.Abs(*r.AveragePearson-want) > 1e-9 {
				t.Errorf("run %d: API average_pearson %v, recomputed %.12f", r.Run.ID, r.AveragePearson, want)
			}
		}
		// The headline's difference in average Pearson, best minus the other.
		best, other, diff := sharp, flat, wantSharp-wantFlat
		if diff < 0 {
			best, other, diff = flat, sharp, -diff
		}
		line := regexp.MustCompile(regexp.QuoteMeta(best.Name+" − "+other.Name+": ") + `([^ ]*) in average Pearson`).FindStringSubmatch(body)
		if line == nil {
			t.Fatalf("the page has no test line %s − %s", best.Name, other.Name)
		}
		if want := readerRounds(diff, 3, true); line[1] != want {
			t.Errorf("headline's difference %s − %s = %s, recomputed %s", best.Name, other.Name, line[1], want)
		}
		if !strings.Contains(body, "Left out: Likeable (Flat: the scores or the ratings do not vary, so no Pearson r)") {
			t.Errorf("the page does not say Likeable is left out of the averages, and why")
		}
	})
}
