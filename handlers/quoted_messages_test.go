package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// followFlash sends the request a 303 leads to with the cookies it set,
// as a browser does, and returns the page the flash is shown on.
func (env *testEnv) followFlash(rec *httptest.ResponseRecorder) string {
	env.t.Helper()
	if rec.Code != http.StatusSeeOther {
		env.t.Fatalf("status %d, want 303: %s", rec.Code, rec.Body)
	}
	to, _, _ := strings.Cut(rec.Header().Get("Location"), "#") // the fragment stays in the browser
	next := httptest.NewRequest(http.MethodGet, to, nil)
	for _, ck := range rec.Result().Cookies() {
		next.AddCookie(ck)
	}
	page := httptest.NewRecorder()
	env.e.ServeHTTP(page, next)
	return page.Body.String()
}

// TestMessagesQuoteNamesAsTyped (explore43): a name with quotation marks,
// markup and a backslash is quoted in a message as typed, between “ and ”,
// and escaped as HTML by the page only. Before, Go's %q wrote
// Judge "Fake <b>\"judge\"</b> C:\\tmp" saved.: backslashes the person never
// typed, and straight quotes unlike the rest of the product.
func TestMessagesQuoteNamesAsTyped(t *testing.T) {
	const name = `Fake <b>"judge"</b> C:\tmp`
	// What the page shows: the name as typed, escaped as HTML once.
	shown := `“Fake &lt;b&gt;&#34;judge&#34;&lt;/b&gt; C:\tmp”`
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		tests := []struct {
			what string
			// do performs the action and returns its answer: a 303 with a
			// flash, or a page shown again with a form error.
			do   func(t *testing.T) *httptest.ResponseRecorder
			want string // on the page, with shown for the name
		}{
			{"judge saved", func(t *testing.T) *httptest.ResponseRecorder {
				return env.postForm("/judges", judgeFormValues(name, "http://127.0.0.1:9/v1", "", ""))
			}, "Judge " + shown + " saved."},
			{"rubric saved", func(t *testing.T) *httptest.ResponseRecorder {
				f := rubricFormValues("save", "1", "5")
				f.Set("name", name)
				return env.postForm(fmt.Sprintf("/projects/%d/rubrics", env.project.ID), f)
			}, "Rubric " + shown + " saved."},
			{"dataset renamed and made main", func(t *testing.T) *httptest.ResponseRecorder {
				if _, err := env.db.Rename(ctx, env.ws.ID, models.KindDataset, d.dataset.ID, name); err != nil {
					t.Fatal(err)
				}
				return env.postForm(fmt.Sprintf("/datasets/%d/main", d.dataset.ID), url.Values{})
			}, shown + " is now the main dataset"},
			{"launch refused for a typed seed", func(t *testing.T) *httptest.ResponseRecorder {
				f := d.launchForm("1", "10")
				f.Set("seed", name)
				return env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), f)
			}, "Seed: " + shown + " is not a whole number."},
			{"rubric criterion refused", func(t *testing.T) *httptest.ResponseRecorder {
				f := rubricFormValues("save", "1", name)
				return env.postForm(fmt.Sprintf("/projects/%d/rubrics", env.project.ID), f)
			}, "The highest score " + shown + " is not a number"},
		}
		// An alignment of a finished run, for its page's messages.
		src := env.waitRun(env.launch(d.launchForm("2", "10")), 60*time.Second)
		started := env.postForm(fmt.Sprintf("/runs/%d/align", src.ID), url.Values{"criterion": {"0"}, "seed": {"3"}, "held_out_percent": {"50"}})
		if started.Code != http.StatusSeeOther {
			t.Fatalf("start an alignment: %d %.300s", started.Code, started.Body)
		}
		alignment := started.Header().Get("Location")
		aID, _ := strconv.ParseInt(strings.TrimPrefix(alignment, "/alignments/"), 10, 64)
		a, err := env.db.FindAlignment(ctx, env.ws.ID, aID)
		if err != nil {
			t.Fatal(err)
		}
		tests = append(tests, []struct {
			what string
			do   func(t *testing.T) *httptest.ResponseRecorder
			want string
		}{
			{"alignment example's score refused", func(t *testing.T) *httptest.ResponseRecorder {
				f := draftFormValues(a.Draft, "high")
				f["example_score"][0] = name
				return env.postForm(alignment+"/accept", f)
			}, "example 1: score " + shown + " is not a number"},
			{"alignment's held-out place refused", func(t *testing.T) *httptest.ResponseRecorder {
				return env.get(alignment + "?held=" + url.QueryEscape(name))
			}, "held=" + shown + " is not a place in the dataset"},
			{"rubric version not a number", func(t *testing.T) *httptest.ResponseRecorder {
				return env.get(fmt.Sprintf("/rubrics/%d/versions/%s", d.rubric.ID, url.PathEscape(name)))
			}, shown + " is not a version number"},
			// Last: with an account made, the server asks everyone to sign in.
			{"exclude's value refused", func(t *testing.T) *httptest.ResponseRecorder {
				owner := env.createUser(env.ws.ID, "owner@q.test", models.RoleOwner)
				rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 1)
				must(t, err)
				v := 2.0
				_, err = env.db.AddReviewRating(ctx, models.ReviewRating{WorkspaceID: env.ws.ID, DatasetID: d.dataset.ID, RowID: rows[0].ID,
					Criterion: d.rubric.Criteria[0].Name, Reviewer: owner.Email, UserID: &owner.ID, Score: &v, Lo: 1, Hi: 5})
				must(t, err)
				return env.send(http.MethodPost, fmt.Sprintf("/members/%d/ratings", owner.ID), url.Values{"exclude": {name}}, "", env.sessionCookie(owner))
			}, "exclude is 1 (leave the person&#39;s ratings out) or 0 (count them again), not " + shown},
		}...)
		for _, tt := range tests {
			t.Run(tt.what, func(t *testing.T) {
				rec := tt.do(t)
				body := rec.Body.String()
				if rec.Code == http.StatusSeeOther {
					if flash := flashOf(rec); !strings.Contains(flash, "“"+name+"”") {
						t.Errorf("the message does not hold the name as typed: %q", flash)
					}
					body = env.followFlash(rec)
				}
				if !strings.Contains(body, tt.want) {
					i := strings.Index(body, "<main")
					t.Fatalf("the page lacks %s; it shows: %s", tt.want, body[max(i-80, 0):min(max(i, 0)+160, len(body))])
				}
				// No escape the person did not type: \" (escaped &#34;) or \\.
				if strings.Contains(body, `\&#34;`) || strings.Contains(body, `\\`) || strings.Contains(body, "<b>&#34;judge") {
					t.Errorf("the page shows escapes or unescaped markup around the name: %s", tt.want)
				}
			})
		}
	})
}

