package models

import (
	"regexp"
	"strings"

	"github.com/batcheval/batcheval/evaluator/judge"
)

// Notes that end a shared reason whose rest was left out: the run's page
// has it, for members of the run's workspace.
const (
	judgeDetailsNote = SharedJudgeDetailsNote
	errorDetailsNote = " (the error itself is on the run's page, for members of its workspace)"
)

// SharedInternalError opens the shared reason of a run that failed
// outside the judge client.
const SharedInternalError = "the run stopped on an internal error"

// SharedJudgeDetailsNote ends what a share link says of a judge's error
// whose details it leaves out.
const SharedJudgeDetailsNote = " (the judge's own message is on the run's page, for members of its workspace)"

// criterionQuote is a criterion's name as the runner quotes it (%q).
const criterionQuote = `"(?:[^"\\]|\\.)*"`

// sharedWhole are the reasons the runner writes in its own words, with
// nothing in them but counts, the method's words for its units and the
// names of the rubric's criteria (which the shared report shows): shared
// as they are.
var sharedWhole = []*regexp.Regexp{
	regexp.MustCompile(`^no score could be read: all \d+ scores are missing \(failed calls(?: or unreadable answers|, unreadable answers or too few readable answers); see the [a-z ]+ for what the judge said\)$`),
	regexp.MustCompile(`^\d+ of \d+ scores are missing \(failed calls(?: or unreadable answers|, unreadable answers or too few readable answers)\)$`),
	regexp.MustCompile(`^every [a-z ]+?(?: of [a-z ]+ \d+)? of ` + criterionQuote + ` failed, even when tried again: the judge is not answering usefully \(see the [a-z ]+ for its errors\)$`),
	regexp.MustCompile(`^the dataset has no rows$`),
	regexp.MustCompile(`^this run uses the simulated judge, but it is not running in this process$`),
	regexp.MustCompile(`^no model named: set the model \(for Azure, the deployment name\)$`),
	regexp.MustCompile(`^the judge's evaluation steps for ` + criterionQuote + ` could not be read: no evaluation steps found: the answer has no numbered list \(expected "Evaluation Steps:" followed by "1\. \.\.\.", "2\. \.\.\."\)$`),
}

// spendCapStop is the spending cap's own message (runner.SpendCapError),
// wherever it is in the reason: shared from there.
var spendCapStop = regexp.MustCompile(`spending cap reached: the run has spent \$[0-9.]+(?: \(of which \$[0-9.]+ was spent on checks whether the judge was back\))? of its \$[0-9.e+-]+ cap and its next call would cost about \$[0-9.]+; no new call was sent \(raise the cap and resume the run to finish it\)$`)

// sharedReworded are reasons the product words itself but that quote
// what a share link must not show (the judge's base URL): shared as the
// text given.
var sharedReworded = []struct {
	form *regexp.Regexp
	text string
}{
	{regexp.MustCompile(`^base URL ".*" is not an http\(s\) URL: `), "the judge's base URL is not an http(s) URL: it must be corrected in the judge's settings"},
	{regexp.MustCompile(`^base URL ".*" cannot take the chat completions path: `), "the judge's base URL cannot take the chat completions path: it must be corrected in the judge's settings"},
	{regexp.MustCompile(`^dataset \d+ does not exist \(or is not in this workspace\)$`), "its dataset no longer exists"},
}

// sharedJudgePrefixes open reasons that quote the judge client's error
// after them (the product's words, the criterion's name): shared with the
// client's own words (judge.OwnWords) after them, or alone.
var sharedJudgePrefixes = []*regexp.Regexp{
	regexp.MustCompile(`^` + regexp.QuoteMeta(JudgeSettingsStop) + `(?:: |$)`),
	regexp.MustCompile(`^generate G-Eval steps for ` + criterionQuote + `: `),
	regexp.MustCompile(`^the judge's evaluation steps for ` + criterionQuote + ` could not be read: `),
}

// internalKinds say what a run that failed on an internal error was
// doing, by how the runner's own text opens what it wrapped.
var internalKinds = []struct{ prefix, doing string }{
	{"run settings: ", "while checking its settings"},
	{"load dataset rows: ", "while reading its dataset"},
	{"find dataset ", "while reading its dataset"},
	{"read the judge's limits: ", "while applying its judge's shared limits"},
	{"take from the judge's rate limit: ", "while applying its judge's shared limits"},
	{"lease a slot of the judge's concurrency: ", "while applying its judge's shared limits"},
	{"read the run's spending: ", "while reading what it has spent"},
	{"the key variable ", "while reading its judge's key"},
	{"the server's list of key variables is broken", "while reading its judge's key"},
	{"unknown method ", "while looking up its scoring method"},
	{"check the run's lease: ", "while checking it was still its worker's"},
	{"computing the statistics panicked", "while computing its statistics"},
}

