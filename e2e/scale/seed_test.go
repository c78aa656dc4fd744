package main

import (
	"strings"
	"testing"
)

// The seed check passes ours' samples from a real run and fails a controller that keeps
// saying Programmed while its updates are refused (Meridio-2's samples from a real run).
func TestSeedGoals(t *testing.T) {
	applied, degraded := domain+"/ConfigurationApplied", domain+"/Degraded"
	before := []condition{
		{Type: "Programmed", Status: "True", Reason: "Programmed"},
		{Type: applied, Status: "True", Reason: "Applied"},
	}
	refused := []condition{
		{Type: "Programmed", Status: "True", Reason: "Programmed"},
		{Type: applied, Status: "False", Reason: "ApplyRejected"},
		{Type: degraded, Status: "True", Reason: "ApplyRejected"},
	}
	stale := []condition{{Type: "Programmed", Status: "True", Reason: "Programmed"}}
	cases := []struct {
		name    string
		samples []sample
		fails   int
	}{
		{"ours", []sample{{0, before}, {5, refused}, {10, refused}}, 0},
		{"meridio-2", []sample{{0, stale}, {5, stale}, {10, stale}}, 2},
		{"not degraded", []sample{{0, before}, {5, refused[:2]}}, 1},
		{"applied again", []sample{{0, before}, {5, refused}, {10, before}}, 1},
		{"no sample after the edit", []sample{{0, before}}, 1},
	}
	for _, c := range cases {
		f := seedGoals(seedResult{Samples: c.samples})
		if len(f) != c.fails {
			t.Errorf("%s: %d failures, want %d:\n%s", c.name, len(f), c.fails, strings.Join(f, "\n"))
		}
	}
}
