package main

// What the limit story reports: medians over its rounds, the checks that the bare client
// made ours' requests, what a start leaves on a Gateway, and the tables.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strings"
)

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

// median of xs (the mean of the two middle ones for an even count; 0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64{}, xs...)
	sort.Float64s(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// pickFloor is the fastest point of a sweep (time to the last write); the first of equals.
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

// bySetting groups points by setting, in the order settings first appear.
func bySetting(points []limitPoint) (order []string, groups map[string][]limitPoint) {
	groups = map[string][]limitPoint{}
	for _, p := range points {
		k := p.setting()
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], p)
	}
	return order, groups
}

// medianPoint is a setting's point with the median of each time over its runs.
func medianPoint(points []limitPoint) limitPoint {
	if len(points) == 0 {
		return limitPoint{}
	}
	var last, span, lists, cores []float64
	for _, p := range points {
		last, span, lists = append(last, p.LastWriteS), append(span, p.AuditSpanS), append(lists, p.ListsS)
		cores = append(cores, p.CPU.cores())
	}
	m := points[0]
	m.LastWriteS, m.AuditSpanS, m.ListsS = median(last), median(span), median(lists)
	m.busy = median(cores)
	return m
}

// floorSweep is the least median of the settings of `points`, with every setting's median.
func floorSweep(points []limitPoint) (floor limitPoint, order []string, medians map[string]limitPoint) {
	order, groups := bySetting(points)
	medians = map[string]limitPoint{}
	var ms []limitPoint
	for _, k := range order {
		medians[k] = medianPoint(groups[k])
		ms = append(ms, medians[k])
	}
	floor, _ = pickFloor(ms)
	return floor, order, medians
}

// floorOf is the start's floor: the sweep's setting of least median time to the last write.
func floorOf(r limitResult) limitPoint {
	var all []limitPoint
	for _, rd := range r.Rounds {
		all = append(all, rd.Sweep...)
	}
	f, _, _ := floorSweep(all)
	return f
}

// oursMedians are ours' runs grouped by concurrency (in their order), with median times.
func oursMedians(runs []oursRun) (order []int, medians map[int]oursRun, all map[int][]oursRun) {
	all = map[int][]oursRun{}
	for _, run := range runs {
		if _, ok := all[run.Concurrency]; !ok {
			order = append(order, run.Concurrency)
		}
		all[run.Concurrency] = append(all[run.Concurrency], run)
	}
	medians = map[int]oursRun{}
	for _, k := range order {
		var last, healthy, cpu, cores []float64
		for _, run := range all[k] {
			last, healthy = append(last, run.LastWriteS), append(healthy, run.HealthyS)
			cpu, cores = append(cpu, run.CPU.ClientS), append(cores, run.CPU.cores())
		}
		m := all[k][0]
		m.LastWriteS, m.HealthyS = median(last), median(healthy)
		m.CPU, m.busy = cpuSpent{ClientS: median(cpu)}, median(cores)
		medians[k] = m
	}
	return order, medians, all
}

