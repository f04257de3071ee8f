package models_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
	"github.com/batcheval/batcheval/models/demo"
)

// shareFixture is workspace A with two runs and an experiment, and a second
// workspace B with a run of its own.
type shareFixture struct {
	a, b             models.Workspace
	run1, run2, runB models.Run
	exp              models.Experiment
}

func newShareFixture(t *testing.T, db *models.DB) shareFixture {
	t.Helper()
	ctx := context.Background()
	var f shareFixture
	var err error
	if f.a, err = db.EnsureDefaultWorkspace(ctx); err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateUser(ctx, f.a.ID, models.RoleOwner, models.NewUser{Email: "o@b.test", Name: "O", Password: "a long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	if f.b, err = db.CreateWorkspace(ctx, "B", u.ID); err != nil {
		t.Fatal(err)
	}
	mkRun := func(ws models.Workspace) models.Run {
		p, err := demo.Seed(ctx, db, ws)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := db.ListDatasets(ctx, ws.ID, p.ID)
		if err != nil || len(ds) == 0 {
			t.Fatalf("datasets: %v", err)
		}
		r := models.Run{WorkspaceID: ws.ID, ProjectID: p.ID, DatasetID: ds[0].ID, Name: "r", Method: models.MethodBatchEval}
		if err := db.CreateRun(ctx, &r, nil); err != nil {
			t.Fatal(err)
		}
		return r
	}
	f.run1, f.run2, f.runB = mkRun(f.a), mkRun(f.a), mkRun(f.b)
	f.exp = models.Experiment{WorkspaceID: f.a.ID, ProjectID: f.run1.ProjectID, DatasetID: f.run1.DatasetID, Name: "e"}
	if err := db.CreateExperiment(ctx, &f.exp); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCreateShareLinkChecksWhatIsShared(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		f := newShareFixture(t, db)
		tests := []struct {
			name string
			n    models.NewShareLink
			code string // "" = created
		}{
			{"run", models.NewShareLink{Kind: models.ShareRun, RunID: f.run1.ID}, ""},
			{"experiment", models.NewShareLink{Kind: models.ShareExperiment, ExperimentID: f.exp.ID}, ""},
			{"comparison", models.NewShareLink{Kind: models.ShareCompare, RunID: f.run1.ID, OtherRunID: f.run2.ID}, ""},
			{"run of another workspace", models.NewShareLink{Kind: models.ShareRun, RunID: f.runB.ID}, models.ENotFound},
			{"comparison with another workspace's run", models.NewShareLink{Kind: models.ShareCompare, RunID: f.run1.ID, OtherRunID: f.runB.ID}, models.ENotFound},
			{"comparison of a run with itself", models.NewShareLink{Kind: models.ShareCompare, RunID: f.run1.ID, OtherRunID: f.run1.ID}, models.EInvalid},
			{"unknown kind", models.NewShareLink{Kind: "dataset", RunID: f.run1.ID}, models.EInvalid},
			{"label too long", models.NewShareLink{Kind: models.ShareRun, RunID: f.run1.ID, Label: strings.Repeat("x", models.MaxShareLabel+1)}, models.EInvalid},
		}
		for _, tc := range tests {
			tc.n.WorkspaceID = f.a.ID
			l, token, err := db.CreateShareLink(ctx, tc.n)
			if tc.code != "" {
				if models.ErrorCode(err) != tc.code {
					t.Errorf("%s: got %v, want code %s", tc.name, err, tc.code)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			// 32 random bytes, base64url without padding: 256 bits.
			if len(token) != 43 || strings.Contains(l.TokenHash, token) || l.TokenHash != models.HashLinkToken(token) {
				t.Errorf("%s: token %q (len %d) and stored hash %q: want a 256-bit token stored only as its hash", tc.name, token, len(token), l.TokenHash)
			}
			opened, err := db.OpenShareLink(ctx, token)
			if err != nil || opened.ID != l.ID || opened.Kind != tc.n.Kind {
				t.Errorf("%s: open gave %+v, %v", tc.name, opened, err)
			}
		}
	})
}

func TestShareLinkLifetime(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		f := newShareFixture(t, db)
		mk := func(ttl time.Duration) (models.ShareLink, string) {
			l, tok, err := db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: f.a.ID, Kind: models.ShareRun, RunID: f.run1.ID, TTL: ttl, CreatedByName: "Ada"})
			if err != nil {
				t.Fatal(err)
			}
			return l, tok
		}
		forever, tokForever := mk(0)
		expiring, tokExpiring := mk(time.Hour)
		if forever.ExpiresAt != nil || expiring.ExpiresAt == nil || expiring.ExpiresAt.Sub(expiring.CreatedAt) != time.Hour {
			t.Fatalf("expiry: %v and %v", forever.ExpiresAt, expiring.ExpiresAt)
		}
		// Opening records when.
		if forever.LastOpenedAt != nil {
			t.Fatal("a new link was already opened")
		}
		if _, err := db.OpenShareLink(ctx, tokForever); err != nil {
			t.Fatal(err)
		}
		ls, err := db.ListShareLinks(ctx, f.a.ID)
		if err != nil || len(ls) != 2 {
			t.Fatalf("list: %v (%d)", err, len(ls))
		}
		for _, l := range ls {
			if (l.ID == forever.ID) != (l.LastOpenedAt != nil) {
				t.Errorf("link %d last opened %v", l.ID, l.LastOpenedAt)
			}
			if l.CreatedByName != "Ada" {
				t.Errorf("link %d made by %q", l.ID, l.CreatedByName)
			}
		}
		// Another workspace lists none and cannot revoke.
		if lsB, _ := db.ListShareLinks(ctx, f.b.ID); len(lsB) != 0 {
			t.Errorf("workspace B lists %d of A's links", len(lsB))
		}
		if _, err := db.RevokeShareLink(ctx, f.b.ID, forever.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("revoke from B: %v", err)
		}
		if _, err := db.OpenShareLink(ctx, tokForever); err != nil {
			t.Errorf("revoked by the wrong workspace: %v", err)
		}
		// Revoked: refused at once; a second revoke says so.
		if _, err := db.RevokeShareLink(ctx, f.a.ID, forever.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.OpenShareLink(ctx, tokForever); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("revoked link opened: %v", err)
		}
		if _, err := db.RevokeShareLink(ctx, f.a.ID, forever.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("second revoke: %v", err)
		}
		// Expired: refused.
		if err := db.Gorm.Model(&models.ShareLink{}).Where("id = ?", expiring.ID).Update("expires_at", time.Now().UTC().Add(-time.Second)).Error; err != nil {
			t.Fatal(err)
		}
		if _, err := db.OpenShareLink(ctx, tokExpiring); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("expired link opened: %v", err)
		}
		if _, err := db.OpenShareLink(ctx, "not-a-token"); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("unknown token: %v", err)
		}
	})
}