// TestJudgeTestShowsTheReplyAsWritten (explore43): Test connection shows
// the judge's answer as text, its line breaks kept in a <pre> and its
// markup escaped, on the page a form post leads to and in the fragment for
// scripts; a long answer is cut with a note of how much is shown. Before,
// the answer was Go-quoted into the message: \n and \" written out.
func TestJudgeTestShowsTheReplyAsWritten(t *testing.T) {
	const reply = "Float Scores: [Sample1:4.5]\nThe sample is \"clear\".\n<b>ok</b>"
	// 1,025 characters once its last space is trimmed; cut at 400 it keeps
	// 26+74*5-1 = 395: the whole words before the 400th character.
	long := "Float Scores: [Sample1:4]\n" + strings.Repeat("word ", 200)
	eachDB(t, func(t *testing.T, env *testEnv) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				Model string `json:"model"`
			}
			if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
				http.NotFound(w, r)
				return
			}
			answer := reply
			if req.Model == "long" {
				answer = long
			}
			content, _ := json.Marshal(answer)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"x","object":"chat.completion","model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":60,"completion_tokens":3,"total_tokens":63}}`,
				req.Model, content)
		}))
		defer srv.Close()
		escapedReply := "Float Scores: [Sample1:4.5]\nThe sample is &#34;clear&#34;.\n&lt;b&gt;ok&lt;/b&gt;"
		tests := []struct {
			model, testid string
			fetch         bool
			want          []string
		}{
			{"short", "flash-detail", false, []string{"Its answer:<pre", "<pre class=\"flash-detail\" data-testid=\"flash-detail\">" + escapedReply + "</pre>"}},
			{"short", "judge-reply", true, []string{"Its answer:", "<pre class=\"flash-detail\" data-testid=\"judge-reply\">" + escapedReply + "</pre>"}},
			{"long", "flash-detail", false, []string{"Its answer (cut: the first 395 of its 1,025 characters):", "Float Scores: [Sample1:4]\nword word"}},
			{"long", "judge-reply", true, []string{"Its answer (cut: the first 395 of its 1,025 characters):", "Float Scores: [Sample1:4]\nword word"}},
		}
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s, fetch %v", tt.model, tt.fetch), func(t *testing.T) {
				j := models.Judge{WorkspaceID: env.ws.ID, Name: "Judge " + tt.model, BaseURL: srv.URL + "/v1", Model: tt.model, TimeoutSeconds: 5,
					Temperature: 0.2, TopP: 0.9, MaxConcurrency: 2}
				if err := env.db.SaveJudge(context.Background(), &j); err != nil {
					t.Fatal(err)
				}
				req := httptest.NewRequest(http.MethodPost, fmt.Sprintf("/judges/%d/test", j.ID), nil)
				if tt.fetch {
					req.Header.Set("X-Requested-With", "fetch")
				}
				rec := httptest.NewRecorder()
				env.e.ServeHTTP(rec, req)
				body := rec.Body.String()
				if !tt.fetch {
					body = env.followFlash(rec)
				}
				for _, w := range append(tt.want, "flash ok", "answered in") {
					if !strings.Contains(body, w) {
						t.Errorf("the result lacks %q: %s", w, body)
					}
				}
				i := strings.Index(body, `data-testid="`+tt.testid+`">`)
				if i < 0 {
					t.Fatalf("no answer block %s: %s", tt.testid, body)
				}
				block := body[i : i+strings.Index(body[i:], "</pre>")]
				if strings.Contains(block, `\n`) || strings.Contains(block, `\&#34;`) || strings.Contains(block, "<b>") {
					t.Errorf("the answer is shown escaped as Go text, or unescaped: %s", block)
				}
				if n := len([]rune(html.UnescapeString(block[strings.Index(block, ">")+1:]))); n > maxTestReplyShown {
					t.Errorf("the answer shown has %d characters, more than %d", n, maxTestReplyShown)
				}
			})
		}
	})
}
