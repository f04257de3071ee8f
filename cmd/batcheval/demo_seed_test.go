package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/batcheval/batcheval/models/demo"
)

// A fresh `batcheval serve` opens on a finished result: the demo's first
// run, judged by the simulated judge through the real runner, is linked
// from the home page's start guide and succeeds within seconds.
func TestServeSeedsFinishedDemoRun(t *testing.T) {
	base := startServer(t)
	get := func(path string) string {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return string(b)
	}
	link := regexp.MustCompile(`data-testid="start-guide"[\s\S]*?href="(/runs/\d+)" data-testid="guide-demo-run"`)
	m := link.FindStringSubmatch(get("/"))
	if m == nil {
		t.Fatal("the home page's start guide does not link to the demo run")
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		page := get(m[1])
		if strings.Contains(page, `data-testid="run-status"`) && regexp.MustCompile(`data-testid="run-status"[^>]*>[^<]*succeeded`).MatchString(page) {
			if !strings.Contains(page, demo.FirstRunName) || !strings.Contains(strings.ToLower(page), "simulated") {
				t.Errorf("the demo run's page does not say it is the simulated demo run")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo run did not succeed within 90s")
		}
		time.Sleep(500 * time.Millisecond)
	}
	if home := get("/"); !strings.Contains(home, "succeeded") {
		t.Errorf("the home page does not show the demo run as finished")
	}
}