func TestWebhookSettings(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := context.Background()
		ws, err := db.EnsureDefaultWorkspace(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindWebhook(ctx, ws.ID); models.ErrorCode(err) != models.ENotFound {
			t.Fatalf("no webhook yet: %v", err)
		}
		bad := []models.Webhook{
			{URL: "ftp://example.test/x", OnFinished: true},
			{URL: "/relative", OnFinished: true},
			{URL: "https://user:pw@example.test/", OnFinished: true},
			{URL: "https://example.test/" + strings.Repeat("a", 2001), OnFinished: true},
			{URL: "https://example.test/hook"},
			{URL: "https://example.test/hook", BaseURL: "javascript:alert(1)", OnFailed: true},
		}
		for _, w := range bad {
			w.WorkspaceID = ws.ID
			if _, err := db.SaveWebhook(ctx, w); models.ErrorCode(err) != models.EInvalid {
				t.Errorf("%.60s / %q: got %v, want invalid", w.URL, w.BaseURL, err)
			}
		}
		for _, u := range []string{"https://hooks.example.test/one", "http://10.0.0.5/two"} {
			if _, err := db.SaveWebhook(ctx, models.Webhook{WorkspaceID: ws.ID, URL: u, BaseURL: "https://eval.example.test/", OnFailed: true}); err != nil {
				t.Fatal(err)
			}
			got, err := db.FindWebhook(ctx, ws.ID)
			if err != nil || got.URL != u || got.BaseURL != "https://eval.example.test" || got.OnFinished || !got.OnFailed {
				t.Errorf("saved %q, read %+v, %v", u, got, err)
			}
		}
		if err := db.RecordWebhookDelivery(ctx, ws.ID, "200 OK"); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.FindWebhook(ctx, ws.ID); got.LastStatus != "200 OK" || got.LastSentAt == nil {
			t.Errorf("delivery not recorded: %+v", got)
		}
		// New settings forget the old settings' last delivery.
		if _, err := db.SaveWebhook(ctx, models.Webhook{WorkspaceID: ws.ID, URL: "https://hooks.example.test/three", OnFinished: true}); err != nil {
			t.Fatal(err)
		}
		if got, _ := db.FindWebhook(ctx, ws.ID); got.LastStatus != "" || got.LastSentAt != nil {
			t.Errorf("new settings kept the last delivery: %+v", got)
		}
		if err := db.DeleteWebhook(ctx, ws.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.FindWebhook(ctx, ws.ID); models.ErrorCode(err) != models.ENotFound {
			t.Errorf("deleted webhook still found: %v", err)
		}
	})
}
