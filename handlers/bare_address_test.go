package handlers

import (
	"fmt"
	"net/http"
	"testing"
)

// A rubric's or a judge's bare address (/rubrics/3, typed or cut back
// from /rubrics/3/edit, as /runs/3 and /datasets/3 work) opens its page
// instead of answering 405 Method Not Allowed; an unknown id is 404.
func TestBareRubricAndJudgeAddressesOpenTheirPage(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		cases := []struct {
			path, wantLocation string
			wantStatus         int
		}{
			{fmt.Sprintf("/rubrics/%d", d.rubric.ID), fmt.Sprintf("/rubrics/%d/edit", d.rubric.ID), http.StatusSeeOther},
			{fmt.Sprintf("/judges/%d", d.judge.ID), fmt.Sprintf("/judges/%d/edit", d.judge.ID), http.StatusSeeOther},
			{"/rubrics/999999", "", http.StatusNotFound},
			{"/judges/999999", "", http.StatusNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.path, func(t *testing.T) {
				rec := env.get(tc.path)
				if rec.Code != tc.wantStatus || rec.Header().Get("Location") != tc.wantLocation {
					t.Fatalf("GET %s = %d to %q, want %d to %q", tc.path, rec.Code, rec.Header().Get("Location"), tc.wantStatus, tc.wantLocation)
				}
				if tc.wantLocation != "" {
					if page := env.get(tc.wantLocation); page.Code != http.StatusOK {
						t.Errorf("GET %s = %d", tc.wantLocation, page.Code)
					}
				}
			})
		}
	})
}
