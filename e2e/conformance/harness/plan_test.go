package harness

import (
	"strings"
	"testing"
)

var planTests = []Test{
	{Name: "GatewayObservedGenerationBump", Features: []string{"Gateway"}},
	{Name: "GatewayInvalidRouteKind", Features: []string{"Gateway"}},
	{Name: "GatewayStaticAddresses", Features: []string{"Gateway", "GatewayStaticAddresses"}},
	{Name: "HTTPRouteSimpleSameNamespace", Features: []string{"Gateway", "HTTPRoute"}},
}

func rowsByName(rows []Row) map[string]Row {
	m := map[string]Row{}
	for _, r := range rows {
		m[r.Name] = r
	}
	return m
}

// A default run: the applicable test runs, the listener test and the HTTPRoute one are
// skipped by name, the address test is left to the suite (its feature is not claimed).
func TestPlanDefault(t *testing.T) {
	rows, err := Plan(planTests, []string{"Gateway", "HTTPRoute"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := rowsByName(rows)
	if r := m["GatewayObservedGenerationBump"]; !r.Run || r.Forced || r.Skip {
		t.Errorf("applicable: %+v", r)
	}
	if r := m["GatewayInvalidRouteKind"]; r.Run || !r.Skip || !strings.HasPrefix(r.Reason, "asserts status.listeners: ") {
		t.Errorf("listener test: %+v", r)
	}
	if r := m["GatewayStaticAddresses"]; r.Run || r.Skip || r.Reason == "" {
		t.Errorf("address test: %+v", r)
	}
	if got := SkipNames(rows); strings.Join(got, ",") != "GatewayInvalidRouteKind,HTTPRouteSimpleSameNamespace" {
		t.Errorf("skip names: %v", got)
	}
}

// Named tests run, and only they: a skipped one and an unsupported one are forced, their
// reasons kept; the applicable one not named does not run.
func TestPlanNamed(t *testing.T) {
	rows, err := Plan(planTests, []string{"Gateway", "HTTPRoute"}, []string{"GatewayInvalidRouteKind", "GatewayStaticAddresses"})
	if err != nil {
		t.Fatal(err)
	}
	m := rowsByName(rows)
	for _, n := range []string{"GatewayInvalidRouteKind", "GatewayStaticAddresses"} {
		if r := m[n]; !r.Run || !r.Forced || r.Skip || r.Reason == "" {
			t.Errorf("%s: %+v", n, r)
		}
	}
	if r := m["GatewayObservedGenerationBump"]; r.Run || !r.Other {
		t.Errorf("applicable, not named: %+v", r)
	}
}

func TestPlanNamedUnknown(t *testing.T) {
	_, err := Plan(planTests, []string{"Gateway"}, []string{"NoSuchTest"})
	if err == nil || !strings.Contains(err.Error(), "NoSuchTest") {
		t.Fatalf("want an error naming NoSuchTest, got %v", err)
	}
}

func TestRunTests(t *testing.T) {
	t.Setenv("CONFORMANCE_RUN_TESTS", " A,B  A\tC ")
	if got := strings.Join(RunTests(), " "); got != "A B C" {
		t.Fatalf("got %q", got)
	}
	t.Setenv("CONFORMANCE_RUN_TESTS", "")
	if got := RunTests(); len(got) != 0 {
		t.Fatalf("got %v", got)
	}
}
