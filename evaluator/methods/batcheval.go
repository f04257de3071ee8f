package methods

import (
	"context"
	"fmt"
	"hash/fnv"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/evaluator/judge"
)

func init() { register(BatchEval{}) }

// BatchEval judges samples in batches of B over N rounds, recomposing the
// batches from earlier scores, and averages the rounds (Yuan et al., 2024).
// Its variants (procedure, composition, sort key, scoring) are settings of
// this one method.
type BatchEval struct{}

// Name implements Method.
func (BatchEval) Name() evaluator.Method { return evaluator.MethodBatchEval }

// Label implements Method.
func (BatchEval) Label() string { return "BatchEval" }

// Words implements Method.
func (BatchEval) Words() Words {
	return Words{Round: "round", Rounds: "rounds", Unit: "batch", Units: "batches"}
}

// Batched implements Method.
func (BatchEval) Batched() bool { return true }

// Prepare implements Method: BatchEval takes its settings as given and
// reads no method settings, so none are kept.
func (BatchEval) Prepare(r *Run) error {
	r.MethodSettings = evaluator.MethodSettings{}
	return nil
}

// Passes implements Method: one criterion at a time.
func (BatchEval) Passes(rub evaluator.Rubric) [][]int { return perCriterion(rub) }

// Rounds implements Method.
func (BatchEval) Rounds(r Run) int { return r.Settings.Rounds }

// Plan implements Method: a seeded shuffle for the first round, the chosen
// composition strategy over earlier scores after that.
func (BatchEval) Plan(p Plan) ([][]int, error) {
	s := p.Run.Settings
	rng := newRand(s.Seed, p.Criterion, p.Round)
	if p.Round == 0 {
		return evaluator.ComposeFirstRound(p.N, s.BatchSize, rng), nil
	}
	past, err := p.Past()
	if err != nil {
		return nil, err
	}
	keys := evaluator.SortKeys(s.SortKey, past)
	return evaluator.ComposeRound(s.Composition, keys, s.BatchSize, rng), nil
}

// seedMix derives a distinct, reproducible stream per criterion and round.
// The run's id is deliberately not part of it: two runs with the same seed
// on the same data start from the same first-round batches, so comparing
// settings (e.g. compositions) is paired, and the seed alone decides.
func seedMix(ci, round int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d", ci, round)
	return h.Sum64()
}

// Judge implements Method: one batch request and, when scores are missing
// from the answer, at most one repair request in the same conversation.
func (BatchEval) Judge(ctx context.Context, j Completer, u Unit) Outcome {
	s := u.Run.Settings
	crit := u.Run.Rubric.Criteria[u.Criteria[0]]
	msgs := evaluator.BuildBatchPrompt(u.Run.Rubric, crit, u.Samples, s)
	req := judge.Request{Messages: msgs, Temperature: s.Temperature, TopP: s.TopP, MaxTokens: s.MaxTokens}
	seed := s.Seed + int64(u.Round)
	req.Seed = &seed
	o := Outcome{Request: EncodeMessages(msgs)}

	resp, err := j.Complete(ctx, req)
	o.count(resp, err)
	if err != nil {
		return o.fail(err)
	}
	o.Response = resp.Text()
	ans := evaluator.ParseBatchAnswer(o.Response, len(u.Samples), crit)
	o.Problems = append([]string{}, ans.Problems...)

	if missing := ans.Missing(); len(missing) > 0 {
		rmsgs := evaluator.BuildRepairMessages(msgs, o.Response, crit, s, missing)
		o.RepairRequest = rmsgs[len(rmsgs)-1].Content
		rreq := req
		rreq.Messages = rmsgs
		rresp, rerr := j.Complete(ctx, rreq)
		o.count(rresp, rerr)
		if rerr != nil {
			// The first answer is paid for: it is kept (its missing scores
			// stay missing) whatever the repair's failure means for the run.
			o.Problems = append(o.Problems, "repair request failed: "+rerr.Error())
			o.Err = rerr
		} else {
			o.RepairResponse = rresp.Text()
			rep := evaluator.ParseBatchAnswer(o.RepairResponse, len(u.Samples), crit)
			for _, label := range missing {
				if v := rep.Scores[label-1]; v != nil {
					ans.Scores[label-1] = v
					o.Problems = append(o.Problems, fmt.Sprintf("Sample%d: score recovered by the repair request", label))
				}
			}
		}
	}
	for k := range u.Samples {
		sc := Score{Criterion: u.Criteria[0], Sample: k}
		if k < len(ans.Scores) {
			sc.Value = ans.Scores[k]
		}
		if k < len(ans.Analyses) {
			sc.Analysis = ans.Analyses[k]
		}
		o.Scores = append(o.Scores, sc)
	}
	return o
}

// Final implements Method: the mean of the readable rounds.
func (BatchEval) Final(rounds []*float64) *float64 { return meanOf(rounds) }

