package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/batcheval/batcheval/models"
)

// wantAccess is the reviewed rule of every route. It is kept apart from
// the route table on purpose: a route added to the table (or registered
// outside it) fails TestRouteMatrix until someone decides here who may
// call it.
var wantAccess = map[string]Access{
	"GET /healthz":      Public,
	"GET /readyz":       Public,
	"GET /static/:name": Public,
	"GET /favicon.ico":  Public,
	"POST /theme":       Public,

	"GET /login":                          Public,
	"POST /login":                         Public,
	"GET /forgot":                         Public,
	"POST /forgot":                        Public,
	"POST /logout":                        SignedIn,
	"GET /setup":                          Public,
	"POST /setup":                         Public,
	"GET /invites/:token":                 Public,
	"POST /invites/:token":                Public,
	"GET /reset/:token":                   Public,
	"POST /reset/:token":                  Public,
	"GET /confirm/:token":                 Public,
	"POST /confirm/:token":                Public,
	"POST /account/confirm":               SignedIn,
	"GET /account":                        SignedIn,
	"POST /account/workspace":             SignedIn,
	"POST /account/password":              SignedIn,
	"POST /account/name":                  SignedIn,
	"POST /account/sessions":              SignedIn,
	"POST /workspaces":                    SignedIn,
	"GET /members":                        Owner,
	"POST /members/invites":               Owner,
	"POST /members/invites/:id/revoke":    Owner,
	"POST /members/invites/:id/link":      Owner,
	"POST /members/invites/:id/resend":    Owner,
	"POST /members/:id/role":              Owner,
	"POST /members/:id/remove":            Owner,
	"POST /members/:id/reset":             Owner,
	"POST /members/:id/ratings":           Owner,
	"GET /audit":                          Owner,
	"GET /":                               Viewer,
	"POST /guide":                         Viewer,
	"GET /projects":                       Viewer,
	"POST /projects":                      Editor,
	"GET /projects/:id":                   Viewer,
	"GET /projects/:id/datasets/new":      Editor,
	"POST /projects/:id/datasets/upload":  Editor,
	"GET /projects/:id/datasets/map":      Editor,
	"POST /projects/:id/datasets/map":     Editor,
	"GET /datasets/:id":                   Viewer,
	"POST /datasets/:id/main":             Editor,
	"GET /projects/:id/rubrics/new":       Editor,
	"POST /projects/:id/rubrics":          Editor,
	"GET /rubrics/:id/edit":               Viewer,
	"GET /rubrics/:id":                    Viewer,
	"POST /rubrics/:id":                   Editor,
	"POST /rubrics/preview":               Viewer,
	"POST /projects/:id/rubrics/import":   Editor,
	"GET /rubrics/:id/export":             Viewer,
	"GET /judges":                         Viewer,
	"GET /judges/new":                     Owner,
	"POST /judges":                        Owner,
	"GET /judges/:id/edit":                Owner,
	"GET /judges/:id":                     Owner,
	"POST /judges/:id":                    Owner,
	"POST /judges/:id/test":               Owner,
	"GET /projects/:id/runs/new":          Editor,
	"POST /projects/:id/runs":             Editor,
	"POST /runs/estimate":                 Editor,
	"GET /runs":                           Viewer,
	"GET /runs/:id":                       Viewer,
	"POST /runs/:id/cancel":               Editor,
	"POST /runs/:id/pause":                Editor,
	"POST /runs/:id/continue":             Editor,
	"GET /runs/:id/events":                Viewer,
	"GET /runs/:id/samples/:rowID":        Viewer,
	"GET /runs/:id/batches":               Viewer,
	"GET /runs/:id/batches/:batchID":      Viewer,
	"GET /runs/:id/export.csv":            Viewer,
	"GET /runs/:id/export.json":           Viewer,
	"POST /projects/:id/runs/geval-steps": Editor,
	"POST /projects/:id/experiments":      Editor,
	"GET /runs/:id/variants":              Viewer,
	"POST /runs/:id/reseed":               Editor,
	"POST /runs/:id/noise":                Editor,
	"POST /runs/:id/reword":               Editor,
	"GET /runs/:id/align":                 Viewer,
	"POST /runs/:id/align":                Editor,
	"GET /alignments/:id":                 Viewer,
	"POST /alignments/:id/accept":         Editor,
	"POST /alignments/:id/heldout":        Editor,
	"GET /rubrics/:id/versions":           Viewer,
	"GET /rubrics/:id/versions/:version":  Viewer,
	"GET /projects/:id/experiments":       Viewer,
	"GET /experiments/:id":                Viewer,
	"GET /compare":                        Viewer,
	"GET /metrics":                        Scraper,
	"POST /runs/:id/resume":               Editor,
	"GET /compare/sample":                 Viewer,

	"GET /tokens":             Viewer,
	"POST /tokens":            Viewer,
	"POST /tokens/:id/revoke": Viewer,

	"GET /api/v1/openapi.json":              Public,
	"GET /api/v1/projects":                  Viewer,
	"POST /api/v1/projects":                 Editor,
	"GET /api/v1/projects/:id":              Viewer,
	"GET /api/v1/projects/:id/datasets":     Viewer,
	"GET /api/v1/projects/:id/rubrics":      Viewer,
	"POST /api/v1/projects/:id/uploads":     Editor,
	"POST /api/v1/projects/:id/datasets":    Editor,
	"GET /api/v1/datasets/:id":              Viewer,
	"GET /api/v1/datasets/:id/reviews":      Viewer,
	"POST /api/v1/datasets/:id/reviews":     Reviewer,
	"POST /api/v1/projects/:id/rubrics":     Editor,
	"GET /api/v1/rubrics/:id":               Viewer,
	"PUT /api/v1/rubrics/:id":               Editor,
	"GET /api/v1/judges":                    Viewer,
	"POST /api/v1/judges":                   Owner,
	"GET /api/v1/judges/:id":                Viewer,
	"PUT /api/v1/judges/:id":                Owner,
	"POST /api/v1/projects/:id/runs":        Editor,
	"POST /api/v1/projects/:id/experiments": Editor,
	"GET /api/v1/runs":                      Viewer,
	"GET /api/v1/runs/:id":                  Viewer,
	"POST /api/v1/runs/:id/cancel":          Editor,
	"POST /api/v1/runs/:id/pause":           Editor,
	"POST /api/v1/runs/:id/continue":        Editor,
	"GET /api/v1/runs/:id/results":          Viewer,
	"GET /api/v1/runs/:id/events":           Viewer,
	"GET /api/v1/runs/:id/export.csv":       Viewer,
	"GET /api/v1/runs/:id/export.json":      Viewer,
	"GET /api/v1/experiments":               Viewer,
	"GET /api/v1/experiments/:id":           Viewer,
	"GET /api/v1/compare":                   Viewer,
	"GET /api/v1/shares":                    Editor,
	"POST /api/v1/shares":                   Editor,
	"POST /api/v1/shares/:id/revoke":        Editor,
	"GET /api/v1/tokens":                    Viewer,
	"POST /api/v1/tokens/:id/revoke":        Viewer,
	// A viewer's token is read-only: it reads its account, and only a
	// token that writes renames its person (api_account.go).
	"GET /api/v1/account":   Viewer,
	"PATCH /api/v1/account": Editor,

	"POST /projects/:id/rename":        Editor,
	"POST /projects/:id/archive":       Editor,
	"POST /projects/:id/unarchive":     Editor,
	"GET /projects/:id/delete":         Editor,
	"POST /projects/:id/delete":        Editor,
	"POST /datasets/:id/rename":        Editor,
	"POST /datasets/:id/archive":       Editor,
	"POST /datasets/:id/unarchive":     Editor,
	"GET /datasets/:id/delete":         Editor,
	"POST /datasets/:id/delete":        Editor,
	"POST /rubrics/:id/rename":         Editor,
	"POST /rubrics/:id/archive":        Editor,
	"POST /rubrics/:id/unarchive":      Editor,
	"GET /rubrics/:id/delete":          Editor,
	"POST /rubrics/:id/delete":         Editor,
	"POST /judges/:id/rename":          Owner,
	"POST /judges/:id/archive":         Owner,
	"POST /judges/:id/unarchive":       Owner,
	"GET /judges/:id/delete":           Owner,
	"POST /judges/:id/delete":          Owner,
	"POST /runs/:id/rename":            Editor,
	"POST /runs/:id/archive":           Editor,
	"POST /runs/:id/unarchive":         Editor,
	"GET /runs/:id/delete":             Editor,
	"POST /runs/:id/delete":            Editor,
	"POST /experiments/:id/rename":     Editor,
	"POST /experiments/:id/archive":    Editor,
	"POST /experiments/:id/unarchive":  Editor,
	"GET /experiments/:id/delete":      Editor,
	"POST /experiments/:id/delete":     Editor,
	"GET /trash":                       Viewer,
	"POST /trash/:id/restore":          Editor,
	"POST /trash/:id/purge":            Owner,
	"GET /runs/:id/report.html":        Viewer,
	"GET /experiments/:id/report.html": Viewer,
	"GET /shares":                      Editor,
	"POST /shares":                     Editor,
	"POST /shares/:id/revoke":          Editor,
	"GET /s/:token":                    Shared,
	"GET /s/:token/samples/:rowID":     Shared,
	"GET /s/:token/report.html":        Shared,
	"GET /settings/webhook":            Owner,
	"POST /settings/webhook":           Owner,
	"POST /settings/webhook/remove":    Owner,
	"POST /settings/webhook/test":      Owner,

	// Reviews (review.go): viewers read the queue; reviewers, editors and
	// owners rate; editors and owners choose which human ratings a report
	// uses.
	"GET /datasets/:id/review":     Viewer,
	"POST /datasets/:id/review":    Reviewer,
	"POST /runs/:id/humans":        Editor,
	"GET /datasets/:id/export.csv": Viewer,
}

