package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestProgressStreamSaysRunWasTrashed: someone deletes a run (to the
// trash) through one server process while another streams its progress to
// a reader. The stream used to stop without a word when the run could no
// longer be read, so the page showed the run "running" at its last
// figures until the browser's reconnection was refused, and then only
// that the server "refused to go on sending it". It now ends saying the
// run was moved to the trash.
func TestProgressStreamSaysRunWasTrashed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		shortStreamTimings(env)
		ctx := context.Background()
		d := env.ratedDataset("streamed", 10)
		run := env.storedRun(d, "still going", d.human, nil)
		must(t, env.db.Gorm.Exec(`UPDATE runs SET status = ?, finished_at = NULL WHERE id = ?`, models.RunRunning, run.ID).Error)
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/runs/%d/events", run.ID), nil)
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rec := newStreamRecorder()
		done := make(chan struct{})
		go func() {
			env.e.ServeHTTP(rec, req.WithContext(rctx))
			close(done)
		}()
		// The run goes to the trash once the stream has sent its first
		// progress (a fixed sleep before, too short on a loaded machine).
		if !rec.waitFor("event: progress", done) {
			cancel()
			<-done
			t.Fatalf("no progress before the run was trashed: %d %.200q", rec.Code(), rec.String())
		}
		// As the delete page does it: the run still going is cancelled,
		// then moved to the trash, a moment later.
		if _, err := env.db.RequestCancel(ctx, env.ws.ID, run.ID); err != nil {
			t.Fatal(err)
		}
		if _, _, err := env.db.Trash(ctx, env.ws.ID, models.KindRun, run.ID, models.Actor{Label: "elsewhere"}); err != nil {
			t.Fatal(err)
		}
		if !waitDone(done, cancel) {
			t.Fatalf("the stream still runs %v after its run went to the trash", streamWait)
		}
		body := rec.String()
		if !strings.Contains(body, "event: progress") {
			t.Errorf("no progress before the run was trashed: %.200q", body)
		}
		// A poll that falls between the cancel and the move sees the run
		// cancelled, and the page reloads on that last event: fine too.
		cancelledSeen := strings.Contains(body, `"finished":true`)
		if !cancelledSeen && !strings.HasSuffix(body, "event: ended\ndata: "+streamEndedTrashed+"\n\n") {
			t.Errorf("the stream ended without saying the run went to the trash: %.300q", body[max(0, len(body)-300):])
		}
	})
}
