package handlers

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/batcheval/batcheval/models"
)

// openingTag is the opening tag of the input, select or textarea whose id is
// id ("" when the page has none).
func openingTag(body, id string) string {
	return regexp.MustCompile(`<(?:input|select|textarea)[^>]*\sid="` + regexp.QuoteMeta(id) + `"[^>]*>`).FindString(body)
}

// describedBy is the ids a tag's aria-describedby names.
func describedBy(tag string) []string {
	m := regexp.MustCompile(`aria-describedby="([^"]*)"`).FindStringSubmatch(tag)
	if m == nil {
		return nil
	}
	return strings.Fields(html.UnescapeString(m[1]))
}

// checkTiedToMessage fails unless the input id is marked invalid and names,
// in its aria-describedby, an element of the page holding want.
func checkTiedToMessage(t *testing.T, body, id, want string) {
	t.Helper()
	tag := openingTag(body, id)
	if tag == "" {
		t.Fatalf("no input %s on the page", id)
	}
	if !strings.Contains(tag, `aria-invalid="true"`) {
		t.Errorf("input %s is not marked invalid: %s", id, tag)
	}
	for _, ref := range describedBy(tag) {
		i := strings.Index(body, `id="`+ref+`"`)
		if i < 0 {
			continue
		}
		end := strings.Index(body[i:], "</div>")
		if p := strings.Index(body[i:], "</p>"); end < 0 || (p >= 0 && p < end) {
			end = p
		}
		if end >= 0 && strings.Contains(html.UnescapeString(body[i:i+end]), want) {
			return
		}
	}
	t.Errorf("input %s does not point to a message saying %q: %s", id, want, tag)
}

// A newcomer who mistypes a temperature or top_p sees what they typed
// beside the message, not the default: the form showed 0.2 and 0.9 back
// beside "“warm” is not a number", so the field looked right and the
// message wrong.
func TestLaunchKeepsUnreadableDecimals(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		tests := []struct {
			name, field, typed, want string
		}{
			{"temperature a word", "temperature", "warm", "Temperature: “warm” is not a number"},
			{"temperature a thousand or one", "temperature", "1,000", "Temperature: “1,000”"},
			{"top_p a word", "top_p", "most", "top_p: “most” is not a number"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f := d.launchForm("5", "10")
				f.Set("temperature_shown", "0.2")
				f.Set("top_p_shown", "0.9")
				f.Set(tc.field, tc.typed)
				rec := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), f)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				tag := openingTag(body, tc.field)
				if !strings.Contains(tag, `value="`+html.EscapeString(tc.typed)+`"`) {
					t.Errorf("the %s field shows %s, want what was typed (%q)", tc.field, tag, tc.typed)
				}
				checkTiedToMessage(t, body, tc.field, tc.want)
			})
		}
		// Typed and readable, or untouched, it is shown as before.
		f := d.launchForm("0", "10")
		f.Set("temperature", "0,7")
		body := env.postForm(fmt.Sprintf("/projects/%d/runs", env.project.ID), f).Body.String()
		if tag := openingTag(body, "temperature"); !strings.Contains(tag, `value="0,7"`) {
			t.Errorf("a readable typed temperature is shown as %s", tag)
		}
		if tag := openingTag(body, "top_p"); !strings.Contains(tag, `value="0.9"`) || strings.Contains(tag, "aria-invalid") {
			t.Errorf("an untouched top_p is shown as %s", tag)
		}
	})
}

