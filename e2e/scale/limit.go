package main

// The limit story (`scale limit`, docs/scale.md "The floor of the control plane"): what the
// control plane can do at all for ours' start, restart and edit of N Gateways, measured on
// the control plane that runs ours. A bare client, with no controller logic, makes the
// requests our controller makes (limit_client.go): the same streaming lists (the watches
// of gateway-reconcile-kube/src/controller/mod.rs, kept open as ours keeps them), then per
// Gateway the same writes, with the core's own bodies, rendered before any clock by the
// crate's `gateway-reconcile plan` for each Gateway as the API server holds it
// (limit_bodies.go). Its fastest setting is the floor.
//
// In rounds, interleaved so that a drift of the machine shows in both: the start's sweep
// (Gateways in flight, HTTP/2 and HTTP/1.1), the floor's best setting without the Events,
// then ours' start at each of its concurrencies; between two runs what the last one wrote
// is deleted and the statuses put back. Then the restart, on the state ours' start left,
// in rounds: the streaming lists alone in a process of their own (a restart writes
// nothing) and in the harness, against ours' time until every Gateway is reconciled. Then
// the edit of the GatewayConfiguration shared by K = N/10 Gateways: the bare client's
// K Deployment replaces and K status patches at each concurrency, put back after each,
// then ours' edits, in rounds. Medians per setting; the floor is the least median.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// limitPoint is one run of the bare client.
type limitPoint struct {
	HTTP        string   `json:"http"`                // "h2" or "http1"
	Concurrency int      `json:"concurrency"`         // Gateways in flight
	NoEvents    bool     `json:"no_events,omitempty"` // without the Events
	Process     bool     `json:"process,omitempty"`   // the lists in a process of their own
	ListsS      float64  `json:"lists_s"`             // until every streaming list has sent its initial events
	LastWriteS  float64  `json:"last_write_s"`
	AuditSpanS  float64  `json:"audit_span_s"` // audit log: first request received to last write completed
	Requests    requests `json:"requests"`
	CPU         cpuSpent `json:"cpu"`

	busy float64 // of a median: the median of the cores busy
}

// setting names a point's setting ("http1 64", "http1 64 without Events").
func (p limitPoint) setting() string {
	s := fmt.Sprintf("%s %d", p.HTTP, p.Concurrency)
	if p.NoEvents {
		s += " without Events"
	}
	return s
}

// oursRun is one start or edit of ours.
type oursRun struct {
	Concurrency int      `json:"concurrency"`
	HealthyS    float64  `json:"healthy_s"` // every Gateway healthy (start), K at the new generation (edit)
	LastWriteS  float64  `json:"last_write_s"`
	AuditSpanS  float64  `json:"audit_span_s"`
	Requests    requests `json:"requests"`
	Usage       usage    `json:"usage"`
	CPU         cpuSpent `json:"cpu"`

	busy float64 // of a median: the median of the cores busy
}

// limitRound is one round of the start: the sweep, the floor's setting without Events, ours.
type limitRound struct {
	Sweep    []limitPoint `json:"sweep"`
	NoEvents limitPoint   `json:"no_events"`
	Ours     []oursRun    `json:"ours"`
}

// limitResult is one limit story (the JSON file of `scale limit -out`).
type limitResult struct {
	N          int          `json:"n"`
	Namespaces int          `json:"namespaces"`
	Populate   float64      `json:"populate_s"`
	RenderS    float64      `json:"render_s"` // the core's bodies, before any clock
	Rounds     []limitRound `json:"rounds"`
	// The floor's best setting once more, at the end: how much the control plane drifted.
	After   *limitPoint `json:"after,omitempty"`
	Restart struct {
		Process []limitPoint `json:"process"` // the streaming lists in a process of their own
		Lists   []limitPoint `json:"lists"`   // the same in the harness's process
		Ours    []float64    `json:"ours_reconciled_s"`
		// Ours' requests over every restart.
		Requests []requests `json:"requests"`
	} `json:"restart"`
	Edit struct {
		K       int          `json:"k"`
		RenderS float64      `json:"render_s"`
		Sweep   []limitPoint `json:"sweep"`
		Ours    []oursRun    `json:"ours"`
	} `json:"edit"`
	Failures []string `json:"failures,omitempty"`
}

// The GatewayConfiguration shared by K Gateways: as populated, and the two settings ours'
// edits alternate between (both enforced, so that each edit changes every Deployment).
const (
	editTo   = `{"replicas":3,"enforceReplicas":true}`
	editBack = `{"replicas":2,"enforceReplicas":true}`
)

