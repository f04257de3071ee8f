package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// compareShownDiff is a compare page row's data-diff and its shown
// difference (the bold figure of the last cell).
var compareShownDiff = regexp.MustCompile(`data-testid="compare-row" data-diff="([^"]*)"(?s:.*?)<strong>([^<]*)</strong>`)

// decimalHalfAway writes r with digits decimals, halves rounded away from
// zero, as a person rounds the decimal the API gives (big.Rat.FloatString
// rounds halves away from zero); signed writes a sign as the page does
// ("+", "−" and "±" for a figure that rounds to zero).
func decimalHalfAway(r *big.Rat, digits int, signed bool) string {
	abs := new(big.Rat).Abs(r).FloatString(digits)
	if !signed {
		if r.Sign() < 0 && strings.Trim(abs, "0.") != "" {
			return "-" + abs
		}
		return abs
	}
	switch {
	case strings.Trim(abs, "0.") == "":
		return "±" + abs
	case r.Sign() < 0:
		return "−" + abs
	}
	return "+" + abs
}

// TestCompareDifferenceIsTheDifferenceOfTheUnitScores: the API's
// unit_difference is unit_a − unit_b worked out in decimals, as a reader
// subtracts the two numbers it is given, and all three are written
// without floating-point noise (0.2, never 0.19999999999999996 or
// 0.20000000000000007). The compare page's data-diff (4 decimals) and
// shown difference (2 decimals) are that decimal rounded, halves away
// from zero, row for row. On the old code unit_difference was the float
// difference of the noisy floats (unit_a 0.6000000000000001, unit_b 0.4:
// 0.20000000000000007, where the decimals give 0.2000000000000001).
func TestCompareDifferenceIsTheDifferenceOfTheUnitScores(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		x := env.demoExperiment()
		a, b := x.batchEval, x.gEval
		type row struct {
			UnitA *json.Number `json:"unit_a"`
			UnitB *json.Number `json:"unit_b"`
			Diff  *json.Number `json:"unit_difference"`
		}
		checked := 0
		for criterion := range len(a.RubricSnapshot.Criteria) {
			path := fmt.Sprintf("compare?a=%d&b=%d&criterion=%d", a.ID, b.ID, criterion)
			rec := env.get("/api/v1/" + path)
			if rec.Code != http.StatusOK {
				t.Fatalf("criterion %d: API %d %.300s", criterion, rec.Code, rec.Body)
			}
			var got struct {
				Rows []row `json:"rows"`
			}
			dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			dec.UseNumber()
			if err := dec.Decode(&got); err != nil {
				t.Fatal(err)
			}
			page := env.get("/" + path)
			if page.Code != http.StatusOK {
				t.Fatalf("criterion %d: page %d", criterion, page.Code)
			}
			shown := compareShownDiff.FindAllStringSubmatch(page.Body.String(), -1)
			if len(shown) == 0 || len(got.Rows) < len(shown) {
				t.Fatalf("criterion %d: page shows %d rows, API gives %d", criterion, len(shown), len(got.Rows))
			}
			for i, r := range got.Rows {
				if r.UnitA == nil || r.UnitB == nil || r.Diff == nil {
					if r.Diff != nil {
						t.Errorf("criterion %d row %d: a difference %s without both unit scores", criterion, i, *r.Diff)
					}
					continue
				}
				ua, okA := new(big.Rat).SetString(r.UnitA.String())
				ub, okB := new(big.Rat).SetString(r.UnitB.String())
				d, okD := new(big.Rat).SetString(r.Diff.String())
				if !okA || !okB || !okD {
					t.Fatalf("criterion %d row %d: unreadable numbers %s %s %s", criterion, i, *r.UnitA, *r.UnitB, *r.Diff)
				}
				want := new(big.Rat).Sub(ua, ub)
				if d.Cmp(want) != 0 {
					t.Errorf("criterion %d row %d: unit_difference %s, want unit_a − unit_b = %s − %s = %s",
						criterion, i, *r.Diff, *r.UnitA, *r.UnitB, want.FloatString(20))
				}
				for _, s := range []string{r.UnitA.String(), r.UnitB.String(), r.Diff.String()} {
					if strings.Contains(s, "99999999") || strings.Contains(s, "00000000") {
						t.Errorf("criterion %d row %d: %s carries floating-point noise", criterion, i, s)
					}
				}
				checked++
				if i >= len(shown) {
					continue
				}
				if w := decimalHalfAway(d, 4, false); shown[i][1] != w {
					t.Errorf("criterion %d row %d: page's data-diff %q, want the API's %s to 4 decimals, %q", criterion, i, shown[i][1], *r.Diff, w)
				}
				if w := decimalHalfAway(d, 2, true); shown[i][2] != w {
					t.Errorf("criterion %d row %d: page shows %q, want the API's %s to 2 decimals, %q", criterion, i, shown[i][2], *r.Diff, w)
				}
			}
		}
		if checked == 0 {
			t.Fatal("no row with both scores was checked")
		}
	})
}
