package handlers

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
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
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/models"
)

// TestFEDRunPageFiguresRecomputed runs BatchEval with the simulated judge
// through the runner on the first 40 FED dialogues (two criteria, two
// rounds, batches of 10; three dialogues' Overall rating left empty),
// built in, and over HTTP as a judge with prices that leaves some scores
// out of its answers (repaired or left unreadable), and
// recomputes every figure the run page shows from the stored round scores
// and the FED file, by textbook formulas written out here, sharing no code
// with the product: per criterion Pearson r, Spearman ρ (Pearson of
// average ranks) and Kendall τ-b (every pair counted) with their p-values,
// 95% intervals (Fisher's z for Pearson below 50 pairs, the percentile
// bootstrap the stats package documents for the rank coefficients), n and
// missing; the unreadable count, the entropy, each round's correlation
// alone and averaged, the batch bias, the ensemble decomposition and the
// position table; the system-level correlations of the three systems'
// means; and the run's batches, calls, tokens and cost. The JSON export
// must hold the figures at full precision, the page each rounded.
func TestFEDRunPageFiguresRecomputed(t *testing.T) {
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
	if len(fed) < 40 {
		t.Fatalf("FED has %d rows, want at least 40", len(fed))
	}
	fed = fed[:40]
	crits := []string{"Coherent", "Overall"}
	unrated := map[int]bool{3: true, 17: true, 30: true} // no Overall rating
	human := func(ci, i int) *float64 {
		if ci == 1 && unrated[i] {
			return nil
		}
		v := fed[i].Scores[crits[ci]]
		return &v
	}
	const rounds, batchSize = 2, 10

	cases := []struct {
		name string
		// miss is the share of scores the judge leaves out of an answer;
		// 0 runs the built-in simulated judge, above 0 one over HTTP with
		// prices.
		miss float64
	}{{"built-in simulated judge", 0}, {"priced judge leaving scores out", 0.15}}
	eachDB(t, func(t *testing.T, env *testEnv) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				ctx := context.Background()
				rows := make([]models.DatasetRow, len(fed))
				for i, r := range fed {
					ratings := map[string]*float64{}
					for ci, c := range crits {
						ratings[c] = human(ci, i)
					}
					rows[i] = models.DatasetRow{Position: i + 1, ExternalID: r.ID, Data: map[string]string{"id": r.ID, "system": r.System, "context": r.Context}, Ratings: ratings}
				}
				ds := models.Dataset{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, Name: "FED", Format: "jsonl", IDColumn: "id",
					Columns: []string{"id", "system", "context"}, Fields: []evaluator.Field{{Column: "context", Label: "Dialogue"}}, RatingColumns: crits}
				must(t, env.db.CreateDataset(ctx, &ds, rows))
				stored, err := env.db.ListDatasetRows(ctx, ds.ID, 0, 0)
				must(t, err)
				index := map[int64]int{} // row id -> FED index
				for i, r := range stored {
					index[r.ID] = i
				}
				d := env.demo()
				s := evaluator.DefaultSettings()
				s.Rounds, s.BatchSize = rounds, batchSize
				var ec []evaluator.Criterion
				for _, c := range crits {
					ec = append(ec, evaluator.Criterion{Name: c, Description: "Is the dialogue " + strings.ToLower(c) + "?", Lo: 1, Hi: 3, HumanColumn: c,
						Levels: evaluator.Levels{Low: "poor", Middle: "fair", High: "good"}})
				}
				run := models.Run{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: ds.ID, JudgeID: &d.judge.ID, Name: "FED",
					Method: models.MethodBatchEval, Settings: s, RubricSnapshot: evaluator.Rubric{Task: "Rate the dialogues.", Criteria: ec},
					JudgeSnapshot: d.judge.Snapshot(), Simulated: true}
				priceIn, priceOut := 2.5, 10.0 // dollars per million tokens
				if tc.miss > 0 {
					// The judge answers its repair requests with no score, so the
					// scores it left out stay unreadable.
					sim := simjudge.NewHandler(simjudge.Options{Seed: 7, MissRate: tc.miss})
					srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						body, err := io.ReadAll(r.Body)
						if err != nil {
							http.Error(w, err.Error(), http.StatusBadRequest)
							return
						}
						if strings.Contains(string(body), "Reply with ONLY the scores of") {
							w.Header().Set("Content-Type", "application/json")
							fmt.Fprint(w, `{"id":"r","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"I would rather not say."},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":6,"total_tokens":56}}`)
							return
						}
						r.Body = io.NopCloser(bytes.NewReader(body))
						sim.ServeHTTP(w, r)
					}))
					t.Cleanup(srv.Close)
					j := models.Judge{WorkspaceID: env.ws.ID, Name: "priced " + tc.name, BaseURL: srv.URL + "/v1", Model: "m", TimeoutSeconds: 5,
						Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2, PriceInputPerMTok: &priceIn, PriceOutputPerMTok: &priceOut}
					must(t, env.db.SaveJudge(ctx, &j))
					run.JudgeID, run.JudgeSnapshot, run.Simulated = &j.ID, j.Snapshot(), false
				}
				must(t, env.runner.Launch(ctx, &run))
				run = env.waitRun(run.ID, 60*time.Second)
				if want := map[bool]string{false: models.RunSucceeded, true: models.RunFinishedWithGaps}[tc.miss > 0]; run.Status != want {
					t.Fatalf("run %s: %s", run.Status, run.Error)
				}

				// What the judge gave, as stored.
				var batches []models.RunBatch
				must(t, env.db.Gorm.Where("run_id = ?", run.ID).Order("id").Find(&batches).Error)
				var scores []models.RunScore
				must(t, env.db.Gorm.Where("run_id = ?", run.ID).Find(&scores).Error)
				// score[ci][r][i] and label[ci][r][i] (1-based place in its batch).
				score := make([][][]*float64, len(crits))
				label := make([][][]int, len(crits))
				for ci := range crits {
					score[ci], label[ci] = make([][]*float64, rounds), make([][]int, rounds)
					for r := range rounds {
						score[ci][r], label[ci][r] = make([]*float64, len(fed)), make([]int, len(fed))
					}
				}
				for _, sc := range scores {
					i := index[sc.RowID]
					score[sc.CriterionIndex][sc.Round][i], label[sc.CriterionIndex][sc.Round][i] = sc.Score, sc.Label
				}

				page := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				text := pageText(page)
				var export struct {
					Report struct {
						Run struct {
							Calls            int     `json:"calls"`
							PromptTokens     int     `json:"prompt_tokens"`
							CompletionTokens int     `json:"completion_tokens"`
							CostUSD          float64 `json:"cost_usd"`
						} `json:"run"`
						Criteria []struct {
							Pearson, Spearman, Kendall struct {
								Coef    *float64 `json:"coef"`
								P       *float64 `json:"p"`
								CILow   *float64 `json:"ci_low"`
								CIHigh  *float64 `json:"ci_high"`
								N       int      `json:"n"`
								Missing int      `json:"missing"`
								// Present only when some resamples were left out.
								ResamplesUsed *int `json:"resamples_used"`
							}
							Histogram []struct {
								Lo    float64 `json:"lo"`
								Hi    float64 `json:"hi"`
								Count int     `json:"count"`
							} `json:"histogram"`
							EntropyBits   float64 `json:"entropy_bits"`
							MeanBatchBias float64 `json:"mean_batch_bias"`
							Unreadable    int     `json:"unreadable"`
							Scored        int     `json:"scored"`
						} `json:"criteria"`
					} `json:"report"`
				}
				must(t, json.Unmarshal(env.get(fmt.Sprintf("/runs/%d/export.json", run.ID)).Body.Bytes(), &export))

				// The run's counts: every batch answered, by one call or, with a
				// repair request for the scores left out, two; none failed.
				wantBatches := len(crits) * rounds * ((len(fed) + batchSize - 1) / batchSize)
				tokens, calls, repaired := 0, 0, 0
				var cost float64
				for _, b := range batches {
					tokens += b.PromptTokens + b.CompletionTokens
					calls += b.Calls
					cost += (float64(b.PromptTokens)*priceIn + float64(b.CompletionTokens)*priceOut) / 1e6
					if b.RepairRequest != "" {
						repaired++
					}
					if b.Status != models.BatchDone || b.Calls < 1 || b.Calls > 2 {
						t.Errorf("batch %d: %s after %d calls", b.ID, b.Status, b.Calls)
					}
				}
				wantCost, costText := cost, "$"+strconv.FormatFloat(cost, 'f', -1, 64)
				if tc.miss == 0 {
					wantCost, costText = 0, "$0 (simulated judge)"
					if calls != wantBatches {
						t.Errorf("%d calls for %d batches of the built-in judge", calls, wantBatches)
					}
				} else if repaired == 0 {
					t.Errorf("no batch needed a repair request: the judge left no score out")
				}
				if len(batches) != wantBatches || export.Report.Run.Calls != calls ||
					export.Report.Run.PromptTokens+export.Report.Run.CompletionTokens != tokens || math.Abs(export.Report.Run.CostUSD-wantCost) > 1e-12 {
					t.Errorf("%d batches, export: %+v; want %d batches, %d calls, %d tokens, cost %v", len(batches), export.Report.Run, wantBatches, calls, tokens, wantCost)
				}
				if m := regexp.MustCompile(`Cost (\$\S+)`).FindStringSubmatch(text); tc.miss > 0 && (m == nil || !sameMoney(m[1], cost)) {
					t.Errorf("the run page's cost %v, recomputed %s", m, costText)
				}
				for _, w := range []string{fmt.Sprintf("Batches %d / %d", wantBatches, wantBatches), fmt.Sprintf("Calls %s ", groupThousands(calls)),
					"Tokens " + groupThousands(tokens) + " ", "Failed batches 0 ", "No answer 0 ", "Retries 0 "} {
					if !strings.Contains(text, w) {
						t.Errorf("the run page does not say %q", w)
					}
				}
				if tc.miss == 0 && !strings.Contains(text, "Cost $0 (simulated judge)") {
					t.Errorf("the run page does not say the simulated judge cost nothing")
				}

				cards := strings.Split(page, `data-testid="criterion-card"`)[1:]
				if len(cards) != len(crits) {
					t.Fatalf("%d criterion cards, want %d", len(cards), len(crits))
				}
				for ci, name := range crits {
					card, ex := pageText(cards[ci]), export.Report.Criteria[ci]
					// Each sample's final score and human rating.
					var finals, xs, ys []float64
					var finalOf []*float64
					hlo, hhi := math.Inf(1), math.Inf(-1)
					for i := range fed {
						var sum float64
						var k int
						for r := range rounds {
							if v := score[ci][r][i]; v != nil {
								sum, k = sum+*v, k+1
							}
						}
						var fin *float64
						if k > 0 {
							m := sum / float64(k)
							fin = &m
							finals = append(finals, m)
						}
						finalOf = append(finalOf, fin)
						h := human(ci, i)
						if h != nil {
							hlo, hhi = min(hlo, *h), max(hhi, *h)
						}
						if fin != nil && h != nil {
							xs, ys = append(xs, *fin), append(ys, *h)
						}
					}
					n, missing := len(xs), len(fed)-len(xs)
					if ci == 1 && missing < len(unrated) {
						t.Fatalf("%s: %d samples without both scores, want at least the %d unrated", name, missing, len(unrated))
					}

					// The three coefficients, their p-values and intervals.
					type fig struct {
						name            string
						coef, p, lo, hi float64
						exCoef, exP     *float64
						exLo, exHi      *float64
						exN, exMissing  int
						// used is the resamples a bootstrap interval is
						// from (1000 for Fisher's: nothing to say).
						used   int
						exUsed *int
					}
					r := textbookPearson(xs, ys)
					rho := textbookPearson(averageRanks(xs), averageRanks(ys))
					tau := textbookTauB(xs, ys)
					rlo, rhi := math.Tanh(math.Atanh(r)-1.959963984540054/math.Sqrt(float64(n-3))), math.Tanh(math.Atanh(r)+1.959963984540054/math.Sqrt(float64(n-3)))
					slo, shi, sUsed := percentileBootstrap(xs, ys, func(a, b []float64) float64 { return textbookPearson(averageRanks(a), averageRanks(b)) })
					klo, khi, kUsed := percentileBootstrap(xs, ys, textbookTauB)
					figs := []fig{
						{"Pearson r", r, tTestP(r, n), rlo, rhi, ex.Pearson.Coef, ex.Pearson.P, ex.Pearson.CILow, ex.Pearson.CIHigh, ex.Pearson.N, ex.Pearson.Missing, 1000, ex.Pearson.ResamplesUsed},
						{"Spearman ρ", rho, tTestP(rho, n), slo, shi, ex.Spearman.Coef, ex.Spearman.P, ex.Spearman.CILow, ex.Spearman.CIHigh, ex.Spearman.N, ex.Spearman.Missing, sUsed, ex.Spearman.ResamplesUsed},
						{"Kendall τ-b", tau, textbookKendallP(xs, ys), klo, khi, ex.Kendall.Coef, ex.Kendall.P, ex.Kendall.CILow, ex.Kendall.CIHigh, ex.Kendall.N, ex.Kendall.Missing, kUsed, ex.Kendall.ResamplesUsed},
					}
					for _, g := range figs {
						for _, v := range []struct {
							what      string
							got       *float64
							want, tol float64
						}{{"coefficient", g.exCoef, g.coef, 1e-12}, {"p-value", g.exP, g.p, 1e-9}, {"interval low", g.exLo, g.lo, 1e-9}, {"interval high", g.exHi, g.hi, 1e-9}} {
							if v.got == nil || math.Abs(*v.got-v.want) > v.tol {
								t.Errorf("%s %s: the export's %s %v, recomputed %v", name, g.name, v.what, exportedOrNil(v.got), v.want)
							}
						}
						if g.exN != n || g.exMissing != missing {
							t.Errorf("%s %s: the export's n %d missing %d, recomputed %d and %d", name, g.name, g.exN, g.exMissing, n, missing)
						}
						m := regexp.MustCompile(regexp.QuoteMeta(g.name) + ` (\S+) (\S+) (\S+) to (\S+) (?:from (\d+) of (\d+) resamples )?(\d+) (\d+)`).FindStringSubmatch(card)
						if m == nil {
							t.Errorf("%s: no %s row on the page", name, g.name)
							continue
						}
						shown(t, name+" "+g.name+" coefficient", m[1], g.coef, 3)
						shownP(t, name+" "+g.name+" p-value", m[2], g.p)
						shown(t, name+" "+g.name+" interval low", m[3], g.lo, 3)
						shown(t, name+" "+g.name+" interval high", m[4], g.hi, 3)
						if m[7] != strconv.Itoa(n) || m[8] != strconv.Itoa(missing) {
							t.Errorf("%s %s: the page's n %s missing %s, recomputed %d and %d", name, g.name, m[7], m[8], n, missing)
						}
						// The resamples the interval is from: said on the page
						// and in the export only when some were left out.
						switch {
						case g.used == 1000 && (m[5] != "" || g.exUsed != nil):
							t.Errorf("%s %s: no resample left out, but the page says from %q of %q and the export %v", name, g.name, m[5], m[6], exportedIntOrNil(g.exUsed))
						case g.used < 1000 && (m[5] != strconv.Itoa(g.used) || m[6] != "1000" || g.exUsed == nil || *g.exUsed != g.used):
							t.Errorf("%s %s: the page says from %q of %q resamples and the export %v, recomputed %d of 1000", name, g.name, m[5], m[6], exportedIntOrNil(g.exUsed), g.used)
						}
					}

					// Unreadable answers and the entropy of the finals (tenths).
					scored := 0
					for r := range rounds {
						for i := range fed {
							if score[ci][r][i] != nil {
								scored++
							}
						}
					}
					unreadable := rounds*len(fed) - scored
					if tc.miss > 0 && unreadable == 0 {
						t.Errorf("%s: every score was read; the judge left none out after its repair", name)
					}
					// The share as a reader of the export rounds it: its decimal,
					// two places on, half away from zero (10 of 80 is 13%).
					share, _ := new(big.Rat).SetString(strconv.FormatFloat(float64(unreadable)/float64(rounds*len(fed)), 'g', -1, 64))
					pct := share.Mul(share, big.NewRat(100, 1)).FloatString(0)
					if ex.Scored != scored || ex.Unreadable != unreadable ||
						!strings.Contains(card, fmt.Sprintf("Unreadable scores: %d of %d answered round scores (%s%%)", unreadable, rounds*len(fed), pct)) {
						t.Errorf("%s: the export's scored %d unreadable %d; want %d and %d, said on the page (%s%%)", name, ex.Scored, ex.Unreadable, scored, unreadable, pct)
					}
					bins := map[int]int{}
					for _, v := range finals {
						bins[int(math.Floor(v*10+1e-9))]++
					}
					var h float64
					for _, c := range bins {
						p := float64(c) / float64(len(finals))
						h -= p * math.Log2(p)
					}
					if math.Abs(ex.EntropyBits-h) > 1e-9 {
						t.Errorf("%s: the export's entropy %v bits, recomputed %v", name, ex.EntropyBits, h)
					}
					if m := regexp.MustCompile(`Entropy (\S+) bits`).FindStringSubmatch(card); m == nil {
						t.Errorf("%s: no entropy on the page", name)
					} else {
						shown(t, name+" entropy", m[1], h, 2)
					}

					// The distribution of the finals: ten equal bins of the
					// 1 to 3 scale, [lo, hi) but the last, which holds 3; a
					// final on an edge (1.2 is 0.1999999… widths from 1 as a
					// float) counts in the bin it opens. The page's table and
					// the export give the same counts.
					counts := make([]int, 10)
					for _, v := range finals {
						k := int(math.Floor((v-1)/0.2 + 1e-9))
						counts[min(k, 9)]++
					}
					if len(ex.Histogram) != 10 {
						t.Errorf("%s: the export has %d histogram bins, want 10", name, len(ex.Histogram))
					}
					for k, want := range counts {
						lo, hi := 1+0.2*float64(k), 1+0.2*float64(k+1)
						if k < len(ex.Histogram) {
							b := ex.Histogram[k]
							if math.Abs(b.Lo-lo) > 1e-12 || math.Abs(b.Hi-hi) > 1e-12 || b.Count != want {
								t.Errorf("%s: the export's bin %d is %v to %v with %d, recomputed %v to %v with %d", name, k, b.Lo, b.Hi, b.Count, lo, hi, want)
							}
						}
						upto := "to under"
						if k == 9 {
							upto = "to"
						}
						cell := fmt.Sprintf("from %s %s %s %d ", strconv.FormatFloat(lo, 'g', 3, 64), upto, strconv.FormatFloat(hi, 'g', 3, 64), want)
						if !strings.Contains(card, cell) {
							t.Errorf("%s: the page's histogram table has no %q", name, cell)
						}
					}

					// Each round alone and the mean of the rounds so far.
					roundsText := card[strings.Index(card, "Rounds Round"):]
					for r := range rounds {
						var a, b, e, hh []float64
						for i := range fed {
							hv := human(ci, i)
							if hv == nil {
								continue
							}
							if v := score[ci][r][i]; v != nil {
								a, b = append(a, *v), append(b, *hv)
							}
							var sum float64
							var k int
							for q := 0; q <= r; q++ {
								if v := score[ci][q][i]; v != nil {
									sum, k = sum+*v, k+1
								}
							}
							if k > 0 {
								e, hh = append(e, sum/float64(k)), append(hh, *hv)
							}
						}
						m := regexp.MustCompile(fmt.Sprintf(` %d (\S+) (\S+) (\S+)`, r+1)).FindStringSubmatch(roundsText)
						if m == nil {
							t.Errorf("%s: no round %d in the rounds table", name, r+1)
							continue
						}
						shown(t, fmt.Sprintf("%s round %d alone", name, r+1), m[1], textbookPearson(a, b), 3)
						shown(t, fmt.Sprintf("%s rounds 1 to %d", name, r+1), m[2], textbookPearson(e, hh), 3)
						sum, k := batchBiases(batches, ci, r, score, finalOf, index)
						shown(t, fmt.Sprintf("%s round %d batch bias", name, r+1), m[3], sum/float64(k), 3)
					}
					var bias float64
					var biased int
					for r := range rounds {
						sum, k := batchBiases(batches, ci, r, score, finalOf, index)
						bias, biased = bias+sum, biased+k
					}
					bias /= float64(biased) // over every batch
					if math.Abs(ex.MeanBatchBias-bias) > 1e-12 {
						t.Errorf("%s: the export's mean batch bias %v, recomputed %v", name, ex.MeanBatchBias, bias)
					}
					if m := regexp.MustCompile(`Average batch bias (\S+):`).FindStringSubmatch(card); m == nil {
						t.Errorf("%s: no average batch bias on the page", name)
					} else {
						shown(t, name+" average batch bias", m[1], bias, 3)
					}

					// The errors put the human ratings on the judge's 1 to 3, mapped
					// linearly from their lowest and highest (both criteria's lie
					// outside it).
					on := func(y float64) float64 { return 1 + (y-hlo)*2/(hhi-hlo) }
					var ensErr, roundErr, spread float64
					k := 0
					// A position's scores and mean score count every score given
					// there; its errors only those of samples with a rating.
					type pos struct{ n, score, rated, abs, signed float64 }
					positions := map[int]*pos{}
					for i := range fed {
						hv := human(ci, i)
						if hv == nil || finalOf[i] == nil {
							continue
						}
						y := on(*hv)
						k++
						ensErr += (*finalOf[i] - y) * (*finalOf[i] - y)
						var re, sp, got float64
						for r := range rounds {
							if v := score[ci][r][i]; v != nil {
								re += (*v - y) * (*v - y)
								sp += (*v - *finalOf[i]) * (*v - *finalOf[i])
								got++
							}
						}
						roundErr += re / got
						spread += sp / got
					}
					for r := range rounds {
						for i := range fed {
							hv, v := human(ci, i), score[ci][r][i]
							if v == nil {
								continue
							}
							p := positions[label[ci][r][i]]
							if p == nil {
								p = &pos{}
								positions[label[ci][r][i]] = p
							}
							p.n++
							p.score += *v
							if hv == nil {
								continue
							}
							p.rated++
							p.abs += math.Abs(*v - on(*hv))
							p.signed += *v - on(*hv)
						}
					}
					m := regexp.MustCompile(`Error of the mean score (\S+) = average error of a single round (\S+) − spread between rounds (\S+) \(over (\d+) samples`).FindStringSubmatch(card)
					if m == nil {
						t.Errorf("%s: no ensemble decomposition on the page", name)
					} else {
						shown(t, name+" ensemble error", m[1], ensErr/float64(k), 3)
						shown(t, name+" single-round error", m[2], roundErr/float64(k), 3)
						shown(t, name+" spread between rounds", m[3], spread/float64(k), 3)
						if m[4] != strconv.Itoa(k) {
							t.Errorf("%s: the decomposition is over %s samples, recomputed %d", name, m[4], k)
						}
					}
					posText := card[strings.Index(card, "Position Scores Mean score"):]
					for p := 1; p <= batchSize; p++ {
						w := positions[p]
						m := regexp.MustCompile(fmt.Sprintf(` %d (\d+) (\S+) (\d+) (\S+) (\S+)`, p)).FindStringSubmatch(posText)
						if w == nil || m == nil {
							t.Errorf("%s: position %d: page %v, recomputed %+v", name, p, m, w)
							continue
						}
						if m[1] != strconv.Itoa(int(w.n)) {
							t.Errorf("%s: position %d has %s scores on the page, recomputed %v", name, p, m[1], w.n)
						}
						shown(t, fmt.Sprintf("%s position %d mean score", name, p), m[2], w.score/w.n, 2)
						// The error means are over the rated samples, and the
						// table says how many.
						if m[3] != strconv.Itoa(int(w.rated)) {
							t.Errorf("%s: position %d has %s scores with a human rating on the page, recomputed %v", name, p, m[3], w.rated)
						}
						shown(t, fmt.Sprintf("%s position %d mean |error|", name, p), m[4], w.abs/w.rated, 2)
						shown(t, fmt.Sprintf("%s position %d mean signed error", name, p), m[5], w.signed/w.rated, 2)
					}

					// The system level: each system's mean final and mean human
					// rating over its samples with both, correlated.
					sys := map[string][2]float64{}
					cnt := map[string]float64{}
					for i := range fed {
						hv := human(ci, i)
						if hv == nil || finalOf[i] == nil {
							continue
						}
						s := sys[fed[i].System]
						s[0] += *finalOf[i]
						s[1] += *hv
						sys[fed[i].System] = s
						cnt[fed[i].System]++
					}
					var sx, sy []float64
					for _, name := range slices.Sorted(func(yield func(string) bool) {
						for k := range sys {
							if !yield(k) {
								return
							}
						}
					}) {
						sx, sy = append(sx, sys[name][0]/cnt[name]), append(sy, sys[name][1]/cnt[name])
					}
					sysText := card[strings.Index(card, "Coefficient All samples Within groups (mean) Systems (means)"):]
					for _, c := range []struct {
						name string
						coef float64
						p    float64
					}{
						{"Pearson r", textbookPearson(sx, sy), tTestP(textbookPearson(sx, sy), len(sx))},
						{"Spearman ρ", textbookPearson(averageRanks(sx), averageRanks(sy)),
							exactP(sx, sy, func(a, b []float64) float64 { return textbookPearson(averageRanks(a), averageRanks(b)) })},
						{"Kendall τ-b", textbookTauB(sx, sy), exactP(sx, sy, textbookTauB)},
					} {
						m := regexp.MustCompile(regexp.QuoteMeta(c.name) + ` \S+ — (\S+) (\S+ to \S+|undefined) (\S+) (\d+)`).FindStringSubmatch(sysText)
						if m == nil {
							t.Errorf("%s: no system-level %s on the page", name, c.name)
							continue
						}
						shown(t, name+" system-level "+c.name, m[1], c.coef, 3)
						systemIntervalShown(t, name+" system-level "+c.name, m[2], c.name, c.coef, len(sx))
						shownP(t, name+" system-level "+c.name+" p-value", m[3], c.p)
						if m[4] != strconv.Itoa(len(sx)) {
							t.Errorf("%s: %s systems on the page, recomputed %d", name, m[4], len(sx))
						}
					}
				}
			})
		}
	})
}

