package main

// The limit story (`scale limit`, docs/scale.md "The floor of the start"): what the control
// plane can do at all for the start of N Gateways, measured on the control plane that then
// runs ours' start. A bare client, with no controller logic, makes the requests our
// controller makes at start: the same streaming lists (the watches of
// gateway-reconcile-kube/src/controller/mod.rs, kept open as ours keeps them), then per
// Gateway the same Deployment create, Gateway status patch and Event, and the one
// GatewayClass status patch; its bodies are the core's own, rendered before the clock
// starts by the crate's `gateway-reconcile plan` for each Gateway as the API server holds
// it. It runs at several concurrencies (Gateways in flight, each one's writes in order) over
// HTTP/2 and HTTP/1.1; the fastest is the floor. Between two points, and before ours, what
// the last one wrote is deleted and the Gateways' and the GatewayClass's status put back.
// Then the restart, on the state ours' start left: the bare client's streaming lists alone
// (a restart writes nothing) against ours' time until every Gateway is reconciled.

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

var gvrEvent = schema.GroupVersionResource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

const (
	// What ours sends as fieldManager (gateway-reconcile-kube/src/write.rs) and as the
	// Events' reportingController (its Reporter, no --instance).
	fieldManager = "gateway-reconcile-controller"
	// The label selector of ours' LB Deployments watch (caches.rs, lb_selector).
	lbSelector = "app.kubernetes.io/managed-by=gateway-controller.meridio-2.nordix.org"
	// kube-rs's watch: a streaming list (watcher::Config, timeout 290 s; resourceVersion 0,
	// as ours sends it).
	streamingList = "watch=true&timeoutSeconds=290&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0"
	// kube-rs's Accept header for a metadata watch.
	metadataJSON = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
)

// floorWatch is one of ours' watches: every object of a resource (or those a label selects),
// whole or by its metadata.
type floorWatch struct {
	name     string
	path     string
	selector string
	metadata bool
}

// floorWatches are the watches of gateway-reconcile-kube/src/controller/mod.rs (run_with),
// all namespaces.
var floorWatches = []floorWatch{
	{name: "gatewayclasses", path: "/apis/gateway.networking.k8s.io/v1/gatewayclasses"},
	{name: "gatewayconfigurations", path: "/apis/" + domain + "/v1alpha1/gatewayconfigurations"},
	{name: "l34routes", path: "/apis/" + domain + "/v1alpha1/l34routes"},
	{name: "lb-deployments", path: "/apis/apps/v1/deployments", selector: lbSelector},
	{name: "deployment-metadata", path: "/apis/apps/v1/deployments", metadata: true},
	{name: "namespace-metadata", path: "/api/v1/namespaces", metadata: true},
	{name: "gateways", path: "/apis/gateway.networking.k8s.io/v1/gateways"},
}

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

// limitPoint is one run of the bare client.
type limitPoint struct {
	HTTP        string   `json:"http"`        // "h2" or "http1"
	Concurrency int      `json:"concurrency"` // Gateways in flight
	ListsS      float64  `json:"lists_s"`     // until every streaming list has sent its initial events
	LastWriteS  float64  `json:"last_write_s"`
	AuditSpanS  float64  `json:"audit_span_s"` // audit log: first request received to last write completed
	Requests    requests `json:"requests"`
}

// limitResult is one limit story (the JSON file of `scale limit -out`).
type limitResult struct {
	N          int          `json:"n"`
	Namespaces int          `json:"namespaces"`
	Populate   float64      `json:"populate_s"`
	RenderS    float64      `json:"render_s"` // the core's bodies, before any clock
	Sweep      []limitPoint `json:"sweep"`
	Floor      limitPoint   `json:"floor"`
	// The floor's setting once more, after ours: how much the control plane drifted.
	After *limitPoint `json:"after,omitempty"`
	Ours  struct {
		HealthyS   float64  `json:"healthy_s"`
		LastWriteS float64  `json:"last_write_s"`
		AuditSpanS float64  `json:"audit_span_s"`
		Requests   requests `json:"requests"`
		Usage      usage    `json:"usage"`
	} `json:"ours"`
	// The restart, everything converged: the bare client's streaming lists alone (a
	// restart writes nothing), three times, against ours' time until every Gateway is
	// reconciled.
	Restart struct {
		Floor    []limitPoint `json:"floor"`
		FloorS   float64      `json:"floor_s"` // the least ListsS
		OursS    float64      `json:"ours_reconciled_s"`
		Requests requests     `json:"requests"` // ours'
	} `json:"restart"`
	Failures []string `json:"failures,omitempty"`
}

