package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

// The ready story runs on the full control plane (E2E_FULL=1: kube-controller-manager,
// kube-scheduler, kwok's fake Nodes). The controller starts first, on the namespaces, the
// GatewayClass and the GatewayConfigurations; then N Gateways (and their L34Routes) are
// created, and for each one the story takes the time from its creation until its LB
// Deployment is Ready: the Deployment controller says, for the current generation, that
// every replica is updated, ready and available (kwok makes a bound Pod Ready at once).

var (
	gvrServiceAccount = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	gvrNode           = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
	gvrPod            = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// lbServiceAccount is the ServiceAccount both controllers' LB Pod template names: the
// API server's ServiceAccount admission refuses a Pod whose ServiceAccount is missing.
const lbServiceAccount = "stateless-load-balancer"

// replicasPerGateway is what the story's GatewayConfigurations say (configuration()).
const replicasPerGateway = 2

// The writers of the full control plane, as the audit log names them.
var fullWriters = []string{
	"system:serviceaccount:kube-system:deployment-controller",
	"system:serviceaccount:kube-system:replicaset-controller",
	"system:kube-scheduler",
	"kwok-controller",
}

// readyResult is one ready story (the JSON `scale ready-table` reads).
type readyResult struct {
	Controller string  `json:"controller"`
	N          int     `json:"n"`
	Namespaces int     `json:"namespaces"`
	Replicas   int     `json:"replicas_per_gateway"`
	CreateS    float64 `json:"create_span_s"` // first Gateway create to last
	// From the first Gateway's creation until every LB Deployment is Ready.
	AllReadyS float64 `json:"all_ready_s"`
	// From the first Gateway's creation until every LB Deployment exists (the controller's part).
	AllDeployedS float64 `json:"all_deployments_s"`
	// Per Gateway, from its creation: its Deployment seen, its Deployment Ready.
	Deployed percentiles `json:"deployment_s"`
	Ready    percentiles `json:"ready_s"`
	// Ready Pods of the LB Deployments at the end (by their `app` label), and the Nodes'
	// allocatable Pods.
	ReadyPods   int `json:"ready_pods"`
	Allocatable int `json:"allocatable_pods"`
	// Writes of the full control plane's components and the controller while the
	// Gateways came up: count and rate over each writer's own first-to-last write.
	Writers []writerRate `json:"writers"`
}

type percentiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Max float64 `json:"max"`
}

type writerRate struct {
	User   string  `json:"user"`
	Writes int     `json:"writes"`
	SpanS  float64 `json:"span_s"`
	PerSec float64 `json:"per_s"`
}

func percentilesOf(v []float64) percentiles {
	if len(v) == 0 {
		return percentiles{}
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	at := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1 // nearest rank
		return s[min(max(i, 0), len(s)-1)]
	}
	return percentiles{P50: at(0.5), P90: at(0.9), Max: s[len(s)-1]}
}

// deploymentReady: every replica updated, ready and available, as the Deployment
// controller says for the current generation.
func deploymentReady(u *unstructured.Unstructured) bool {
	want, ok, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !ok {
		want = 1
	}
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if want < 1 || observed < u.GetGeneration() {
		return false
	}
	for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
		if v, _, _ := unstructured.NestedInt64(u.Object, "status", f); v != want {
			return false
		}
	}
	return true
}

// tracker records when each LB Deployment was first seen and first seen Ready.
type tracker struct {
	mu       sync.Mutex
	deployed map[string]time.Time // namespace/name
	ready    map[string]time.Time
}

func (t *tracker) see(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !strings.HasPrefix(u.GetName(), "sllbr-") {
		return
	}
	now := time.Now()
	key := u.GetNamespace() + "/" + u.GetName()
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.deployed[key]; !ok {
		t.deployed[key] = now
	}
	if _, ok := t.ready[key]; !ok && deploymentReady(u) {
		t.ready[key] = now
	}
}

func (t *tracker) times(key string) (deployed, ready time.Time, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	deployed = t.deployed[key]
	ready, ok = t.ready[key]
	return
}

// A bound on what one LB Pod requests (both templates: 150m CPU and 96 Mi, container and
// sidecar), for the room the fake Nodes need.
const (
	podCPUMilli = 250
	podMemMi    = 256
)