// pageText is a page's text: tags, scripts and styles removed, entities
// decoded, white space collapsed to single spaces.
func pageText(page string) string {
	page = regexp.MustCompile(`(?s)<(script|style)\b.*?</(script|style)>`).ReplaceAllString(page, " ")
	page = regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, " ")
	return strings.Join(strings.Fields(html.UnescapeString(page)), " ")
}

// shown checks that a figure the page shows with digits decimals is the
// recomputed value rounded (either way at a half: the recomputed value may
// differ from the product's in its last bits).
func shown(t *testing.T, what, text string, want float64, digits int) {
	t.Helper()
	got, err := strconv.ParseFloat(strings.NewReplacer("−", "-", "+", "", "±", "").Replace(text), 64)
	if err != nil || math.Abs(got-want) > 0.5*math.Pow(10, -float64(digits))+1e-9 || len(text)-strings.IndexByte(text, '.')-1 != digits {
		t.Errorf("%s: the page shows %q, recomputed %v (%d decimals)", what, text, want, digits)
	}
}

// systemIntervalShown checks a system-level 95% interval cell ("a to b"
// or "undefined") of coefficient coef ("Pearson r", "Spearman ρ" or
// "Kendall τ-b", as the page names it) over k systems. Pearson's is
// Fisher's over the systems' means, tanh(atanh(r) ± 1.96/√(k−3)), and
// undefined below 4 systems; Spearman's Fisher's with Bonett and Wright's
// error, tanh(atanh(r) ± 1.96·√((1+r²/2)/(k−3))) (both
// stats.IntervalSystemFisherZ); Kendall's the bootstrap over the means
// (stats.IntervalSystemBootstrap), whose bounds are not recomputed here.
// A rank coefficient's is undefined below 8 systems
// (stats.RankBootstrapMin).
func systemIntervalShown(t *testing.T, what, text, coefName string, coef float64, k int) {
	t.Helper()
	pearson := coefName == "Pearson r"
	want := k < 8
	if pearson {
		want = k < 4
	}
	if undefined := text == "undefined"; undefined != want {
		t.Errorf("%s: interval %q over %d systems; want undefined %v", what, text, k, want)
		return
	}
	var se float64
	switch {
	case want:
		return
	case pearson:
		se = 1 / math.Sqrt(float64(k-3))
	case coefName == "Spearman ρ":
		se = math.Sqrt((1 + coef*coef/2) / float64(k-3))
	default:
		return
	}
	lo, hi, ok := strings.Cut(text, "to")
	if !ok {
		t.Errorf("%s: interval %q, want \"a to b\"", what, text)
		return
	}
	const z975 = 1.959963984540054
	lo, hi = strings.TrimSpace(lo), strings.TrimSpace(hi)
	shown(t, what+" interval's lower bound", lo, math.Tanh(math.Atanh(coef)-z975*se), 3)
	shown(t, what+" interval's upper bound", hi, math.Tanh(math.Atanh(coef)+z975*se), 3)
}

