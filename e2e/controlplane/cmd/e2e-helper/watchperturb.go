package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"time"
)

// perturb says which watch events the crash-proxy keeps from the controller (issue 42,
// "unobserved states"): on a watch (`watch=true` or `watch=1`) of one of resources (the
// collection's plural), every dropEvery-th ADDED, MODIFIED or DELETED event, or a random
// fraction of them (seeded), is dropped. Then either the stream goes on (nothing sends the
// event again: the controller's cache misses it until a later event of the object or a
// relist; no API server does this, its watch sends every event or ends with an error), or,
// with gone, the stream ends as an API server ends a watch for events it no longer holds:
// an ERROR event, 410 Expired, after which nothing more is sent on and the client lists
// again (the dropped state and what followed are never seen, only the state then). And
// with coalesce > 0 the events of a stream are held for that window from the first held
// one and only each object's last is sent on (the intermediate states are never seen,
// the last one is). BOOKMARK and ERROR events always pass, after what is held: a bookmark
// carries no object (and ends a streaming list's initial events), an ERROR (410) makes
// the client relist; dropping either perturbs the stream itself, not what it tells. The
// initial events of a streaming list (`sendInitialEvents=true`) pass untouched up to the
// bookmark that ends them: they are the list, what a relist shows (were they dropped and
// the watch ended with 410, every relist would be cut short and the client would never
// list whole).
type perturb struct {
	resources map[string]bool
	dropEvery int64
	fraction  float64
	coalesce  time.Duration
	gone      bool

	mu     sync.Mutex
	events int64
	random *rand.Rand
	log    func(format string, args ...any)
}

// newPerturb parses the flags' values; nil when nothing is perturbed.
func newPerturb(resources string, dropEvery int64, fraction float64, seed int64,
	coalesce time.Duration, then string, log func(string, ...any)) (*perturb, error) {
	if dropEvery < 0 || fraction < 0 || fraction > 1 || coalesce < 0 ||
		(then != "continue" && then != "gone") {
		return nil, fmt.Errorf("-drop-every >= 0, 0 <= -drop-fraction <= 1, -coalesce >= 0, " +
			"-drop-then continue|gone")
	}
	if dropEvery == 0 && fraction == 0 && coalesce == 0 {
		return nil, nil
	}
	if resources == "" {
		return nil, fmt.Errorf("-watch-resources names none")
	}
	p := &perturb{resources: map[string]bool{}, dropEvery: dropEvery, fraction: fraction,
		coalesce: coalesce, gone: then == "gone", random: rand.New(rand.NewSource(seed)), log: log}
	for _, r := range strings.Split(resources, ",") {
		p.resources[strings.TrimSpace(r)] = true
	}
	return p, nil
}

// watched is the resource a request watches, if it is a watch of a perturbed one.
func (p *perturb) watched(r *http.Request) (string, bool) {
	if p == nil || r.Method != http.MethodGet {
		return "", false
	}
	if w := r.URL.Query().Get("watch"); w != "true" && w != "1" {
		return "", false
	}
	segments := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	resource := segments[len(segments)-1]
	return resource, p.resources[resource]
}

// drop decides whether the next event is dropped.
func (p *perturb) drop() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events++
	if p.dropEvery > 0 && p.events%p.dropEvery == 0 {
		return p.events, true
	}
	return p.events, p.fraction > 0 && p.random.Float64() < p.fraction
}

// event is what the perturbation reads of a watch event line.
type event struct {
	Type   string `json:"type"`
	Object struct {
		Metadata struct {
			Namespace       string            `json:"namespace"`
			Name            string            `json:"name"`
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	} `json:"object"`
}

// held is an event line waiting for its window's end.
type held struct {
	key  string
	line []byte
}

// watchStream is the ResponseWriter of one watch: it reads the JSON lines the API server
// streams, one event each, and writes on what the perturbation lets through.
type watchStream struct {
	w        http.ResponseWriter
	p        *perturb
	resource string
	// A streaming list's initial events are being sent.
	initial bool

	mu      sync.Mutex
	partial []byte
	held    []held
	timer   *time.Timer
	// Set once the handler has returned, or the stream has said 410: nothing more is sent.
	done bool
}

// stream perturbs the answer to r, a watch of resource.
func (p *perturb) stream(w http.ResponseWriter, r *http.Request, resource string) *watchStream {
	initial := r.URL.Query().Get("sendInitialEvents") == "true"
	return &watchStream{w: w, p: p, resource: resource, initial: initial}
}

func (s *watchStream) Header() http.Header { return s.w.Header() }

func (s *watchStream) WriteHeader(code int) { s.w.WriteHeader(code) }

// Flush does nothing: each event sent on is flushed as it is written.
func (s *watchStream) Flush() {}

func (s *watchStream) Write(data []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return len(data), nil
	}
	s.partial = append(s.partial, data...)
	for !s.done {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return len(data), nil
		}
		line := append([]byte(nil), s.partial[:i+1]...)
		s.partial = s.partial[i+1:]
		s.take(line)
	}
	return len(data), nil
}

// expired is the ERROR event an API server sends to a watch whose events it no longer has.
var expired = []byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},` +
	`"status":"Failure","message":"e2e-helper: events dropped","reason":"Expired","code":410}}` + "\n")

// take decides one event line's fate; s.mu is held.
func (s *watchStream) take(line []byte) {
	var e event
	err := json.Unmarshal(line, &e)
	if err == nil && s.initial {
		s.initial = !(e.Type == "BOOKMARK" &&
			e.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true")
		s.send(line)
		return
	}
	if err != nil || (e.Type != "ADDED" &&
		e.Type != "MODIFIED" && e.Type != "DELETED") {
		s.release()
		s.send(line)
		return
	}
	m := e.Object.Metadata
	key := m.Namespace + "/" + m.Name
	if n, drop := s.p.drop(); drop {
		s.p.log("event %d %s %s %s %s dropped", n, s.resource, e.Type, key, m.ResourceVersion)
		if s.p.gone {
			// What is held came before the dropped event: the client may see it.
			s.release()
			s.send(expired)
			s.p.log("event - %s ERROR - - gone", s.resource)
			s.done = true
			s.partial = nil
		}
		return
	}
	if s.p.coalesce == 0 {
		s.send(line)
		return
	}
	// The object's newest event takes the place of the one held, at the end: what is
	// sent on stays in resourceVersion order.
	for i, h := range s.held {
		if h.key == key {
			s.p.log("event - %s %s %s %s coalesced", s.resource, e.Type, key, m.ResourceVersion)
			s.held = append(s.held[:i], s.held[i+1:]...)
			break
		}
	}
	s.held = append(s.held, held{key: key, line: line})
	if s.timer == nil {
		s.timer = time.AfterFunc(s.p.coalesce, func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.timer = nil
			if !s.done {
				s.release()
			}
		})
	}
}

// release sends on what is held; s.mu is held.
func (s *watchStream) release() {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	for _, h := range s.held {
		s.send(h.line)
	}
	s.held = nil
}

// send writes one line on and flushes it; s.mu is held.
func (s *watchStream) send(line []byte) {
	_, _ = s.w.Write(line)
	_ = http.NewResponseController(s.w).Flush()
}

// end sends on what is held when the API server ends the watch (the controller then
// watches again from the last version it saw: what is held is not lost), and stops the
// window's timer from writing after the handler returned.
func (s *watchStream) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.release()
	if len(s.partial) > 0 {
		s.send(s.partial)
		s.partial = nil
	}
	s.done = true
}
