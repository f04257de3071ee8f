package models

import (
	"strings"
	"testing"
)

// TestSharedErrorQuotesNoInternalError: a run that failed outside the
// judge client (reading its dataset, the database, a key variable) showed
// its raw error on share links: paths, SQL, addresses, ids and variable
// names, to readers outside the workspace. They get a generic reason now,
// with what the run was doing when known; the product's own reasons and
// the judge client's own words are kept, without the judge's details.
func TestSharedErrorQuotesNoInternalError(t *testing.T) {
	const (
		internal  = "the run stopped on an internal error"
		noted     = " (the error itself is on the run's page, for members of its workspace)"
		judgeNote = " (the judge's own message is on the run's page, for members of its workspace)"
	)
	for _, tc := range []struct {
		name, stored, want string
		secrets            []string
	}{
		// Outside the judge client: generic.
		{"SQLite error reading the dataset", "load dataset rows: SQL logic error: no such table: dataset_rows (1)",
			internal + " while reading its dataset" + noted, []string{"SQL", "dataset_rows"}},
		{"Postgres unreachable", "find dataset 12: failed to connect to `host=db.internal user=batcheval database=batcheval`: dial error (dial tcp 10.1.2.3:5432: connect: connection refused)",
			internal + " while reading its dataset" + noted, []string{"12", "db.internal", "10.1.2.3", "5432"}},
		{"SQL in a constraint error", `ERROR: duplicate key value violates unique constraint "run_batches_pkey" (SQLSTATE 23505)`,
			internal + noted, []string{"run_batches", "SQLSTATE"}},
		{"a file", "open /var/lib/batcheval/uploads/ws-4/data.csv: no such file or directory",
			internal + noted, []string{"/var/lib", "data.csv"}},
		{"missing rubric", "rubric 7 does not exist (or is not in this workspace)",
			internal + noted, []string{"7"}},
		{"dataset gone", "dataset 12 does not exist (or is not in this workspace)",
			"its dataset no longer exists", []string{"12"}},
		{"settings", "run settings: batch size 0 is below 1", internal + " while checking its settings" + noted, nil},
		{"key variable", `the key variable "OPENAI_KEY_PROD" is not allowed: the server's operator must list it in BATCHEVAL_KEY_VARS first (it lists none); or store the key with the judge instead`,
			internal + " while reading its judge's key" + noted, []string{"OPENAI_KEY_PROD", "BATCHEVAL_KEY_VARS"}},
		{"judge's limits in the database", "read the judge's limits: context deadline exceeded", internal + " while applying its judge's shared limits" + noted, nil},
		{"panic with a stack", "computing the statistics panicked: runtime error: index out of range [0] with length 0\ngoroutine 1 [running]:\n/home/ci/batcheval/report/stats.go:88 +0x1d",
			internal + " while computing its statistics" + noted, []string{"/home/ci", "goroutine"}},
		{"an error dressed as a judge summary", "the endpoint failed (HTTP 500) at 10.0.0.7", internal + noted, []string{"10.0.0.7"}},
		{"the base URL", `base URL "http//judge.corp.internal:8000/v1" is not an http(s) URL: use e.g. https://api.openai.com/v1 or http://localhost:11434/v1`,
			"the judge's base URL is not an http(s) URL: it must be corrected in the judge's settings", []string{"corp.internal"}},

		// The product's own reasons: as they are.
		// ... without their pointer to the batches, which a shared report
		// does not have (TestSharedReasonPointsAtNothingHidden).
		{"no score", "no score could be read: all 20 scores are missing (failed calls or unreadable answers; see the batches for what the judge said)",
			"no score could be read: all 20 scores are missing (failed calls or unreadable answers; what the judge said is on the run's page, for members of its workspace)", nil},
		{"every unit failed", `every batch of round 2 of "clarity" failed, even when tried again: the judge is not answering usefully (see the batches for its errors)`,
			`every batch of round 2 of "clarity" failed, even when tried again: the judge is not answering usefully` + " (the judge's errors are on the run's page, for members of its workspace)", nil},
		{"no rows", "the dataset has no rows", "the dataset has no rows", nil},
		{"spending cap, wrapped", `generate G-Eval steps for "clarity": spending cap reached: the run has spent $0.0123 of its $0.01 cap and its next call would cost about $0.0004; no new call was sent (raise the cap and resume the run to finish it)`,
			"spending cap reached: the run has spent $0.0123 of its $0.01 cap and its next call would cost about $0.0004; no new call was sent (raise the cap and resume the run to finish it)", nil},

		// The judge client's: its words, without the details.
		{"stopped by the judge's settings", JudgeSettingsStop + ": this server does not call judges at that address. Details: connecting to 10.20.30.40:8000 is not allowed: private-network addresses are off on this server (BATCHEVAL_JUDGE_ALLOW_PRIVATE or --judge-allow-private)",
			JudgeSettingsStop + ": this server does not call judges at that address" + judgeNote, []string{"10.20.30.40", "BATCHEVAL_JUDGE_ALLOW_PRIVATE"}},
		{"stored by an older build", "stopping the run: judge: the endpoint refused the API key (HTTP 401): check the key. Details: Incorrect API key provided: sk-abc1****wxyz",
			JudgeSettingsStop + ": the endpoint refused the API key (HTTP 401): check the key" + judgeNote, []string{"sk-abc1"}},
		{"G-Eval steps", `generate G-Eval steps for "clarity": the endpoint failed (HTTP 502): it may be overloaded or down; try again later. Details: <html>502 Bad Gateway nginx/1.25.3 at 10.0.0.9</html>; gave up after 3 attempts`,
			`generate G-Eval steps for "clarity": the endpoint failed (HTTP 502): it may be overloaded or down; try again later` + judgeNote, []string{"nginx", "10.0.0.9"}},
		{"G-Eval steps, other error", `generate G-Eval steps for "clarity": open /tmp/x: permission denied`,
			`generate G-Eval steps for "clarity"` + judgeNote, []string{"/tmp"}},
		{"attempts only", "the endpoint failed (HTTP 500): it may be overloaded or down; try again later; gave up after 3 attempts",
			"the endpoint failed (HTTP 500): it may be overloaded or down; try again later", nil},
		{"none", "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Run{Status: RunFailed, Error: tc.stored}.SharedError()
			if got != tc.want {
				t.Errorf("SharedError of %q\n got %q\nwant %q", tc.stored, got, tc.want)
			}
			for _, s := range tc.secrets {
				if strings.Contains(got, s) {
					t.Errorf("SharedError %q shows %q", got, s)
				}
			}
		})
	}
}

