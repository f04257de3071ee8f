package handlers

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"testing"

	"github.com/batcheval/batcheval/models"
	"github.com/batcheval/batcheval/web"
)

// TestAPICompareHasTheAgreementVerdict: the compare page says which run
// agrees better with the humans (Williams' t on Pearson's r, with Zou's
// interval), while the API's comparison had no verdict at all. It now has
// the page's sentence and the paired tests; for two large runs, whose
// tests are computed in the background, it says "pending" with a time to
// ask again, and the verdict once they are done.
func TestAPICompareHasTheAgreementVerdict(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		x := env.demoExperiment()
		api := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@agreement.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		session := env.sessionCookie(owner) // accounts exist: pages need a session
		target := fmt.Sprintf("/api/v1/compare?a=%d&b=%d", x.batchEval.ID, x.gEval.ID)
		pageReading := func() string {
			t.Helper()
			m := regexp.MustCompile(`data-testid="agreement-reading">([^<]*)<`).FindStringSubmatch(env.getAs(fmt.Sprintf("/compare?a=%d&b=%d", x.batchEval.ID, x.gEval.ID), session).Body.String())
			if m == nil {
				t.Fatal("the compare page has no agreement reading")
			}
			return html.UnescapeString(m[1])
		}
		computed := func(got APIAgreement) {
			t.Helper()
			if got.Status != AgreementComputed || got.Reading == nil || got.RetryAfterSeconds != nil {
				t.Fatalf("agreement %+v, want computed with a reading", got)
			}
			if want := pageReading(); *got.Reading != want {
				t.Errorf("API reading %q\nthe page's %q", *got.Reading, want)
			}
			if len(got.Differences) != 3 || got.Differences[0].Method != "pearson" || len(got.Differences[0].Tests) == 0 ||
				got.Differences[0].Tests[0].Name != "Williams' t" || got.Differences[0].Tests[0].P == nil || got.Differences[0].N == 0 {
				t.Errorf("differences %+v, want pearson first with Williams' t and its p", got.Differences)
			}
		}

		// Small runs: computed in the request.
		computed(decode[APIComparison](t, api.get(target, tok), http.StatusOK).Agreement)

		// Large runs: computed in the background; the answer says so and
		// when to ask again, then gives the verdict.
		env.h.pairLiveSamples = 1
		env.h.reports = newReportCache()
		got := decode[APIComparison](t, api.get(target, tok), http.StatusOK).Agreement
		if got.Status != AgreementPending || got.Reading != nil || got.RetryAfterSeconds == nil || *got.RetryAfterSeconds < 1 || len(got.Differences) != 0 {
			t.Fatalf("agreement while computing %+v, want pending with retry_after_seconds and no reading", got)
		}
		env.h.reports.settling.Wait()
		computed(decode[APIComparison](t, api.get(target, tok), http.StatusOK).Agreement)
	})
}

// TestAPIAgreementWithoutAVerdict: with no human ratings, or different
// criteria, the API says why there is no verdict in the page's words.
func TestAPIAgreementWithoutAVerdict(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    web.CompareView
		want APIAgreement
	}{
		{"no human ratings", web.CompareView{}, APIAgreement{Status: AgreementNoHumans}},
		{"different criteria", web.CompareView{HasHuman: true, DifferentCriteria: true, AgreementReading: differentCriteriaReading}, APIAgreement{Status: AgreementDifferentCriteria}},
	} {
		got := apiAgreement(tt.v)
		if got.Status != tt.want.Status || got.Reading == nil || *got.Reading == "" || got.RetryAfterSeconds != nil || got.Differences == nil {
			t.Errorf("%s: %+v, want status %s with a reading, no retry, an empty list", tt.name, got, tt.want.Status)
		}
	}
}