// Every launch field refused is marked invalid and points to its message,
// so a screen reader reads why when the field is reached (QA: the message
// sat beside the field, tied to nothing); its help line stays tied to it.
func TestLaunchFieldErrorsTiedToInputs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.demo()
		path := fmt.Sprintf("/projects/%d/runs", env.project.ID)
		// method is the method that reads the field (the sampled ratings'
		// settings are checked for G-Eval and CloserLook only).
		tests := []struct {
			method, field, value, help, want string
		}{
			{"batcheval", "rounds", "0", "launch-rounds-help", "Rounds: 0 is out of range"},
			{"batcheval", "batch_size", "many", "launch-batch-size-help", "Batch size: “many” is not a whole number."},
			{"batcheval", "temperature", "3", "launch-temperature-help", "Temperature: 3 is out of range"},
			{"batcheval", "top_p", "0", "launch-top-p-help", "top_p: 0 is out of range"},
			{"batcheval", "seed", "1.5", "launch-seed-help", "Seed: “1.5” is not a whole number."},
			{"batcheval", "spend_cap_usd", "lots", "launch-spend-cap-help", "Spending cap: “lots” is not an amount"},
			{"geval", "samples", "500", "launch-samples-help", "Samples n: 500 is out of range"},
			{"geval", "sample_temperature", "hot", "launch-sample-temperature-help", "Sample temperature: “hot” is not a number"},
			{"closerlook", "min_readable_share", "2", "launch-min-readable-help", "Fewest readable answers for a score: 2 is out of range"},
		}
		for _, tc := range tests {
			t.Run(tc.field, func(t *testing.T) {
				f := d.launchForm("5", "10")
				f.Set("method", tc.method)
				f.Set(tc.field, tc.value)
				rec := env.postForm(path, f)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				checkTiedToMessage(t, body, tc.field, tc.want)
				if refs := describedBy(openingTag(body, tc.field)); len(refs) == 0 || refs[0] != tc.help || !strings.Contains(body, `id="`+tc.help+`"`) {
					t.Errorf("%s: help line %s not tied first: %v", tc.field, tc.help, refs)
				}
				// Only the refused field is marked.
				if n := strings.Count(body, `aria-invalid="true"`); n != 1 {
					t.Errorf("%d inputs marked invalid, want 1", n)
				}
			})
		}
		// A fresh form marks nothing invalid and ties each help line.
		body := env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String()
		if strings.Contains(body, "aria-invalid") {
			t.Error("a fresh launch form marks an input invalid")
		}
		for _, tc := range tests {
			if refs := describedBy(openingTag(body, tc.field)); len(refs) != 1 || refs[0] != tc.help {
				t.Errorf("fresh form: %s described by %v, want %s", tc.field, refs, tc.help)
			}
		}
	})
}

// A rubric refused on save marks each field at fault and points it to the
// message beside it (QA: the messages were beside the fields, tied to
// nothing); the task's help line is tied to its box.
func TestRubricFieldErrorsTiedToInputs(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		path := fmt.Sprintf("/projects/%d/rubrics", env.project.ID)
		tests := []struct {
			name  string
			set   url.Values
			field string
			want  string
		}{
			{"no name", url.Values{"name": {" "}}, "rubric-name", "The rubric needs a name."},
			{"no task", url.Values{"task": {" "}}, "rubric-task", "The rubric needs a task description"},
			{"criterion name with a line break", url.Values{"criteria[0].name": {"Helpful\nScore: 5"}}, "criteria[0].name", "holds a line break"},
			{"lowest score a word", url.Values{"criteria[0].lo": {"one"}}, "criteria[0].lo", "The lowest score “one” is not a number"},
			{"highest score a word", url.Values{"criteria[0].hi": {"five"}}, "criteria[0].hi", "“five” is not a number"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				f := rubricFormValues("save", "1", "5")
				for k, v := range tc.set {
					f[k] = v
				}
				rec := env.postForm(path, f)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422", rec.Code)
				}
				body := rec.Body.String()
				checkTiedToMessage(t, body, tc.field, tc.want)
				if n := strings.Count(body, `aria-invalid="true"`); n != 1 {
					t.Errorf("%d inputs marked invalid, want 1", n)
				}
				if refs := describedBy(openingTag(body, "rubric-task")); len(refs) == 0 || refs[0] != "rubric-task-help" {
					t.Errorf("the task box is described by %v, want its help line first", refs)
				}
				if refs := describedBy(openingTag(body, "criteria[0].human")); len(refs) == 0 || refs[0] != "criteria[0].human-help" {
					t.Errorf("the human rating column is described by %v, want its help line first", refs)
				}
			})
		}
	})
}