// shownP checks a p-value cell: "< 0.001" below it, three decimals below
// 0.1, two from there.
func shownP(t *testing.T, what, text string, want float64) {
	t.Helper()
	switch {
	case want < 0.001:
		if text != "<" {
			t.Errorf("%s: the page shows %q, recomputed %v", what, text, want)
		}
	case want < 0.0995:
		shown(t, what, text, want, 3)
	default:
		shown(t, what, text, want, 2)
	}
}

// groupThousands writes n with comma thousands separators.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// averageRanks are the 1-based ranks of xs, ties given their mean rank.
func averageRanks(xs []float64) []float64 {
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	ranks := make([]float64, len(xs))
	for lo := 0; lo < len(order); {
		hi := lo
		for hi+1 < len(order) && sameTenth(xs[order[hi+1]], xs[order[lo]]) {
			hi++
		}
		for k := lo; k <= hi; k++ {
			ranks[order[k]] = float64(lo+hi)/2 + 1
		}
		lo = hi + 1
	}
	return ranks
}

// sameTenth: two scores equal but for floating-point noise (a mean of
// tenths computed in another order).
func sameTenth(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// textbookTauB is Kendall's τ-b, every pair counted:
// (C − D) / √((P − Tx)(P − Ty)).
func textbookTauB(x, y []float64) float64 {
	var c, d, tx, ty, pairs float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			pairs++
			dx, dy := cmpNoise(x[i], x[j]), cmpNoise(y[i], y[j])
			switch {
			case dx == 0 && dy == 0:
				tx++
				ty++
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx == dy:
				c++
			default:
				d++
			}
		}
	}
	den := math.Sqrt((pairs - tx) * (pairs - ty))
	if den == 0 {
		return math.NaN()
	}
	return (c - d) / den
}