// sharedReason is a failed run's reason (as ShownError gives it) as
// readers outside the run's workspace may read it: the reasons the product
// words itself, without what they quote of the judge's details; a
// rewording of those that quote its base URL; and for any other (a
// database, file or network error the run met outside the judge client,
// which may name paths, SQL, addresses and ids) SharedInternalError, with
// what the run was doing when the runner's text tells it.
func sharedReason(s string) string {
	if s == "" {
		return ""
	}
	for _, re := range sharedWhole {
		if re.MatchString(s) {
			return withoutMembersPointer(s)
		}
	}
	if loc := spendCapStop.FindStringIndex(s); loc != nil {
		return s[loc[0]:]
	}
	for _, r := range sharedReworded {
		if r.form.MatchString(s) {
			return r.text
		}
	}
	if w, ok := judge.OwnWords(s); ok {
		return withNote(w, s[len(w):], judgeDetailsNote)
	}
	for _, re := range sharedJudgePrefixes {
		if loc := re.FindStringIndex(s); loc != nil {
			head := strings.TrimSuffix(s[:loc[1]], ": ")
			rest := s[loc[1]:]
			if w, ok := judge.OwnWords(rest); ok {
				return withNote(head+": "+w, rest[len(w):], judgeDetailsNote)
			}
			if rest == "" {
				return head
			}
			return strings.TrimRight(head, ".") + judgeDetailsNote
		}
	}
	for _, k := range internalKinds {
		if strings.HasPrefix(s, k.prefix) {
			return SharedInternalError + " " + k.doing + errorDetailsNote
		}
	}
	return SharedInternalError + errorDetailsNote
}

// membersPointer is what the runner's own reasons say to look at for the
// judge's errors: "see the batches for its errors", "; see the batches for
// what the judge said". A shared report and the standalone file have no
// batches, nor the judge's errors: they say where those are instead.
var membersPointer = regexp.MustCompile(`(?: \(see the [a-z ]+ for its errors\)|; see the [a-z ]+ for what the judge said\))$`)

// withoutMembersPointer is s with its pointer to the run's batches
// (membersPointer) replaced by where the judge's errors are.
func withoutMembersPointer(s string) string {
	loc := membersPointer.FindStringIndex(s)
	if loc == nil {
		return s
	}
	if strings.HasPrefix(s[loc[0]:], ";") {
		return s[:loc[0]] + "; what the judge said is on the run's page, for members of its workspace)"
	}
	return s[:loc[0]] + membersErrorsNote
}

// membersErrorsNote ends a shared reason whose pointer to the batches was
// left out.
const membersErrorsNote = " (the judge's errors are on the run's page, for members of its workspace)"

// withNote is the judge client's words w, ended by note when what was
// left out after them (rest) held its details; the count of attempts
// alone is no message of the judge's.
func withNote(w, rest, note string) string {
	if !strings.HasPrefix(rest, ". Details: ") {
		return w
	}
	return strings.TrimRight(strings.TrimSpace(w), ".") + note
}

// SharedError is the batch's error as readers outside the run's workspace
// may read it (a share link's sample page): the judge client's own words
// without its details (the address it called, this server's network), or
// "" when none can be shown.
func (b RunBatch) SharedError() string {
	return sharedJudgeText(b.ShownError())
}

// SharedProblems are the batch's problems as readers outside the run's
// workspace may read them: a failed repair quotes the judge client's own
// words only (sharedJudgeText); the others are the product's words about
// the answer, shown as they are.
func (b RunBatch) SharedProblems() []string {
	out := b.ShownProblems()
	for i, p := range out {
		if rest, ok := strings.CutPrefix(p, repairFailedPrefix); ok {
			out[i] = strings.TrimSuffix(repairFailedPrefix, ": ")
			if w := sharedJudgeText(rest); w != "" {
				out[i] += ": " + w
			} else {
				out[i] += judgeDetailsNote
			}
		}
	}
	return out
}

// repairFailedPrefix opens the problem of a repair request that failed,
// which quotes the judge client's error (evaluator/methods).
const repairFailedPrefix = "repair request failed: "

// sharedJudgeText is a judge client's error in its own words, with a note
// when its details were left out; "" when it is not in the client's words.
func sharedJudgeText(s string) string {
	if w, ok := judge.OwnWords(s); ok {
		return withNote(w, s[len(w):], judgeDetailsNote)
	}
	return ""
}
