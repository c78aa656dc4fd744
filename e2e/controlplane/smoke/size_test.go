package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// deploymentOfSize is a Deployment whose JSON is about `size` bytes: containers with one
// long argument each.
func deploymentOfSize(name string, size int) (*unstructured.Unstructured, int) {
	const argBytes = 16 * 1024
	containers := []any{}
	for i := 0; i*argBytes < size; i++ {
		containers = append(containers, map[string]any{
			"name": fmt.Sprintf("c%d", i), "image": "registry.example/lb:1.0",
			"args": []any{strings.Repeat("x", argBytes)},
		})
	}
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": containers},
			},
		},
	}}
	body, _ := json.Marshal(d.Object)
	return d, len(body)
}

// TestObjectSizeIsBounded shows the bound the crate's memory figures for Deployment-shaped
// input rest on: the server stores no object much larger than etcd's request limit (1.5 MiB
// by default), so the observed Deployment a controller reads is at most about that size.
func TestObjectSizeIsBounded(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	api := e.dyn.Resource(deployments).Namespace(e.ns)

	fits, size := deploymentOfSize("fits", 1400*1024)
	if _, err := api.Create(ctx, fits, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a Deployment of %d bytes: %v", size, err)
	}
	t.Logf("a Deployment of %d bytes is stored", size)

	for i, want := range map[int]string{
		// etcd's own limit.
		1700 * 1024: "etcdserver: request is too large",
		// The API server's gRPC client to etcd refuses to send it (2 MiB).
		2500 * 1024: "trying to send message larger than max",
		// The API server refuses to read a request body over 3 MiB.
		3500 * 1024: "too large",
	} {
		d, size := deploymentOfSize(fmt.Sprintf("too-large-%d", i), i)
		_, err := api.Create(ctx, d, metav1.CreateOptions{})
		if err == nil {
			t.Fatalf("a Deployment of %d bytes was stored", size)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("a Deployment of %d bytes: %v (want %q)", size, err, want)
		}
		t.Logf("a Deployment of %d bytes is refused: %v", size, err)
	}
}
