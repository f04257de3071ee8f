package runner

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/batcheval/batcheval/evaluator/simjudge"
	"github.com/batcheval/batcheval/internal/mail"
	"github.com/batcheval/batcheval/internal/mail/mailtest"
	"github.com/batcheval/batcheval/models"
)

// mailTo is a sender to the fake SMTP server.
func mailTo(t testing.TB, smtpd *mailtest.Server) *mail.SMTP {
	t.Helper()
	m, err := mail.Parse(smtpd.URL(), "BatchEval <batcheval@company.test>")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// queueReset makes a reset link for a new member, issued by a new owner,
// and queues its mail through r; it returns the mail job.
func (env *testEnv) queueReset(r *Runner, email string) *rivertype.JobRow {
	env.t.Helper()
	ctx := context.Background()
	owner, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleOwner, models.NewUser{Email: "owner-" + email, Name: "Owner", Password: "a long password"})
	if err != nil {
		env.t.Fatal(err)
	}
	member, err := env.db.CreateUser(ctx, env.ws.ID, models.RoleEditor, models.NewUser{Email: email, Name: "Member", Password: "a long password"})
	if err != nil {
		env.t.Fatal(err)
	}
	if _, _, err := env.db.CreatePasswordReset(ctx, owner.ID, member.ID, time.Hour, r.MailQueue(models.LinkReset, "http://batcheval.test")); err != nil {
		env.t.Fatal(err)
	}
	r.MailQueued()
	res, err := env.jobs.river.JobList(ctx, nil)
	if err != nil {
		env.t.Fatal(err)
	}
	for i := len(res.Jobs) - 1; i >= 0; i-- {
		if res.Jobs[i].Kind == mailKind {
			return res.Jobs[i]
		}
	}
	env.t.Fatal("no mail job was queued")
	return nil
}

// TestMailNotDelayedByRuns: a worker whose one run slot is taken by a run
// waiting on a slow judge still sends a reset link's mail at once (before:
// mail jobs waited in the runs' queue, behind the run, until it ended).
func TestMailNotDelayedByRuns(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := mailtest.Start(t)
		var fj *fakeJudge
		fj = newFakeJudge(t, simjudge.Options{Seed: 1}, func(w http.ResponseWriter, r *http.Request, c judgeCall) bool {
			return fj.hang(r)
		})
		r := env.startRunner(Config{MaxRuns: 1}, func(r *Runner) { r.SetMail(mailTo(t, smtpd)) })
		t.Cleanup(fj.releaseHeld)
		run := env.launch(r, env.newRun(fj.URL(), 1, 1, 120))
		deadline := time.Now().Add(20 * time.Second)
		for fj.InFlight() == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("run %d never called the judge", run.ID)
			}
			time.Sleep(10 * time.Millisecond)
		}
		env.queueReset(r, "bob@company.com")
		msgs := smtpd.Wait(t, 1)
		if msgs[0].To[0] != "bob@company.com" || msgs[0].Link("/reset/") == "" {
			t.Fatalf("mail = %+v", msgs[0])
		}
		if st := env.getRun(run.ID).Status; st != models.RunRunning {
			t.Fatalf("the run is %s: the mail did not pass it", st)
		}
	})
}

// TestMailLeftToProcessesWithMail: a `worker` started without the SMTP
// settings leaves mail jobs alone, untouched, for a process that has them
// (before: it took each mail job and put it back for a minute, again and
// again, so a mail waited up to a minute more for every such worker's
// turn), and the process with the settings sends it.
func TestMailLeftToProcessesWithMail(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		smtpd := mailtest.Start(t)
		bare := env.startRunner(Config{})
		job := env.queueReset(bare, "bob@company.com")
		time.Sleep(500 * time.Millisecond) // 25 polls of the bare worker
		if j := env.job(job.ID); j.State != rivertype.JobStateAvailable || j.AttemptedAt != nil || len(j.AttemptedBy) != 0 {
			t.Fatalf("a worker without mail settings took the mail job: %s, attempted by %v at %v", j.State, j.AttemptedBy, j.AttemptedAt)
		}
		env.startRunner(Config{}, func(r *Runner) { r.SetMail(mailTo(t, smtpd)) })
		if msgs := smtpd.Wait(t, 1); msgs[0].To[0] != "bob@company.com" {
			t.Fatalf("mail = %+v", msgs[0])
		}
	})
}
