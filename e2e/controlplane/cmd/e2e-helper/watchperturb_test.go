package main

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// line is one watch event of object ns/name at resourceVersion rv.
func line(typ, name string, rv int) string {
	return fmt.Sprintf(`{"type":%q,"object":{"metadata":{"namespace":"ns","name":%q,"resourceVersion":"%d"}}}`+"\n",
		typ, name, rv)
}

const bookmark = `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}` + "\n"

// perturbed feeds text to a watch stream in pieces of 7 bytes (events split across
// writes), ends it, and returns what was sent on and the perturbation's log.
func perturbed(t *testing.T, p *perturb, text string) (string, []string) {
	return perturbedAt(t, p, "/apis/g/v1/namespaces/ns/gateways?watch=true", text)
}

// perturbedAt is perturbed for a watch request to target.
func perturbedAt(t *testing.T, p *perturb, target, text string) (string, []string) {
	t.Helper()
	var mu sync.Mutex
	var logged []string
	p.log = func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	w := httptest.NewRecorder()
	s := p.stream(w, httptest.NewRequest("GET", target, nil), "gateways")
	for len(text) > 0 {
		n := min(7, len(text))
		if _, err := s.Write([]byte(text[:n])); err != nil {
			t.Fatal(err)
		}
		text = text[n:]
	}
	s.end()
	return w.Body.String(), logged
}

func TestEveryKthEventIsDroppedAndBookmarksPass(t *testing.T) {
	p, err := newPerturb("gateways", 2, 0, 1, 0, "continue", nil)
	if err != nil {
		t.Fatal(err)
	}
	in := line("ADDED", "a", 1) + line("MODIFIED", "a", 2) + bookmark +
		line("MODIFIED", "b", 3) + line("DELETED", "a", 4)
	out, logged := perturbed(t, p, in)
	if want := line("ADDED", "a", 1) + bookmark + line("MODIFIED", "b", 3); out != want {
		t.Fatalf("sent on:\n%s\nwant:\n%s", out, want)
	}
	want := "event 2 gateways MODIFIED ns/a 2 dropped\nevent 4 gateways DELETED ns/a 4 dropped"
	if got := strings.Join(logged, "\n"); got != want {
		t.Fatalf("log:\n%s\nwant:\n%s", got, want)
	}
}

func TestADropCanEndTheWatchWithGone(t *testing.T) {
	p, err := newPerturb("gateways", 2, 0, 1, 0, "gone", nil)
	if err != nil {
		t.Fatal(err)
	}
	in := line("ADDED", "a", 1) + line("MODIFIED", "a", 2) + line("MODIFIED", "b", 3)
	out, logged := perturbed(t, p, in)
	if want := line("ADDED", "a", 1) + string(expired); out != want {
		t.Fatalf("sent on:\n%s\nwant:\n%s", out, want)
	}
	want := "event 2 gateways MODIFIED ns/a 2 dropped\nevent - gateways ERROR - - gone"
	if got := strings.Join(logged, "\n"); got != want {
		t.Fatalf("log:\n%s\nwant:\n%s", got, want)
	}
	if _, err := newPerturb("gateways", 2, 0, 1, 0, "later", nil); err == nil {
		t.Fatal("-drop-then later accepted")
	}
}

func TestAStreamingListsInitialEventsPass(t *testing.T) {
	p, err := newPerturb("gateways", 1, 0, 1, 0, "gone", nil)
	if err != nil {
		t.Fatal(err)
	}
	end := `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"3",` +
		`"annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
	initial := line("ADDED", "a", 1) + line("ADDED", "b", 2) + bookmark + end
	out, logged := perturbedAt(t, p,
		"/apis/g/v1/namespaces/ns/gateways?watch=true&sendInitialEvents=true", initial+line("MODIFIED", "a", 4))
	if want := initial + string(expired); out != want {
		t.Fatalf("sent on:\n%s\nwant:\n%s", out, want)
	}
	if len(logged) != 2 {
		t.Fatalf("log: %v", logged)
	}
}

func TestARandomFractionIsDroppedTheSameForASeed(t *testing.T) {
	var in strings.Builder
	for i := 1; i <= 200; i++ {
		in.WriteString(line("MODIFIED", "a", i))
	}
	run := func(seed int64) string {
		p, err := newPerturb("gateways", 0, 0.5, seed, 0, "continue", nil)
		if err != nil {
			t.Fatal(err)
		}
		out, logged := perturbed(t, p, in.String())
		if n := strings.Count(out, "\n"); n+len(logged) != 200 || n < 60 || n > 140 {
			t.Fatalf("seed %d: %d sent on, %d dropped of 200", seed, n, len(logged))
		}
		return out
	}
	if run(7) != run(7) {
		t.Fatal("one seed dropped different events")
	}
	if run(7) == run(8) {
		t.Fatal("two seeds dropped the same events")
	}
}

func TestCoalescingSendsEachObjectsLastEventInOrder(t *testing.T) {
	// A window that does not end in the test: what is held goes at a bookmark or the end.
	p, err := newPerturb("gateways", 0, 0, 1, time.Hour, "continue", nil)
	if err != nil {
		t.Fatal(err)
	}
	in := line("ADDED", "a", 1) + line("MODIFIED", "b", 2) + line("MODIFIED", "a", 3) +
		bookmark + line("MODIFIED", "a", 4) + line("DELETED", "a", 5)
	out, logged := perturbed(t, p, in)
	want := line("MODIFIED", "b", 2) + line("MODIFIED", "a", 3) + bookmark + line("DELETED", "a", 5)
	if out != want {
		t.Fatalf("sent on:\n%s\nwant:\n%s", out, want)
	}
	if len(logged) != 2 {
		t.Fatalf("coalesced: %v", logged)
	}
}

func TestTheCoalescingWindowEndsByItself(t *testing.T) {
	p, err := newPerturb("gateways", 0, 0, 1, 20*time.Millisecond, "continue", func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	s := p.stream(w, httptest.NewRequest("GET", "/apis/g/v1/gateways?watch=1", nil), "gateways")
	_, _ = s.Write([]byte(line("ADDED", "a", 1) + line("MODIFIED", "a", 2)))
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		out := w.Body.String()
		s.mu.Unlock()
		if out == line("MODIFIED", "a", 2) {
			break
		}
		if out != "" || time.Now().After(deadline) {
			t.Fatalf("sent on: %q", out)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.end()
}

func TestOnlyWatchesOfTheNamedResourcesArePerturbed(t *testing.T) {
	p, err := newPerturb("gateways,deployments", 3, 0, 1, 0, "continue", nil)
	if err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]bool{
		"/apis/gateway.networking.k8s.io/v1/namespaces/ns/gateways?watch=true&resourceVersion=5": true,
		"/apis/apps/v1/deployments?watch=1":                                      true,
		"/apis/apps/v1/namespaces/ns/deployments?labelSelector=x":                false,
		"/apis/meridio-2.nordix.org/v1alpha1/namespaces/ns/l34routes?watch=true": false,
	} {
		if _, got := p.watched(httptest.NewRequest("GET", target, nil)); got != want {
			t.Errorf("%s: perturbed %v", target, got)
		}
	}
	if _, got := p.watched(httptest.NewRequest("POST", "/apis/apps/v1/deployments?watch=1", nil)); got {
		t.Error("a POST perturbed")
	}
	if none, _ := newPerturb("", 0, 0, 1, 0, "continue", nil); none != nil {
		t.Error("no perturbation asked, one made")
	}
	if _, err := newPerturb("", 1, 0, 1, 0, "continue", nil); err == nil {
		t.Error("a drop with no resource accepted")
	}
}