// ensureAllocatable raises the fake Nodes' capacity and allocatable (status, as the admin)
// when they cannot hold `pods` LB Pods in all: Pods, CPU and memory (the Nodes of
// controlplane.sh have 250 Pods, 64 CPU and 256 Gi each, which 1,278 LB Pods exhaust by
// CPU). kwok keeps the capacity a Node has. Returns the allocatable Pods in all.
func ensureAllocatable(ctx context.Context, dyn dynamic.Interface, pods int) (int, error) {
	list, err := dyn.Resource(gvrNode).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	if len(list.Items) == 0 {
		return 0, fmt.Errorf("no Nodes")
	}
	each := (pods + len(list.Items) - 1) / len(list.Items)
	wantCPU := resource.NewMilliQuantity(int64(each*podCPUMilli), resource.DecimalSI)
	wantMem := resource.NewQuantity(int64(each*podMemMi)<<20, resource.BinarySI)
	total := 0
	for _, n := range list.Items {
		get := func(name string) resource.Quantity {
			v, _, _ := unstructured.NestedString(n.Object, "status", "allocatable", name)
			q, _ := resource.ParseQuantity(v)
			return q
		}
		p, cpu, mem := get("pods"), get("cpu"), get("memory")
		if int(p.Value()) >= each && cpu.Cmp(*wantCPU) >= 0 && mem.Cmp(*wantMem) >= 0 {
			total += int(p.Value())
			continue
		}
		if int(p.Value()) < each {
			p = *resource.NewQuantity(int64(each), resource.DecimalSI)
		}
		if cpu.Cmp(*wantCPU) < 0 {
			cpu = *wantCPU
		}
		if mem.Cmp(*wantMem) < 0 {
			mem = *wantMem
		}
		r := fmt.Sprintf(`{"pods":%q,"cpu":%q,"memory":%q}`, p.String(), cpu.String(), mem.String())
		patch := `{"status":{"capacity":` + r + `,"allocatable":` + r + `}}`
		if _, err := dyn.Resource(gvrNode).Patch(ctx, n.GetName(), types.MergePatchType, []byte(patch),
			metav1.PatchOptions{}, "status"); err != nil {
			return 0, fmt.Errorf("raise the capacity of Node %s: %w", n.GetName(), err)
		}
		say("Node %s: capacity and allocatable raised to %s", n.GetName(), r)
		total += int(p.Value())
	}
	return total, nil
}

