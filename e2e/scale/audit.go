package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// The audit log of controlplane.sh, with E2E_AUDIT_READ_USERS naming the controller's user:
// every request of that user at level Metadata, a watch once when it starts (stage
// ResponseStarted) and once when it ends.

// mark is a position in the audit log: requests after it are those of a phase.
type mark int64

func auditMark() (mark, error) {
	fi, err := os.Stat(os.Getenv("AUDIT_LOG"))
	if err != nil {
		return 0, err
	}
	return mark(fi.Size()), nil
}

// requests counts one user's requests between two marks, by "verb resource[/subresource]"
// (a watch counted when it starts; a streaming list, a watch with sendInitialEvents, as
// "watch-list"), and the codes of refused ones.
type requests struct {
	ByVerb  map[string]int `json:"by_verb"`
	Writes  int            `json:"writes"`
	Reads   int            `json:"reads"`
	Refused int            `json:"refused"`

	// The first request's arrival and the last write's completion (audit clock).
	first, lastWrite time.Time
}

// span is the time from the first request's arrival to the last write's completion, as
// the API server's audit log has them (0 without a write).
func (r requests) span() time.Duration {
	if r.first.IsZero() || r.lastWrite.IsZero() {
		return 0
	}
	return r.lastWrite.Sub(r.first)
}

func (r requests) count(key string) int { return r.ByVerb[key] }

func (r requests) String() string {
	keys := make([]string, 0, len(r.ByVerb))
	for k := range r.ByVerb {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.ByVerb[k]))
	}
	return strings.Join(parts, ", ")
}

type auditEvent struct {
	Stage      string    `json:"stage"`
	Received   time.Time `json:"requestReceivedTimestamp"`
	StageAt    time.Time `json:"stageTimestamp"`
	Verb       string    `json:"verb"`
	RequestURI string    `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

func isWrite(verb string) bool {
	switch verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// between reads the user's requests from `from` to `to` (to < 0: the end of the log).
func between(user string, from, to mark) (requests, error) {
	r := requests{ByVerb: map[string]int{}}
	f, err := os.Open(os.Getenv("AUDIT_LOG"))
	if err != nil {
		return r, err
	}
	defer f.Close()
	if _, err := f.Seek(int64(from), io.SeekStart); err != nil {
		return r, err
	}
	if to >= 0 && to < from {
		return r, fmt.Errorf("audit log marks %d..%d: the log was rotated in between", from, to)
	}
	var reader io.Reader = f
	if to >= 0 {
		reader = io.LimitReader(f, int64(to-from))
	}
	s := bufio.NewScanner(reader)
	s.Buffer(make([]byte, 1<<20), 1<<24)
	for s.Scan() {
		var e auditEvent
		if json.Unmarshal(s.Bytes(), &e) != nil || e.User.Username != user {
			continue
		}
		verb := e.Verb
		if verb == "watch" {
			if e.Stage != "ResponseStarted" {
				continue
			}
			if strings.Contains(e.RequestURI, "sendInitialEvents=true") {
				verb = "watch-list"
			}
		}
		key := verb + " " + e.ObjectRef.Resource
		if e.ObjectRef.Resource == "" {
			// A non-resource URL (discovery: /api, /apis, ...).
			key = verb + " " + strings.SplitN(e.RequestURI, "?", 2)[0]
		}
		if e.ObjectRef.Subresource != "" {
			key += "/" + e.ObjectRef.Subresource
		}
		r.ByVerb[key]++
		if r.first.IsZero() || e.Received.Before(r.first) {
			r.first = e.Received
		}
		if isWrite(e.Verb) {
			r.Writes++
			if e.StageAt.After(r.lastWrite) {
				r.lastWrite = e.StageAt
			}
		} else {
			r.Reads++
		}
		if e.ResponseStatus.Code >= 400 {
			r.Refused++
		}
	}
	return r, s.Err()
}

// deploymentWrites and statusWrites are the counts the edit story checks.
func (r requests) deploymentWrites() int {
	return r.count("update deployments") + r.count("patch deployments") + r.count("create deployments")
}

func (r requests) statusWrites() int {
	return r.count("update gateways/status") + r.count("patch gateways/status")
}
