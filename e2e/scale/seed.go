package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// sample is the Gateway's conditions at one moment of the seed story.
type sample struct {
	AtS        float64     `json:"at_s"`
	Conditions []condition `json:"conditions"`
}

type seedResult struct {
	Controller string   `json:"controller"`
	Samples    []sample `json:"samples"`
	Requests   requests `json:"requests"`
	Replicas   int64    `json:"deployment_replicas_at_end"`
	Failures   []string `json:"failures,omitempty"`
}

// refusal is a ValidatingAdmissionPolicy and its binding that refuse every Deployment
// UPDATE in one namespace (422), whoever sends it.
func refusal(namespace string) (*unstructured.Unstructured, *unstructured.Unstructured) {
	name := "refuse-" + namespace
	policy := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"failurePolicy": "Fail",
			"matchConstraints": map[string]any{"resourceRules": []any{map[string]any{
				"apiGroups": []any{"apps"}, "apiVersions": []any{"v1"},
				"operations": []any{"UPDATE"}, "resources": []any{"deployments"}}}},
			"validations": []any{map[string]any{"expression": "false",
				"message": "e2e: updates refused", "reason": "Invalid"}}}}}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{"policyName": name, "validationActions": []any{"Deny"},
			"matchResources": map[string]any{"namespaceSelector": map[string]any{
				"matchLabels": map[string]any{"kubernetes.io/metadata.name": namespace}}}}}}
	return policy, binding
}

// untilRefused probes with a dry-run update of the Deployment until admission refuses it
// (a policy applies some time after it is created).
func untilRefused(ctx context.Context, dyn dynamic.Interface, namespace, name string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := dyn.Resource(gvrDeploy).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, err = dyn.Resource(gvrDeploy).Namespace(namespace).Update(ctx, d,
			metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "e2e: updates refused") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the policy does not refuse a dry-run update after 30 s (last: %v)", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// seedStory: one healthy Gateway; every Deployment update refused by admission; then its
// GatewayConfiguration edited; the Gateway's conditions sampled every 5 s.
func seedStory(o options) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startOneGateway(ctx, o)
	if err != nil {
		return err
	}
	defer s.c.stop()
	dyn, c, obs, g := s.dyn, s.c, s.obs, s.g
	policy, binding := refusal(g.namespace)
	for _, it := range []item{{gvrPolicy, policy}, {gvrPolicyB, binding}} {
		if _, err := dyn.Resource(it.gvr).Create(ctx, it.object, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	if err := untilRefused(ctx, dyn, g.namespace, lbName(g.name)); err != nil {
		return err
	}
	m, _ := auditMark()
	t := time.Now()
	if err := editShared(ctx, dyn, g.namespace, `{"replicas":3,"enforceReplicas":true}`); err != nil {
		return err
	}
	r := seedResult{Controller: o.controller}
	last := ""
	for at := time.Duration(0); at <= o.sample; at += 5 * time.Second {
		time.Sleep(time.Until(t.Add(at)))
		u, ok := obs.get(obs.gateways, g)
		if !ok {
			return fmt.Errorf("the Gateway is gone")
		}
		cs := conditions(u)
		s := sample{AtS: time.Since(t).Seconds()}
		for _, k := range sortedKeys(cs) {
			s.Conditions = append(s.Conditions, cs[k])
		}
		r.Samples = append(r.Samples, s)
		text := render(s.Conditions)
		if text != last {
			fmt.Printf("%s, t = %.1f s:\n%s", o.controller, s.AtS, text)
			last = text
		}
	}
	fmt.Printf("%s: unchanged until t = %.0f s\n", o.controller, o.sample.Seconds())
	if r.Requests, err = between(c.user, m, -1); err != nil {
		return err
	}
	if d, ok := obs.get(obs.deployments, gatewayRef{g.namespace, lbName(g.name)}); ok {
		r.Replicas, _, _ = unstructured.NestedInt64(d.Object, "spec", "replicas")
	}
	fmt.Printf("%s: requests in the %s: %s (%d refused); the Deployment's replicas: %d\n",
		o.controller, o.sample, r.Requests, r.Requests.Refused, r.Replicas)
	c.stop()
	if o.check {
		r.Failures = seedGoals(r)
	}
	if o.out != "" {
		data, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(o.out, data, 0o644); err != nil {
			return err
		}
	}
	if len(r.Failures) > 0 {
		return fmt.Errorf("%s missed %d goal(s):\n  %s", o.controller, len(r.Failures), strings.Join(r.Failures, "\n  "))
	}
	return nil
}

// seedGoals is what ours must say once the edit is refused: from the first sample after
// the edit on, the configuration not applied because admission rejected it, and Degraded
// at once (a rejection will not pass by itself). The sample at t = 0 is taken as the edit
// is sent, before any reconcile.
func seedGoals(r seedResult) []string {
	var f []string
	applied, degraded := domain+"/ConfigurationApplied", domain+"/Degraded"
	for _, s := range r.Samples {
		if s.AtS < 1 {
			continue
		}
		c := map[string]condition{}
		for _, x := range s.Conditions {
			c[x.Type] = x
		}
		if !c[applied].is("False", "ApplyRejected") || !c[degraded].is("True", "ApplyRejected") {
			f = append(f, fmt.Sprintf("t = %.1f s: want %s False and %s True, both ApplyRejected; got\n%s",
				s.AtS, applied, degraded, render(s.Conditions)))
		}
	}
	if len(r.Samples) < 2 {
		f = append(f, "no sample after the edit")
	}
	return f
}

func sortedKeys(m map[string]condition) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func render(cs []condition) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "  %s=%s %s %q\n", c.Type, c.Status, c.Reason, c.Message)
	}
	return b.String()
}
