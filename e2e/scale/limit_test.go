package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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

func TestMedianOfOddAndEvenCounts(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
}

func TestTheFloorIsTheSettingOfLeastMedian(t *testing.T) {
	// http1 8 has the least single run, http1 64 the least median.
	points := []limitPoint{
		{HTTP: "http1", Concurrency: 8, LastWriteS: 3},
		{HTTP: "http1", Concurrency: 64, LastWriteS: 4},
		{HTTP: "http1", Concurrency: 8, LastWriteS: 9},
		{HTTP: "http1", Concurrency: 64, LastWriteS: 5},
		{HTTP: "http1", Concurrency: 8, LastWriteS: 8},
		{HTTP: "http1", Concurrency: 64, LastWriteS: 6},
		{HTTP: "http1", Concurrency: 64, NoEvents: true, LastWriteS: 1},
	}
	floor, order, medians := floorSweep(points[:6])
	if floor.setting() != "http1 64" || floor.LastWriteS != 5 {
		t.Fatalf("floor %s at %.1f, want http1 64 at 5", floor.setting(), floor.LastWriteS)
	}
	if !reflect.DeepEqual(order, []string{"http1 8", "http1 64"}) || medians["http1 8"].LastWriteS != 8 {
		t.Fatalf("order %v, medians %v", order, medians)
	}
	r := limitResult{Rounds: []limitRound{{Sweep: points[:2]}, {Sweep: points[2:4]}, {Sweep: points[4:6], NoEvents: points[6]}}}
	if got := floorOf(r); got.setting() != "http1 64" {
		t.Fatalf("floorOf: %s (the point without Events is not a setting of the sweep)", got.setting())
	}
}

func TestStatCPUReadsUtimeAndStimeAfterTheCommandName(t *testing.T) {
	line := "4242 (a (weird) name) S 1 2 3 4 5 6 7 8 9 10 250 150 0 0 20 0 1 0"
	got, err := statCPU(line)
	if err != nil || got != 4 {
		t.Fatalf("got %v, %v; want 4 s (400 ticks)", got, err)
	}
	if _, err := statCPU("garbage"); err == nil {
		t.Fatal("a line without a command name must be an error")
	}
}

func TestUpdateBodyKeepsTheResourceVersionAndDropsStatusAndManagedFields(t *testing.T) {
	desired := map[string]any{
		"metadata": map[string]any{"name": "sllbr-g", "resourceVersion": "7", "uid": "u",
			"managedFields": []any{map[string]any{"manager": "x"}}},
		"spec":   map[string]any{"replicas": 3},
		"status": map[string]any{"replicas": 2},
	}
	got := updateBody(desired)
	want := map[string]any{
		"metadata": map[string]any{"name": "sllbr-g", "resourceVersion": "7", "uid": "u"},
		"spec":     map[string]any{"replicas": 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if _, ok := desired["status"]; !ok {
		t.Fatal("the rendered object must not change")
	}
}

func TestTheEventsCostIsEachRoundsBestSettingAgainstItself(t *testing.T) {
	r := limitResult{Rounds: []limitRound{
		{Sweep: []limitPoint{{HTTP: "h2", Concurrency: 8, LastWriteS: 4}, {HTTP: "http1", Concurrency: 8, LastWriteS: 5}},
			NoEvents: limitPoint{HTTP: "h2", Concurrency: 8, NoEvents: true, LastWriteS: 3}},
		{Sweep: []limitPoint{{HTTP: "h2", Concurrency: 8, LastWriteS: 6}, {HTTP: "http1", Concurrency: 8, LastWriteS: 4}},
			NoEvents: limitPoint{HTTP: "http1", Concurrency: 8, NoEvents: true, LastWriteS: 4}},
	}}
	if got := eventsCost(r); !reflect.DeepEqual(got, []float64{0.75, 1}) {
		t.Fatalf("got %v, want [0.75 1]", got)
	}
}

func TestReconciledAtIsTheLineThatCompletesTheGateways(t *testing.T) {
	log := filepath.Join(t.TempDir(), "ours.log")
	lines := []string{
		`{"timestamp":"2026-12-06T03:00:00.100000Z","level":"INFO","fields":{"message":"started"}}`,
		`{"timestamp":"2026-12-06T03:00:00.200000Z","level":"DEBUG","fields":{"message":"reconciled","gateway":"ns/a"}}`,
		`{"timestamp":"2026-12-06T03:00:00.300000Z","level":"DEBUG","fields":{"message":"reconciled","gateway":"ns/a"}}`,
		`{"timestamp":"2026-12-06T03:00:00.450000Z","level":"DEBUG","fields":{"message":"reconciled","gateway":"ns/b"}}`,
	}
	if err := os.WriteFile(log, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &controller{kind: "ours", log: log}
	at, ok := c.reconciledAt(2)
	if want := time.Date(2026, 12, 6, 3, 0, 0, 450_000_000, time.UTC); !ok || !at.Equal(want) {
		t.Fatalf("got %v %v, want %v", at, ok, want)
	}
	if _, ok := c.reconciledAt(3); ok {
		t.Fatal("3 Gateways were not reconciled")
	}
	total, distinct, err := c.reconciles()
	if err != nil || total != 3 || distinct != 2 {
		t.Fatalf("reconciles: %d %d %v, want 3 2", total, distinct, err)
	}
}
