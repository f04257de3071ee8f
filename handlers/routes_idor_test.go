package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"gorm.io/gorm"

	"github.com/batcheval/batcheval/evaluator"
	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/models/demo"
)

// noForeignID lists the routes that name no object of a workspace, with
// why; every other route is walked by TestRoutesRefuseAnotherWorkspacesIDs.
// A route added to the table fails that test until it has an attack below
// or a reason here.
var noForeignID = map[string]string{
	"GET /healthz":                  "public probe, no object",
	"GET /readyz":                   "public probe, no object",
	"GET /static/:name":             "the site's own files",
	"GET /favicon.ico":              "the site's own file",
	"POST /theme":                   "a cookie of the browser",
	"GET /metrics":                  "the scraper's, every workspace by design (metrics_test.go)",
	"GET /login":                    "public",
	"POST /login":                   "public",
	"GET /forgot":                   "public, no object",
	"POST /forgot":                  "public, an address typed; answers the same for every one (forgot_test.go)",
	"POST /logout":                  "the caller's own session",
	"GET /setup":                    "public, closed once an account exists",
	"POST /setup":                   "public, closed once an account exists",
	"GET /invites/:token":           "the token is the capability (invite tests)",
	"POST /invites/:token":          "the token is the capability (invite tests)",
	"GET /reset/:token":             "the token is the capability (reset tests)",
	"POST /reset/:token":            "the token is the capability (reset tests)",
	"GET /confirm/:token":           "the mailed token is the capability (mail tests)",
	"POST /confirm/:token":          "the mailed token is the capability (mail tests)",
	"POST /account/confirm":         "the caller's own address",
	"GET /account":                  "the caller's own account",
	"POST /account/password":        "the caller's own account",
	"POST /account/name":            "the caller's own account",
	"POST /account/sessions":        "the caller's own sessions",
	"POST /workspaces":              "creates a workspace of the caller's",
	"GET /members":                  "the current workspace's members",
	"POST /members/invites":         "makes an invite to the current workspace",
	"GET /audit":                    "the current workspace's log",
	"GET /":                         "the current workspace's projects",
	"GET /projects":                 "a redirect to the home page's list, names no object",
	"POST /guide":                   "a setting of the caller's",
	"POST /projects":                "creates a project in the current workspace",
	"GET /judges":                   "the current workspace's judges",
	"GET /judges/new":               "an empty form",
	"POST /judges":                  "creates a judge in the current workspace",
	"GET /tokens":                   "the caller's own tokens",
	"POST /tokens":                  "makes a token of the caller's",
	"GET /api/v1/openapi.json":      "public description",
	"GET /api/v1/projects":          "the current workspace's projects",
	"POST /api/v1/projects":         "creates a project in the current workspace",
	"GET /api/v1/judges":            "the current workspace's judges",
	"POST /api/v1/judges":           "creates a judge in the current workspace",
	"GET /api/v1/shares":            "the current workspace's links",
	"GET /api/v1/tokens":            "the caller's own tokens",
	"GET /api/v1/account":           "the caller's own account (api_account_test.go: no other member's data)",
	"PATCH /api/v1/account":         "renames the caller's own account only",
	"GET /trash":                    "the current workspace's trash",
	"GET /settings/webhook":         "the current workspace's webhook",
	"POST /settings/webhook":        "the current workspace's webhook",
	"POST /settings/webhook/remove": "the current workspace's webhook",
	"POST /settings/webhook/test":   "the current workspace's webhook",
	"GET /s/:token":                 "the token is the capability: the route matrix walks an unknown one",
	"GET /s/:token/report.html":     "the token is the capability: the route matrix walks an unknown one",
}

// foreignAttack is one request of workspace B's owner naming an object of
// workspace A.
type foreignAttack struct {
	route  string // "METHOD /path" as registered
	target string // the address sent
	form   url.Values
	json   string
	share  bool // sent with no session, as the visitor of B's share link
	// shown: the route may ignore the foreign id and answer (a page of B
	// prefilled with nothing of A's); field: a form or JSON field naming
	// the object, refused as one that does not exist (422 naming the
	// field, as for an id that exists nowhere); otherwise it must answer
	// 404.
	shown, field bool
}

// wsAMark is in the name of every object of workspace A: no answer to B's
// owner may carry it.
const wsAMark = "OnlyInWorkspaceA"