// matrixFixture is workspace A's objects and the people who call.
type matrixFixture struct {
	env                             *testEnv
	run, other                      models.Run
	batchID, rowID                  int64
	dataset                         models.Dataset
	rubric                          models.Rubric
	judge                           models.Judge
	experiment                      models.Experiment
	invite                          models.Invite
	trashEntry                      models.TrashEntry // a spare rubric in A's trash
	target                          models.User       // a spare member of A that member routes act on
	share                           models.ShareLink  // a link to run, revoked by the editor's walk
	alignment                       models.Alignment  // an alignment of run's rubric, drafted from run
	upload                          string            // a pending upload's token, for the mapping page
	viewer, editor, owner, outsider models.User
	reviewer                        models.User // rates samples, and nothing else an editor may do
	workspaceB                      models.Workspace
	// tokens are each caller's API token (the outsider's in workspace B);
	// revoked is a revoked token of A's owner; targetToken is a token of
	// the spare member, which the token routes act on; readOnly is a
	// read-only token of A's owner.
	tokens      map[int64]string
	revoked     string
	readOnly    string
	targetToken models.APIToken
}

func newMatrixFixture(t *testing.T, env *testEnv) *matrixFixture {
	t.Helper()
	ctx := context.Background()
	f := &matrixFixture{env: env}
	// Uploaded while the server is still in local mode (no account yet).
	f.upload = env.uploadToken("matrix.csv", "id,text\n1,hello\n2,world\n")
	id := env.launch(env.demo().launchForm("1", "10"))
	f.run = env.waitRun(id, 60*time.Second)
	id2 := env.launch(env.demo().launchForm("1", "10"))
	f.other = env.waitRun(id2, 60*time.Second)
	bs, err := env.db.ListBatches(ctx, f.run.ID)
	if err != nil || len(bs) == 0 {
		t.Fatalf("batches: %v (%d)", err, len(bs))
	}
	f.batchID = bs[0].ID
	rows, err := env.db.ListDatasetRows(ctx, f.run.DatasetID, 0, 1)
	if err != nil || len(rows) == 0 {
		t.Fatalf("rows: %v", err)
	}
	f.rowID = rows[0].ID
	if f.dataset, err = env.db.FindDataset(ctx, env.ws.ID, f.run.DatasetID); err != nil {
		t.Fatal(err)
	}
	if f.rubric, err = env.db.FindRubric(ctx, env.ws.ID, *f.run.RubricID); err != nil {
		t.Fatal(err)
	}
	f.judge = env.simulatedJudge()
	f.experiment = models.Experiment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, DatasetID: f.dataset.ID, Name: "matrix"}
	if err := env.db.CreateExperiment(ctx, &f.experiment); err != nil {
		t.Fatal(err)
	}
	if err := env.db.SetRunExperiment(ctx, env.ws.ID, f.run.ID, f.experiment.ID); err != nil {
		t.Fatal(err)
	}
	f.viewer = env.createUser(env.ws.ID, "viewer@a.test", models.RoleViewer)
	f.reviewer = env.createUser(env.ws.ID, "reviewer@a.test", models.RoleReviewer)
	f.editor = env.createUser(env.ws.ID, "editor@a.test", models.RoleEditor)
	f.owner = env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
	f.target = env.createUser(env.ws.ID, "target@a.test", models.RoleEditor)
	// The outsider owns workspace B, with its own project, and is no member of A.
	f.outsider = env.createUser(env.ws.ID, "outsider@b.test", models.RoleViewer)
	if f.workspaceB, err = env.db.CreateWorkspace(ctx, "B", f.outsider.ID); err != nil {
		t.Fatal(err)
	}
	// A bare delete, not RemoveMember: never a member of A, so A's
	// addresses answer "not found", where a removal's record would make
	// them say "you were removed from A" (removalRefusal).
	if err := env.db.Gorm.WithContext(ctx).Exec("DELETE FROM memberships WHERE workspace_id = ? AND user_id = ?", env.ws.ID, f.outsider.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := env.db.CreateProject(ctx, &models.Project{WorkspaceID: f.workspaceB.ID, Name: "B's project",
		CreatedAt: time.Now(), UpdatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if f.invite, _, err = env.db.CreateInvite(ctx, env.ws.ID, models.RoleViewer, f.owner.ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	f.tokens = map[int64]string{}
	for _, u := range []models.User{f.viewer, f.reviewer, f.editor, f.owner} {
		_, f.tokens[u.ID] = env.apiToken(env.ws.ID, u.ID)
	}
	_, f.tokens[f.outsider.ID] = env.apiToken(f.workspaceB.ID, f.outsider.ID)
	var old models.APIToken
	old, f.revoked = env.apiToken(env.ws.ID, f.owner.ID)
	if _, err := env.db.RevokeAPIToken(ctx, env.ws.ID, f.owner.ID, old.ID); err != nil {
		t.Fatal(err)
	}
	f.targetToken, _ = env.apiToken(env.ws.ID, f.target.ID)
	if _, f.readOnly, err = env.db.CreateScopedAPIToken(ctx, env.ws.ID, f.owner.ID, "read-only", 0, models.TokenScopeRead); err != nil {
		t.Fatal(err)
	}

	spare := f.rubric
	spare.ID, spare.Name = 0, "spare rubric"
	if err := env.db.SaveRubric(ctx, &spare); err != nil {
		t.Fatal(err)
	}
	if f.trashEntry, _, err = env.db.Trash(ctx, env.ws.ID, models.KindRubric, spare.ID, models.Actor{Label: "test"}); err != nil {
		t.Fatal(err)
	}
	if f.share, _, err = env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: f.run.ID}); err != nil {
		t.Fatal(err)
	}
	f.alignment = models.Alignment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, RubricID: f.rubric.ID, SourceRunID: f.run.ID,
		BaseVersion: 1, CalibrationRowIDs: []int64{f.rowID}, HeldOutRowIDs: []int64{}, DraftSource: "template"}
	if err := env.db.CreateAlignment(ctx, &f.alignment); err != nil {
		t.Fatal(err)
	}
	return f
}