func readyStory(o options) error {
	if os.Getenv("E2E_FULL") != "1" {
		return fmt.Errorf("the ready story needs the full control plane (E2E_FULL=1 controlplane.sh run)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := openStory(ctx, o)
	if err != nil {
		return err
	}
	defer s.c.stop()
	dyn, c, l := s.dyn, s.c, s.l
	r := readyResult{Controller: o.controller, N: o.n, Namespaces: o.namespaces, Replicas: replicasPerGateway}

	// Room for 2×N Pods (and some), the namespaces with the LB's ServiceAccount, the
	// GatewayClass and the GatewayConfigurations.
	if r.Allocatable, err = ensureAllocatable(ctx, dyn, replicasPerGateway*o.n+50); err != nil {
		return err
	}
	var first, configs []item
	for ns := 0; ns < l.namespaces; ns++ {
		first = append(first, item{gvrNamespace, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": l.namespace(ns)}}}})
	}
	first = append(first, item{gvrClass, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": className},
		"spec":     map[string]any{"controllerName": controllerName}}}})
	if err := createAll(ctx, dyn, first, o.workers); err != nil {
		return err
	}
	seen := map[gatewayRef]bool{}
	var gateways, routes []item
	for i, g := range l.gateways() {
		cf := gatewayRef{g.namespace, l.config(i)}
		if !seen[cf] {
			seen[cf] = true
			configs = append(configs, item{gvrConfig, configuration(cf.namespace, cf.name)})
		}
		gateways = append(gateways, item{gvrGateway, gateway(g.namespace, g.name, cf.name)})
		routes = append(routes, item{gvrRoute, route(g.namespace, g.name, i)})
	}
	for ns := 0; ns < l.namespaces; ns++ {
		configs = append(configs, item{gvrServiceAccount, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": lbServiceAccount, "namespace": l.namespace(ns)}}}})
	}
	if err := createAll(ctx, dyn, append(configs, routes...), o.workers); err != nil {
		return err
	}

	// The harness's own watch of Deployments, each change timed as it arrives.
	tr := &tracker{deployed: map[string]time.Time{}, ready: map[string]time.Time{}}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	inf := factory.ForResource(gvrDeploy).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    tr.see,
		UpdateFunc: func(_, obj any) { tr.see(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	// The controller, given time to fill its caches before the first Gateway.
	if err := c.start(); err != nil {
		return err
	}
	time.Sleep(5 * time.Second)
	if !c.alive() {
		return fmt.Errorf("the controller exited at start (log %s)", c.log)
	}

	m0, err := auditMark()
	if err != nil {
		return err
	}
	created := make([]time.Time, len(gateways))
	var mu sync.Mutex
	index := map[*unstructured.Unstructured]int{}
	for i, it := range gateways {
		index[it.object] = i
	}
	start := time.Now()
	if err := createAllTimed(ctx, dyn, gateways, o.workers, func(u *unstructured.Unstructured, t time.Time) {
		mu.Lock()
		created[index[u]] = t
		mu.Unlock()
	}); err != nil {
		return err
	}
	r.CreateS = time.Since(start).Seconds()
	say("%s: %d Gateways created in %.1f s", o.controller, o.n, r.CreateS)

	refs := l.gateways()
	deadline := time.Now().Add(o.timeout)
	for {
		left := 0
		for _, g := range refs {
			if _, _, ok := tr.times(g.namespace + "/" + lbName(g.name)); !ok {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d LB Deployments not Ready after %s (controller log %s)", left, o.n, o.timeout, c.log)
		}
		if !c.alive() {
			return fmt.Errorf("the controller exited (%d of %d LB Deployments not Ready; log %s)", left, o.n, c.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var deployed, ready []float64
	var lastDeployed, lastReady time.Time
	for i, g := range refs {
		d, rd, _ := tr.times(g.namespace + "/" + lbName(g.name))
		deployed = append(deployed, d.Sub(created[i]).Seconds())
		ready = append(ready, rd.Sub(created[i]).Seconds())
		if d.After(lastDeployed) {
			lastDeployed = d
		}
		if rd.After(lastReady) {
			lastReady = rd
		}
	}
	r.AllDeployedS = lastDeployed.Sub(start).Seconds()
	r.AllReadyS = lastReady.Sub(start).Seconds()
	r.Deployed = percentilesOf(deployed)
	r.Ready = percentilesOf(ready)
	time.Sleep(settle)
	m1, _ := auditMark()

	// The Pods themselves: Ready, by the LB's `app` label (sllbr-<Gateway>).
	for ns := 0; ns < l.namespaces; ns++ {
		pods, err := dyn.Resource(gvrPod).Namespace(l.namespace(ns)).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.GetLabels()["app"], "sllbr-") || p.GetDeletionTimestamp() != nil {
				continue
			}
			list, _, _ := unstructured.NestedSlice(p.Object, "status", "conditions")
			for _, cond := range list {
				if m, ok := cond.(map[string]any); ok && m["type"] == "Ready" && m["status"] == "True" {
					r.ReadyPods++
				}
			}
		}
	}
	if r.Writers, err = writeRates(append([]string{c.user}, fullWriters...), m0, m1); err != nil {
		return err
	}
	c.stop()

	if o.out != "" {
		data, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(o.out, data, 0o644); err != nil {
			return err
		}
	}
	say("%s: N = %d: every LB Deployment Ready %.1f s after the first Gateway's creation (every Deployment there after %.1f s); "+
		"per Gateway Ready p50 %.1f s, p90 %.1f s, max %.1f s; %d Pods Ready",
		o.controller, o.n, r.AllReadyS, r.AllDeployedS, r.Ready.P50, r.Ready.P90, r.Ready.Max, r.ReadyPods)
	for _, w := range r.Writers {
		say("%s:   writes of %s: %d in %.1f s (%.1f/s)", o.controller, w.User, w.Writes, w.SpanS, w.PerSec)
	}
	if r.ReadyPods != replicasPerGateway*o.n {
		return fmt.Errorf("%d LB Pods Ready, want %d", r.ReadyPods, replicasPerGateway*o.n)
	}
	return nil
}

// createAllTimed is createAll, calling done with each object and the time its create
// was sent.
func createAllTimed(ctx context.Context, dyn dynamic.Interface, items []item, workers int,
	done func(*unstructured.Unstructured, time.Time)) error {
	ch := make(chan item)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range ch {
				t := time.Now()
				if err := createAll(ctx, dyn, []item{it}, 1); err != nil {
					errs <- err
					for range ch {
					}
					return
				}
				done(it.object, t)
			}
		}()
	}
	for _, it := range items {
		ch <- it
	}
	close(ch)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// writeRates counts each user's writes between two marks of the audit log, and their
// rate over the span from that user's first write to its last.
func writeRates(users []string, from, to mark) ([]writerRate, error) {
	f, err := os.Open(os.Getenv("AUDIT_LOG"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(int64(from), io.SeekStart); err != nil {
		return nil, err
	}
	type span struct {
		n           int
		first, last time.Time
	}
	spans := map[string]*span{}
	for _, u := range users {
		spans[u] = &span{}
	}
	s := bufio.NewScanner(io.LimitReader(f, int64(to-from)))
	s.Buffer(make([]byte, 1<<20), 1<<24)
	for s.Scan() {
		var e struct {
			Verb  string    `json:"verb"`
			Stage string    `json:"stage"`
			At    time.Time `json:"requestReceivedTimestamp"`
			User  struct {
				Username string `json:"username"`
			} `json:"user"`
		}
		if json.Unmarshal(s.Bytes(), &e) != nil || !isWrite(e.Verb) {
			continue
		}
		sp, ok := spans[e.User.Username]
		if !ok {
			continue
		}
		sp.n++
		if sp.first.IsZero() || e.At.Before(sp.first) {
			sp.first = e.At
		}
		if e.At.After(sp.last) {
			sp.last = e.At
		}
	}
	var out []writerRate
	for _, u := range users {
		sp := spans[u]
		w := writerRate{User: u, Writes: sp.n, SpanS: sp.last.Sub(sp.first).Seconds()}
		if w.SpanS > 0 {
			w.PerSec = float64(sp.n) / w.SpanS
		}
		out = append(out, w)
	}
	return out, s.Err()
}

// readyTable prints the ready stories side by side, per N: ours, Meridio-2's, the ratio.
func readyTable(files []string, w io.Writer) error {
	byN := map[int]map[string]readyResult{}
	var sizes []int
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		var r readyResult
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if byN[r.N] == nil {
			byN[r.N] = map[string]readyResult{}
			sizes = append(sizes, r.N)
		}
		byN[r.N][r.Controller] = r
	}
	sort.Ints(sizes)
	lines := []struct {
		name string
		v    func(readyResult) float64
	}{
		{"Gateways created in (s)", func(r readyResult) float64 { return r.CreateS }},
		{"every LB Deployment there (s)", func(r readyResult) float64 { return r.AllDeployedS }},
		{"per Gateway, Deployment there p50 (s)", func(r readyResult) float64 { return r.Deployed.P50 }},
		{"every LB Deployment Ready (s)", func(r readyResult) float64 { return r.AllReadyS }},
		{"per Gateway, Ready p50 (s)", func(r readyResult) float64 { return r.Ready.P50 }},
		{"per Gateway, Ready p90 (s)", func(r readyResult) float64 { return r.Ready.P90 }},
		{"per Gateway, Ready max (s)", func(r readyResult) float64 { return r.Ready.Max }},
		{"LB Pods Ready", func(r readyResult) float64 { return float64(r.ReadyPods) }},
	}
	for _, n := range sizes {
		ours, hasOurs := byN[n]["ours"]
		mer, hasMer := byN[n]["meridio-2"]
		fmt.Fprintf(w, "\nN = %d, full control plane: from creation to LB Pods Ready\n\n", n)
		fmt.Fprintln(w, "| | ours | Meridio-2 | ours / Meridio-2 |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, line := range lines {
			cell := func(ok bool, r readyResult) string {
				if !ok {
					return "-"
				}
				if line.name == "LB Pods Ready" {
					return fmt.Sprintf("%.0f", line.v(r))
				}
				return fmt.Sprintf("%.1f", line.v(r))
			}
			ratio := "-"
			if hasOurs && hasMer && line.v(mer) > 0 {
				ratio = fmt.Sprintf("%.2f", line.v(ours)/line.v(mer))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", line.name, cell(hasOurs, ours), cell(hasMer, mer), ratio)
		}
		for _, r := range []readyResult{ours, mer} {
			for _, wr := range r.Writers {
				if r.Controller != "" {
					fmt.Fprintf(w, "%s run: %s wrote %d times in %.1f s (%.1f/s)\n", r.Controller, wr.User, wr.Writes, wr.SpanS, wr.PerSec)
				}
			}
		}
	}
	return nil
}
