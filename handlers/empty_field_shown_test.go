package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models"
)

// TestEmptyFieldSaysWhatTheJudgeRead: a sample whose field the judge sees
// is empty in the file showed an empty grey box on its page, though the
// judge was sent "(empty)" there (the prompt preview says so). The sample
// page and the review queue now say the field is empty and what the judge
// read; a field with text is shown as it is.
func TestEmptyFieldSaysWhatTheJudgeRead(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		csv := "id,context,response,engaging,coherent\n" +
			"e1,User: hi,,2,2\n" +
			"e2,User: any plans?,Not really.,1,3\n" +
			"e3,User: a joke?,Why did the chicken cross the road?,3,3\n"
		token := env.uploadToken("blank.csv", csv)
		rec := env.postForm(env.mapPath(), url.Values{"token": {token}, "name": {"Blank"}, "id_column": {"id"},
			"show_1": {"1"}, "label_1": {"Conversation history"}, "show_2": {"1"}, "label_2": {"Response"}, "rating_3": {"1"}, "rating_4": {"1"}})
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("import = %d: %s", rec.Code, rec.Body)
		}
		dsID, err := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/datasets/"), 10, 64)
		must(t, err)
		form := d.launchForm("1", "3")
		form.Set("dataset", strconv.FormatInt(dsID, 10))
		run := env.waitRun(env.launch(form), 60*time.Second)
		if run.Status != models.RunSucceeded {
			t.Fatalf("run %s: %s", run.Status, run.Error)
		}
		var rows []models.DatasetRow
		must(t, env.db.Gorm.Where("dataset_id = ?", dsID).Order("id").Find(&rows).Error)
		if len(rows) != 3 {
			t.Fatalf("%d rows, want 3", len(rows))
		}
		says := func(body string) bool {
			return strings.Contains(body, `data-testid="field-empty"`) && strings.Contains(body, `the judge read "(empty)" here`)
		}
		for _, tc := range []struct {
			row   models.DatasetRow
			empty bool
		}{{rows[0], true}, {rows[1], false}} {
			page := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, tc.row.ID))
			if page.Code != http.StatusOK {
				t.Fatalf("sample page of %s: %d", tc.row.ExternalID, page.Code)
			}
			if got := says(page.Body.String()); got != tc.empty {
				t.Errorf("sample page of %s: says a field is empty %v, want %v", tc.row.ExternalID, got, tc.empty)
			}
			// The review queue, at whichever place it shows the sample.
			found := false
			for i := 0; i < len(rows) && !found; i++ {
				body := env.get(fmt.Sprintf("/datasets/%d/review?run=%d&criterion=0&order=random&seed=1&blind=off&i=%d", dsID, run.ID, i)).Body.String()
				if !strings.Contains(body, ">Sample "+tc.row.ExternalID+" <") {
					continue
				}
				found = true
				if got := says(body); got != tc.empty {
					t.Errorf("review queue at %s: says a field is empty %v, want %v", tc.row.ExternalID, got, tc.empty)
				}
			}
			if !found {
				t.Errorf("the review queue never shows %s", tc.row.ExternalID)
			}
		}
	})
}