// limitGoals: the bare client made the requests ours made (the same writes, as many
// streaming lists), and ours met the goals of the run story for a start, a restart and an
// edit.
func limitGoals(r limitResult) []string {
	var f []string
	if len(r.Rounds) == 0 || len(r.Rounds[0].Ours) == 0 {
		return []string{"no start of ours"}
	}
	ours := r.Rounds[0].Ours[0].Requests
	oursWrites := writesOf(ours)
	withoutEvents := map[string]int{}
	for k, v := range oursWrites {
		if k != "create events" {
			withoutEvents[k] = v
		}
	}
	var points []limitPoint
	for _, rd := range r.Rounds {
		points = append(points, rd.Sweep...)
		points = append(points, rd.NoEvents)
		for _, run := range rd.Ours {
			if got := writesOf(run.Requests); fmt.Sprint(got) != fmt.Sprint(oursWrites) {
				f = append(f, fmt.Sprintf("ours at %d: writes %v, ours at first %v", run.Concurrency, got, oursWrites))
			}
			for _, g := range goals(result{N: r.N, Start: run.Requests}) {
				if strings.HasPrefix(g, "start:") {
					f = append(f, fmt.Sprintf("ours at %d %s", run.Concurrency, g))
				}
			}
		}
	}
	if r.After != nil {
		points = append(points, *r.After)
	}
	for _, p := range points {
		want := oursWrites
		if p.NoEvents {
			want = withoutEvents
		}
		if got := writesOf(p.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
			f = append(f, fmt.Sprintf("floor %s: writes %v, want %v", p.setting(), got, want))
		}
		if got, want := p.Requests.count("watch-list"), ours.count("watch-list"); got != want {
			f = append(f, fmt.Sprintf("floor %s: %d streaming lists, ours %d", p.setting(), got, want))
		}
		if p.Requests.Refused > 0 {
			f = append(f, fmt.Sprintf("floor %s: %d requests refused", p.setting(), p.Requests.Refused))
		}
	}
	for i, q := range r.Restart.Requests {
		if q.Writes != 0 {
			f = append(f, fmt.Sprintf("ours' restart %d: %d writes (%s)", i+1, q.Writes, q))
		}
	}
	for _, p := range append(append([]limitPoint{}, r.Restart.Process...), r.Restart.Lists...) {
		if got, want := p.Requests.count("watch-list"), ours.count("watch-list"); got != want || p.Requests.Writes != 0 {
			f = append(f, fmt.Sprintf("floor of the restart: %d streaming lists and %d writes; ours %d streaming lists", got, p.Requests.Writes, want))
		}
	}
	for _, run := range r.Edit.Ours {
		if got := run.Requests.deploymentWrites(); got != r.Edit.K {
			f = append(f, fmt.Sprintf("ours' edit: %d Deployment writes for K = %d", got, r.Edit.K))
		}
		if got := run.Requests.statusWrites(); got != r.Edit.K {
			f = append(f, fmt.Sprintf("ours' edit: %d status writes for K = %d", got, r.Edit.K))
		}
		for _, p := range r.Edit.Sweep {
			if got, want := writesOf(p.Requests), writesOf(run.Requests); fmt.Sprint(got) != fmt.Sprint(want) {
				f = append(f, fmt.Sprintf("edit floor at %d: writes %v, ours %v", p.Concurrency, got, want))
			}
		}
	}
	return f
}