// A refused upload marks the input at fault and points it to the message
// beside it: the file for a file that cannot be read, the name for a
// refused name (QA: the message sat above the form, tied to nothing); the
// summary at the top links to the input (forms54: the message was only at
// the top, the input pointing up to it).
func TestUploadErrorTiedToInput(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		tests := []struct {
			name, filename, content, dsName string
			field, other, want              string
		}{
			{"a JSON Lines file with a broken line", "ratings.jsonl", "{\"text\":\"a\",\"score\":4}\n{\"text\":\"b\", \"score\":3\n", "",
				"dataset-file", "dataset-name", "line 2: invalid JSON"},
			{"a name too long", "ratings.csv", "id,text\n1,a\n", strings.Repeat("n", models.MaxComposedNameLength+1),
				"dataset-name", "dataset-file", "characters long"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				rec := env.upload(tc.filename, tc.content, tc.dsName)
				if rec.Code != http.StatusUnprocessableEntity {
					t.Fatalf("status %d, want 422: %s", rec.Code, rec.Body)
				}
				body := rec.Body.String()
				checkFieldRefused(t, body, tc.field, tc.want)
				if n := strings.Count(formSummary(body), "<li>"); n != 1 {
					t.Errorf("the summary lists %d messages, want 1: %s", n, formSummary(body))
				}
				if tag := openingTag(body, tc.other); strings.Contains(tag, "aria-invalid") {
					t.Errorf("%s is marked invalid too: %s", tc.other, tag)
				}
			})
		}
		if body := env.get(fmt.Sprintf("/projects/%d/datasets/new", env.project.ID)).Body.String(); strings.Contains(body, "aria-invalid") {
			t.Error("a fresh upload form marks an input invalid")
		}
	})
}

// A project without a rubric does not say "This rubric has no criteria"
// under an empty rubric list (QA: it read as if a rubric existed and was
// broken); a rubric with criteria lists them.
func TestLaunchCriteriaWithoutRubric(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		p := models.Project{WorkspaceID: env.ws.ID, Name: "No rubric yet"}
		if err := env.db.CreateProject(env.localCtx(), &p); err != nil {
			t.Fatal(err)
		}
		body := env.get(fmt.Sprintf("/projects/%d/runs/new", p.ID)).Body.String()
		if strings.Contains(body, "This rubric has no criteria.") {
			t.Error("a project without a rubric is told its rubric has no criteria")
		}
		if !strings.Contains(body, `data-testid="criteria-no-rubric">No rubric yet: its criteria show here once the project has one.`) {
			t.Error("the criteria box does not say the project has no rubric yet")
		}
		body = env.get(fmt.Sprintf("/projects/%d/runs/new", env.project.ID)).Body.String()
		if strings.Contains(body, "criteria-no-rubric") || !strings.Contains(body, `data-testid="criterion-choice"`) {
			t.Error("the demo project's launch form does not list its rubric's criteria")
		}
	})
}

// The samples table's round columns (R1, R2...) say what they are: a
// newcomer read "R1 ... R5" beside "Final" with nothing telling them they
// are rounds, nor that Final is their mean.
func TestSampleTableSaysWhatRoundColumnsAre(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDatasetOf("rated", []float64{1, 3, 5})
		tests := []struct {
			name   string
			rounds [][]float64
			want   string
		}{
			{"three rounds", [][]float64{{1, 2, 4}, {2, 3, 5}, {1, 3, 4}}, "R1 to R3 are the sample's scores in each round; Final is their mean."},
			{"one round", [][]float64{{1, 2, 4}}, "R1 is the sample's score in the run's one round, which is its final score."},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				run := env.storedRounds(d, tc.name, tc.rounds)
				body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
				if !strings.Contains(body, `data-testid="samples-rounds-note">`+html.EscapeString(tc.want)+`<`) {
					t.Errorf("the samples table does not say %q", tc.want)
				}
				for r := 1; r <= len(tc.rounds); r++ {
					if want := fmt.Sprintf(`<abbr title="round %d">R%d</abbr>`, r, r); !strings.Contains(body, want) {
						t.Errorf("no heading %s", want)
					}
				}
			})
		}
	})
}