func limitStory(o options) error {
	if o.controller != "ours" || o.planBin == "" {
		return fmt.Errorf("limit: -controller ours and -plan PATH/TO/gateway-reconcile are needed")
	}
	concurrencies, err := parseInts(o.concurrency)
	if err != nil {
		return err
	}
	oursConcurrencies, err := parseInts(o.oursConcurrency)
	if err != nil {
		return err
	}
	editConcurrencies, err := parseInts(o.editConcurrency)
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
	if o.rounds < 1 {
		return fmt.Errorf("-rounds: at least 1")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ours' identity (its user, bound to its ClusterRole): the bare client is the same
	// user, so that RBAC and API Priority and Fairness treat both alike.
	s, err := openStory(ctx, o)
	if err != nil {
		return err
	}
	defer s.c.stop()
	dyn, c, l := s.dyn, s.c, s.l
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
	// client's and ours' must be alike (writtenOn).
	first := l.gateways()[0]
	var floorWrote, oursWrote written
	point := func(concurrency int, h2, noEvents bool) (limitPoint, error) {
		p, err := floorPoint(c.kubeconfig, c.user, b, concurrency, h2, noEvents)
		if err != nil {
			return p, fmt.Errorf("floor, %s: %w", p.setting(), err)
		}
		say("limit: floor %s: lists %.2f s, last write %.2f s (audit span %.2f s; %s; %s)",
			p.setting(), p.ListsS, p.LastWriteS, p.AuditSpanS, p.Requests, p.CPU)
		time.Sleep(settle)
		if !noEvents {
			floorWrote = writtenOn(obs, first)
		}
		return p, resetStart(ctx, dyn, obs, l, b, o.workers)
	}
	oursStart := func(concurrency int) (oursRun, error) {
		run := oursRun{Concurrency: concurrency}
		extra := c.extra
		c.extra = append(append([]string{}, extra...), "--concurrency", strconv.Itoa(concurrency))
		defer func() { c.extra = extra }()
		time.Sleep(settle)
		m0, err := auditMark()
		if err != nil {
			return run, err
		}
		cpu0 := sampleCPU(os.Getpid())
		t := time.Now()
		if err := c.start(); err != nil {
			return run, err
		}
		d, err := obs.waitAll("every Gateway healthy", l.gateways(), nil, healthy("ours"), t, o.timeout, c.alive)
		if err != nil {
			return run, fmt.Errorf("%w (controller log: %s)", err, c.log)
		}
		run.HealthyS = d.Seconds()
		cpu := sampleCPU(os.Getpid()).since(cpu0, time.Since(t).Seconds())
		if run.Usage, err = c.usage(); err != nil {
			return run, err
		}
		time.Sleep(settle)
		m1, _ := auditMark()
		if run.Requests, err = between(c.user, m0, m1); err != nil {
			return run, err
		}
		// The harness's own process (its watch) stays apart from ours' CPU.
		run.CPU = cpuSpent{WallS: cpu.WallS, APIServerS: cpu.APIServerS, EtcdS: cpu.EtcdS,
			ClientS: run.Usage.CPUSeconds, HarnessS: cpu.ClientS}
		oursWrote = writtenOn(obs, first)
		run.LastWriteS = run.Requests.lastWrite.Sub(t).Seconds()
		run.AuditSpanS = run.Requests.span().Seconds()
		say("limit: ours at %d: every Gateway healthy after %.2f s, last write %.2f s (audit span %.2f s; %s; %s)",
			concurrency, run.HealthyS, run.LastWriteS, run.AuditSpanS, run.Requests, run.CPU)
		return run, nil
	}

	// The start, in rounds. Ours' last start of the last round is left running: the
	// restart begins from the state it converged to.
	for round := 0; round < o.rounds; round++ {
		var rd limitRound
		for _, h2 := range transports {
			for _, k := range concurrencies {
				p, err := point(k, h2, false)
				if err != nil {
					return err
				}
				rd.Sweep = append(rd.Sweep, p)
			}
		}
		best, _ := pickFloor(rd.Sweep)
		if rd.NoEvents, err = point(best.Concurrency, best.HTTP == "h2", true); err != nil {
			return err
		}
		for i, k := range oursConcurrencies {
			run, err := oursStart(k)
			if err != nil {
				return err
			}
			rd.Ours = append(rd.Ours, run)
			if round == o.rounds-1 && i == len(oursConcurrencies)-1 {
				break
			}
			c.stop()
			time.Sleep(settle)
			if err := resetStart(ctx, dyn, obs, l, b, o.workers); err != nil {
				return err
			}
		}
		r.Rounds = append(r.Rounds, rd)
	}

	// The restart, in rounds, on the converged state ours left: the streaming lists alone
	// (a restart writes nothing) in a process of their own and in the harness, then ours.
	for round := 0; round < o.rounds; round++ {
		c.stop()
		time.Sleep(settle)
		p, err := listsProcess(c.kubeconfig, c.user)
		if err != nil {
			return fmt.Errorf("floor of the restart: %w", err)
		}
		r.Restart.Process = append(r.Restart.Process, p)
		time.Sleep(time.Second)
		if p, err = floorPoint(c.kubeconfig, c.user, nil, 0, false, false); err != nil {
			return fmt.Errorf("floor of the restart: %w", err)
		}
		r.Restart.Lists = append(r.Restart.Lists, p)
		time.Sleep(settle)
		m0, _ := auditMark()
		t := time.Now()
		if err := c.start(); err != nil {
			return err
		}
		if err := c.waitReconciled(o.n, t, o.timeout); err != nil {
			return err
		}
		oursS := time.Since(t).Seconds()
		if at, ok := c.reconciledAt(o.n); ok {
			oursS = at.Sub(t).Seconds()
		}
		r.Restart.Ours = append(r.Restart.Ours, oursS)
		time.Sleep(2 * settle)
		m1, _ := auditMark()
		q, err := between(c.user, m0, m1)
		if err != nil {
			return err
		}
		r.Restart.Requests = append(r.Restart.Requests, q)
		say("limit: restart: the streaming lists alone %.2f s in a process of their own, %.2f s in the harness; ours: every Gateway reconciled after %.2f s (%s)",
			r.Restart.Process[round].ListsS, p.ListsS, oursS, q)
	}
	c.stop()

	// The edit of the GatewayConfiguration shared by K Gateways: the floor's K replaces
	// and K status patches at each concurrency (put back after each), in rounds; then ours'
	// edits, in rounds, each followed by an edit back.
	shared := l.shared()
	r.Edit.K = len(shared)
	if err := editShared(ctx, dyn, l.namespace(0), editTo); err != nil {
		return err
	}
	t = time.Now()
	e, err := renderEdit(ctx, dyn, o.planBin, l, shared)
	if err != nil {
		return err
	}
	r.Edit.RenderS = time.Since(t).Seconds()
	for round := 0; round < o.rounds; round++ {
		for _, k := range editConcurrencies {
			time.Sleep(settle)
			p, err := editPoint(c.kubeconfig, c.user, e, k)
			if err != nil {
				return fmt.Errorf("floor of the edit at %d: %w", k, err)
			}
			say("limit: edit floor at %d: last write %.2f s (%s; %s)", k, p.LastWriteS, p.Requests, p.CPU)
			r.Edit.Sweep = append(r.Edit.Sweep, p)
			if err := resetEdit(ctx, dyn, obs, e, o.workers, o.timeout); err != nil {
				return err
			}
		}
	}
	// Ours, from the state before the edit, the configuration at editBack: it brings the
	// K Gateways to that generation, then each round edits to editTo and back.
	generation := int64(3)
	if err := editShared(ctx, dyn, l.namespace(0), editBack); err != nil {
		return err
	}
	if err := c.start(); err != nil {
		return err
	}
	if _, err := obs.waitAll("K Gateways at generation 3", shared, nil, appliedGeneration(generation), time.Now(), o.timeout, c.alive); err != nil {
		return err
	}
	for round := 0; round < o.rounds; round++ {
		time.Sleep(settle)
		run := oursRun{Concurrency: oursConcurrencies[len(oursConcurrencies)-1]}
		m0, _ := auditMark()
		cpu0 := sampleCPU(os.Getpid())
		u0, err := c.usage()
		if err != nil {
			return err
		}
		t := time.Now()
		if err := editShared(ctx, dyn, l.namespace(0), editTo); err != nil {
			return err
		}
		generation++
		if _, err := obs.waitAll("K Deployments at 3 replicas", shared, lbName, replicas(3), t, o.timeout, c.alive); err != nil {
			return err
		}
		d, err := obs.waitAll("K Gateways at the new generation", shared, nil, appliedGeneration(generation), t, o.timeout, c.alive)
		if err != nil {
			return err
		}
		run.HealthyS = d.Seconds()
		cpu := sampleCPU(os.Getpid()).since(cpu0, time.Since(t).Seconds())
		u1, _ := c.usage()
		time.Sleep(settle)
		m1, _ := auditMark()
		if run.Requests, err = between(c.user, m0, m1); err != nil {
			return err
		}
		run.Usage = u1
		run.CPU = cpuSpent{WallS: cpu.WallS, APIServerS: cpu.APIServerS, EtcdS: cpu.EtcdS,
			ClientS: u1.CPUSeconds - u0.CPUSeconds, HarnessS: cpu.ClientS}
		run.LastWriteS = run.Requests.lastWrite.Sub(t).Seconds()
		run.AuditSpanS = run.Requests.span().Seconds()
		say("limit: ours' edit: last write %.2f s, K at generation %d after %.2f s (%s; %s)",
			run.LastWriteS, generation, run.HealthyS, run.Requests, run.CPU)
		r.Edit.Ours = append(r.Edit.Ours, run)
		// Back, unmeasured.
		if err := editShared(ctx, dyn, l.namespace(0), editBack); err != nil {
			return err
		}
		generation++
		if _, err := obs.waitAll("K Gateways back", shared, nil, appliedGeneration(generation), time.Now(), o.timeout, c.alive); err != nil {
			return err
		}
	}
	c.stop()

	// The floor's best setting once more, from a start's state.
	time.Sleep(settle)
	if err := resetStart(ctx, dyn, obs, l, b, o.workers); err != nil {
		return err
	}
	time.Sleep(settle)
	floor := floorOf(r)
	after, err := point(floor.Concurrency, floor.HTTP == "h2", false)
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
	if len(out) == 0 {
		return nil, fmt.Errorf("no number in %q", s)
	}
	return out, nil
}
