package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// result is one run of one controller at one N (the JSON that `scale table` reads).
type result struct {
	Controller string  `json:"controller"`
	N          int     `json:"n"`
	Namespaces int     `json:"namespaces"`
	Populate   float64 `json:"populate_s"`

	ConvergeS      float64  `json:"converge_s"`
	Start          requests `json:"start"`
	StartUsage     usage    `json:"start_usage"`
	StartReconcile int      `json:"start_reconciles"`
	// What the start cost the control plane and the harness (ClientS: ours).
	StartCPU cpuSpent `json:"start_cpu"`
	// The control plane's peak memory at the end of the run.
	Server serverMemory `json:"server_memory"`

	IdleS float64  `json:"idle_s"`
	Idle  requests `json:"idle"`

	FirstUsage     usage    `json:"first_process"`
	RestartS       float64  `json:"restart_reconciled_s"`
	Restart        requests `json:"restart"`
	RestartedUsage usage    `json:"restarted_process"`

	K             int      `json:"k"`
	EditDeployS   float64  `json:"edit_deployments_s"`
	EditStatusS   float64  `json:"edit_status_s,omitempty"`
	Edit          requests `json:"edit"`
	EndReconciles int      `json:"restarted_reconciles"`
	// The reconciles from the edit until its figures were taken (ours: its log).
	EditReconciles int `json:"edit_reconciles"`

	// The memory floor (ours, with -held): its base and the bytes its caches hold.
	Memory memoryFloor `json:"memory"`

	Failures []string `json:"failures,omitempty"`
}

const settle = 3 * time.Second

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "scale: "+format+"\n", args...)
}

