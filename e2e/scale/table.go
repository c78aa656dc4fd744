package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// row is one line of the comparison: a name and how to read it from a result.
type row struct {
	name  string
	value func(r result) float64
	unit  string // printf verb
}

func perGatewayKiB(u usage, n int) float64 { return u.PeakRSSMiB * 1024 / float64(max(n, 1)) }

func sumPrefix(q requests, prefix string) float64 {
	t := 0
	for k, v := range q.ByVerb {
		if strings.HasPrefix(k, prefix) {
			t += v
		}
	}
	return float64(t)
}

var rows = []row{
	{"every Gateway healthy after start (s)", func(r result) float64 { return r.ConvergeS }, "%.1f"},
	{"start: LIST requests", func(r result) float64 { return sumPrefix(r.Start, "list ") }, "%.0f"},
	{"start: WATCH requests (watch-list included)", func(r result) float64 { return sumPrefix(r.Start, "watch") }, "%.0f"},
	{"start: GET requests", func(r result) float64 { return sumPrefix(r.Start, "get ") }, "%.0f"},
	{"start: writes per Gateway", func(r result) float64 { return float64(r.Start.Writes) / float64(r.N) }, "%.2f"},
	{"start: Deployment writes per Gateway", func(r result) float64 { return float64(r.Start.deploymentWrites()) / float64(r.N) }, "%.2f"},
	{"start: status writes per Gateway", func(r result) float64 { return float64(r.Start.statusWrites()) / float64(r.N) }, "%.2f"},
	{"requests per idle minute", func(r result) float64 { return float64(r.Idle.Writes+r.Idle.Reads) * 60 / r.IdleS }, "%.0f"},
	{"restart: time until every Gateway reconciled (s)", func(r result) float64 { return r.RestartS }, "%.1f"},
	{"restart: writes", func(r result) float64 { return float64(r.Restart.Writes) }, "%.0f"},
	{"restart: reads (LIST, WATCH, GET)", func(r result) float64 { return float64(r.Restart.Reads) }, "%.0f"},
	{"edit of a GatewayConfiguration shared by K: K", func(r result) float64 { return float64(r.K) }, "%.0f"},
	{"edit: Deployment writes", func(r result) float64 { return float64(r.Edit.deploymentWrites()) }, "%.0f"},
	{"edit: status writes", func(r result) float64 { return float64(r.Edit.statusWrites()) }, "%.0f"},
	{"edit: time until all K Deployments updated (s)", func(r result) float64 { return r.EditDeployS }, "%.2f"},
	{"edit: time until all K Gateway statuses name the new generation (s; ours only)", func(r result) float64 { return r.EditStatusS }, "%.2f"},
	{"edit: reconciles per Gateway of K", func(r result) float64 { return float64(r.EditReconciles) / float64(max(r.K, 1)) }, "%.2f"},
	{"start: kube-apiserver CPU (s)", func(r result) float64 { return r.StartCPU.APIServerS }, "%.1f"},
	{"start: etcd CPU (s)", func(r result) float64 { return r.StartCPU.EtcdS }, "%.1f"},
	{"start: the harness's CPU, its watch (s)", func(r result) float64 { return r.StartCPU.HarnessS }, "%.1f"},
	{"start: cores busy (all four over the start)", func(r result) float64 { return r.StartCPU.cores() }, "%.2f"},
	{"kube-apiserver peak RSS at the end (MiB)", func(r result) float64 { return r.Server.APIServerMiB }, "%.0f"},
	{"etcd peak RSS at the end (MiB)", func(r result) float64 { return r.Server.EtcdMiB }, "%.0f"},
	{"controller CPU at convergence (s)", func(r result) float64 { return r.StartUsage.CPUSeconds }, "%.1f"},
	{"CPU per reconcile at start (ms)", func(r result) float64 {
		return 1000 * r.StartUsage.CPUSeconds / float64(max(r.StartReconcile, 1))
	}, "%.2f"},
	{"reconciles at start", func(r result) float64 { return float64(r.StartReconcile) }, "%.0f"},
	{"reconciles at start per Gateway", func(r result) float64 { return float64(r.StartReconcile) / float64(max(r.N, 1)) }, "%.2f"},
	{"peak RSS, first process (MiB)", func(r result) float64 { return r.FirstUsage.PeakRSSMiB }, "%.1f"},
	{"peak RSS, restarted process (MiB)", func(r result) float64 { return r.RestartedUsage.PeakRSSMiB }, "%.1f"},
	{"peak RSS per Gateway, first process (KiB)", func(r result) float64 { return perGatewayKiB(r.FirstUsage, r.N) }, "%.1f"},
	{"peak RSS per Gateway, restarted process (KiB)", func(r result) float64 { return perGatewayKiB(r.RestartedUsage, r.N) }, "%.1f"},
	{"base: peak RSS with no Gateway (MiB; ours, -held)", func(r result) float64 { return r.Memory.BaseMiB }, "%.1f"},
	{"held: the bytes its caches hold (MiB; ours, -held)", func(r result) float64 { return r.Memory.heldMiB() }, "%.2f"},
	{"held: the JSON the API server sends of them (MiB)", func(r result) float64 { return float64(r.Memory.Held.JSONBytes) / (1 << 20) }, "%.2f"},
	{"peak RSS, first process, against 2 x held + base", func(r result) float64 { return r.Memory.against(r.FirstUsage.PeakRSSMiB) }, "%.2f"},
	{"peak RSS, restarted process, against 2 x held + base", func(r result) float64 { return r.Memory.against(r.RestartedUsage.PeakRSSMiB) }, "%.2f"},
}

