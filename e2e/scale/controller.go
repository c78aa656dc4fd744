package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/gateway-reconcile/e2e/controlplane/pki"
)

// oursLog is ours' log filter in the harness (see controller.start).
const oursLog = "gateway_reconcile_kube::controller::reconciler=debug," +
	"gateway_reconcile_kube::controller::watches=debug," +
	"gateway_reconcile_kube::controller::stores=debug,info"

// Users of the controllers, as the audit log names them.
const (
	oursUser    = "gateway-reconcile-controller"
	meridioUser = "meridio-2-controller"
)

// controller is one controller under test: how to start it, who it is, how to count its
// reconciles.
type controller struct {
	kind       string // "ours" or "meridio-2"
	bin        string
	user       string
	kubeconfig string
	templates  string
	extra      []string // ours: more arguments
	dir        string   // logs
	starts     int

	cmd         *exec.Cmd
	done        chan struct{} // closed when the process has exited
	log         string
	metricsPort int
}

// newController prepares the controller's identity. Ours runs as the user
// gateway-reconcile-controller of controlplane.sh, bound to its shipped ClusterRole.
// Meridio-2's shipped RBAC is a namespaced Role (and lacks gateways/finalizers, which the
// OwnerReferencesPermissionEnforcement admission plugin requires), so it runs as a user
// of its own bound to the built-in ClusterRole cluster-admin: the audit log tells its
// requests apart, and API Priority and Fairness treats both controllers alike (a member
// of system:masters would be exempt).
func newController(ctx context.Context, dyn dynamic.Interface, o options) (*controller, error) {
	dir := os.Getenv("E2E_DIR")
	if dir == "" {
		return nil, fmt.Errorf("E2E_DIR is not set: run under e2e/controlplane.sh run")
	}
	c := &controller{kind: o.controller, bin: o.bin, dir: dir, templates: o.templates,
		extra: strings.Fields(o.oursArgs)}
	switch o.controller {
	case "ours":
		if o.clusterRole == "" {
			return nil, fmt.Errorf("-clusterrole is needed for ours")
		}
		c.user = oursUser
		c.kubeconfig = os.Getenv("E2E_CONTROLLER_KUBECONFIG")
		if err := bindClusterRole(ctx, dyn, o.clusterRole, oursUser); err != nil {
			return nil, err
		}
	default:
		if o.templates == "" {
			return nil, fmt.Errorf("-templates is needed for meridio-2")
		}
		c.user = meridioUser
		c.kubeconfig = filepath.Join(dir, "meridio-2.kubeconfig")
		if err := pki.MintKubeconfig(c.kubeconfig, meridioUser); err != nil {
			return nil, err
		}
		if err := bindClusterAdmin(ctx, dyn, meridioUser); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start starts a new process of the controller, its log in the control plane's directory
// (or SCALE_KEEP_LOGS).
func (c *controller) start() error {
	c.starts++
	// SCALE_KEEP_LOGS: a directory that outlives the control plane's, for the logs.
	logDir := c.dir
	if d := os.Getenv("SCALE_KEEP_LOGS"); d != "" {
		logDir = d
	}
	c.log = filepath.Join(logDir, fmt.Sprintf("%s-%d-%d.log", c.kind, c.starts, time.Now().UnixNano()))
	var args []string
	switch c.kind {
	case "ours":
		// JSON logs, at debug only for what the harness reads: each reconcile's
		// `reconciled` line, and each watch's end of list and cache ready (SCALE_KEEP_LOGS'
		// timeline of a restart). The other debug lines (a `reconciling` line each
		// reconcile, ...) cost ours CPU a production run at info does not pay.
		// One replica, as Meridio-2's below: no leader election, and no probe or metrics
		// port (nothing here scrapes them; two runs must not collide on a fixed port).
		args = []string{"--kubeconfig", c.kubeconfig, "--log-format", "json",
			"--log", oursLog,
			"--leader-elect=false", "--health-addr", "0", "--metrics-addr", "0"}
		args = append(args, c.extra...)
	default:
		port, err := freePort()
		if err != nil {
			return err
		}
		c.metricsPort = port
		// Defaults, except what has no place here: webhooks (no certificates), leader
		// election (one replica), the health probe port; metrics in plain HTTP on
		// loopback, read for the reconcile count.
		args = []string{"run", "--enable-webhooks=false", "--cert-wait-timeout=0",
			"--health-probe-bind-address=0", "--metrics-secure=false",
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", port),
			"--template-path", c.templates}
	}
	log, err := os.Create(c.log)
	if err != nil {
		return err
	}
	c.cmd = exec.Command(c.bin, args...)
	c.cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	c.cmd.Stdout = log
	c.cmd.Stderr = log
	if err := c.cmd.Start(); err != nil {
		log.Close()
		return err
	}
	done := make(chan struct{})
	c.done = done
	go func() { _ = c.cmd.Wait(); log.Close(); close(done) }()
	return nil
}

// alive reports whether the process still runs.
func (c *controller) alive() bool {
	if c.done == nil {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and waits (30 s, then SIGKILL).
func (c *controller) stop() {
	if !c.alive() {
		return
	}
	signalThenKill(c.cmd, c.done, syscall.SIGTERM, 30*time.Second)
}

// usage is what /proc says of the process: peak resident memory (VmHWM) and CPU time.
type usage struct {
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	RSSMiB     float64 `json:"rss_mib"`
	CPUSeconds float64 `json:"cpu_s"`
}

func (c *controller) usage() (usage, error) {
	var u usage
	pid := c.cmd.Process.Pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && (f[0] == "VmHWM:" || f[0] == "VmRSS:") {
			kb, _ := strconv.ParseFloat(f[1], 64)
			if f[0] == "VmHWM:" {
				u.PeakRSSMiB = kb / 1024
			} else {
				u.RSSMiB = kb / 1024
			}
		}
	}
	if u.CPUSeconds, err = cpuSeconds(pid); err != nil {
		return u, err
	}
	return u, nil
}

// waitReconciled polls reconciles (every 100 ms) until n Gateways have been reconciled
// (for Meridio-2's, n reconciles: a lower bound on the time).
func (c *controller) waitReconciled(n int, since time.Time, timeout time.Duration) error {
	for {
		total, distinct, err := c.reconciles()
		if err == nil && ((distinct >= 0 && distinct >= n) || (distinct < 0 && total >= n)) {
			return nil
		}
		if time.Since(since) > timeout || !c.alive() {
			return fmt.Errorf("restart: not every Gateway reconciled after %s (%d so far; log %s)", time.Since(since), total, c.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reconciledAt is, from ours' log, the time of the reconcile that made n distinct Gateways
// reconciled (its `timestamp`, on the machine's clock, as the harness's): finer than
// waitReconciled's polling. False when the log does not say (Meridio-2's, or not yet).
func (c *controller) reconciledAt(n int) (at time.Time, ok bool) {
	if c.kind != "ours" {
		return at, false
	}
	seen := map[string]bool{}
	_ = c.eachReconciled(func(timestamp, gateway string) bool {
		seen[gateway] = true
		if len(seen) < n {
			return true
		}
		t, err := time.Parse(time.RFC3339Nano, timestamp)
		at, ok = t, err == nil
		return false
	})
	return at, ok
}

// eachReconciled calls f with the timestamp and Gateway of each `reconciled` line of ours'
// JSON log, in order, until f returns false.
func (c *controller) eachReconciled(f func(timestamp, gateway string) bool) error {
	file, err := os.Open(c.log)
	if err != nil {
		return err
	}
	defer file.Close()
	s := bufio.NewScanner(file)
	s.Buffer(make([]byte, 1<<20), 1<<24)
	for s.Scan() {
		line := s.Bytes()
		if !strings.Contains(string(line), `"reconciled"`) {
			continue
		}
		var entry struct {
			Timestamp string `json:"timestamp"`
			Fields    struct {
				Message string `json:"message"`
				Gateway string `json:"gateway"`
			} `json:"fields"`
		}
		if json.Unmarshal(line, &entry) == nil && entry.Fields.Message == "reconciled" {
			if !f(entry.Timestamp, entry.Fields.Gateway) {
				return nil
			}
		}
	}
	return s.Err()
}

// reconciles counts the reconciles of the running process so far, and how many distinct
// Gateways they covered (-1 when the controller does not say). Ours: its `reconciled`
// debug log lines; Meridio-2: controller-runtime's controller_runtime_reconcile_total of
// the controller `gateway` (every result, requeues included).
func (c *controller) reconciles() (total int, distinct int, err error) {
	if c.kind == "ours" {
		seen := map[string]bool{}
		err := c.eachReconciled(func(_, gateway string) bool {
			total++
			seen[gateway] = true
			return true
		})
		return total, len(seen), err
	}
	client := http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", c.metricsPort))
	if err != nil {
		return 0, -1, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, -1, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "controller_runtime_reconcile_total{") &&
			strings.Contains(line, `controller="gateway"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			total += int(v)
		}
	}
	return total, -1, nil
}
