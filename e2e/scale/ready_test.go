package main

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestPercentilesOf(t *testing.T) {
	v := []float64{10, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	p := percentilesOf(v)
	if p.P50 != 5 || p.P90 != 9 || p.Max != 10 {
		t.Fatalf("got %+v, want p50 5, p90 9, max 10 (nearest rank)", p)
	}
	if (percentilesOf(nil) != percentiles{}) {
		t.Fatal("no values: zeros")
	}
}

func TestDeploymentReady(t *testing.T) {
	d := func(generation, observed, replicas, updated, ready, available int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"spec": map[string]any{"replicas": int64(2)},
			"status": map[string]any{"observedGeneration": observed, "replicas": replicas,
				"updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": available},
		}}
		u.SetGeneration(generation)
		return u
	}
	cases := []struct {
		u    *unstructured.Unstructured
		want bool
	}{
		{d(1, 1, 2, 2, 2, 2), true},
		{d(2, 1, 2, 2, 2, 2), false}, // the status is of an older generation
		{d(1, 1, 2, 2, 1, 1), false}, // one Pod not Ready
		{d(1, 1, 3, 2, 2, 2), false}, // a surge: an old Pod still there
		{d(1, 1, 2, 2, 2, 1), false}, // Ready, not yet available
	}
	for i, c := range cases {
		if got := deploymentReady(c.u); got != c.want {
			t.Errorf("case %d: got %v, want %v", i, got, c.want)
		}
	}
}
