package handlers

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestCompareCardsNameTheJudge: a comparison of two runs says which judge
// each used (QA review44: a team comparing two judges read the runs' names,
// method and criterion on the cards, but not the judge; on a shared
// comparison, whose runs are not links, the visitor could not find out at
// all). Members read the model and the judge's name; a share link's visitor
// the model, as a shared run's facts give it.
func TestCompareCardsNameTheJudge(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		a := env.waitRun(env.launch(d.launchForm("1", "10")), 30*time.Second)
		b := env.waitRun(env.launch(d.launchForm("2", "10")), 30*time.Second)
		b.JudgeSnapshot.Model, b.JudgeSnapshot.Name = "gpt-4o-mini", "Team <OpenAI> judge"
		must(t, env.db.Gorm.WithContext(ctx).Model(&models.Run{ID: b.ID}).Select("judge_snapshot").Updates(&b).Error)
		card := func(body, side string) string {
			t.Helper()
			i := strings.Index(body, `data-testid="compare-judge-`+side+`"`)
			if i < 0 {
				t.Fatalf("card %s names no judge:\n%.3000s", side, body)
			}
			line := body[i:]
			return line[:strings.Index(line, "</p>")]
		}
		link := env.createShareVia(url.Values{"kind": {"compare"}, "run_id": {strconv.FormatInt(a.ID, 10)}, "other_run_id": {strconv.FormatInt(b.ID, 10)}, "expires": {"7d"}})
		tests := []struct {
			name     string
			body     string
			wantA    []string
			wantB    []string
			notWantB []string
		}{
			{"member", env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String(),
				[]string{"Judge model " + a.JudgeSnapshot.Model, a.JudgeSnapshot.Name},
				[]string{"Judge model gpt-4o-mini", "(Team &lt;OpenAI&gt; judge)"}, []string{"<OpenAI>"}},
			{"share link", env.getAs(link).Body.String(),
				[]string{"Judge model " + a.JudgeSnapshot.Model},
				[]string{"Judge model gpt-4o-mini"}, []string{"OpenAI"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ca, cb := card(tt.body, "a"), card(tt.body, "b")
				if missing := bodyLacks(ca, tt.wantA...); len(missing) > 0 {
					t.Errorf("card A %q lacks %q", ca, missing)
				}
				if missing := bodyLacks(cb, tt.wantB...); len(missing) > 0 {
					t.Errorf("card B %q lacks %q", cb, missing)
				}
				for _, nw := range tt.notWantB {
					if strings.Contains(cb, nw) {
						t.Errorf("card B %q holds %q", cb, nw)
					}
				}
			})
		}
	})
}