// ratio is a / b to two places, "-" when b is not positive.
func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// limitTable prints each phase's runs, their medians, and ours against the floor.
func limitTable(r limitResult, w io.Writer) {
	rounds := len(r.Rounds)
	head := func(first string) {
		fmt.Fprintf(w, "| %s |", first)
		for i := 1; i <= rounds; i++ {
			fmt.Fprintf(w, " round %d |", i)
		}
		fmt.Fprintln(w, " median | cores busy (median) |")
		fmt.Fprint(w, "|---|")
		for i := 0; i <= rounds+1; i++ {
			fmt.Fprint(w, "---:|")
		}
		fmt.Fprintln(w)
	}
	row := func(name string, xs []float64, m float64, cores float64) {
		fmt.Fprintf(w, "| %s |", name)
		for _, x := range xs {
			fmt.Fprintf(w, " %.2f |", x)
		}
		for i := len(xs); i < rounds; i++ {
			fmt.Fprint(w, " - |")
		}
		busy := "-"
		if cores > 0 {
			busy = fmt.Sprintf("%.2f", cores)
		}
		fmt.Fprintf(w, " %.2f | %s |\n", m, busy)
	}

	fmt.Fprintf(w, "\nThe start of N = %d, time to the last write (s): the bare client's settings, then ours, in %d rounds\n\n", r.N, rounds)
	head("setting")
	var all []limitPoint
	for _, rd := range r.Rounds {
		all = append(all, rd.Sweep...)
		all = append(all, rd.NoEvents)
	}
	_, order, medians := floorSweep(all)
	floor := floorOf(r)
	_, groups := bySetting(all)
	for _, k := range order {
		var xs []float64
		for _, p := range groups[k] {
			xs = append(xs, p.LastWriteS)
		}
		name := k
		if k == floor.setting() {
			name += " **floor**"
		}
		row(name, xs, medians[k].LastWriteS, medians[k].busy)
	}
	var runs []oursRun
	for _, rd := range r.Rounds {
		runs = append(runs, rd.Ours...)
	}
	oOrder, oMedians, oAll := oursMedians(runs)
	for _, k := range oOrder {
		var xs, hs []float64
		for _, run := range oAll[k] {
			xs, hs = append(xs, run.LastWriteS), append(hs, run.HealthyS)
		}
		row(fmt.Sprintf("ours at %d", k), xs, oMedians[k].LastWriteS, oMedians[k].busy)
		row(fmt.Sprintf("ours at %d: every Gateway healthy", k), hs, oMedians[k].HealthyS, 0)
	}
	if r.After != nil {
		fmt.Fprintf(w, "\nThe floor's setting once more, at the end: %.2f s (%s)\n", r.After.LastWriteS, r.After.CPU)
	}

	fmt.Fprintf(w, "\n| ours / floor (medians) | floor (s) | ours (s) | ours / floor |\n|---|---:|---:|---:|\n")
	for _, k := range oOrder {
		fmt.Fprintf(w, "| start, ours at %d, time to the last write | %.2f | %.2f | %s |\n", k, floor.LastWriteS,
			oMedians[k].LastWriteS, ratio(oMedians[k].LastWriteS, floor.LastWriteS))
	}
	if rs := eventsCost(r); len(rs) > 0 {
		fmt.Fprintf(w, "| each round's best setting without the Events, against the same with them (median of %v) | | | %.2f |\n",
			rs, median(rs))
	}
	var proc, lists []float64
	for _, p := range r.Restart.Process {
		proc = append(proc, p.ListsS)
	}
	for _, p := range r.Restart.Lists {
		lists = append(lists, p.ListsS)
	}
	oursRestart := median(r.Restart.Ours)
	fmt.Fprintf(w, "| restart: the lists in a process of their own / ours' every Gateway reconciled | %.2f | %.2f | %s |\n",
		median(proc), oursRestart, ratio(oursRestart, median(proc)))
	fmt.Fprintf(w, "| restart: the lists in the harness / ours | %.2f | %.2f | %s |\n",
		median(lists), oursRestart, ratio(oursRestart, median(lists)))
	eFloor, eOrder, eMedians := floorSweep(r.Edit.Sweep)
	_, eoMedians, _ := oursMedians(r.Edit.Ours)
	for _, k := range eoMedians {
		fmt.Fprintf(w, "| edit of K = %d, time to the last write (ours at %d) | %.2f (%s) | %.2f | %s |\n", r.Edit.K,
			k.Concurrency, eFloor.LastWriteS, eFloor.setting(), k.LastWriteS, ratio(k.LastWriteS, eFloor.LastWriteS))
	}
	fmt.Fprintf(w, "\nThe edit's floor by setting (medians, s):")
	for _, k := range eOrder {
		fmt.Fprintf(w, " %s %.2f;", k, eMedians[k].LastWriteS)
	}
	fmt.Fprintf(w, "\nRestart runs (s): process %v, harness %v, ours %v\n", proc, lists, r.Restart.Ours)
}

// eventsCost is, per round, the time of the round's best setting without the Events over
// the same setting's time with them in that round.
func eventsCost(r limitResult) []float64 {
	var out []float64
	for _, rd := range r.Rounds {
		for _, p := range rd.Sweep {
			if p.HTTP == rd.NoEvents.HTTP && p.Concurrency == rd.NoEvents.Concurrency && p.LastWriteS > 0 {
				out = append(out, math.Round(rd.NoEvents.LastWriteS/p.LastWriteS*100)/100)
				break
			}
		}
	}
	return out
}