func cmpNoise(a, b float64) int {
	if sameTenth(a, b) {
		return 0
	}
	return cmp.Compare(a, b)
}

// tTestP is the two-sided p of a correlation r on n pairs by Student's t
// on n − 2 degrees of freedom.
func tTestP(r float64, n int) float64 {
	df := float64(n - 2)
	t := r * math.Sqrt(df/(1-r*r))
	return 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
}

// textbookKendallP is τ-b's two-sided p by the normal approximation of
// S = C − D with the tie-corrected variance (Kendall 1970, eq. 4.3).
func textbookKendallP(x, y []float64) float64 {
	var s float64
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			s += float64(cmpNoise(x[i], x[j]) * cmpNoise(y[i], y[j]))
		}
	}
	n := float64(len(x))
	groups := func(v []float64) []float64 {
		sorted := slices.Clone(v)
		slices.Sort(sorted)
		var out []float64
		for lo := 0; lo < len(sorted); {
			hi := lo
			for hi+1 < len(sorted) && sameTenth(sorted[hi+1], sorted[lo]) {
				hi++
			}
			if hi > lo {
				out = append(out, float64(hi-lo+1))
			}
			lo = hi + 1
		}
		return out
	}
	var t1, t2, t3, u1, u2, u3 float64
	for _, t := range groups(x) {
		t1, t2, t3 = t1+t*(t-1)*(2*t+5), t2+t*(t-1)*(t-2), t3+t*(t-1)
	}
	for _, u := range groups(y) {
		u1, u2, u3 = u1+u*(u-1)*(2*u+5), u2+u*(u-1)*(u-2), u3+u*(u-1)
	}
	v := (n*(n-1)*(2*n+5)-t1-u1)/18 + t2*u2/(9*n*(n-1)*(n-2)) + t3*u3/(2*n*(n-1))
	return math.Erfc(math.Abs(s/math.Sqrt(v)) / math.Sqrt2)
}