func runStory(o options) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := openStory(ctx, o)
	if err != nil {
		return err
	}
	defer s.c.stop()
	dyn, c, l := s.dyn, s.c, s.l
	r := result{Controller: o.controller, N: o.n, Namespaces: o.namespaces}

	if o.held != "" && o.controller == "ours" {
		if r.Memory.BaseMiB, err = baseRSS(c); err != nil {
			return err
		}
		say("%s: base: peak RSS %.1f MiB with no Gateway", o.controller, r.Memory.BaseMiB)
	}
	t := time.Now()
	if err := populate(ctx, dyn, l, o.workers); err != nil {
		return err
	}
	r.Populate = time.Since(t).Seconds()
	say("%s: %d Gateways, their GatewayConfigurations and L34Routes created in %.1f s", o.controller, o.n, r.Populate)
	obs, err := observe(ctx, dyn)
	if err != nil {
		return err
	}
	gateways := l.gateways()

	// Start: from the process start until every Gateway is healthy.
	m0, err := auditMark()
	if err != nil {
		return err
	}
	cpu0 := sampleCPU(os.Getpid())
	t = time.Now()
	if err := c.start(); err != nil {
		return err
	}
	// SCALE_PERF: a CPU profile of this start (perf.go), stopped once it converged.
	prof, err := startPerf(c.cmd.Process.Pid, fmt.Sprintf("%s-%d-start", o.controller, o.n))
	if err != nil {
		return err
	}
	defer prof.stop()
	d, err := obs.waitAll("every Gateway healthy", gateways, nil, healthy(o.controller), t, o.timeout, c.alive)
	if err != nil {
		return fmt.Errorf("%w (controller log: %s)", err, c.log)
	}
	r.ConvergeS = d.Seconds()
	cpu := sampleCPU(os.Getpid()).since(cpu0, time.Since(t).Seconds())
	if r.StartUsage, err = c.usage(); err != nil {
		return err
	}
	r.StartCPU = cpuSpent{WallS: cpu.WallS, APIServerS: cpu.APIServerS, EtcdS: cpu.EtcdS,
		ClientS: r.StartUsage.CPUSeconds, HarnessS: cpu.ClientS}
	say("%s: the start's %s", o.controller, r.StartCPU)
	prof.stop()
	r.StartReconcile, _, _ = c.reconciles()
	say("%s: every Gateway healthy after %.1f s (%.1f CPU-s, %d reconciles)", o.controller, r.ConvergeS,
		r.StartUsage.CPUSeconds, r.StartReconcile)
	time.Sleep(settle)
	m1, _ := auditMark()
	if r.Start, err = between(c.user, m0, m1); err != nil {
		return err
	}
	if o.held != "" && o.controller == "ours" {
		// Listed as the admin, outside ours' requests; the idle window starts after it.
		if r.Memory.Held, err = heldBytes(ctx, o.held); err != nil {
			return err
		}
		say("%s: its caches hold %.2f MiB (%d objects; %.2f MiB of JSON)", o.controller, r.Memory.heldMiB(),
			r.Memory.Held.Objects, float64(r.Memory.Held.JSONBytes)/(1<<20))
		if m1, err = auditMark(); err != nil {
			return err
		}
	}

	// Idle.
	time.Sleep(o.idle)
	m2, _ := auditMark()
	r.IdleS = o.idle.Seconds()
	if r.Idle, err = between(c.user, m1, m2); err != nil {
		return err
	}
	say("%s: idle %s: %d requests (%s)", o.controller, o.idle, r.Idle.Writes+r.Idle.Reads, r.Idle)

	// Restart with everything converged.
	if r.FirstUsage, err = c.usage(); err != nil {
		return err
	}
	c.stop()
	m3, _ := auditMark()
	t = time.Now()
	if err := c.start(); err != nil {
		return err
	}
	// SCALE_PERF: a profile of the restart too, stopped once every Gateway is reconciled.
	restartProf, err := startPerf(c.cmd.Process.Pid, fmt.Sprintf("%s-%d-restart", o.controller, o.n))
	if err != nil {
		return err
	}
	defer restartProf.stop()
	if err := c.waitReconciled(o.n, t, o.timeout); err != nil {
		return err
	}
	restartProf.stop()
	r.RestartS = time.Since(t).Seconds()
	if at, ok := c.reconciledAt(o.n); ok {
		r.RestartS = at.Sub(t).Seconds()
	}
	time.Sleep(2 * settle)
	if _, err := obs.waitAll("every Gateway healthy after the restart", gateways, nil, healthy(o.controller),
		time.Now(), o.timeout, c.alive); err != nil {
		return err
	}
	m4, _ := auditMark()
	if r.Restart, err = between(c.user, m3, m4); err != nil {
		return err
	}
	say("%s: restart: every Gateway reconciled after %.1f s; %d writes (%s)", o.controller, r.RestartS, r.Restart.Writes, r.Restart)

	// One edit of the GatewayConfiguration shared by K Gateways.
	shared := l.shared()
	r.K = len(shared)
	m5, _ := auditMark()
	beforeEdit, _, _ := c.reconciles()
	t = time.Now()
	if err := editShared(ctx, dyn, l.namespace(0), `{"replicas":3,"enforceReplicas":true}`); err != nil {
		return err
	}
	d, err = obs.waitAll("K Deployments at 3 replicas", shared, lbName, replicas(3), t, o.timeout, c.alive)
	if err != nil {
		return err
	}
	r.EditDeployS = d.Seconds()
	if o.controller == "ours" {
		d, err = obs.waitAll("K Gateways naming generation 2", shared, nil, appliedGeneration(2), t, o.timeout, c.alive)
		if err != nil {
			return err
		}
		r.EditStatusS = d.Seconds()
	}
	time.Sleep(settle)
	m6, _ := auditMark()
	if r.Edit, err = between(c.user, m5, m6); err != nil {
		return err
	}
	say("%s: edit of a GatewayConfiguration shared by %d: Deployments after %.2f s (%s)",
		o.controller, r.K, r.EditDeployS, r.Edit)
	if r.RestartedUsage, err = c.usage(); err != nil {
		return err
	}
	r.EndReconciles, _, _ = c.reconciles()
	r.EditReconciles = r.EndReconciles - beforeEdit
	c.stop()
	r.Server = readServerMemory()

	if o.check {
		r.Failures = goals(r)
	}
	if o.out != "" {
		data, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(o.out, data, 0o644); err != nil {
			return err
		}
	}
	if err := table1(r); err != nil {
		return err
	}
	if len(r.Failures) > 0 {
		return fmt.Errorf("%s missed %d goal(s):\n  %s", o.controller, len(r.Failures), strings.Join(r.Failures, "\n  "))
	}
	return nil
}

// goals are the expectations of ours, as checks.
func goals(r result) []string {
	var f []string
	want := func(ok bool, format string, args ...any) {
		if !ok {
			f = append(f, fmt.Sprintf(format, args...))
		}
	}
	want(r.Start.count("create deployments") == r.N, "start: %d Deployment creates for %d Gateways", r.Start.count("create deployments"), r.N)
	want(r.Start.statusWrites() <= 2*r.N, "start: %d status writes for %d Gateways (at most 2 each)", r.Start.statusWrites(), r.N)
	gets := 0
	for k, v := range r.Start.ByVerb {
		if strings.HasPrefix(k, "get ") {
			gets += v
		}
	}
	want(gets == 0, "start: %d GETs (the caches should answer)", gets)
	want(r.Idle.Writes == 0, "idle: %d writes", r.Idle.Writes)
	want(r.Restart.Writes == 0, "restart: %d writes (%s)", r.Restart.Writes, r.Restart)
	want(r.Edit.deploymentWrites() == r.K, "edit: %d Deployment writes for K = %d", r.Edit.deploymentWrites(), r.K)
	want(r.Edit.statusWrites() == r.K, "edit: %d status writes for K = %d", r.Edit.statusWrites(), r.K)
	return f
}
