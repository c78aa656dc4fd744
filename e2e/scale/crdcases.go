package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A case of crd-cases.json: a GatewayConfiguration or L34Route spec, the baseline with a
// JSON merge patch (RFC 7386) applied.
type crdCase struct {
	Name  string         `json:"name"`
	Kind  string         `json:"kind"`
	Patch map[string]any `json:"patch"`
}

const casesNamespace = "crd-cases"

func baseSpec(kind string) map[string]any {
	if kind == "L34Route" {
		return route(casesNamespace, "gw", 1).Object["spec"].(map[string]any)
	}
	return configuration(casesNamespace, "conf").Object["spec"].(map[string]any)
}

// mergePatch applies an RFC 7386 merge patch.
func mergePatch(target map[string]any, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range target {
		out[k] = v
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			tv, _ := out[k].(map[string]any)
			if tv == nil {
				tv = map[string]any{}
			}
			out[k] = mergePatch(tv, pv)
		default:
			out[k] = v
		}
	}
	return out
}

// crdCases creates each case on the API server (dry run: the CRD's schema, defaults and
// CEL rules decide) and asks the crate's `gateway-reconcile plan` what it makes of the same
// object (a Gateway on the configuration; for a route, the Gateway's addresses), then
// prints a Markdown table.
func crdCases(args []string, w io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: scale crd-cases CASES.json PATH/TO/gateway-reconcile")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var cases []crdCase
	if err := json.Unmarshal(data, &cases); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	ctx := context.Background()
	dyn, _, err := adminClient()
	if err != nil {
		return err
	}
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": casesNamespace}}}
	if _, err := dyn.Resource(gvrNamespace).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	dir, err := os.MkdirTemp("", "crd-cases")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(v)
		_ = os.WriteFile(p, b, 0o600)
		return p
	}
	gw := gateway(casesNamespace, "gw", "conf")
	gw.SetUID("gw-uid")
	gw.SetGeneration(1)
	class := map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": className}, "spec": map[string]any{"controllerName": controllerName}}
	fmt.Fprintln(w, "| case | API server, the installed CRD | crate (`gateway-reconcile plan`) |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, c := range cases {
		var object *unstructured.Unstructured
		var gvrOf = gvrConfig
		if c.Kind == "L34Route" {
			object = route(casesNamespace, "gw", 1)
			gvrOf = gvrRoute
		} else {
			object = configuration(casesNamespace, "conf")
		}
		object.Object["spec"] = mergePatch(baseSpec(c.Kind), c.Patch)
		server := "accepted"
		stored, err := dyn.Resource(gvrOf).Namespace(casesNamespace).Create(ctx, object,
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			server = "refused: " + shorten(err.Error())
		} else if strings.Contains(c.Name, "enforceReplicas") {
			v, _, _ := unstructured.NestedFieldNoCopy(stored.Object, "spec", "horizontalScaling", "enforceReplicas")
			server = fmt.Sprintf("accepted, stored enforceReplicas: %v", v)
		}
		object.SetGeneration(1)
		object.SetUID("conf-uid")
		planArgs := []string{"plan", "--now", "2026-01-01T00:00:00Z", "--gateway", write("gw.json", gw.Object),
			"--gateway-class", write("class.json", class)}
		if c.Kind == "L34Route" {
			conf := configuration(casesNamespace, "conf")
			conf.SetGeneration(1)
			planArgs = append(planArgs, "--configuration", write("conf.json", conf.Object),
				"--routes", write("routes.json", []any{object.Object}))
		} else {
			planArgs = append(planArgs, "--configuration", write("conf.json", object.Object))
		}
		crate := plan(args[1], planArgs, c.Kind == "L34Route")
		fmt.Fprintf(w, "| %s | %s | %s |\n", c.Name, server, crate)
	}
	return nil
}

// plan runs the crate's CLI and says what it decided: the Gateway's Accepted condition
// (and for a route, the addresses), or the CLI's own error.
func plan(bin string, args []string, addresses bool) string {
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return "input refused: " + shorten(msg)
	}
	var decision struct {
		Status struct {
			Conditions []struct{ Type, Status, Reason, Message string } `json:"conditions"`
			Addresses  []struct{ Value string }                         `json:"addresses"`
		} `json:"status"`
	}
	if err := json.Unmarshal(out, &decision); err != nil {
		return "unreadable plan: " + err.Error()
	}
	for _, c := range decision.Status.Conditions {
		if c.Type != "Accepted" {
			continue
		}
		if c.Status != "True" {
			return fmt.Sprintf("refused: Accepted=%s %s: %s", c.Status, c.Reason, shorten(c.Message))
		}
	}
	if addresses {
		var values []string
		for _, a := range decision.Status.Addresses {
			values = append(values, a.Value)
		}
		return fmt.Sprintf("accepted, addresses [%s]", strings.Join(values, ", "))
	}
	return "accepted"
}

func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.ReplaceAll(s, "|", "\\|")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}
