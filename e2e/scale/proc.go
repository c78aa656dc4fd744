package main

// What /proc says of a process: its CPU time and peak memory; and how a process is stopped. The stories read the
// controller's, the harness's own and the control plane's (kube-apiserver and etcd, whose
// process ids controlplane.sh exports), to say what bounds a phase: when the processes
// together spent about 2 CPU-seconds a second, the two cores were the limit.

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// cpuSeconds is a process's CPU time so far (utime + stime of /proc/PID/stat).
func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return statCPU(string(stat))
}

// statCPU reads utime and stime from a /proc/PID/stat line: the 14th and 15th fields, in
// clock ticks (100 per second on Linux), counted after the command name, which may hold
// spaces and parentheses.
func statCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 || i+2 > len(stat) {
		return 0, fmt.Errorf("not a /proc/PID/stat line: %q", shorten(stat))
	}
	f := strings.Fields(stat[i+2:])
	if len(f) < 13 {
		return 0, fmt.Errorf("not a /proc/PID/stat line: %q", shorten(stat))
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("not a /proc/PID/stat line: %q", shorten(stat))
	}
	return (utime + stime) / 100, nil
}

// cpuSpent is the CPU time of the processes of a phase (s), and its wall time.
type cpuSpent struct {
	WallS      float64 `json:"wall_s"`
	APIServerS float64 `json:"apiserver_s"`
	EtcdS      float64 `json:"etcd_s"`
	// The client: the harness's own process (the bare client and its watch), or ours.
	ClientS float64 `json:"client_s"`
	// The harness's process when the client is ours (its watch of the Gateways).
	HarnessS float64 `json:"harness_s,omitempty"`
}

// cores is how many cores the phase kept busy on average.
func (c cpuSpent) cores() float64 {
	if c.WallS <= 0 {
		return 0
	}
	return (c.APIServerS + c.EtcdS + c.ClientS + c.HarnessS) / c.WallS
}

func (c cpuSpent) String() string {
	return fmt.Sprintf("CPU-s: kube-apiserver %.2f, etcd %.2f, client %.2f, harness %.2f; %.2f cores busy over %.2f s",
		c.APIServerS, c.EtcdS, c.ClientS, c.HarnessS, c.cores(), c.WallS)
}

// cpuSample is the CPU time of the control plane's processes and of a client at one
// instant; the difference of two is a cpuSpent.
type cpuSample struct{ apiserver, etcd, client float64 }

// sampleCPU reads the control plane's processes (absent ids read as 0) and `client`.
func sampleCPU(client int) cpuSample {
	read := func(pid int) float64 {
		if pid <= 0 {
			return 0
		}
		v, _ := cpuSeconds(pid)
		return v
	}
	env := func(name string) int {
		v, _ := strconv.Atoi(os.Getenv(name))
		return v
	}
	return cpuSample{apiserver: read(env("E2E_APISERVER_PID")), etcd: read(env("E2E_ETCD_PID")), client: read(client)}
}

// since is the CPU spent from s0 to s over wallS seconds.
func (s cpuSample) since(s0 cpuSample, wallS float64) cpuSpent {
	return cpuSpent{WallS: wallS, APIServerS: s.apiserver - s0.apiserver, EtcdS: s.etcd - s0.etcd, ClientS: s.client - s0.client}
}

// peakRSSMiB is a process's peak resident memory (VmHWM of /proc/PID/status), in MiB.
func peakRSSMiB(pid int) (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseFloat(f[1], 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// serverMemory is the control plane's peak resident memory (MiB): kube-apiserver and etcd.
type serverMemory struct {
	APIServerMiB float64 `json:"apiserver_mib"`
	EtcdMiB      float64 `json:"etcd_mib"`
}

// readServerMemory reads it (absent processes read as 0).
func readServerMemory() serverMemory {
	read := func(name string) float64 {
		pid, _ := strconv.Atoi(os.Getenv(name))
		if pid <= 0 {
			return 0
		}
		v, _ := peakRSSMiB(pid)
		return v
	}
	return serverMemory{APIServerMiB: read("E2E_APISERVER_PID"), EtcdMiB: read("E2E_ETCD_PID")}
}

// signalThenKill sends sig to cmd's process and waits for done (closed once it has
// exited) for at most grace, then kills it and waits.
func signalThenKill(cmd *exec.Cmd, done <-chan struct{}, sig os.Signal, grace time.Duration) {
	_ = cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		_ = cmd.Process.Kill()
		<-done
	}
}