// percentileBootstrap is the 95% percentile interval the stats package
// documents (WithBootstrap): the pairs sorted by x then y, 1000 resamples
// drawn with PCG seeded (20240101, "batchev"), each index uniform over
// the pairs, undefined coefficients skipped, and the 2.5th and 97.5th
// percentiles interpolated linearly between order statistics (type 7);
// used counts the resamples the interval is from.
func percentileBootstrap(x, y []float64, coef func(a, b []float64) float64) (lo, hi float64, used int) {
	order := make([]int, len(x))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmpNoise(x[a], x[b]); c != 0 {
			return c
		}
		return cmpNoise(y[a], y[b])
	})
	xs, ys := make([]float64, len(x)), make([]float64, len(x))
	for k, i := range order {
		xs[k], ys[k] = x[i], y[i]
	}
	rng := rand.New(rand.NewPCG(20240101, 0x62617463686576))
	var coefs []float64
	bx, by := make([]float64, len(xs)), make([]float64, len(xs))
	for range 1000 {
		for i := range xs {
			j := rng.IntN(len(xs))
			bx[i], by[i] = xs[j], ys[j]
		}
		if c := coef(bx, by); !math.IsNaN(c) {
			coefs = append(coefs, c)
		}
	}
	slices.Sort(coefs)
	q := func(p float64) float64 {
		pos := float64(len(coefs)-1) * p
		l := math.Floor(pos)
		return coefs[int(l)] + (pos-l)*(coefs[int(math.Ceil(pos))]-coefs[int(l)])
	}
	return q(0.025), q(0.975), len(coefs)
}