// apiToken makes an API token of a member.
func (env *testEnv) apiToken(wsID, userID int64) (models.APIToken, string) {
	env.t.Helper()
	t, secret, err := env.db.CreateAPIToken(context.Background(), wsID, userID, "matrix")
	if err != nil {
		env.t.Fatal(err)
	}
	return t, secret
}

// request builds the request of a route against workspace A's objects, and
// says whether it names one of A's objects (so an outsider must get 404).
func (f *matrixFixture) request(method, path string) (*http.Request, bool) {
	env := f.env
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	objectOfA := strings.Contains(path, ":id") || strings.Contains(path, "ID")
	// API paths name the same objects as the pages they mirror.
	apiPath := strings.HasPrefix(path, "/api/v1/")
	prefix := ""
	if apiPath {
		prefix, path = "/api/v1", strings.TrimPrefix(path, "/api/v1")
	}
	var ids []string
	switch {
	case strings.HasPrefix(path, "/projects/:id"):
		ids = []string{":id", i(env.project.ID)}
	case strings.HasPrefix(path, "/datasets/"):
		ids = []string{":id", i(f.dataset.ID)}
	case strings.HasPrefix(path, "/rubrics/"):
		ids = []string{":id", i(f.rubric.ID)}
	case strings.HasPrefix(path, "/judges/"):
		ids = []string{":id", i(f.judge.ID)}
	case strings.HasPrefix(path, "/runs/"):
		ids = []string{":id", i(f.run.ID), ":rowID", i(f.rowID), ":batchID", i(f.batchID)}
	case strings.HasPrefix(path, "/experiments/"):
		ids = []string{":id", i(f.experiment.ID)}
	case strings.HasPrefix(path, "/tokens/"):
		ids = []string{":id", i(f.targetToken.ID)}
	case strings.HasPrefix(path, "/trash/"):
		ids = []string{":id", i(f.trashEntry.ID)}
	case strings.HasPrefix(path, "/members/invites/"):
		ids = []string{":id", i(f.invite.ID)}
	case strings.HasPrefix(path, "/members/"):
		ids = []string{":id", i(f.target.ID)}
	case strings.HasPrefix(path, "/shares/"):
		ids = []string{":id", i(f.share.ID)}
	case strings.HasPrefix(path, "/alignments/"):
		ids = []string{":id", i(f.alignment.ID)}
	case strings.HasPrefix(path, "/s/"):
		// An unknown token: share_test.go walks real links.
		ids = []string{":rowID", i(f.rowID)}
	}
	ids = append(ids, ":token", "no-such-link-token", ":name", "app.css", ":version", "1")
	target := prefix + strings.NewReplacer(ids...).Replace(path)
	form := url.Values{}
	switch path {
	case "/compare":
		target += "?a=" + i(f.run.ID) + "&b=" + i(f.other.ID)
		objectOfA = true
	case "/compare/sample":
		target += "?a=" + i(f.run.ID) + "&b=" + i(f.other.ID) + "&row=" + i(f.rowID)
		objectOfA = true
	case "/shares":
		if method == http.MethodPost {
			form.Set("kind", string(models.ShareRun))
			form.Set("run_id", i(f.run.ID))
			objectOfA = true
		}
	case "/projects/:id/datasets/map":
		if method == http.MethodGet {
			target += "?token=" + f.upload
		}
	case "/account/workspace":
		form.Set("workspace_id", i(env.ws.ID))
		objectOfA = true
	}
	var req *http.Request
	if apiPath && path == "/shares" && method == http.MethodPost {
		// The API takes JSON: a link to A's run.
		req = httptest.NewRequest(method, target, strings.NewReader(`{"kind":"run","run_id":`+i(f.run.ID)+`}`))
		req.Header.Set("Content-Type", "application/json")
		return req, true
	}
	switch {
	case apiPath && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch):
		// The API takes the media type its document lists (415 otherwise):
		// an empty JSON object, or an empty multipart body to the upload.
		req = httptest.NewRequest(method, target, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		if strings.HasSuffix(path, "/uploads") {
			req = httptest.NewRequest(method, target, strings.NewReader("--x--\r\n"))
			req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
		}
	case method == http.MethodPost || method == http.MethodPut:
		req = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	default:
		req = httptest.NewRequest(method, target, nil)
	}
	return req, objectOfA
}

