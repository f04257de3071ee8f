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
func (BatchEval) Summary(r Run) string {
	s := r.Settings
	key := "previous round's"
	if s.SortKey == evaluator.SortByMean {
		key = "running mean"
	}
	return fmt.Sprintf("%d rounds × batches of %d · temperature %g · top_p %g · seed %d · %s-stage prompt · %s batches sorted by %s score · %s scores",
		s.Rounds, s.BatchSize, s.Temperature, s.TopP, s.Seed, s.Procedure, s.Composition, key, s.Scoring)
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
