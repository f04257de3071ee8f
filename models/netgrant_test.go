package models_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/evaluator/judge"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/dbtest"
)

// TestNetworkGrantStorage: the operator's grants of the private network
// (batcheval admin network) are stored per workspace, by slug or id, each
// change in the workspace's audit log and once only; the default workspace
// always has it and cannot be granted or revoked; a workspace anyone made
// has none, and PrivateNetworkAllowed says what the operator runs.
func TestNetworkGrantStorage(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		def, ws := defaultAndAnotherWorkspace(t, db)
		allowed := func(id int64) error { return db.PrivateNetworkAllowed(ctx, id) }
		var ng *models.NotGrantedError
		if err := allowed(def.ID); err != nil {
			t.Errorf("default workspace: %v, want allowed", err)
		}
		if err := allowed(ws.ID); !errors.As(err, &ng) || !strings.Contains(err.Error(), "batcheval admin network grant "+ws.Slug) {
			t.Errorf("a new workspace: %v, want not granted, naming the command", err)
		}

		for _, tc := range []struct {
			name        string
			ref         string
			grant       bool
			wantChanged bool
			wantErr     string
			wantAllowed bool
		}{
			{"grant by slug", ws.Slug, true, true, "", true},
			{"grant again", ws.Slug, true, false, "", true},
			{"revoke by id", strconv.FormatInt(ws.ID, 10), false, true, "", false},
			{"revoke again", ws.Slug, false, false, "", false},
			{"unknown workspace", "no-such", true, false, "no workspace has the slug or id", false},
			{"the default workspace", models.DefaultWorkspaceSlug, false, false, "always reaches", false},
			{"grant by id", " " + strconv.FormatInt(ws.ID, 10) + " ", true, true, "", true},
		} {
			_, changed, err := db.SetNetworkGrant(ctx, tc.ref, tc.grant, "operator ada")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(models.ErrorMessage(err), tc.wantErr) {
					t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.wantErr)
				}
				continue
			}
			if err != nil || changed != tc.wantChanged {
				t.Errorf("%s: changed %v, %v; want changed %v", tc.name, changed, err, tc.wantChanged)
			}
			if got := allowed(ws.ID) == nil; got != tc.wantAllowed {
				t.Errorf("%s: allowed %v, want %v", tc.name, got, tc.wantAllowed)
			}
		}
		if err := allowed(def.ID); err != nil {
			t.Errorf("default workspace after all that: %v", err)
		}

		evs, err := db.ListAudit(ctx, ws.ID, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, ev := range evs {
			if strings.HasPrefix(ev.Action, "private-network-") {
				actions = append(actions, ev.Action+" by "+ev.Actor)
			}
		}
		want := []string{"private-network-granted by operator ada", "private-network-revoked by operator ada", "private-network-granted by operator ada"}
		// ListAudit is newest first.
		if len(actions) != 3 || actions[0] != want[2] || actions[1] != want[1] || actions[2] != want[0] {
			t.Errorf("audit log: %q, want (newest first) the reverse of %q", actions, want)
		}

		list, err := db.ListNetworkGrants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		granted := map[string]bool{}
		for _, r := range list {
			granted[r.Workspace.Slug] = r.Grant.WorkspaceID != 0
		}
		if len(list) != 2 || granted[def.Slug] || !granted[ws.Slug] {
			t.Errorf("list: %+v, want both workspaces, the new one granted (the default one needs no row)", list)
		}
	})
}

// TestNetworkPermitTellsUnreadFromRefused: the grant the judge's dialer
// asks (NetworkPermit) refuses only on a real answer, a workspace without
// the grant or one that does not exist; a read that fails (here cut short,
// as a dropped connection or a timeout would) is judge.GrantUnknownError,
// which a run retries, not a refusal that ends it.
func TestNetworkPermitTellsUnreadFromRefused(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *models.DB) {
		ctx := t.Context()
		def, ws := defaultAndAnotherWorkspace(t, db)
		cut, cancel := context.WithCancel(ctx)
		cancel()
		for _, tc := range []struct {
			name        string
			ctx         context.Context
			ws          int64
			wantNil     bool
			wantUnknown bool
		}{
			{"the default workspace", ctx, def.ID, true, false},
			{"a workspace without the grant", ctx, ws.ID, false, false},
			{"a workspace that does not exist", ctx, ws.ID + 1000, false, false},
			{"a read that failed", cut, ws.ID, false, true},
			{"a read that failed, default workspace", cut, def.ID, false, true},
		} {
			err := db.NetworkPermit(tc.ws)(tc.ctx)
			var unknown *judge.GrantUnknownError
			switch {
			case tc.wantNil && err != nil:
				t.Errorf("%s: %v, want allowed", tc.name, err)
			case !tc.wantNil && err == nil:
				t.Errorf("%s: allowed, want an error", tc.name)
			case !tc.wantNil && errors.As(err, &unknown) != tc.wantUnknown:
				t.Errorf("%s: %v (unknown %v), want unknown %v", tc.name, err, errors.As(err, &unknown), tc.wantUnknown)
			}
		}
	})
}

// defaultAndAnotherWorkspace makes the default workspace, its first owner
// and a workspace that owner made, which the operator has not granted.
func defaultAndAnotherWorkspace(t *testing.T, db *models.DB) (def, other models.Workspace) {
	t.Helper()
	ctx := t.Context()
	def, err := db.EnsureDefaultWorkspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u, err := db.CreateFirstOwner(ctx, def.ID, models.NewUser{Email: "o@x.test", Name: "O", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	if other, err = db.CreateWorkspace(ctx, "Anyone's", u.ID); err != nil {
		t.Fatal(err)
	}
	return def, other
}