// caller is one column of the matrix.
type caller struct {
	name string
	user *models.User // nil: anonymous
	role models.Role  // role in workspace A ("" for anonymous and the outsider)
	// revoked calls the API with a revoked token (other routes skipped).
	revoked bool
	// readOnly calls the API with a read-only token of user (other routes
	// skipped); role is then a viewer's, what such a token may do.
	readOnly string
}

// TestRouteMatrix walks every registered route as anonymous, viewer,
// reviewer, editor and owner of workspace A, and as the owner of workspace B,
// against A's objects, on SQLite and PostgreSQL. API routes are called
// with each person's API token (B's owner holds a token of B), and once
// more with a revoked token, which must get 401.
func TestRouteMatrix(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		// Every registered route is in the table and in the reviewed list.
		table := map[string]Access{}
		for _, r := range env.h.routes() {
			table[r.Method+" "+r.Path] = r.Access
		}
		var registered []string
		for _, r := range env.e.Routes() {
			key := r.Method + " " + r.Path
			registered = append(registered, key)
			if _, ok := table[key]; !ok {
				t.Errorf("route %s is registered outside the route table: add it to routes() with its rule", key)
			}
			want, ok := wantAccess[key]
			if !ok {
				t.Errorf("route %s has no reviewed rule in wantAccess: decide who may call it", key)
			} else if table[key] != want {
				t.Errorf("route %s declares %s, reviewed rule is %s", key, table[key], want)
			}
		}
		for key := range wantAccess {
			if _, ok := table[key]; !ok {
				t.Errorf("wantAccess lists %s, which is not registered", key)
			}
		}
		sort.Strings(registered)

		f := newMatrixFixture(t, env)
		walkAsShareVisitor(t, f, registered, table)
		callers := []caller{
			{name: "anonymous"},
			{name: "revoked token", revoked: true},
			{name: "outsider", user: &f.outsider},
			// The owner's read-only token may do what a viewer may.
			{name: "owner's read-only token", user: &f.owner, role: models.RoleViewer, readOnly: f.readOnly},
			{name: "viewer", user: &f.viewer, role: models.RoleViewer},
			{name: "reviewer", user: &f.reviewer, role: models.RoleReviewer},
			{name: "editor", user: &f.editor, role: models.RoleEditor},
			// Last: the owner's posts change members and invites.
			{name: "owner", user: &f.owner, role: models.RoleOwner},
		}
		for _, cl := range callers {
			for _, key := range registered {
				method, path, _ := strings.Cut(key, " ")
				access := table[key]
				req, objectOfA := f.request(method, path)
				api := strings.HasPrefix(path, "/api/")
				switch {
				case cl.revoked:
					if !api || access == Public {
						continue
					}
					req.Header.Set("Authorization", "Bearer "+f.revoked)
				case cl.readOnly != "":
					if !api || access == Public {
						continue
					}
					req.Header.Set("Authorization", "Bearer "+cl.readOnly)
				case cl.user != nil && api:
					// The API takes tokens, not session cookies.
					req.Header.Set("Authorization", "Bearer "+f.tokens[cl.user.ID])
				case cl.user != nil:
					// As stored now: "sign out my other sessions" moved
					// the account's session epoch.
					req.AddCookie(env.sessionCookie(mustUser(t, env, cl.user.ID)))
				}
				rec := serveWalk(req.Context(), env.e, req)
				got, body := rec.Code, rec.Body.String()
				denied := strings.Contains(body, "Sign in first.") || strings.Contains(body, "does not allow this") ||
					strings.Contains(body, "not a member of any workspace")
				fail := func(want string) {
					t.Errorf("%s as %s: got %d, want %s (body %.200q)", key, cl.name, got, want, body)
				}
				switch {
				case got >= 500:
					fail("no server error")
				case access == Scraper:
					// Every workspace's figures: no session or API token
					// opens them, and these requests come from afar with
					// no metrics token (metrics_test.go tests the token).
					if got != http.StatusForbidden {
						fail("403 (metrics from another machine, no token set)")
					}
				case access == Shared:
					// No session opens a share route: only its token, and
					// this one is unknown.
					if got != http.StatusNotFound || denied {
						fail("404 (unknown share link)")
					}
				case cl.revoked:
					if got != http.StatusUnauthorized || !strings.Contains(body, "not valid") {
						fail("401 (a revoked token)")
					}
				case access == Public:
					if denied || got == http.StatusForbidden {
						fail("a public route to answer anyone")
					}
				case cl.user == nil:
					if got != http.StatusUnauthorized || !denied {
						fail("401")
					}
				case cl.role == "" && access != SignedIn:
					// The outsider is owner of B: every rule passes, and
					// every object of A must be out of reach.
					if objectOfA && got != http.StatusNotFound {
						fail("404 (an object of another workspace)")
					}
					if !objectOfA && denied {
						fail("allowed in their own workspace")
					}
				case cl.role == "" && access == SignedIn:
					if objectOfA && got != http.StatusNotFound {
						fail("404 (not a member of A)")
					}
				case cl.readOnly != "" && key == "POST /api/v1/tokens/:id/revoke":
					// A read-only token revokes only itself, and this is
					// another member's token (readonly_token_revoke_test.go).
					if got != http.StatusForbidden || !strings.Contains(body, "read-only") {
						fail("403 (a read-only token revokes only itself)")
					}
				case !cl.role.AtLeast(access.role()):
					if got != http.StatusForbidden || !denied {
						fail("403")
					}
				default:
					if denied || got == http.StatusUnauthorized || got == http.StatusForbidden {
						fail("allowed")
					}
					// A page the role may read opens: a handler's own check
					// that refused a role its rule allows would otherwise
					// pass as "not refused" with a 404.
					if method == http.MethodGet && got >= 400 {
						fail("the page (below 400)")
					}
				}
			}
		}
	})
}

