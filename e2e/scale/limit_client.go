package main

// The bare client of the limit story: net/http with ours' identity, ours' streaming lists
// and writes, no controller logic; and what undoes a start between two runs.

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

// lists opens ours' streaming lists and waits until each has sent its initial events
// (5 minutes at most); the watches stay open, read, until ctx ends (wg then returns).
// Returns the resourceVersion of each object listed, by watch and namespace/name.
func (f *floorClient) lists(ctx context.Context, wg *sync.WaitGroup) (map[string]map[gatewayRef]string, error) {
	type listedOf struct {
		name     string
		versions map[gatewayRef]string
		err      error
	}
	listed := make(chan listedOf, len(floorWatches))
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
				return nil, l.err
			}
			versions[l.name] = l.versions
		case <-timeout:
			return nil, fmt.Errorf("the streaming lists did not end in 5 minutes")
		}
	}
	return versions, nil
}

// floorPoint runs the bare client once: the streaming lists, then the writes with
// `concurrency` Gateways in flight (each one's Deployment create, status patch and Events
// in order; without the Events when `noEvents`) and the GatewayClass's status patch beside
// them. Without bodies (b nil), the streaming lists only: a restart, which writes nothing.
func floorPoint(kubeconfig, user string, b *floorBodies, concurrency int, h2, noEvents bool) (limitPoint, error) {
	p := limitPoint{HTTP: "http1", Concurrency: concurrency, NoEvents: noEvents}
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
	cpu0 := sampleCPU(os.Getpid())
	t0 := time.Now()
	var wg sync.WaitGroup
	versions, err := f.lists(ctx, &wg)
	if err != nil {
		return p, err
	}
	p.ListsS = time.Since(t0).Seconds()
	if b != nil {
		if err := floorWrites(ctx, f, b, versions, concurrency, noEvents); err != nil {
			return p, err
		}
	}
	p.CPU = sampleCPU(os.Getpid()).since(cpu0, time.Since(t0).Seconds())
	cancel()
	wg.Wait()
	return p, p.audited(user, m0, t0, b != nil)
}

// audited reads the point's requests from the audit log (after its last lines: a write is
// logged when it completes, a watch's end as it closes) and its times from them.
func (p *limitPoint) audited(user string, m0 mark, t0 time.Time, writes bool) error {
	time.Sleep(time.Second)
	m1, _ := auditMark()
	var err error
	if p.Requests, err = between(user, m0, m1); err != nil {
		return err
	}
	if p.Requests.Reads == 0 && p.Requests.Writes == 0 {
		return fmt.Errorf("none of its requests in the audit log (%d..%d)", m0, m1)
	}
	if writes {
		if p.Requests.Writes == 0 {
			return fmt.Errorf("none of its writes in the audit log (%d..%d)", m0, m1)
		}
		p.LastWriteS = p.Requests.lastWrite.Sub(t0).Seconds()
		p.AuditSpanS = p.Requests.span().Seconds()
	}
	return nil
}

// editPoint is the floor of an edit: the bare client (HTTP/1.1, ours' transport) opens
// ours' streaming lists, untimed (a running controller has them open), then makes the
// edit's writes with `concurrency` Gateways in flight: per Gateway the Deployment
// replace (its resourceVersion from the list, as ours' carries the cached one), the
// status patch and the Events. Timed from its first write.
func editPoint(kubeconfig, user string, e *editBodies, concurrency int) (limitPoint, error) {
	p := limitPoint{HTTP: "http1", Concurrency: concurrency}
	f, err := newFloorClient(kubeconfig, false)
	if err != nil {
		return p, err
	}
	defer f.transport.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	versions, err := f.lists(ctx, &wg)
	if err != nil {
		return p, err
	}
	m0, err := auditMark()
	if err != nil {
		return p, err
	}
	cpu0 := sampleCPU(os.Getpid())
	t0 := time.Now()
	err = forEach(len(e.gateways), concurrency, func(i int) error {
		g := e.gateways[i]
		ns, name := g.ref.namespace, g.ref.name
		rv, ok := versions["lb-deployments"][gatewayRef{ns, lbName(name)}]
		if !ok {
			return fmt.Errorf("LB Deployment of %s/%s not in the streaming list", ns, name)
		}
		body, err := withResourceVersion(g.deployment, rv)
		if err != nil {
			return err
		}
		if err := f.send(ctx, http.MethodPut, "/apis/apps/v1/namespaces/"+ns+"/deployments/"+lbName(name)+
			"?fieldManager="+fieldManager, "application/json", body); err != nil {
			return err
		}
		return f.statusAndEvents(ctx, floorGateway{ref: g.ref, uid: g.uid, status: g.status, events: g.events},
			versions["gateways"], false)
	})
	if err != nil {
		return p, err
	}
	p.CPU = sampleCPU(os.Getpid()).since(cpu0, time.Since(t0).Seconds())
	cancel()
	wg.Wait()
	return p, p.audited(user, m0, t0, true)
}