// pickFloor is the fastest point of the sweep (time to the last write); the first of equals.
func pickFloor(points []limitPoint) (limitPoint, bool) {
	if len(points) == 0 {
		return limitPoint{}, false
	}
	best := points[0]
	for _, p := range points[1:] {
		if p.LastWriteS < best.LastWriteS {
			best = p
		}
	}
	return best, true
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

// createBody is the Deployment ours POSTs: the desired object without status and
// managedFields, nor the server-set metadata (gateway-reconcile-kube/src/write.rs, body).
func createBody(desired map[string]any) ([]byte, error) {
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
			case "managedFields", "resourceVersion", "uid", "creationTimestamp", "generation":
			default:
				meta[k] = v
			}
		}
		d["metadata"] = meta
	}
	return json.Marshal(d)
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
	dir, err := os.MkdirTemp("", "scale-limit")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	write := func(name string, v any) (string, error) {
		p := filepath.Join(dir, name)
		b, err := json.Marshal(v)
		if err != nil {
			return "", err
		}
		return p, os.WriteFile(p, b, 0o600)
	}
	classFile, err := write("class.json", class.Object)
	if err != nil {
		return nil, err
	}
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
		out, err := exec.Command(planBin, "plan", "--now", now, "--gateway", gf, "--gateway-class", classFile,
			"--configuration", cf, "--routes", rf).Output()
		if err != nil {
			return fmt.Errorf("plan of %s/%s: %w", g.namespace, g.name, err)
		}
		var p struct {
			Action      string         `json:"action"`
			Desired     map[string]any `json:"desired"`
			Events      []coreEvent    `json:"events"`
			StatusPatch map[string]any `json:"statusPatch"`
		}
		if err := json.Unmarshal(out, &p); err != nil {
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

// floorClient is the bare client: net/http with the controller user's certificate, its own
// connections (none shared with another run), no rate limit, JSON.
type floorClient struct {
	server    string
	transport *http.Transport
	http      *http.Client
}

func newFloorClient(kubeconfig string, h2 bool) (*floorClient, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	t := &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second}
	if h2 {
		t.ForceAttemptHTTP2 = true
	} else {
		tlsConfig.NextProtos = []string{"http/1.1"}
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &floorClient{server: cfg.Host, transport: t, http: &http.Client{Transport: t}}, nil
}

func (f *floorClient) send(ctx context.Context, method, path, contentType string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, method, f.server+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := f.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, shorten(string(answer)))
	}
	return nil
}

// watch runs one streaming list and keeps the watch open until ctx ends, reading (and
// dropping) its events; `listed` is called once the initial events have ended, with the
// resourceVersion of each object listed by namespace/name.
func (f *floorClient) watch(ctx context.Context, w floorWatch, listed func(map[gatewayRef]string, error)) {
	once := sync.Once{}
	done := func(m map[gatewayRef]string, err error) { once.Do(func() { listed(m, err) }) }
	q := streamingList
	if w.selector != "" {
		q += "&labelSelector=" + url.QueryEscape(w.selector)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.server+w.path+"?"+q, nil)
	if err != nil {
		done(nil, err)
		return
	}
	req.Header.Set("Accept", "application/json")
	if w.metadata {
		req.Header.Set("Accept", metadataJSON)
	}
	resp, err := f.http.Do(req)
	if err != nil {
		done(nil, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		done(nil, fmt.Errorf("watch %s: %d %s", w.name, resp.StatusCode, shorten(string(b))))
		return
	}
	versions := map[gatewayRef]string{}
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name            string            `json:"name"`
					Namespace       string            `json:"namespace"`
					ResourceVersion string            `json:"resourceVersion"`
					Annotations     map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			done(nil, fmt.Errorf("watch %s ended before its initial events did: %w", w.name, err))
			return
		}
		m := ev.Object.Metadata
		switch ev.Type {
		case "ADDED":
			versions[gatewayRef{m.Namespace, m.Name}] = m.ResourceVersion
		case "BOOKMARK":
			if m.Annotations["k8s.io/initial-events-end"] == "true" {
				done(versions, nil)
			}
		case "ERROR":
			done(nil, fmt.Errorf("watch %s: an ERROR event", w.name))
			return
		}
	}
}