// table1 prints one run's figures.
func table1(r result) error {
	fmt.Printf("\n%s, N = %d (%d namespaces)\n", r.Controller, r.N, r.Namespaces)
	for _, row := range rows {
		name := row.name
		fmt.Printf("  %-50s "+row.unit+"\n", name, row.value(r))
	}
	fmt.Printf("  start requests: %s\n  idle: %s\n  restart: %s\n  edit: %s\n",
		r.Start, r.Idle, r.Restart, r.Edit)
	return nil
}

// table prints a side-by-side Markdown table of results: for each N, ours, Meridio-2 and
// the ratio Meridio-2 / ours.
func table(files []string, w io.Writer) error {
	byN := map[int]map[string]result{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var r result
		if err := json.Unmarshal(data, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if byN[r.N] == nil {
			byN[r.N] = map[string]result{}
		}
		byN[r.N][r.Controller] = r
	}
	var ns []int
	for n := range byN {
		ns = append(ns, n)
	}
	sort.Ints(ns)
	fmt.Fprint(w, "|")
	for _, n := range ns {
		fmt.Fprintf(w, " | ours %d | Meridio-2 %d | ratio", n, n)
	}
	fmt.Fprint(w, " |\n|---")
	for range ns {
		fmt.Fprint(w, "|---:|---:|---:")
	}
	fmt.Fprintln(w, "|")
	for _, row := range rows {
		fmt.Fprintf(w, "| %s", row.name)
		for _, n := range ns {
			ours, okO := byN[n]["ours"]
			m2, okM := byN[n]["meridio-2"]
			cell := func(ok bool, r result) string {
				if !ok || (r.Controller != "ours" && strings.Contains(row.name, "ours only")) {
					return "-"
				}
				return fmt.Sprintf(row.unit, row.value(r))
			}
			ratio := "-"
			if okO && okM && row.value(ours) != 0 && !strings.Contains(row.name, "ours only") {
				ratio = fmt.Sprintf("%.2f", row.value(m2)/row.value(ours))
			}
			fmt.Fprintf(w, " | %s | %s | %s", cell(okO, ours), cell(okM, m2), ratio)
		}
		fmt.Fprintln(w, " |")
	}
	return nil
}
