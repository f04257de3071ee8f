package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// TestDatasetPageRoundsRatingsForPeople: an averaged human rating shows
// with at most four decimals, not as its binary floating-point value.
func TestDatasetPageRoundsRatingsForPeople(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		ctx := context.Background()
		d := env.demo()
		rows, err := env.db.ListDatasetRows(ctx, d.dataset.ID, 0, 2)
		if err != nil {
			t.Fatal(err)
		}
		a, b, c := 7.0, 1.1, 2.2
		third, noisy := a/3, b+c // 2.3333333333333335 and 3.3000000000000003
		rows[0].Ratings["engaging"], rows[1].Ratings["engaging"] = &third, &noisy
		for i := range rows {
			if err := env.db.Gorm.Save(&rows[i]).Error; err != nil {
				t.Fatal(err)
			}
		}
		rec := env.get(datasetPath(d.dataset.ID))
		if rec.Code != http.StatusOK {
			t.Fatalf("dataset page: %d", rec.Code)
		}
		body := rec.Body.String()
		for _, want := range []string{">2.3333<", ">3.3<"} {
			if !strings.Contains(body, want) {
				t.Errorf("dataset page lacks %s", want)
			}
		}
		for _, raw := range []string{"2.3333333333333335", "3.3000000000000003"} {
			if strings.Contains(body, raw) {
				t.Errorf("dataset page shows the unrounded %s", raw)
			}
		}
	})
}