// Summary implements Method.
func (BatchEval) Summary(r Run) Summary {
	s := r.Settings
	key := "previous round's"
	if s.SortKey == evaluator.SortByMean {
		key = "running mean"
	}
	rounds := fmt.Sprintf("%d rounds", s.Rounds)
	if s.Rounds == 1 {
		rounds = "1 round"
	}
	// Random batches follow no score, so the line names no sort key.
	composition := fmt.Sprintf("%s batches sorted by %s score", s.Composition, key)
	if s.Composition == evaluator.Random {
		composition = "random batches"
	}
	return Summary{
		explained(fmt.Sprintf("%s × batches of %d", rounds, s.BatchSize),
			Term{"Rounds × batches", "each sample was scored once per round, each time in a batch of samples the judge compared side by side; its final score is the mean of its rounds."}),
		explained(fmt.Sprintf("temperature %g", s.Temperature), temperatureTerm(false, true)),
		plain(fmt.Sprintf("top_p %g", s.TopP)),
		explained(fmt.Sprintf("seed %d", s.Seed), seedTerm(true)),
		explained(fmt.Sprintf("%s-stage prompt", s.Procedure), procedureTerms(s.Procedure)...),
		explained(composition, compositionTerms(s.Composition, key+" score")...),
		explained(fmt.Sprintf("%s scores", s.Scoring), scoringTerms(s.Scoring)...),
	}
}

// procedureTerms explains a batch prompt's procedure; none for a value this
// version does not know.
func procedureTerms(p evaluator.Procedure) []Term {
	switch p {
	case evaluator.OneStage:
		return []Term{{"One-stage prompt", "the judge analyses and scores each sample of a batch in turn."}}
	case evaluator.TwoStage:
		return []Term{{"Two-stage prompt", "the judge first writes an analysis of every sample in the batch, then gives all the scores at once (the paper found this best)."}}
	case evaluator.ThreeStage:
		return []Term{{"Three-stage prompt", "the judge analyses the samples, ranks them, then scores them (the paper found the ranking sways the scores)."}}
	}
	return nil
}

// compositionTerms explains how the batches after the first round are
// formed, and which score (key) orders the samples when one does.
func compositionTerms(c evaluator.Composition, key string) []Term {
	order := " Which samples go together follows each sample's " + key + "."
	switch c {
	case evaluator.Heterogeneous:
		return []Term{{"Heterogeneous batches", "after the first round, each batch mixes samples that scored low with samples that scored high, so the judge compares across the whole scale (the paper found this best)." + order}}
	case evaluator.Homogeneous:
		return []Term{{"Homogeneous batches", "after the first round, samples with similar scores share a batch." + order}}
	case evaluator.Random:
		return []Term{{"Random batches", "the samples are reshuffled into new batches at random every round."}}
	}
	return nil
}

// scoringTerms explains the number format the judge is asked for; none for
// a value this version does not know.
func scoringTerms(s evaluator.Scoring) []Term {
	switch s {
	case evaluator.Decimal:
		return []Term{{"Decimal scores", "the judge may give 3.5 as well as 3 or 4."}}
	case evaluator.Integer:
		return []Term{{"Integer scores", "the judge gives whole numbers only."}}
	}
	return nil
}

// EncodeMessages stores a request's messages as JSON.
func EncodeMessages(msgs []evaluator.Message) string {
	return judge.MessagesJSON(msgs)
}

// Note implements Method.
func (BatchEval) Note() string {
	return "batches of samples compared side by side over several rounds (the default)"
}

// Reads implements Method: BatchEval's own settings, no method settings.
func (BatchEval) Reads() []Setting {
	return []Setting{SettingRounds, SettingBatchSize, SettingTemperature, SettingTopP, SettingSeed,
		SettingProcedure, SettingComposition, SettingSortKey, SettingScoring, SettingMaxTokens}
}

// Setups implements Method: the launch's settings, then the paper's
// ablations, each changing one setting of them.
func (BatchEval) Setups(base evaluator.Settings, ms evaluator.MethodSettings) []Setup {
	with := func(name string, f func(*evaluator.Settings)) Setup {
		s := base
		f(&s)
		return Setup{Name: name, Settings: s, MethodSettings: ms}
	}
	return []Setup{
		{Name: "BatchEval (default)", Settings: base, MethodSettings: ms},
		with("BatchEval, one stage", func(s *evaluator.Settings) { s.Procedure = evaluator.OneStage }),
		with("BatchEval, three stage", func(s *evaluator.Settings) { s.Procedure = evaluator.ThreeStage }),
		with("BatchEval, random batches", func(s *evaluator.Settings) { s.Composition = evaluator.Random }),
		with("BatchEval, homogeneous batches", func(s *evaluator.Settings) { s.Composition = evaluator.Homogeneous }),
		with("BatchEval, integer scores", func(s *evaluator.Settings) { s.Scoring = evaluator.Integer }),
	}
}

// PromptVersion implements Method.
func (BatchEval) PromptVersion() string { return evaluator.BatchEvalPromptVersion }