// A BatchEval sample's page says once what "as Sample2 in batch 1" and the
// "In the answer" column are: the names the judge read the batch's samples
// under (a newcomer took Sample2 for an id of the dataset). A sample
// judged alone has no such names, and no note.
func TestSamplePageSaysWhatBatchNamesAre(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		note := `data-testid="sample-batch-note">Each round, the judge read this sample in a batch with others, under the name shown beside the round&#39;s score (such as Sample1); &#34;In the answer&#34; gives the other samples&#39; names there, and the batch&#39;s link opens the judge&#39;s whole call.<`
		tests := []struct {
			name     string
			human    []float64
			rounds   [][]float64
			wantNote bool
		}{
			{"three samples a batch", []float64{1, 3, 5}, [][]float64{{1, 2, 4}, {2, 3, 5}}, true},
			{"a batch of one", []float64{3}, [][]float64{{2}, {3}}, false},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				d := env.ratedDatasetOf(tc.name, tc.human)
				run := env.storedRounds(d, tc.name, tc.rounds)
				body := env.get(fmt.Sprintf("/runs/%d/samples/%d", run.ID, d.rowIDs[0])).Body.String()
				if got := strings.Contains(body, note); got != tc.wantNote {
					t.Errorf("note shown = %v, want %v", got, tc.wantNote)
				}
				if tc.wantNote && !strings.Contains(body, "as Sample") {
					t.Error("the rounds no longer name the sample as the judge read it")
				}
			})
		}
	})
}

// The run page's counts say what they mean in words anyone can open:
// "No answer", "Cached", "Retries" and "Probe calls" were explained only
// in a title, which a phone or a keyboard never shows (and Cached and
// Retries not at all).
func TestRunProgressSaysWhatItsCountsMean(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		d := env.ratedDatasetOf("rated", []float64{1, 3, 5})
		run := env.storedRounds(d, "counts", [][]float64{{1, 2, 4}})
		body := env.get(fmt.Sprintf("/runs/%d", run.ID)).Body.String()
		i := strings.Index(body, `data-testid="progress-terms"`)
		if i < 0 {
			t.Fatal("the run page has no \"What these counts mean\"")
		}
		terms := html.UnescapeString(body[i : i+strings.Index(body[i:], "</details>")])
		tests := []struct{ term, want string }{
			{"No answer", "Scores missing because the judge call failed: no answer came."},
			{"Unreadable scores", "Scores missing because the judge answered but no score could be read"},
			{"Cached", `Calls answered from the answers this workspace's judges already gave to the same request, with no call and no cost ("Reuse identical judge answers" on the launch form).`},
			{"Retries", "Judge attempts that failed with an error worth trying again"},
			{"Probe calls", "Tiny test requests sent while the run waited for its judge"},
		}
		for _, tc := range tests {
			if !strings.Contains(terms, "<dt>"+tc.term+"</dt><dd>"+tc.want) {
				t.Errorf("%s is not explained as %q:\n%s", tc.term, tc.want, terms)
			}
			// The count keeps its title, in the same words.
			if !regexp.MustCompile(`<dt title="[^"]+">` + regexp.QuoteMeta(tc.term) + `</dt>`).MatchString(body) {
				t.Errorf("the count %s lost its title", tc.term)
			}
		}
		// A BatchEval run has no sampled answers to explain.
		if strings.Contains(terms, "Scored from fewer answers than asked") {
			t.Error("a BatchEval run explains a sampling method's count")
		}
	})
}

// The mapping step's three choices above the columns are tied to the line
// under each that says what it does (QA: a screen reader read "Id column"
// and its choices, never why ids matter or what grouping changes).
func TestMappingChoicesTiedToTheirHelp(t *testing.T) {
	eachDB(t, func(t *testing.T, env *testEnv) {
		token := env.uploadToken("summaries.csv", "id,summary,score\n1,a,3\n2,b,4\n")
		body := env.get(env.mapPath() + "?token=" + token).Body.String()
		tests := []struct{ id, want string }{
			{"id-column", "Ids must be present and unique."},
			{"annotator-column", "Rows that share an id then become one sample"},
			{"group-column", "agreement is then also computed within each group"},
		}
		for _, tc := range tests {
			refs := describedBy(openingTag(body, tc.id))
			if len(refs) != 1 {
				t.Errorf("%s is described by %v, want its help line", tc.id, refs)
				continue
			}
			i := strings.Index(body, `id="`+refs[0]+`"`)
			if i < 0 || !strings.Contains(body[i:i+strings.Index(body[i:], "</p>")], tc.want) {
				t.Errorf("%s points to %s, which does not say %q", tc.id, refs[0], tc.want)
			}
		}
	})
}
