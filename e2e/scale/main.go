// Command scale is the load harness of the end-to-end suite: on the control plane of
// e2e/controlplane.sh it creates N Gateways (with GatewayConfigurations, some shared by many
// Gateways, and L34Routes) before a Gateway controller starts, then starts the controller as
// a process of its own and measures what it costs: time to converge, API requests by verb
// (from the audit log), requests while idle, a restart, one edit of a shared
// GatewayConfiguration, peak memory and CPU. See docs/scale.md, "How the harness measures".
//
//	scale run   -controller ours|meridio-2 -bin PATH -n N [-out FILE] [-check]
//	scale seed  -controller ours|meridio-2 -bin PATH [-sample 2m] [-out FILE] [-check]
//	scale table FILE...
//	scale crd-cases CASES.json PATH/TO/gateway-reconcile
//	scale wide-replicas -controller ours|meridio-2 -bin PATH
//	scale ready -controller ours|meridio-2 -bin PATH -n N [-out FILE]   (full control plane)
//	scale ready-table FILE...
//	scale limit -controller ours -bin PATH -plan PATH/TO/gateway-reconcile -n N
//	            [-concurrency 1,4,8,16,32,64] [-http h2,http1] [-out FILE] [-check]
//	            the floor of the start (a bare client making ours' requests, swept over
//	            concurrencies and transports), then ours' start on the same control plane;
//	            [-rounds R] [-ours-concurrency 8,64] [-edit-concurrency 8,64]
//	            then the restart: the bare client's streaming lists alone, against ours' restart;
//	            then the edit of a GatewayConfiguration shared by K = N/10 Gateways
//	scale limit-lists KUBECONFIG   (the limit story's restart floor: ours' streaming lists, then exit)
//	scale flame-names < FOLDED     (folded stacks with Rust's generic arguments dropped: SCALE_PERF)
//
// run, seed, ready and limit need the variables of `controlplane.sh run` (KUBECONFIG, AUDIT_LOG, ...).
package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// options of one run or seed story.
type options struct {
	controller      string        // "ours" or "meridio-2"
	bin             string        // the controller's executable
	n               int           // Gateways
	namespaces      int           // namespaces they are spread over
	idle            time.Duration // the idle window
	timeout         time.Duration // bound of each wait
	sample          time.Duration // the seed story's observation window
	out             string        // JSON result file
	check           bool          // fail when ours misses a goal of the issue
	clusterRole     string        // ours: the ClusterRole file bound to its user
	templates       string        // meridio-2: the directory holding lb-deployment.yaml
	oursArgs        string        // ours: more arguments, split on spaces
	workers         int           // concurrent creates
	planBin         string        // limit: the crate's CLI (gateway-reconcile), for its plan
	concurrency     string        // limit: the sweep's Gateways in flight, "1,4,8"
	http            string        // limit: the sweep's transports, "h2,http1"
	rounds          int           // limit: rounds of every phase (medians)
	oursConcurrency string        // limit: ours' --concurrency of each start, "8,64" (the last is kept on)
	editConcurrency string        // limit: the edit floor's Gateways in flight, "8,64"
	held            string        // run: the held_bytes example (the memory floor); "" skips it
}

func main() {
	if len(os.Args) < 2 {
		usageExit()
	}
	var err error
	switch os.Args[1] {
	case "run", "seed", "wide-replicas", "ready", "limit":
		o := parse(os.Args[1], os.Args[2:])
		switch os.Args[1] {
		case "run":
			err = runStory(o)
		case "seed":
			err = seedStory(o)
		case "ready":
			err = readyStory(o)
		case "limit":
			err = limitStory(o)
		default:
			err = wideReplicasStory(o)
		}
	case "table":
		err = table(os.Args[2:], os.Stdout)
	case "ready-table":
		err = readyTable(os.Args[2:], os.Stdout)
	case "limit-lists":
		err = limitLists(os.Args[2:])
	case "crd-cases":
		err = crdCases(os.Args[2:], os.Stdout)
	case "flame-names":
		err = flameNames()
	default:
		usageExit()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "scale: %v\n", err)
		os.Exit(1)
	}
}

func usageExit() {
	fmt.Fprintln(os.Stderr, "usage: scale run|seed|ready|limit -controller ours|meridio-2 -bin PATH [flags] | scale table FILE...")
	os.Exit(2)
}

func parse(name string, args []string) options {
	var o options
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.StringVar(&o.controller, "controller", "ours", "ours or meridio-2")
	fs.StringVar(&o.bin, "bin", "", "the controller's executable")
	fs.IntVar(&o.n, "n", 20, "Gateways")
	fs.IntVar(&o.namespaces, "namespaces", 10, "namespaces the Gateways are spread over")
	fs.DurationVar(&o.idle, "idle", time.Minute, "idle window once converged")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "bound of each wait")
	fs.DurationVar(&o.sample, "sample", 2*time.Minute, "seed: how long the Gateway status is sampled")
	fs.StringVar(&o.out, "out", "", "write the result as JSON to this file")
	fs.BoolVar(&o.check, "check", false, "fail when the controller misses a goal (ours)")
	fs.StringVar(&o.clusterRole, "clusterrole", "", "ours: ClusterRole YAML bound to its user")
	fs.StringVar(&o.templates, "templates", "", "meridio-2: directory with lb-deployment.yaml")
	fs.IntVar(&o.workers, "workers", 24, "concurrent creates")
	fs.StringVar(&o.planBin, "plan", "", "limit: the crate's CLI (gateway-reconcile), whose plan renders the bodies")
	fs.StringVar(&o.concurrency, "concurrency", "1,4,8,16,32,64", "limit: Gateways in flight, one run of the bare client each")
	fs.StringVar(&o.http, "http", "h2,http1", "limit: transports of the bare client (h2, http1)")
	fs.IntVar(&o.rounds, "rounds", 1, "limit: rounds of each phase (floor and ours interleaved; medians)")
	fs.StringVar(&o.oursConcurrency, "ours-concurrency", "8", "limit: ours' --concurrency of each start (the last one's run goes on to the restart and the edit)")
	fs.StringVar(&o.editConcurrency, "edit-concurrency", "8,64", "limit: the edit floor's Gateways in flight")
	fs.StringVar(&o.held, "held", "", "run: the held_bytes example of gateway-reconcile-kube (the bytes the caches hold)")
	fs.StringVar(&o.oursArgs, "ours-args", "", "ours: more arguments of the controller, split on spaces (e.g. --streaming-lists)")
	_ = fs.Parse(args)
	if o.bin == "" || (o.controller != "ours" && o.controller != "meridio-2") {
		usageExit()
	}
	if o.namespaces < 1 {
		o.namespaces = 1
	}
	return o
}