// TestAnonymousPageRedirectsToSignIn: a browser asking for a page is sent
// to the sign-in page with the way back.
func TestAnonymousPageRedirectsToSignIn(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		env.createUser(env.ws.ID, "someone@a.test", models.RoleOwner)
		req := httptest.NewRequest(http.MethodGet, fmt.Sprintf("/projects/%d", env.project.ID), nil)
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		want := "/login?next=" + url.QueryEscape(fmt.Sprintf("/projects/%d", env.project.ID))
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != want {
			t.Errorf("got %d to %q, want 303 to %q", rec.Code, rec.Header().Get("Location"), want)
		}
	})
}

// walkAsShareVisitor walks every route as the visitor of a share link to
// run A (a browser with the link and no session): the link's own routes
// show run A and never run B; every other route is closed to it.
func walkAsShareVisitor(t *testing.T, f *matrixFixture, registered []string, table map[string]Access) {
	t.Helper()
	ctx := context.Background()
	env := f.env
	for id, name := range map[int64]string{f.run.ID: "Matrix run A", f.other.ID: "Matrix run B"} {
		if err := env.db.Gorm.Model(&models.Run{}).Where("id = ?", id).Update("name", name).Error; err != nil {
			t.Fatal(err)
		}
	}
	_, token, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: env.ws.ID, Kind: models.ShareRun, RunID: f.run.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range registered {
		method, path, _ := strings.Cut(key, " ")
		access := table[key]
		req, _ := f.request(method, path)
		req.URL.Path = strings.Replace(req.URL.Path, "no-such-link-token", token, 1)
		rec := httptest.NewRecorder()
		env.e.ServeHTTP(rec, req)
		got, body := rec.Code, rec.Body.String()
		switch access {
		case Public:
		case Scraper:
			if got != http.StatusForbidden {
				t.Errorf("%s as run A's share visitor: got %d, want 403", key, got)
			}
		case Shared:
			if got != http.StatusOK || strings.Contains(body, "Matrix run B") {
				t.Errorf("%s as run A's share visitor: got %d (shows run B: %v), want 200 with run A only", key, got, strings.Contains(body, "Matrix run B"))
			}
			if !strings.HasSuffix(path, "report.html") && !strings.Contains(body, "Matrix run A") {
				t.Errorf("%s as run A's share visitor: run A not shown", key)
			}
		default:
			if got != http.StatusUnauthorized {
				t.Errorf("%s as run A's share visitor: got %d, want 401", key, got)
			}
		}
	}
}