// TestRoutesRefuseAnotherWorkspacesIDs walks every registered route as the
// owner of workspace B (their session for pages, their API token for the
// API, their share link for the share pages) with the ids of workspace A's
// objects: in the address (alone, and nested under B's own objects), in
// the query and in form and JSON bodies next to B's own ids. Each must
// answer 404 (or, for a page that only prefills a choice, show nothing of
// A), and nothing of A's may appear in any answer. Routes that name no
// object are listed in noForeignID with the reason.
func TestRoutesRefuseAnotherWorkspacesIDs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		i := func(n int64) string { return strconv.FormatInt(n, 10) }
		// A's pending upload, made while the server is in local mode.
		uploadA := env.uploadToken("a.csv", "id,text\n1,hello\n2,world\n")
		f := newMatrixFixture(t, env)
		alignA := models.Alignment{WorkspaceID: env.ws.ID, ProjectID: env.project.ID, RubricID: f.rubric.ID, SourceRunID: f.run.ID,
			BaseVersion: 1, CalibrationRowIDs: []int64{f.rowID}, HeldOutRowIDs: []int64{}, DraftSource: "template"}
		must(t, env.db.CreateAlignment(ctx, &alignA))
		for _, tbl := range []string{"runs", "datasets", "rubrics", "judges", "experiments", "projects"} {
			must(t, env.db.Gorm.Table(tbl).Where("workspace_id = ?", env.ws.ID).Update("name", gorm.Expr("name || ?", " "+wsAMark)).Error)
		}

		// B: the demo project, two finished runs, an experiment, an
		// alignment, a share link, as its owner (the outsider) has them.
		wsB := f.workspaceB
		projB, err := demo.Seed(ctx, env.db, wsB)
		must(t, err)
		dsBs, err := env.db.ListDatasets(ctx, wsB.ID, projB.ID)
		must(t, err)
		rubBs, err := env.db.ListRubrics(ctx, wsB.ID, projB.ID)
		must(t, err)
		judgeB, err := env.db.EnsureSimulatedJudge(ctx, wsB.ID)
		must(t, err)
		dB := demoChoices{dataset: dsBs[0], rubric: rubBs[0], judge: judgeB}
		var runsB [2]models.Run
		for k := range runsB {
			s := evaluator.DefaultSettings()
			s.Rounds = 1
			r := models.Run{WorkspaceID: wsB.ID, ProjectID: projB.ID, DatasetID: dB.dataset.ID, RubricID: &dB.rubric.ID, JudgeID: &judgeB.ID,
				Name: "B run", Method: models.MethodBatchEval, Settings: s, RubricSnapshot: dB.rubric.Evaluator(), JudgeSnapshot: judgeB.Snapshot(), Simulated: true}
			must(t, env.runner.Launch(ctx, &r))
			runsB[k] = env.waitRun(r.ID, 60*time.Second)
		}
		runB := runsB[0]
		_, shareB, err := env.db.CreateShareLink(ctx, models.NewShareLink{WorkspaceID: wsB.ID, Kind: models.ShareRun, RunID: runB.ID})
		must(t, err)
		alignB := models.Alignment{WorkspaceID: wsB.ID, ProjectID: projB.ID, RubricID: dB.rubric.ID, SourceRunID: runB.ID, BaseVersion: 1, CalibrationRowIDs: []int64{}, HeldOutRowIDs: []int64{}, DraftSource: "template"}
		must(t, env.db.CreateAlignment(ctx, &alignB))

		launchB := dB.launchForm("1", "10")
		with := func(base url.Values, kv ...string) url.Values {
			v := url.Values{}
			for k, vs := range base {
				v[k] = append([]string(nil), vs...)
			}
			for n := 0; n < len(kv); n += 2 {
				v.Set(kv[n], kv[n+1])
			}
			return v
		}
		launchJSON := func(ds, rub, judge int64) string {
			return `{"dataset_id":` + i(ds) + `,"rubric_id":` + i(rub) + `,"judge_id":` + i(judge) + `,"settings":{"rounds":1,"batch_size":10}}`
		}
		review := func(run, row int64) url.Values {
			return url.Values{"run": {i(run)}, "row": {i(row)}, "criterion": {dB.rubric.Criteria[0].Name}, "score": {"2"}}
		}
		reviewJSON := func(run, row int64) string {
			return `{"run_id":` + i(run) + `,"row_id":` + i(row) + `,"criterion":` + strconv.Quote(dB.rubric.Criteria[0].Name) + `,"rating":2}`
		}
		rowB := func() int64 {
			rows, err := env.db.ListDatasetRows(ctx, dB.dataset.ID, 0, 1)
			must(t, err)
			return rows[0].ID
		}()
		pB, dsB, rB := i(projB.ID), i(dB.dataset.ID), i(runB.ID)

		// Attacks on top of the ones built from the address alone.
		extra := []foreignAttack{
			// Ids nested under B's own objects.
			{route: "GET /runs/:id/samples/:rowID", target: "/runs/" + rB + "/samples/" + i(f.rowID)},
			{route: "GET /runs/:id/batches/:batchID", target: "/runs/" + rB + "/batches/" + i(f.batchID)},
			{route: "GET /s/:token/samples/:rowID", target: "/s/" + shareB + "/samples/" + i(f.rowID), share: true},
			// A's objects in the query.
			{route: "GET /compare", target: "/compare?a=" + rB + "&b=" + i(f.run.ID)},
			{route: "GET /compare/sample", target: "/compare/sample?a=" + rB + "&b=" + i(runsB[1].ID) + "&row=" + i(f.rowID)},
			{route: "GET /compare/sample", target: "/compare/sample?a=" + i(f.run.ID) + "&b=" + rB + "&row=" + i(rowB)},
			{route: "GET /api/v1/compare", target: "/api/v1/compare?a=" + rB + "&b=" + i(f.run.ID)},
			{route: "GET /api/v1/runs", target: "/api/v1/runs?project_id=" + i(env.project.ID)},
			{route: "GET /api/v1/experiments", target: "/api/v1/experiments?project_id=" + i(env.project.ID)},
			{route: "GET /runs", target: "/runs?dataset=" + i(f.dataset.ID), shown: true},
			{route: "GET /datasets/:id/review", target: "/datasets/" + dsB + "/review?run=" + i(f.run.ID), shown: true},
			{route: "GET /projects/:id/runs/new", target: "/projects/" + pB + "/runs/new?dataset=" + i(f.dataset.ID) + "&rubric=" + i(f.rubric.ID) + "&judge=" + i(f.judge.ID), shown: true},
			{route: "GET /projects/:id/datasets/map", target: "/projects/" + pB + "/datasets/map?token=" + uploadA},
			{route: "GET /shares", target: "/shares?kind=run&run=" + i(f.run.ID), shown: true},
			{route: "GET /shares", target: "/shares?kind=experiment&experiment=" + i(f.experiment.ID), shown: true},
			// A's objects in forms, next to B's own.
			{route: "POST /projects/:id/runs", target: "/projects/" + pB + "/runs", form: with(launchB, "dataset", i(f.dataset.ID)), field: true},
			{route: "POST /projects/:id/runs", target: "/projects/" + pB + "/runs", form: with(launchB, "rubric", i(f.rubric.ID), "criteria_of", i(f.rubric.ID)), field: true},
			{route: "POST /projects/:id/runs", target: "/projects/" + pB + "/runs", form: with(launchB, "judge", i(f.judge.ID)), field: true},
			{route: "POST /projects/:id/experiments", target: "/projects/" + pB + "/experiments", form: with(launchB, "dataset", i(f.dataset.ID)), field: true},
			{route: "POST /projects/:id/runs/geval-steps", target: "/projects/" + pB + "/runs/geval-steps", form: with(launchB, "judge", i(f.judge.ID)), field: true},
			{route: "POST /runs/estimate", target: "/runs/estimate", form: with(launchB, "project_id", i(env.project.ID), "dataset", i(f.dataset.ID))},
			{route: "POST /runs/estimate", target: "/runs/estimate", form: with(launchB, "project_id", pB, "dataset", i(f.dataset.ID)), shown: true},
			{route: "POST /projects/:id/datasets/map", target: "/projects/" + pB + "/datasets/map", form: url.Values{"token": {uploadA}, "name": {"x"}}},
			{route: "POST /datasets/:id/review", target: "/datasets/" + dsB + "/review", form: review(f.run.ID, rowB)},
			{route: "POST /datasets/:id/review", target: "/datasets/" + dsB + "/review", form: review(runB.ID, f.rowID)},
			{route: "POST /rubrics/preview", target: "/rubrics/preview", form: url.Values{"rubric_id": {i(f.rubric.ID)}}},
			{route: "POST /shares", target: "/shares", form: url.Values{"kind": {"compare"}, "run_id": {rB}, "other_run_id": {i(f.run.ID)}}},
			{route: "POST /shares", target: "/shares", form: url.Values{"kind": {"experiment"}, "experiment_id": {i(f.experiment.ID)}}},
			{route: "POST /account/workspace", target: "/account/workspace", form: url.Values{"workspace_id": {i(env.ws.ID)}}},
			{route: "POST /api/v1/projects/:id/runs", target: "/api/v1/projects/" + pB + "/runs", json: launchJSON(f.dataset.ID, dB.rubric.ID, judgeB.ID), field: true},
			{route: "POST /api/v1/projects/:id/runs", target: "/api/v1/projects/" + pB + "/runs", json: launchJSON(dB.dataset.ID, f.rubric.ID, judgeB.ID), field: true},
			{route: "POST /api/v1/projects/:id/runs", target: "/api/v1/projects/" + pB + "/runs", json: launchJSON(dB.dataset.ID, dB.rubric.ID, f.judge.ID), field: true},
			{route: "POST /api/v1/projects/:id/experiments", target: "/api/v1/projects/" + pB + "/experiments", json: launchJSON(f.dataset.ID, dB.rubric.ID, judgeB.ID), field: true},
			{route: "POST /api/v1/projects/:id/datasets", target: "/api/v1/projects/" + pB + "/datasets", json: `{"upload_token":"` + uploadA + `","name":"x"}`},
			{route: "POST /api/v1/datasets/:id/reviews", target: "/api/v1/datasets/" + dsB + "/reviews", json: reviewJSON(f.run.ID, rowB)},
			{route: "POST /api/v1/datasets/:id/reviews", target: "/api/v1/datasets/" + dsB + "/reviews", json: reviewJSON(runB.ID, f.rowID)},
			{route: "POST /api/v1/shares", target: "/api/v1/shares", json: `{"kind":"run","run_id":` + i(f.run.ID) + `}`},
			{route: "POST /api/v1/shares", target: "/api/v1/shares", json: `{"kind":"compare","run_id":` + rB + `,"other_run_id":` + i(f.run.ID) + `}`},
			{route: "POST /api/v1/shares", target: "/api/v1/shares", json: `{"kind":"experiment","experiment_id":` + i(f.experiment.ID) + `}`},
		}

		// The attacks built from the address: every :id is A's object.
		var attacks []foreignAttack
		covered := map[string]bool{}
		for _, r := range env.e.Routes() {
			key := r.Method + " " + r.Path
			if _, ok := noForeignID[key]; ok {
				covered[key] = true
				continue
			}
			if !strings.Contains(r.Path, ":id") {
				continue
			}
			req, objectOfA := f.request(r.Method, r.Path)
			if !objectOfA {
				continue
			}
			target := req.URL.RequestURI()
			switch {
			case strings.Contains(r.Path, "/alignments/:id"):
				target = strings.Replace(r.Path, ":id", i(alignA.ID), 1)
			case strings.HasSuffix(r.Path, ":version"):
				target = strings.Replace(target, ":version", "1", 1)
			}
			a := foreignAttack{route: key, target: target}
			if r.Method != http.MethodGet {
				if strings.HasPrefix(r.Path, "/api/") {
					a.json = "{}"
				} else {
					a.form = url.Values{}
				}
			}
			attacks = append(attacks, a)
		}
		attacks = append(attacks, extra...)
		for _, a := range attacks {
			covered[a.route] = true
		}
		for _, r := range env.e.Routes() {
			if key := r.Method + " " + r.Path; !covered[key] {
				t.Errorf("route %s is walked with no id of another workspace: add an attack to TestRoutesRefuseAnotherWorkspacesIDs or a reason to noForeignID", key)
			}
		}

		session := env.sessionCookie(mustUser(t, env, f.outsider.ID))
		for _, a := range attacks {
			method, _, _ := strings.Cut(a.route, " ")
			var req *http.Request
			switch {
			case a.json != "" && strings.HasSuffix(a.target, "/uploads"):
				// The upload takes multipart only (415 otherwise, before
				// the project is looked up): an empty one.
				req = httptest.NewRequest(method, a.target, strings.NewReader("--x--\r\n"))
				req.Header.Set(echo.HeaderContentType, "multipart/form-data; boundary=x")
			case a.json != "":
				req = httptest.NewRequest(method, a.target, strings.NewReader(a.json))
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
			case a.form != nil:
				req = httptest.NewRequest(method, a.target, strings.NewReader(a.form.Encode()))
				req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationForm)
			default:
				req = httptest.NewRequest(method, a.target, nil)
			}
			switch {
			case a.share:
			case strings.HasPrefix(a.target, "/api/"):
				req.Header.Set("Authorization", "Bearer "+f.tokens[f.outsider.ID])
			default:
				req.AddCookie(session)
			}
			rec := serveWalk(ctx, env.e, req)
			body := rec.Body.String()
			if strings.Contains(body, wsAMark) {
				t.Errorf("%s %s (as B's owner): the answer shows an object of workspace A: %.300q", method, a.target, body[max(0, strings.Index(body, wsAMark)-200):])
			}
			switch {
			case a.shown:
				if rec.Code >= 500 || rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden {
					t.Errorf("%s %s (as B's owner): %d, want B's page without A's object", method, a.target, rec.Code)
				}
			case a.field:
				if rec.Code != http.StatusNotFound && rec.Code != http.StatusUnprocessableEntity {
					t.Errorf("%s %s (as B's owner, body %s%s): %d, want 404 or 422 (%.200q)", method, a.target, a.form.Encode(), a.json, rec.Code, body)
				}
			case rec.Code != http.StatusNotFound:
				t.Errorf("%s %s (as B's owner, body %s%s): %d, want 404 (%.200q)", method, a.target, a.form.Encode(), a.json, rec.Code, body)
			}
		}
	})
}
