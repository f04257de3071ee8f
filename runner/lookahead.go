package runner

// unitLookahead is how many of a round's units may start beyond the
// run's concurrency: they build their requests and look them up in the
// answer cache at once (calls that start together share one lookup
// query, judge.Cache), then wait for a slot of the execution's budget to
// call the judge (limits.go), which keeps the calls within the
// concurrency. Why 64: a FED round (13 batches a criterion) starts whole,
// so it makes one or two lookup queries instead of 13; each waiting unit
// holds only its prompt, so memory stays small for any size of round.
//
// A unit used to hold a "turn" of its round from its first call to its
// end, which kept a round's units at the concurrency while they stored
// their answers too. It cost a goroutine hand-over per call, and the
// budget already bounds the calls; the turns also kept a second call of
// a run with a spending cap from going out before the first one's cost
// was stored, which the cap now sees by itself (spendcap.go).
const unitLookahead = 64
