package main

// The writes of the limit story: the core's bodies, rendered by the crate's CLI before any
// clock, and what puts a Gateway's status back between two runs.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// coreEvent is an Event of the core's plan (`events` of `gateway-reconcile plan`).
type coreEvent struct {
	Type    string `json:"type"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// floorGateway is what the bare client sends for one Gateway.
type floorGateway struct {
	ref        gatewayRef
	uid        string
	deployment []byte         // the create body
	status     map[string]any // the core's status patch; metadata.resourceVersion is set per run
	events     []coreEvent
}

// floorBodies are the writes of a start: per Gateway, and the GatewayClass's status patch.
type floorBodies struct {
	gateways []floorGateway
	class    map[string]any
	// The status fields the patches write, and the statuses before any write (reset).
	gatewayKeys, classKeys []string
	gatewayStatus          map[gatewayRef]map[string]any
	classStatus            map[string]any
}

// withResourceVersion is a status patch with the precondition of the Gateway as the bare
// client's streaming list saw it: the core's patch carries the observed resourceVersion.
func withResourceVersion(patch map[string]any, rv string) ([]byte, error) {
	out := map[string]any{}
	for k, v := range patch {
		out[k] = v
	}
	meta := map[string]any{}
	if m, ok := patch["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta["resourceVersion"] = rv
	out["metadata"] = meta
	return json.Marshal(out)
}

// resetPatch puts back the status fields `keys` as they were (absent ones removed).
func resetPatch(before map[string]any, keys []string) []byte {
	status := map[string]any{}
	for _, k := range keys {
		status[k] = before[k] // nil: removed
	}
	b, _ := json.Marshal(map[string]any{"status": status})
	return b
}

// eventBody is the Event kube-runtime's recorder writes for a core Event on a Gateway
// (events.k8s.io/v1, named NAME.HEX of the time in nanoseconds, action Create).
func eventBody(g gatewayRef, uid string, e coreEvent, now time.Time) []byte {
	b, _ := json.Marshal(map[string]any{
		"apiVersion": "events.k8s.io/v1", "kind": "Event",
		"metadata": map[string]any{"name": fmt.Sprintf("%s.%x", g.name, now.UnixNano()), "namespace": g.namespace},
		"action":   "Create", "reason": e.Reason, "note": e.Message, "type": e.Type,
		"eventTime": now.UTC().Format("2006-01-02T15:04:05.000000Z07:00"),
		"regarding": map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"name": g.name, "namespace": g.namespace, "uid": uid},
		"reportingController": fieldManager, "reportingInstance": fieldManager,
	})
	return b
}

// createBody is the Deployment ours POSTs: requestBody on create.
func createBody(desired map[string]any) ([]byte, error) {
	return json.Marshal(requestBody(desired, false))
}

// requestBody is the body of ours' Deployment write (gateway-reconcile-kube/src/write.rs,
// body): the desired object without status and managedFields, and on a create without
// the server-set metadata either.
func requestBody(desired map[string]any, update bool) map[string]any {
	d := map[string]any{}
	for k, v := range desired {
		if k != "status" {
			d[k] = v
		}
	}
	if m, ok := desired["metadata"].(map[string]any); ok {
		meta := map[string]any{}
		for k, v := range m {
			switch k {
			case "managedFields":
			case "resourceVersion", "uid", "creationTimestamp", "generation":
				if update {
					meta[k] = v
				}
			default:
				meta[k] = v
			}
		}
		d["metadata"] = meta
	}
	return d
}

func statusKeys(patch map[string]any) []string {
	s, _ := patch["status"].(map[string]any)
	var keys []string
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// renderBodies asks the crate's CLI for each Gateway's plan, on the objects as the API
// server holds them (before any write), and keeps the statuses to put back.
func renderBodies(ctx context.Context, dyn dynamic.Interface, planBin string, l layout) (*floorBodies, error) {
	list := func(gvr schema.GroupVersionResource) ([]unstructured.Unstructured, error) {
		ul, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		return ul.Items, nil
	}
	class, err := dyn.Resource(gvrClass).Get(ctx, className, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	gws, err := list(gvrGateway)
	if err != nil {
		return nil, err
	}
	confs, err := list(gvrConfig)
	if err != nil {
		return nil, err
	}
	routes, err := list(gvrRoute)
	if err != nil {
		return nil, err
	}
	byRef := func(items []unstructured.Unstructured) map[gatewayRef]*unstructured.Unstructured {
		m := map[gatewayRef]*unstructured.Unstructured{}
		for i := range items {
			m[gatewayRef{items[i].GetNamespace(), items[i].GetName()}] = &items[i]
		}
		return m
	}
	gwBy, confBy, routeBy := byRef(gws), byRef(confs), byRef(routes)
	write, classFile, done, err := planFiles(class)
	if err != nil {
		return nil, err
	}
	defer done()
	now := time.Now().UTC().Format(time.RFC3339)
	refs := l.gateways()
	b := &floorBodies{gateways: make([]floorGateway, len(refs)), gatewayStatus: map[gatewayRef]map[string]any{}}
	for _, g := range refs {
		gw := gwBy[g]
		if gw == nil {
			return nil, fmt.Errorf("Gateway %s/%s not listed", g.namespace, g.name)
		}
		s, _, _ := unstructured.NestedMap(gw.Object, "status")
		b.gatewayStatus[g] = s
	}
	err = forEach(len(refs), 4, func(i int) error {
		g := refs[i]
		gw := gwBy[g]
		conf := confBy[gatewayRef{g.namespace, l.config(i)}]
		route := routeBy[g]
		if conf == nil || route == nil {
			return fmt.Errorf("Gateway %s/%s: its GatewayConfiguration or L34Route is not listed", g.namespace, g.name)
		}
		prefix := fmt.Sprintf("%s-%s-", g.namespace, g.name)
		gf, err := write(prefix+"gw.json", gw.Object)
		if err != nil {
			return err
		}
		cf, err := write(prefix+"conf.json", conf.Object)
		if err != nil {
			return err
		}
		rf, err := write(prefix+"routes.json", []any{route.Object})
		if err != nil {
			return err
		}
		p, err := runPlan(planBin, "--now", now, "--gateway", gf, "--gateway-class", classFile,
			"--configuration", cf, "--routes", rf)
		if err != nil {
			return fmt.Errorf("plan of %s/%s: %w", g.namespace, g.name, err)
		}
		if p.Action != "Create" || p.Desired == nil || p.StatusPatch == nil {
			return fmt.Errorf("plan of %s/%s: action %q, not a create with a status patch", g.namespace, g.name, p.Action)
		}
		body, err := createBody(p.Desired)
		if err != nil {
			return err
		}
		b.gateways[i] = floorGateway{ref: g, uid: string(gw.GetUID()), deployment: body, status: p.StatusPatch, events: p.Events}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.gatewayKeys = statusKeys(b.gateways[0].status)
	// The GatewayClass's status patch, as the core's settle_class makes it for a class of
	// its controller naming no parameters (src/gateway_class.rs): Accepted True.
	b.classStatus, _, _ = unstructured.NestedMap(class.Object, "status")
	b.class = map[string]any{"status": map[string]any{"conditions": []any{map[string]any{
		"type": "Accepted", "status": "True", "reason": "Accepted",
		"message":            "GatewayClass accepted by " + controllerName,
		"observedGeneration": class.GetGeneration(), "lastTransitionTime": now,
	}}}}
	b.classKeys = statusKeys(b.class)
	return b, nil
}

// planOutput is what `gateway-reconcile plan` prints (the fields the story sends).
type planOutput struct {
	Action      string         `json:"action"`
	Desired     map[string]any `json:"desired"`
	Events      []coreEvent    `json:"events"`
	StatusPatch map[string]any `json:"statusPatch"`
}

// runPlan runs the crate's CLI, `gateway-reconcile plan ARGS...`.
func runPlan(planBin string, args ...string) (planOutput, error) {
	var p planOutput
	out, err := exec.Command(planBin, append([]string{"plan"}, args...)...).Output()
	if err != nil {
		return p, err
	}
	return p, json.Unmarshal(out, &p)
}

// editGateway is what the bare client sends for one Gateway of an edit.
type editGateway struct {
	ref        gatewayRef
	uid        string
	deployment map[string]any // the replace body; metadata.resourceVersion is set per run
	status     map[string]any
	events     []coreEvent
}

// editBodies are the writes of an edit of the GatewayConfiguration shared by K Gateways,
// and what puts them back: the LB Deployments and the written status fields as they were.
type editBodies struct {
	gateways []editGateway
	before   map[gatewayRef]map[string]any // LB Deployments, ready to be replaced
	statuses map[gatewayRef]map[string]any
	keys     []string
	replicas int64 // the Deployments' replicas before the edit
}

// updateBody is the Deployment ours PUTs: requestBody on update.
func updateBody(desired map[string]any) map[string]any {
	return requestBody(desired, true)
}

// renderEdit asks the crate's CLI for the plan of each of the Gateways `refs`, on the
// objects as the API server holds them after an edit of their GatewayConfiguration: each
// must be an update of its LB Deployment with a status patch.
func renderEdit(ctx context.Context, dyn dynamic.Interface, planBin string, l layout, refs []gatewayRef) (*editBodies, error) {
	class, err := dyn.Resource(gvrClass).Get(ctx, className, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	write, classFile, done, err := planFiles(class)
	if err != nil {
		return nil, err
	}
	defer done()
	e := &editBodies{gateways: make([]editGateway, len(refs)), before: map[gatewayRef]map[string]any{},
		statuses: map[gatewayRef]map[string]any{}}
	var mu sync.Mutex
	now := time.Now().UTC().Format(time.RFC3339)
	err = forEach(len(refs), 4, func(i int) error {
		g := refs[i]
		gw, err := dyn.Resource(gvrGateway).Namespace(g.namespace).Get(ctx, g.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d, err := dyn.Resource(gvrDeploy).Namespace(g.namespace).Get(ctx, lbName(g.name), metav1.GetOptions{})
		if err != nil {
			return err
		}
		conf, err := dyn.Resource(gvrConfig).Namespace(g.namespace).Get(ctx, sharedConfig, metav1.GetOptions{})
		if err != nil {
			return err
		}
		route, err := dyn.Resource(gvrRoute).Namespace(g.namespace).Get(ctx, g.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		prefix := fmt.Sprintf("%s-%s-", g.namespace, g.name)
		var files [4]string
		for j, o := range []any{gw.Object, d.Object, conf.Object, []any{route.Object}} {
			if files[j], err = write(fmt.Sprintf("%s%d.json", prefix, j), o); err != nil {
				return err
			}
		}
		p, err := runPlan(planBin, "--now", now, "--gateway", files[0], "--gateway-class", classFile,
			"--deployment", files[1], "--configuration", files[2], "--routes", files[3])
		if err != nil {
			return fmt.Errorf("plan of %s/%s: %w", g.namespace, g.name, err)
		}
		if p.Action != "Update" || p.Desired == nil || p.StatusPatch == nil {
			return fmt.Errorf("plan of %s/%s: action %q, not an update with a status patch", g.namespace, g.name, p.Action)
		}
		before := d.DeepCopy().Object
		meta := before["metadata"].(map[string]any)
		delete(meta, "resourceVersion")
		delete(meta, "managedFields")
		delete(before, "status")
		status, _, _ := unstructured.NestedMap(gw.Object, "status")
		replicas, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
		mu.Lock()
		defer mu.Unlock()
		e.gateways[i] = editGateway{ref: g, uid: string(gw.GetUID()), deployment: updateBody(p.Desired),
			status: p.StatusPatch, events: p.Events}
		e.before[g], e.statuses[g], e.replicas = before, status, replicas
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.keys = statusKeys(e.gateways[0].status)
	return e, nil
}

// planFiles makes a scratch directory for the plan's input files: `write` puts a value in
// it as JSON and answers its path; the GatewayClass is written first. `done` removes it.
func planFiles(class *unstructured.Unstructured) (write func(name string, v any) (string, error), classFile string, done func(), err error) {
	dir, err := os.MkdirTemp("", "scale-plan")
	if err != nil {
		return nil, "", nil, err
	}
	done = func() { os.RemoveAll(dir) }
	write = func(name string, v any) (string, error) {
		p := filepath.Join(dir, name)
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		return p, os.WriteFile(p, b, 0o600)
	}
	if classFile, err = write("class.json", class.Object); err != nil {
		done()
		return nil, "", nil, err
	}
	return write, classFile, done, nil
}