// TestSharedReasonPointsAtNothingHidden: a failed run's reason on a share
// link and in the standalone report said "see the batches for its errors"
// (or "for what the judge said"), but neither has batches nor the judge's
// errors; they say the errors are on the run's page for members instead.
func TestSharedReasonPointsAtNothingHidden(t *testing.T) {
	for _, tc := range []struct{ stored, want string }{
		{`every batch of round 1 of "Engaging" failed, even when tried again: the judge is not answering usefully (see the batches for its errors)`,
			`every batch of round 1 of "Engaging" failed, even when tried again: the judge is not answering usefully (the judge's errors are on the run's page, for members of its workspace)`},
		{`every sample of "Engaging" failed, even when tried again: the judge is not answering usefully (see the samples for its errors)`,
			`every sample of "Engaging" failed, even when tried again: the judge is not answering usefully (the judge's errors are on the run's page, for members of its workspace)`},
		{"no score could be read: all 30 scores are missing (failed calls or unreadable answers; see the batches for what the judge said)",
			"no score could be read: all 30 scores are missing (failed calls or unreadable answers; what the judge said is on the run's page, for members of its workspace)"},
		{"3 of 30 scores are missing (failed calls or unreadable answers)", "3 of 30 scores are missing (failed calls or unreadable answers)"},
		{"3 of 30 scores are missing (failed calls, unreadable answers or too few readable answers)", "3 of 30 scores are missing (failed calls, unreadable answers or too few readable answers)"},
		{"no score could be read: all 30 scores are missing (failed calls, unreadable answers or too few readable answers; see the samples for what the judge said)",
			"no score could be read: all 30 scores are missing (failed calls, unreadable answers or too few readable answers; what the judge said is on the run's page, for members of its workspace)"},
	} {
		got := sharedReason(tc.stored)
		if got != tc.want {
			t.Errorf("shared reason of %q\n = %q\nwant %q", tc.stored, got, tc.want)
		}
		if strings.Contains(got, "see the") {
			t.Errorf("shared reason %q points at what a share link does not show", got)
		}
	}
}