// listsProcess is the floor of a restart with a process start: `scale limit-lists` as a
// process of its own (ours' streaming lists, then exit), timed from its start to its exit.
func listsProcess(kubeconfig, user string) (limitPoint, error) {
	p := limitPoint{HTTP: "http1", Process: true}
	self, err := os.Executable()
	if err != nil {
		return p, err
	}
	m0, err := auditMark()
	if err != nil {
		return p, err
	}
	cpu0 := sampleCPU(0)
	t0 := time.Now()
	cmd := exec.Command(self, "limit-lists", kubeconfig)
	out, err := cmd.CombinedOutput()
	p.ListsS = time.Since(t0).Seconds()
	if err != nil {
		return p, fmt.Errorf("scale limit-lists: %w: %s", err, shorten(string(out)))
	}
	p.CPU = sampleCPU(0).since(cpu0, p.ListsS)
	if cmd.ProcessState != nil {
		p.CPU.ClientS = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	return p, p.audited(user, m0, t0, false)
}

// limitLists is `scale limit-lists KUBECONFIG`: ours' streaming lists over HTTP/1.1 as
// ours' user, until each has sent its initial events; then the process exits.
func limitLists(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: scale limit-lists KUBECONFIG")
	}
	f, err := newFloorClient(args[0], false)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	_, err = f.lists(ctx, &wg)
	return err
}

// floorWrites are the writes of a start, once the streaming lists have given `versions`.
func floorWrites(ctx context.Context, f *floorClient, b *floorBodies, versions map[string]map[gatewayRef]string, concurrency int, noEvents bool) error {
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
		if err := f.send(ctx, http.MethodPost, "/apis/apps/v1/namespaces/"+g.ref.namespace+"/deployments?fieldManager="+fieldManager,
			"application/json", g.deployment); err != nil {
			return err
		}
		return f.statusAndEvents(ctx, g, versions["gateways"], noEvents)
	})
	if cerr := <-classDone; err == nil {
		err = cerr
	}
	return err
}

// statusAndEvents sends a Gateway's status patch (with the listed resourceVersion as its
// precondition) and, unless `noEvents`, its Events.
func (f *floorClient) statusAndEvents(ctx context.Context, g floorGateway, gateways map[gatewayRef]string, noEvents bool) error {
	ns, name := g.ref.namespace, g.ref.name
	rv, ok := gateways[g.ref]
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
	if noEvents {
		return nil
	}
	for _, e := range g.events {
		if err := f.send(ctx, http.MethodPost, "/apis/events.k8s.io/v1/namespaces/"+ns+"/events",
			"application/json", eventBody(g.ref, g.uid, e, time.Now())); err != nil {
			return err
		}
	}
	return nil
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
	// The class first: its watch cache then has the Gateways' resets' time to catch up.
	if _, err := dyn.Resource(gvrClass).Patch(ctx, className, types.MergePatchType,
		resetPatch(b.classStatus, b.classKeys), metav1.PatchOptions{}, "status"); err != nil {
		return err
	}
	refs := l.gateways()
	versions := newVersions()
	err := forEach(len(refs), workers, func(i int) error {
		g := refs[i]
		u, err := dyn.Resource(gvrGateway).Namespace(g.namespace).Patch(ctx, g.name, types.MergePatchType,
			resetPatch(b.gatewayStatus[g], b.gatewayKeys), metav1.PatchOptions{}, "status")
		if err == nil {
			versions.set(g, u.GetResourceVersion())
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := obs.waitVersions(versions, 2*time.Minute); err != nil {
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

// resetEdit puts the K LB Deployments and Gateway statuses an edit wrote back as they were
// before it (as the admin: the Deployments replaced unconditionally, the statuses by merge
// patch), then waits until the harness's watch sees every Deployment back at its replicas.
func resetEdit(ctx context.Context, dyn dynamic.Interface, obs *observer, e *editBodies, workers int, timeout time.Duration) error {
	versions := newVersions()
	err := forEach(len(e.gateways), workers, func(i int) error {
		g := e.gateways[i]
		d := &unstructured.Unstructured{Object: e.before[g.ref]}
		_, err := dyn.Resource(gvrDeploy).Namespace(g.ref.namespace).Update(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		u, err := dyn.Resource(gvrGateway).Namespace(g.ref.namespace).Patch(ctx, g.ref.name, types.MergePatchType,
			resetPatch(e.statuses[g.ref], e.keys), metav1.PatchOptions{}, "status")
		if err == nil {
			versions.set(g.ref, u.GetResourceVersion())
		}
		return err
	})
	if err != nil {
		return err
	}
	if err := obs.waitVersions(versions, timeout); err != nil {
		return err
	}
	refs := make([]gatewayRef, len(e.gateways))
	for i, g := range e.gateways {
		refs[i] = g.ref
	}
	_, err = obs.waitAll("K Deployments put back", refs, lbName, replicas(e.replicas), time.Now(), timeout, nil)
	return err
}

// versions are the resourceVersions the admin's writes returned, by Gateway.
type versions struct {
	mu sync.Mutex
	m  map[gatewayRef]string
}

func newVersions() *versions { return &versions{m: map[gatewayRef]string{}} }

func (v *versions) set(g gatewayRef, rv string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.m[g] = rv
}

// waitVersions waits until the harness's watch has seen every Gateway at the version a
// reset left it at. The bare client's streaming lists are served from the API server's
// watch cache (resourceVersion 0), as ours' are: a list that starts right after a reset
// could otherwise see an older Gateway, and its status patch's precondition would fail
// (409). Nothing else writes the Gateways meanwhile, so the versions are exact.
func (o *observer) waitVersions(v *versions, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		left := 0
		for g, rv := range v.m {
			if u, ok := o.get(o.gateways, g); !ok || u.GetResourceVersion() != rv {
				left++
			}
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("reset: the watch has not seen %d Gateways' reset status after %s", left, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