// floorPoint runs the bare client once: the streaming lists, then the writes with
// `concurrency` Gateways in flight (each one's Deployment create, status patch and Events
// in order) and the GatewayClass's status patch beside them. Without bodies (b nil), the
// streaming lists only: a restart, which writes nothing.
func floorPoint(kubeconfig, user string, b *floorBodies, concurrency int, h2 bool) (limitPoint, error) {
	p := limitPoint{HTTP: "http1", Concurrency: concurrency}
	if h2 {
		p.HTTP = "h2"
	}
	f, err := newFloorClient(kubeconfig, h2)
	if err != nil {
		return p, err
	}
	defer f.transport.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m0, err := auditMark()
	if err != nil {
		return p, err
	}
	t0 := time.Now()
	type listedOf struct {
		name     string
		versions map[gatewayRef]string
		err      error
	}
	listed := make(chan listedOf, len(floorWatches))
	var wg sync.WaitGroup
	for _, w := range floorWatches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.watch(ctx, w, func(v map[gatewayRef]string, err error) { listed <- listedOf{w.name, v, err} })
		}()
	}
	versions := map[string]map[gatewayRef]string{}
	timeout := time.After(5 * time.Minute)
	for range floorWatches {
		select {
		case l := <-listed:
			if l.err != nil {
				return p, l.err
			}
			versions[l.name] = l.versions
		case <-timeout:
			return p, fmt.Errorf("the streaming lists did not end in 5 minutes")
		}
	}
	p.ListsS = time.Since(t0).Seconds()

	if b != nil {
		if err := floorWrites(ctx, f, b, versions, concurrency); err != nil {
			return p, err
		}
	}
	cancel()
	wg.Wait()
	// The audit log's last lines (a write is logged when it completes, the watches' ends
	// as they close).
	time.Sleep(time.Second)
	m1, _ := auditMark()
	if p.Requests, err = between(user, m0, m1); err != nil {
		return p, err
	}
	if p.Requests.Reads == 0 {
		return p, fmt.Errorf("none of its requests in the audit log (%d..%d)", m0, m1)
	}
	if b != nil {
		if p.Requests.Writes == 0 {
			return p, fmt.Errorf("none of its writes in the audit log (%d..%d)", m0, m1)
		}
		p.LastWriteS = p.Requests.lastWrite.Sub(t0).Seconds()
		p.AuditSpanS = p.Requests.span().Seconds()
	}
	return p, nil
}

