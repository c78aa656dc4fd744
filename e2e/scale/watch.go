package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// observer keeps the test's own watch caches of Gateways and Deployments (as the admin
// user, whose reads the audit log leaves out).
type observer struct {
	gateways    cache.GenericLister
	deployments cache.GenericLister
}

func observe(ctx context.Context, dyn dynamic.Interface) (*observer, error) {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	gw := factory.ForResource(gvrGateway)
	dep := factory.ForResource(gvrDeploy)
	factory.Start(ctx.Done())
	for r, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("cache of %s not synced", r.Resource)
		}
	}
	return &observer{gateways: gw.Lister(), deployments: dep.Lister()}, nil
}

// condition is one Gateway condition, as the API server holds it.
type condition struct {
	Type, Status, Reason, Message string
	ObservedGeneration            int64
}

func conditions(u *unstructured.Unstructured) map[string]condition {
	out := map[string]condition{}
	// Read in place: unstructured.NestedSlice would deep-copy them, and the waits read every
	// pending Gateway ten times a second.
	status, _ := u.Object["status"].(map[string]any)
	list, _ := status["conditions"].([]any)
	for _, c := range list {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		s := func(k string) string { v, _ := m[k].(string); return v }
		g, _ := m["observedGeneration"].(int64)
		out[s("type")] = condition{s("type"), s("status"), s("reason"), s("message"), g}
	}
	return out
}

func (c condition) is(status, reason string) bool {
	return c.Status == status && c.Reason == reason
}

// healthy is what "converged" means for each controller: Accepted and Programmed True,
// and for ours ConfigurationApplied True (Meridio-2 has no such condition).
func healthy(kind string) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		c := conditions(u)
		ok := c["Accepted"].is("True", "Accepted") && c["Programmed"].is("True", "Programmed")
		if kind == "ours" {
			ok = ok && c[domain+"/ConfigurationApplied"].is("True", "Applied")
		}
		return ok
	}
}

// appliedGeneration: ours says on the Gateway which GatewayConfiguration generation its
// Deployment carries.
func appliedGeneration(generation int64) func(*unstructured.Unstructured) bool {
	want := fmt.Sprintf("GatewayConfiguration generation %d", generation)
	return func(u *unstructured.Unstructured) bool {
		c := conditions(u)
		return healthy("ours")(u) && strings.Contains(c["Programmed"].Message, want)
	}
}

func (o *observer) get(l cache.GenericLister, g gatewayRef) (*unstructured.Unstructured, bool) {
	obj, err := l.ByNamespace(g.namespace).Get(g.name)
	if err != nil {
		return nil, false
	}
	u, ok := obj.(*unstructured.Unstructured)
	return u, ok
}

// waitAll polls the cache of `what` until `done` holds for every object named (every
// 100 ms); the time taken since `since`, or an error naming how many are left.
func (o *observer) waitAll(what string, refs []gatewayRef, lbName func(string) string,
	done func(*unstructured.Unstructured) bool, since time.Time, limit time.Duration, alive func() bool) (time.Duration, error) {
	lister := o.gateways
	if lbName != nil {
		lister = o.deployments
	}
	deadline := since.Add(limit)
	pending := refs
	// An object not done at a resourceVersion is not done at it on the next poll: only
	// the changed ones are looked at again, so that a wait over thousands of objects costs
	// the harness (which shares the machine's two cores with the controller and the
	// server) little.
	notAt := map[gatewayRef]string{}
	for {
		var left []gatewayRef
		for _, g := range pending {
			ref := g
			if lbName != nil {
				ref.name = lbName(g.name)
			}
			u, ok := o.get(lister, ref)
			if !ok {
				left = append(left, g)
				continue
			}
			rv := u.GetResourceVersion()
			if at, seen := notAt[g]; (seen && at == rv) || !done(u) {
				notAt[g] = rv
				left = append(left, g)
			}
		}
		if len(left) == 0 {
			return time.Since(since), nil
		}
		pending = left
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s: %d of %d not there after %s (first: %s/%s)", what, len(left),
				len(refs), limit, left[0].namespace, left[0].name)
		}
		if alive != nil && !alive() {
			return 0, fmt.Errorf("%s: the controller exited (%d of %d left)", what, len(left), len(refs))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lbName is the LB Deployment of a Gateway (both controllers: prefix sllbr-).
func lbName(gateway string) string { return "sllbr-" + gateway }

func replicas(n int64) func(*unstructured.Unstructured) bool {
	return func(u *unstructured.Unstructured) bool {
		r, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return ok && r == n
	}
}
