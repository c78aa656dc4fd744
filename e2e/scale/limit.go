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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

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
