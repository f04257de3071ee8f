package handlers

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// TestComparePairedFiguresSayWhichSamples: when the two runs left
// different samples without a score, each run's card gives its agreement
// with the humans over its own samples while the paired table gives it
// over the samples both runs scored, so the same run showed two different
// coefficients (Pearson r 0.032 over 38 samples on its card, -0.039 over
// 33 in the table) with nothing to say why, under a note that both runs
// "judged the same samples". The page now says over which samples the
// paired figures are, and only when the counts differ.
func TestComparePairedFiguresSayWhichSamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Twelve rated", 12)
		tests := []struct {
			name                     string
			unreadableA, unreadableB int
			want                     string // "" : no note
		}{
			{"different samples missing", 0, 1, "The paired figures are over the 6 samples that both runs scored and the humans rated; " +
				"each run's own agreement on its card above is over its own 7 (A) and 7 (B), so its figure there can differ from the one here."},
			{"the same samples missing", 2, 2, ""},
		}
		for _, tc := range tests {
			a := env.partialRun(d, tc.name+" A", tc.unreadableA, true)
			b := env.partialRun(d, tc.name+" B", tc.unreadableB, true)
			body := html.UnescapeString(env.get(fmt.Sprintf("/compare?a=%d&b=%d", a.ID, b.ID)).Body.String())
			if !strings.Contains(body, `data-testid="agreement-table"`) {
				t.Fatalf("%s: no agreement table: %.3000s", tc.name, body)
			}
			block := testidBlock(body, "paired-note")
			got := strings.TrimSpace(regexp.MustCompile(`\s+`).ReplaceAllString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(block, " "), " "))
			if got != tc.want {
				t.Errorf("%s: paired note %q, want %q", tc.name, got, tc.want)
			}
		}
	})
}

// TestAPIComparePairedSamples: the API's comparison gave only
// differences[].n, with nothing to say that each run's own agreement
// (its report's Pearson r) is over other samples, as the compare page
// says. It now gives the counts (paired_n, a_own_n, b_own_n) and, when
// they differ, the note.
func TestAPIComparePairedSamples(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDataset("Twelve rated", 12)
		api := newAPIClient(t, env)
		owner := env.createUser(env.ws.ID, "owner@paired.test", models.RoleOwner)
		_, tok := env.apiToken(env.ws.ID, owner.ID)
		tests := []struct {
			name                     string
			unreadableA, unreadableB int
			n, nA, nB                int
			note                     string // "": none
		}{
			{"different samples missing", 0, 1, 6, 7, 7, "The differences are over the 6 samples that both runs scored and the humans rated; " +
				"each run's own agreement with the humans (its report's Pearson r, GET /api/v1/runs/{id}/results) is over its own 7 (A) and 7 (B), " +
				"so its figure there can differ from a and b here."},
			{"the same samples missing", 2, 2, 7, 7, 7, ""},
		}
		for _, tc := range tests {
			a := env.partialRun(d, tc.name+" A", tc.unreadableA, true)
			b := env.partialRun(d, tc.name+" B", tc.unreadableB, true)
			got := decode[APIComparison](t, api.get(fmt.Sprintf("/api/v1/compare?a=%d&b=%d", a.ID, b.ID), tok), http.StatusOK).Agreement
			if got.Status != AgreementComputed {
				t.Fatalf("%s: agreement %+v, want computed", tc.name, got)
			}
			if got.PairedN == nil || got.OwnNA == nil || got.OwnNB == nil || *got.PairedN != tc.n || *got.OwnNA != tc.nA || *got.OwnNB != tc.nB {
				t.Errorf("%s: paired_n %v, a_own_n %v, b_own_n %v; want %d, %d, %d", tc.name, intOrNil(got.PairedN), intOrNil(got.OwnNA), intOrNil(got.OwnNB), tc.n, tc.nA, tc.nB)
			}
			if got.PairedN != nil && len(got.Differences) > 0 && got.Differences[0].N != *got.PairedN {
				t.Errorf("%s: paired_n %d, differences[0].n %d", tc.name, *got.PairedN, got.Differences[0].N)
			}
			if got.PairedNote != tc.note {
				t.Errorf("%s: paired_note %q, want %q", tc.name, got.PairedNote, tc.note)
			}
		}
	})
}

func intOrNil(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
