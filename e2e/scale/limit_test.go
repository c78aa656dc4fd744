package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

func TestPickFloorIsTheFastestPoint(t *testing.T) {
	points := []limitPoint{
		{HTTP: "h2", Concurrency: 1, LastWriteS: 30},
		{HTTP: "h2", Concurrency: 8, LastWriteS: 6},
		{HTTP: "http1", Concurrency: 8, LastWriteS: 6},
		{HTTP: "http1", Concurrency: 64, LastWriteS: 7},
	}
	got, ok := pickFloor(points)
	if !ok || got.HTTP != "h2" || got.Concurrency != 8 {
		t.Fatalf("got %+v, want h2 at 8 (the first of equals)", got)
	}
	if _, ok := pickFloor(nil); ok {
		t.Fatal("an empty sweep has no floor")
	}
}

func TestWithResourceVersionSetsThePreconditionOnly(t *testing.T) {
	patch := map[string]any{
		"metadata": map[string]any{"resourceVersion": "1"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Accepted"}}},
	}
	body, err := withResourceVersion(patch, "42")
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(body, &got)
	want := map[string]any{
		"metadata": map[string]any{"resourceVersion": "42"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "Accepted"}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if patch["metadata"].(map[string]any)["resourceVersion"] != "1" {
		t.Fatal("the rendered patch is shared by every run: it must not change")
	}
}

func TestResetPatchPutsBackOrRemovesEachWrittenField(t *testing.T) {
	before := map[string]any{"conditions": []any{"pending"}}
	var got map[string]any
	_ = json.Unmarshal(resetPatch(before, []string{"addresses", "conditions"}), &got)
	want := map[string]any{"status": map[string]any{"addresses": nil, "conditions": []any{"pending"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestCreateBodyLeavesOutStatusAndServerSetMetadata(t *testing.T) {
	desired := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "sllbr-gw", "namespace": "ns", "labels": map[string]any{"a": "b"},
			"uid": "u", "resourceVersion": "1", "generation": 1, "creationTimestamp": nil, "managedFields": []any{}},
		"spec":   map[string]any{"replicas": 2},
		"status": map[string]any{},
	}
	body, err := createBody(desired)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	_ = json.Unmarshal(body, &got)
	want := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "sllbr-gw", "namespace": "ns", "labels": map[string]any{"a": "b"}},
		"spec":     map[string]any{"replicas": float64(2)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestEventBodyIsKubeRuntimes(t *testing.T) {
	at := time.Date(2026, 12, 5, 23, 0, 0, 1000, time.UTC)
	var got map[string]any
	_ = json.Unmarshal(eventBody(gatewayRef{"ns", "gw"}, "uid-1", coreEvent{"Normal", "Applied", "m"}, at), &got)
	meta := got["metadata"].(map[string]any)
	if meta["name"] != fmt.Sprintf("gw.%x", at.UnixNano()) || meta["namespace"] != "ns" {
		t.Fatalf("name %v", meta["name"])
	}
	if got["eventTime"] != "2026-12-05T23:00:00.000001Z" || got["action"] != "Create" || got["note"] != "m" ||
		got["reportingController"] != "gateway-reconcile-controller" {
		t.Fatalf("got %v", got)
	}
	reg := got["regarding"].(map[string]any)
	if reg["uid"] != "uid-1" || reg["kind"] != "Gateway" || reg["namespace"] != "ns" {
		t.Fatalf("regarding %v", reg)
	}
}

func TestForEachStopsAtTheFirstError(t *testing.T) {
	var calls atomic.Int64
	boom := errors.New("boom")
	err := forEach(100, 1, func(i int) error {
		calls.Add(1)
		if i == 3 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() != 4 {
		t.Fatalf("err %v after %d calls, want boom after 4", err, calls.Load())
	}
	if err := forEach(10, 4, func(int) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

func TestParseInts(t *testing.T) {
	got, err := parseInts("1,4, 8")
	if err != nil || !reflect.DeepEqual(got, []int{1, 4, 8}) {
		t.Fatalf("got %v %v", got, err)
	}
	if _, err := parseInts("0"); err == nil {
		t.Fatal("0 Gateways in flight is refused")
	}
}

func TestWrittenIgnoresTheConditionsTimesOnly(t *testing.T) {
	status := func(at, reason string) any {
		return map[string]any{"conditions": []any{map[string]any{"type": "Accepted", "reason": reason, "lastTransitionTime": at}}}
	}
	a := written{deployment: map[string]any{"spec": 1}, status: withoutTimes(status("t1", "Accepted"))}
	b := written{deployment: map[string]any{"spec": 1}, status: withoutTimes(status("t2", "Accepted"))}
	if d := a.differs(b); d != "" {
		t.Fatalf("alike but for times: %s", d)
	}
	c := written{deployment: map[string]any{"spec": 1}, status: withoutTimes(status("t1", "Pending"))}
	if a.differs(c) == "" {
		t.Fatal("a different reason must differ")
	}
	if a.differs(written{status: a.status}) == "" {
		t.Fatal("a missing Deployment must differ")
	}
}