// exactP is the two-sided permutation p of a rank coefficient on a few
// pairs: the share of the orderings of y whose coefficient is at least as
// far from 0 as the observed one.
func exactP(x, y []float64, coef func(a, b []float64) float64) float64 {
	obs := math.Abs(coef(x, y))
	perm := slices.Clone(y)
	var hits, all float64
	var walk func(k int)
	walk = func(k int) {
		if k == len(perm) {
			all++
			if math.Abs(coef(x, perm)) >= obs-1e-9 {
				hits++
			}
			return
		}
		for i := k; i < len(perm); i++ {
			perm[k], perm[i] = perm[i], perm[k]
			walk(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	walk(0)
	return hits / all
}

// batchBiases sums over the round's batches of a criterion the batch bias
// |Σ s_i − Σ final_i| / |b| (method.md), b being the batch's samples
// scored there, and counts those batches.
func batchBiases(batches []models.RunBatch, ci, r int, score [][][]*float64, finalOf []*float64, index map[int64]int) (float64, int) {
	var sum float64
	var k int
	for _, b := range batches {
		if b.CriterionIndex != ci || b.Round != r {
			continue
		}
		var s, m, scored float64
		for _, id := range b.RowIDs {
			i := index[id]
			if v := score[ci][r][i]; v != nil {
				s += *v
				m += *finalOf[i]
				scored++
			}
		}
		if scored > 0 {
			sum += math.Abs(s-m) / scored
			k++
		}
	}
	return sum, k
}

// sameMoney says whether a page's amount ("$0.0123", "$1.25") is usd
// rounded to the digits it shows.
func sameMoney(text string, usd float64) bool {
	v, err := strconv.ParseFloat(strings.TrimPrefix(text, "$"), 64)
	dot := strings.IndexByte(text, '.')
	if err != nil || dot < 0 {
		return false
	}
	return math.Abs(v-usd) <= 0.5*math.Pow(10, -float64(len(text)-dot-1))+1e-12
}

// exportedIntOrNil is a count the export may leave out, for messages.
func exportedIntOrNil(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
