package main

import "testing"

func TestParsePrices(t *testing.T) {
	got, err := parsePrices("gpt-4o=2.5:10, llama = 0:0")
	if err != nil {
		t.Fatal(err)
	}
	if p := got["gpt-4o"]; p.Input != 2.5 || p.Output != 10 {
		t.Errorf("gpt-4o = %+v", p)
	}
	if _, ok := got["llama"]; !ok || len(got) != 2 {
		t.Errorf("prices = %+v", got)
	}
	for _, bad := range []string{"gpt-4o=2.5", "=1:2", "x=a:1", "x=-1:2"} {
		if _, err := parsePrices(bad); err == nil {
			t.Errorf("parsePrices(%q) accepted", bad)
		}
	}
}