// floorWrites are the writes of a start, once the streaming lists have given `versions`.
func floorWrites(ctx context.Context, f *floorClient, b *floorBodies, versions map[string]map[gatewayRef]string, concurrency int) error {
	classDone := make(chan error, 1)
	go func() {
		body, err := withResourceVersion(b.class, versions["gatewayclasses"][gatewayRef{"", className}])
		if err == nil {
			err = f.send(ctx, http.MethodPatch, "/apis/gateway.networking.k8s.io/v1/gatewayclasses/"+className+
				"/status?fieldManager="+fieldManager, "application/merge-patch+json", body)
		}
		classDone <- err
	}()
	err := forEach(len(b.gateways), concurrency, func(i int) error {
		g := b.gateways[i]
		ns, name := g.ref.namespace, g.ref.name
		if err := f.send(ctx, http.MethodPost, "/apis/apps/v1/namespaces/"+ns+"/deployments?fieldManager="+fieldManager,
			"application/json", g.deployment); err != nil {
			return err
		}
		rv, ok := versions["gateways"][g.ref]
		if !ok {
			return fmt.Errorf("Gateway %s/%s not in the streaming list", ns, name)
		}
		body, err := withResourceVersion(g.status, rv)
		if err != nil {
			return err
		}
		if err := f.send(ctx, http.MethodPatch, "/apis/gateway.networking.k8s.io/v1/namespaces/"+ns+"/gateways/"+name+
			"/status?fieldManager="+fieldManager, "application/merge-patch+json", body); err != nil {
			return err
		}
		for _, e := range g.events {
			if err := f.send(ctx, http.MethodPost, "/apis/events.k8s.io/v1/namespaces/"+ns+"/events",
				"application/json", eventBody(g.ref, g.uid, e, time.Now())); err != nil {
				return err
			}
		}
		return nil
	})
	if cerr := <-classDone; err == nil {
		err = cerr
	}
	return err
}