// TestRouteWithoutRuleIsClosed: a route whose rule was left out (the zero
// Access) or is unknown refuses every caller, the local owner and a
// signed-in owner included, instead of acting as "signed in": the
// route-matrix test names such a route, and until then it stays shut.
func TestRouteWithoutRuleIsClosed(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		reached := false
		handler := func(c echo.Context) error { reached = true; return c.String(http.StatusOK, "reached") }
		env.e.GET("/test-no-rule", handler, env.h.require(Access(0)))
		env.e.GET("/test-unknown-rule", handler, env.h.require(Access(99)))
		owner := models.User{}
		for _, path := range []string{"/test-no-rule", "/test-unknown-rule"} {
			if rec := env.get(path); rec.Code != http.StatusForbidden || reached {
				t.Errorf("%s as the local owner: %d (handler reached: %v), want 403", path, rec.Code, reached)
			}
			if owner.ID == 0 {
				owner = env.createUser(env.ws.ID, "owner@a.test", models.RoleOwner)
			}
			if rec := env.send(http.MethodGet, path, nil, "", env.sessionCookie(owner)); rec.Code != http.StatusForbidden || reached {
				t.Errorf("%s as a signed-in owner: %d (handler reached: %v), want 403", path, rec.Code, reached)
			}
		}
	})
}