// resetStart deletes what a start wrote (the LB Deployments, the Events of the Gateways'
// namespaces) and puts the Gateways' and the GatewayClass's status back as they were
// before any write, as the admin; then waits until the harness's watch sees no LB
// Deployment left.
func resetStart(ctx context.Context, dyn dynamic.Interface, obs *observer, l layout, b *floorBodies, workers int) error {
	for ns := 0; ns < l.namespaces; ns++ {
		name := l.namespace(ns)
		if err := dyn.Resource(gvrDeploy).Namespace(name).DeleteCollection(ctx, metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: lbSelector}); err != nil {
			return err
		}
		if err := dyn.Resource(gvrEvent).Namespace(name).DeleteCollection(ctx, metav1.DeleteOptions{},
			metav1.ListOptions{}); err != nil {
			return err
		}
	}
	refs := l.gateways()
	err := forEach(len(refs), workers, func(i int) error {
		g := refs[i]
		_, err := dyn.Resource(gvrGateway).Namespace(g.namespace).Patch(ctx, g.name, types.MergePatchType,
			resetPatch(b.gatewayStatus[g], b.gatewayKeys), metav1.PatchOptions{}, "status")
		return err
	})
	if err != nil {
		return err
	}
	if _, err := dyn.Resource(gvrClass).Patch(ctx, className, types.MergePatchType,
		resetPatch(b.classStatus, b.classKeys), metav1.PatchOptions{}, "status"); err != nil {
		return err
	}
	selector, _ := labels.Parse(lbSelector)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		left, err := obs.deployments.List(selector)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reset: %d LB Deployments still seen after 2 minutes", len(left))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// parseInts reads "1,4,8".
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("not a positive integer: %q", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func limitStory(o options) error {
	if o.controller != "ours" || o.planBin == "" {
		return fmt.Errorf("limit: -controller ours and -plan PATH/TO/gateway-reconcile are needed")
	}
	concurrencies, err := parseInts(o.concurrency)
	if err != nil {
		return err
	}
	var transports []bool
	for _, h := range strings.FieldsFunc(o.http, func(r rune) bool { return r == ',' || r == ' ' }) {
		switch h {
		case "h2":
			transports = append(transports, true)
		case "http1":
			transports = append(transports, false)
		default:
			return fmt.Errorf("-http: h2 or http1, not %q", h)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dyn, _, err := adminClient()
	if err != nil {
		return err
	}
	// Ours' identity (its user, bound to its ClusterRole): the bare client is the same
	// user, so that RBAC and API Priority and Fairness treat both alike.
	c, err := newController(ctx, dyn, o)
	if err != nil {
		return err
	}
	defer c.stop()
	l := layout{n: o.n, namespaces: o.namespaces}
	r := limitResult{N: o.n, Namespaces: o.namespaces}
	t := time.Now()
	if err := populate(ctx, dyn, l, o.workers); err != nil {
		return err
	}
	r.Populate = time.Since(t).Seconds()
	obs, err := observe(ctx, dyn)
	if err != nil {
		return err
	}
	t = time.Now()
	b, err := renderBodies(ctx, dyn, o.planBin, l)
	if err != nil {
		return err
	}
	r.RenderS = time.Since(t).Seconds()
	say("limit: %d Gateways created in %.1f s; the core's bodies rendered in %.1f s (Deployment %d bytes, status patch %d, %d Event(s) each)",
		o.n, r.Populate, r.RenderS, len(b.gateways[0].deployment), len(mustJSON(b.gateways[0].status)), len(b.gateways[0].events))

	// What a start leaves on the first Gateway, from the harness's watch: the bare
	// client's and ours' must be alike (writtenBy).
	first := l.gateways()[0]
	var floorWrote, oursWrote written
	point := func(concurrency int, h2 bool) (limitPoint, error) {
		p, err := floorPoint(c.kubeconfig, c.user, b, concurrency, h2)
		if err != nil {
			return p, fmt.Errorf("floor, %s, concurrency %d: %w", p.HTTP, concurrency, err)
		}
		say("limit: floor %s concurrency %d: lists %.2f s, last write %.2f s (audit span %.2f s; %s)",
			p.HTTP, concurrency, p.ListsS, p.LastWriteS, p.AuditSpanS, p.Requests)
		time.Sleep(settle)
		floorWrote = writtenOn(obs, first)
		return p, resetStart(ctx, dyn, obs, l, b, o.workers)
	}
	for _, h2 := range transports {
		for _, k := range concurrencies {
			p, err := point(k, h2)
			if err != nil {
				return err
			}
			r.Sweep = append(r.Sweep, p)
		}
	}
	floor, ok := pickFloor(r.Sweep)
	if !ok {
		return fmt.Errorf("limit: an empty sweep")
	}
	r.Floor = floor
	time.Sleep(settle)

	// Ours' start, on the same control plane, as the run story's.
	m0, err := auditMark()
	if err != nil {
		return err
	}
	t = time.Now()
	if err := c.start(); err != nil {
		return err
	}
	d, err := obs.waitAll("every Gateway healthy", l.gateways(), nil, healthy("ours"), t, o.timeout, c.alive)
	if err != nil {
		return fmt.Errorf("%w (controller log: %s)", err, c.log)
	}
	r.Ours.HealthyS = d.Seconds()
	if r.Ours.Usage, err = c.usage(); err != nil {
		return err
	}
	time.Sleep(settle)
	m1, _ := auditMark()
	if r.Ours.Requests, err = between(c.user, m0, m1); err != nil {
		return err
	}
	oursWrote = writtenOn(obs, first)
	r.Ours.LastWriteS = r.Ours.Requests.lastWrite.Sub(t).Seconds()
	r.Ours.AuditSpanS = r.Ours.Requests.span().Seconds()
	say("limit: ours: every Gateway healthy after %.2f s, last write %.2f s (audit span %.2f s; %s)",
		r.Ours.HealthyS, r.Ours.LastWriteS, r.Ours.AuditSpanS, r.Ours.Requests)
	c.stop()

	// The restart, on the converged state ours left: the streaming lists alone over
	// HTTP/1.1 (ours' transport; one connection per watch either way), then ours.
	for try := 0; try < 3; try++ {
		time.Sleep(time.Second)
		p, err := floorPoint(c.kubeconfig, c.user, nil, 0, false)
		if err != nil {
			return fmt.Errorf("floor of the restart: %w", err)
		}
		r.Restart.Floor = append(r.Restart.Floor, p)
		if try == 0 || p.ListsS < r.Restart.FloorS {
			r.Restart.FloorS = p.ListsS
		}
	}
	time.Sleep(settle)
	m2, _ := auditMark()
	t = time.Now()
	if err := c.start(); err != nil {
		return err
	}
	if err := c.waitReconciled(o.n, t, o.timeout); err != nil {
		return err
	}
	r.Restart.OursS = time.Since(t).Seconds()
	time.Sleep(2 * settle)
	m3, _ := auditMark()
	if r.Restart.Requests, err = between(c.user, m2, m3); err != nil {
		return err
	}
	say("limit: restart: the streaming lists alone %.2f s (least of 3); ours: every Gateway reconciled after %.2f s (%s)",
		r.Restart.FloorS, r.Restart.OursS, r.Restart.Requests)
	c.stop()

	// The floor's setting once more, after ours.
	time.Sleep(settle)
	if err := resetStart(ctx, dyn, obs, l, b, o.workers); err != nil {
		return err
	}
	time.Sleep(settle)
	after, err := point(floor.Concurrency, floor.HTTP == "h2")
	if err != nil {
		return err
	}
	r.After = &after

	if o.check {
		r.Failures = limitGoals(r)
		if diff := floorWrote.differs(oursWrote); diff != "" {
			r.Failures = append(r.Failures, fmt.Sprintf("%s/%s: the bare client's writes differ from ours: %s",
				first.namespace, first.name, diff))
		}
	}
	if o.out != "" {
		data, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(o.out, data, 0o644); err != nil {
			return err
		}
	}
	limitTable(r, os.Stdout)
	if len(r.Failures) > 0 {
		return fmt.Errorf("limit: %d check(s) failed:\n  %s", len(r.Failures), strings.Join(r.Failures, "\n  "))
	}
	return nil
}

// written is what a start leaves of one Gateway: its LB Deployment's labels, annotations,
// owners and spec, and the Gateway's status (the conditions' times left out).
type written struct{ deployment, status any }

func writtenOn(obs *observer, g gatewayRef) written {
	var w written
	if d, ok := obs.get(obs.deployments, gatewayRef{g.namespace, lbName(g.name)}); ok {
		meta := d.Object["metadata"].(map[string]any)
		w.deployment = map[string]any{"labels": meta["labels"], "annotations": meta["annotations"],
			"ownerReferences": meta["ownerReferences"], "spec": d.Object["spec"]}
	}
	if gw, ok := obs.get(obs.gateways, g); ok {
		w.status = withoutTimes(gw.Object["status"])
	}
	return w
}

// withoutTimes is a copy of v without its lastTransitionTime fields.
func withoutTimes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			if k != "lastTransitionTime" {
				out[k] = withoutTimes(x)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = withoutTimes(x)
		}
		return out
	}
	return v
}

// differs names what differs ("" when alike).
func (w written) differs(o written) string {
	var out []string
	if w.deployment == nil || o.deployment == nil || !reflect.DeepEqual(w.deployment, o.deployment) {
		out = append(out, fmt.Sprintf("LB Deployment %s against %s", mustJSON(w.deployment), mustJSON(o.deployment)))
	}
	if w.status == nil || o.status == nil || !reflect.DeepEqual(w.status, o.status) {
		out = append(out, fmt.Sprintf("Gateway status %s against %s", mustJSON(w.status), mustJSON(o.status)))
	}
	return strings.Join(out, "; ")
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// writesOf are the write requests of a count ("create deployments" 1000, ...).
func writesOf(q requests) map[string]int {
	out := map[string]int{}
	for k, v := range q.ByVerb {
		if isWrite(strings.SplitN(k, " ", 2)[0]) {
			out[k] = v
		}
	}
	return out
}

// limitGoals: the bare client made the requests ours made (the same writes, as many
// streaming lists), and ours met the start goals of the run story.
func limitGoals(r limitResult) []string {
	var f []string
	ours := writesOf(r.Ours.Requests)
	for _, p := range append(append([]limitPoint{}, r.Sweep...), *r.After) {
		if got := writesOf(p.Requests); fmt.Sprint(got) != fmt.Sprint(ours) {
			f = append(f, fmt.Sprintf("floor %s %d: writes %v, ours %v", p.HTTP, p.Concurrency, got, ours))
		}
		if got, want := p.Requests.count("watch-list"), r.Ours.Requests.count("watch-list"); got != want {
			f = append(f, fmt.Sprintf("floor %s %d: %d streaming lists, ours %d", p.HTTP, p.Concurrency, got, want))
		}
		if p.Requests.Refused > 0 {
			f = append(f, fmt.Sprintf("floor %s %d: %d requests refused", p.HTTP, p.Concurrency, p.Requests.Refused))
		}
	}
	if r.Restart.Requests.Writes != 0 {
		f = append(f, fmt.Sprintf("ours' restart: %d writes (%s)", r.Restart.Requests.Writes, r.Restart.Requests))
	}
	for _, p := range r.Restart.Floor {
		if got, want := p.Requests.count("watch-list"), r.Restart.Requests.count("watch-list"); got != want || p.Requests.Writes != 0 {
			f = append(f, fmt.Sprintf("floor of the restart: %d streaming lists and %d writes; ours %d streaming lists", got, p.Requests.Writes, want))
		}
	}
	// The run story's start goals (its other stories are not run here).
	for _, g := range goals(result{N: r.N, Start: r.Ours.Requests, Idle: requests{}, Restart: requests{}, Edit: requests{}}) {
		if strings.HasPrefix(g, "start:") {
			f = append(f, "ours "+g)
		}
	}
	return f
}

// limitTable prints the sweep and ours against the floor.
func limitTable(r limitResult, w io.Writer) {
	fmt.Fprintf(w, "\nThe start of N = %d: the bare client's sweep, then ours on the same control plane\n\n", r.N)
	fmt.Fprintln(w, "| transport | Gateways in flight | streaming lists done (s) | last write (s) | audit span (s) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, p := range r.Sweep {
		mark := ""
		if p.HTTP == r.Floor.HTTP && p.Concurrency == r.Floor.Concurrency {
			mark = " **floor**"
		}
		fmt.Fprintf(w, "| %s | %d%s | %.2f | %.2f | %.2f |\n", p.HTTP, p.Concurrency, mark, p.ListsS, p.LastWriteS, p.AuditSpanS)
	}
	if r.After != nil {
		fmt.Fprintf(w, "| %s, after ours | %d | %.2f | %.2f | %.2f |\n", r.After.HTTP, r.After.Concurrency,
			r.After.ListsS, r.After.LastWriteS, r.After.AuditSpanS)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| start | floor | ours | ours / floor |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	ratio := func(a, b float64) string {
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	fmt.Fprintf(w, "| time to the last write (s) | %.2f | %.2f | %s |\n", r.Floor.LastWriteS, r.Ours.LastWriteS,
		ratio(r.Ours.LastWriteS, r.Floor.LastWriteS))
	fmt.Fprintf(w, "| audit span, first request to last write (s) | %.2f | %.2f | %s |\n", r.Floor.AuditSpanS,
		r.Ours.AuditSpanS, ratio(r.Ours.AuditSpanS, r.Floor.AuditSpanS))
	fmt.Fprintf(w, "| every Gateway healthy (s; ours), against the floor's last write | %.2f | %.2f | %s |\n",
		r.Floor.LastWriteS, r.Ours.HealthyS, ratio(r.Ours.HealthyS, r.Floor.LastWriteS))
	fmt.Fprintf(w, "| writes | %d | %d | |\n", r.Floor.Requests.Writes, r.Ours.Requests.Writes)
	fmt.Fprintf(w, "| restart: streaming lists done (floor, least of %d) / every Gateway reconciled (ours) (s) | %.2f | %.2f | %s |\n",
		len(r.Restart.Floor), r.Restart.FloorS, r.Restart.OursS, ratio(r.Restart.OursS, r.Restart.FloorS))
	fmt.Fprintf(w, "| ours' CPU at convergence (s) | | %.2f | |\n", r.Ours.Usage.CPUSeconds)
}
