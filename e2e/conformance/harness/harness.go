// Package harness installs a Gateway controller on a control plane of e2e/controlplane.sh
// (the full one: E2E_FULL=1) the way an operator would, so that the Gateway API
// conformance suite, unmodified, can be run against it: the controller's RBAC, the
// default GatewayConfiguration its GatewayClass names, the GatewayClass, the load
// balancer's ServiceAccount in the suite's infrastructure namespace, and the controller
// itself as a process of its own. It knows two controllers: this project's
// gateway-reconcile-controller ("ours") and Meridio-2's controller-manager ("meridio-2").
//
// Everything it reads comes from the environment (e2e/conformance/run.sh sets it):
//
//	CONFORMANCE_CONTROLLER      ours (default) or meridio-2
//	CONFORMANCE_CONTROLLER_BIN  the controller's binary
//	CONFORMANCE_CLUSTERROLE     ours: gateway-reconcile-kube/deploy/clusterrole.yaml
//	CONFORMANCE_TEMPLATES       meridio-2: the directory of its LB Deployment template
//	CONFORMANCE_CRDS            CRD files applied (created or replaced) before the
//	                            controller starts, split on spaces (optional)
//	CONFORMANCE_LOG             where the controller's log is copied when the test ends
//	                            (optional; it is in E2E_DIR otherwise, removed with it)
//	CONFORMANCE_RUN_TESTS       tests to run, and only those, whatever the plan says of
//	                            them (optional; commas or spaces between names): a
//	                            diagnosis of tests the default run skips (options.go)
//
// and the control plane's KUBECONFIG, E2E_CONTROLLER_KUBECONFIG, E2E_DIR, E2E_SERVER,
// E2E_CA_CERT and E2E_CA_KEY.
package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"

	"github.com/gateway-reconcile/e2e/controlplane/pki"
)

// The names the harness gives what it installs.
const (
	// ControllerName is the controllerName both controllers own by default.
	ControllerName = "meridio-2.nordix.org/gateway-controller"
	// GatewayClass is the class the suite is given (--gateway-class): it names the
	// default GatewayConfiguration below.
	GatewayClass = "gateway-reconcile-conformance"
	// ConfigNamespace and ConfigName: the class's default GatewayConfiguration, in a
	// namespace of its own (the suite's namespaces are created and deleted by the suite).
	ConfigNamespace = "gateway-reconcile-system"
	ConfigName      = "conformance-default"
	// InfraNamespace is the suite's namespace of every Gateway it creates.
	InfraNamespace = "gateway-conformance-infra"
	// LBServiceAccount is the ServiceAccount both controllers give the LB Pods (their
	// default); ServiceAccount admission refuses a Pod whose ServiceAccount is missing.
	LBServiceAccount = "stateless-load-balancer"

	oursUser    = "gateway-reconcile-controller"
	meridioUser = "meridio-2-controller"
)

var (
	gvrNamespace      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrServiceAccount = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	gvrClusterRole    = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	gvrBinding        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	gvrCRD            = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	gvrConfig         = schema.GroupVersionResource{Group: "meridio-2.nordix.org", Version: "v1alpha1", Resource: "gatewayconfigurations"}
	gvrGatewayClass   = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	gvrGateway        = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	gvrDeployment     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// Env is what the harness was given.
type Env struct {
	Controller  string // "ours" or "meridio-2"
	Bin         string
	ClusterRole string
	Templates   string
	CRDs        []string
	Log         string
	dir         string
}

// FromEnv reads the environment. Outside a control plane of e2e/controlplane.sh the test
// is skipped; a missing binary fails it.
func FromEnv(t *testing.T) Env {
	t.Helper()
	if os.Getenv("E2E_DIR") == "" || os.Getenv("KUBECONFIG") == "" {
		t.Skip("not on a control plane of e2e/controlplane.sh (E2E_DIR, KUBECONFIG): run e2e/conformance/run.sh")
	}
	if os.Getenv("E2E_FULL") != "1" {
		t.Fatal("the conformance suite needs the full control plane (E2E_FULL=1): its Pods must exist and become Ready")
	}
	e := Env{
		Controller:  os.Getenv("CONFORMANCE_CONTROLLER"),
		Bin:         os.Getenv("CONFORMANCE_CONTROLLER_BIN"),
		ClusterRole: os.Getenv("CONFORMANCE_CLUSTERROLE"),
		Templates:   os.Getenv("CONFORMANCE_TEMPLATES"),
		CRDs:        strings.Fields(os.Getenv("CONFORMANCE_CRDS")),
		Log:         os.Getenv("CONFORMANCE_LOG"),
		dir:         os.Getenv("E2E_DIR"),
	}
	if e.Controller == "" {
		e.Controller = "ours"
	}
	switch e.Controller {
	case "ours":
		if e.ClusterRole == "" {
			t.Fatal("CONFORMANCE_CLUSTERROLE is not set (gateway-reconcile-kube/deploy/clusterrole.yaml)")
		}
	case "meridio-2":
		if e.Templates == "" {
			t.Fatal("CONFORMANCE_TEMPLATES is not set (Meridio-2's config/templates)")
		}
	default:
		t.Fatalf("CONFORMANCE_CONTROLLER=%q: ours or meridio-2", e.Controller)
	}
	if st, err := os.Stat(e.Bin); err != nil || st.IsDir() {
		t.Fatalf("CONFORMANCE_CONTROLLER_BIN=%q: not a file", e.Bin)
	}
	return e
}

// Install installs everything and starts the controller, ours configured to publish
// features (its settings' supportedFeatures); t's cleanup stops it (after the suite's own
// cleanups, which t runs first) and prints what the GatewayClasses and the Gateways left
// said.
func Install(t *testing.T, e Env, features []features.FeatureName) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dyn := mustAdmin(t)

	for _, f := range e.CRDs {
		if err := applyCRD(ctx, dyn, f); err != nil {
			t.Fatalf("CRD %s: %v", f, err)
		}
		t.Logf("harness: CRD applied from %s", f)
	}

	kubeconfig := os.Getenv("E2E_CONTROLLER_KUBECONFIG")
	switch e.Controller {
	case "ours":
		if err := bindClusterRole(ctx, dyn, e.ClusterRole, oursUser); err != nil {
			t.Fatalf("RBAC: %v", err)
		}
	default:
		kubeconfig = filepath.Join(e.dir, "meridio-2.kubeconfig")
		if err := pki.MintKubeconfig(kubeconfig, meridioUser); err != nil {
			t.Fatalf("kubeconfig: %v", err)
		}
		if err := bindClusterAdmin(ctx, dyn, meridioUser); err != nil {
			t.Fatalf("RBAC: %v", err)
		}
	}

	for _, o := range objects() {
		if err := create(ctx, dyn, o); err != nil {
			t.Fatalf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	t.Logf("harness: GatewayClass %s (controllerName %s) with default parameters GatewayConfiguration %s/%s; namespace %s with ServiceAccount %s",
		GatewayClass, ControllerName, ConfigNamespace, ConfigName, InfraNamespace, LBServiceAccount)

	p, err := start(e, kubeconfig, features)
	if err != nil {
		t.Fatalf("starting the controller: %v", err)
	}
	t.Logf("harness: %s controller started (%s), log %s", e.Controller, e.Bin, p.log)
	t.Cleanup(func() {
		dump(t, dyn)
		select {
		case <-p.done:
			t.Errorf("harness: the controller exited by itself (%v): see its log", p.err)
		default:
		}
		p.stop()
		if t.Failed() {
			tail(t, p.log, 40)
		}
		if e.Log != "" {
			if err := copyFile(p.log, e.Log); err != nil {
				t.Logf("harness: copying the controller's log: %v", err)
			}
		}
	})
}

// objects: the class's default GatewayConfiguration (valid: one NAD internal subnet; the
// other fields the CRD requires, written out), the GatewayClass naming it, and the
// suite's infrastructure namespace with the LB ServiceAccount (the suite applies the
// namespace again with its own labels, the same as these, and deletes it at the end).
func objects() []*unstructured.Unstructured {
	u := func(o map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: o} }
	return []*unstructured.Unstructured{
		u(map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ConfigNamespace}}),
		u(map[string]any{"apiVersion": "meridio-2.nordix.org/v1alpha1", "kind": "GatewayConfiguration",
			"metadata": map[string]any{"name": ConfigName, "namespace": ConfigNamespace},
			"spec": map[string]any{
				"networkAttachments": []any{},
				"internalSubnets":    []any{map[string]any{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}},
				"horizontalScaling":  map[string]any{"replicas": int64(1), "enforceReplicas": true},
			}}),
		u(map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
			"metadata": map[string]any{"name": GatewayClass},
			"spec": map[string]any{
				"controllerName": ControllerName,
				"parametersRef": map[string]any{"group": "meridio-2.nordix.org", "kind": "GatewayConfiguration",
					"name": ConfigName, "namespace": ConfigNamespace},
			}}),
		u(map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": InfraNamespace,
				"labels": map[string]any{"gateway-conformance": "infra"}}}),
		u(map[string]any{"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": LBServiceAccount, "namespace": InfraNamespace}}),
	}
}

// ClassFeatures are the features the suite runs with: for ours, the GatewayClass's
// status.supportedFeatures once the controller wrote them (waited for up to a minute);
// for Meridio-2, which publishes none, ours' by hand (so that both run the same tests),
// said in the log.
func ClassFeatures(t *testing.T, e Env) Features {
	t.Helper()
	if e.Controller != "ours" {
		t.Logf("harness: %s publishes no supportedFeatures on its GatewayClass: the suite is given ours' by hand", e.Controller)
		return Features{Names: SettingsFeatures(t)}
	}
	dyn := mustAdmin(t)
	var names []features.FeatureName
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true,
		func(ctx context.Context) (bool, error) {
			class, err := dyn.Resource(gvrGatewayClass).Get(ctx, GatewayClass, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			list, _, _ := unstructured.NestedSlice(class.Object, "status", "supportedFeatures")
			names = names[:0]
			for _, f := range list {
				if m, ok := f.(map[string]any); ok {
					if n, ok := m["name"].(string); ok {
						names = append(names, features.FeatureName(n))
					}
				}
			}
			return len(names) > 0, nil
		})
	if err != nil {
		t.Fatalf("GatewayClass %s: no status.supportedFeatures after a minute: %v", GatewayClass, err)
	}
	t.Logf("harness: GatewayClass %s publishes supportedFeatures %v", GatewayClass, names)
	return Features{Names: names, FromClass: true}
}

func mustAdmin(t *testing.T) dynamic.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatalf("admin kubeconfig: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("admin client: %v", err)
	}
	return dyn
}

func create(ctx context.Context, dyn dynamic.Interface, o *unstructured.Unstructured) error {
	var gvr schema.GroupVersionResource
	switch o.GetKind() {
	case "Namespace":
		gvr = gvrNamespace
	case "ServiceAccount":
		gvr = gvrServiceAccount
	case "GatewayConfiguration":
		gvr = gvrConfig
	case "GatewayClass":
		gvr = gvrGatewayClass
	default:
		return fmt.Errorf("unknown kind %s", o.GetKind())
	}
	var err error
	if ns := o.GetNamespace(); ns != "" {
		_, err = dyn.Resource(gvr).Namespace(ns).Create(ctx, o, metav1.CreateOptions{})
	} else {
		_, err = dyn.Resource(gvr).Create(ctx, o, metav1.CreateOptions{})
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func readYAML(path string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	o := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(data, &o.Object); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// applyCRD creates the CRD of the file or replaces the installed one with it, then
// waits until it is Established and serves what the file says.
func applyCRD(ctx context.Context, dyn dynamic.Interface, path string) error {
	o, err := readYAML(path)
	if err != nil {
		return err
	}
	c := dyn.Resource(gvrCRD)
	old, err := c.Get(ctx, o.GetName(), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = c.Create(ctx, o, metav1.CreateOptions{})
	case err == nil:
		o.SetResourceVersion(old.GetResourceVersion())
		_, err = c.Update(ctx, o, metav1.UpdateOptions{})
	}
	if err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got, err := c.Get(ctx, o.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
		for _, x := range conds {
			m, _ := x.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" &&
				got.GetGeneration() > 0 {
				return true, nil
			}
		}
		return false, nil
	})
}

// bindClusterRole applies the ClusterRole of the file and binds it to user.
func bindClusterRole(ctx context.Context, dyn dynamic.Interface, path, user string) error {
	role, err := readYAML(path)
	if err != nil {
		return err
	}
	if _, err := dyn.Resource(gvrClusterRole).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return bind(ctx, dyn, role.GetName()+"-conformance", role.GetName(), user)
}

// bindClusterAdmin binds the built-in cluster-admin to user: Meridio-2's shipped RBAC is
// a namespaced Role and lacks gateways/finalizers (docs/scale.md, "How the harness measures").
func bindClusterAdmin(ctx context.Context, dyn dynamic.Interface, user string) error {
	return bind(ctx, dyn, user+"-cluster-admin", "cluster-admin", user)
}

func bind(ctx context.Context, dyn dynamic.Interface, name, role, user string) error {
	b := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": name},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	}}
	_, err := dyn.Resource(gvrBinding).Create(ctx, b, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

type process struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error // the process's exit, once done is closed
	log  string
}

// start starts the controller: one replica, no leader election, no probe or metrics
// port, every namespace watched, the default settings (controllerName above) but ours'
// supportedFeatures, which name features as the suite's release spells them.
func start(e Env, kubeconfig string, features []features.FeatureName) (*process, error) {
	var args []string
	switch e.Controller {
	case "ours":
		settings := filepath.Join(e.dir, "conformance-settings.json")
		text, err := json.Marshal(map[string]any{"supportedFeatures": features})
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(settings, text, 0o644); err != nil {
			return nil, err
		}
		args = []string{"--kubeconfig", kubeconfig, "--leader-elect=false",
			"--health-addr", "0", "--metrics-addr", "0", "--settings", settings}
	default:
		// Its defaults, except what has no place here: webhooks (no certificates), the
		// probe and metrics ports.
		args = []string{"run", "--enable-webhooks=false", "--cert-wait-timeout=0",
			"--health-probe-bind-address=0", "--metrics-bind-address=0",
			"--template-path", e.Templates}
	}
	p := &process{log: filepath.Join(e.dir, e.Controller+"-controller.log"), done: make(chan struct{})}
	f, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	p.cmd = exec.Command(e.Bin, args...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p.cmd.Stdout = f
	p.cmd.Stderr = f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	go func() { p.err = p.cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// stop: SIGTERM, SIGKILL after 20 s.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func tail(t *testing.T, path string, n int) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		lines = append(lines, s.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	t.Logf("harness: the controller's last %d log lines:\n%s", len(lines), strings.Join(lines, "\n"))
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Dump logs what the GatewayClasses and the suite's Gateways (with their LB Deployments)
// say now.
func Dump(t *testing.T) { dump(t, mustAdmin(t)) }

func dump(t *testing.T, dyn dynamic.Interface) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var b strings.Builder
	classes, err := dyn.Resource(gvrGatewayClass).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, c := range classes.Items {
			fmt.Fprintf(&b, "GatewayClass %s generation %d:%s\n", c.GetName(), c.GetGeneration(), conditions(c))
		}
	}
	gws, err := dyn.Resource(gvrGateway).Namespace(InfraNamespace).List(ctx, metav1.ListOptions{})
	if err == nil {
		sort.Slice(gws.Items, func(i, j int) bool { return gws.Items[i].GetName() < gws.Items[j].GetName() })
		for _, g := range gws.Items {
			name := g.GetName()
			if len(name) > 72 {
				name = fmt.Sprintf("%s... (%d characters)", name[:60], len(name))
			}
			fmt.Fprintf(&b, "Gateway %s/%s generation %d:%s\n%s", InfraNamespace, name, g.GetGeneration(), conditions(g), listeners(g))
		}
	}
	deps, err := dyn.Resource(gvrDeployment).Namespace(InfraNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "gateway.networking.k8s.io/gateway-name"})
	if err == nil {
		for _, d := range deps.Items {
			ready, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
			fmt.Fprintf(&b, "Deployment %s/%s (gateway-name=%s): %d ready\n", InfraNamespace, d.GetName(),
				d.GetLabels()["gateway.networking.k8s.io/gateway-name"], ready)
		}
	}
	t.Logf("harness: state at the end:\n%s", b.String())
}

func conditions(o unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	if len(conds) == 0 {
		return " no status conditions"
	}
	var b strings.Builder
	for _, x := range conds {
		m, _ := x.(map[string]any)
		fmt.Fprintf(&b, "\n    %v=%v %v (observedGeneration %v) %q", m["type"], m["status"], m["reason"],
			m["observedGeneration"], m["message"])
	}
	return b.String()
}

// listeners: the Gateway's status.listeners, an entry a line, then its conditions.
func listeners(o unstructured.Unstructured) string {
	entries, _, _ := unstructured.NestedSlice(o.Object, "status", "listeners")
	var b strings.Builder
	for _, x := range entries {
		m, _ := x.(map[string]any)
		var kinds []string
		if ks, ok := m["supportedKinds"].([]any); ok {
			for _, k := range ks {
				km, _ := k.(map[string]any)
				g, _ := km["group"].(string)
				if g == "" {
					g = "gateway.networking.k8s.io"
				}
				kinds = append(kinds, fmt.Sprintf("%s/%v", g, km["kind"]))
			}
		}
		fmt.Fprintf(&b, "  listener %v: supportedKinds [%s], attachedRoutes %v", m["name"], strings.Join(kinds, ", "), m["attachedRoutes"])
		conds, _ := m["conditions"].([]any)
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			fmt.Fprintf(&b, "\n      %v=%v %v (observedGeneration %v) %q", cm["type"], cm["status"], cm["reason"],
				cm["observedGeneration"], cm["message"])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// WatchGateways logs, once a second, each Gateway of the suite's namespace whose
// conditions or listener status changed since the last look (what the controller wrote
// while a test ran: the suite deletes a test's Gateways before the per-test dump). For a
// diagnosis run (CONFORMANCE_RUN_TESTS); it stops at t's cleanup.
func WatchGateways(t *testing.T) {
	t.Helper()
	dyn := mustAdmin(t)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := map[string]string{}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			gws, err := dyn.Resource(gvrGateway).Namespace(InfraNamespace).List(ctx, metav1.ListOptions{})
			cancel()
			if err != nil {
				continue
			}
			for _, g := range gws.Items {
				text := fmt.Sprintf("generation %d:%s\n%s", g.GetGeneration(), conditions(g), listeners(g))
				if seen[g.GetName()] != text {
					seen[g.GetName()] = text
					t.Logf("harness: watch: Gateway %s/%s %s", InfraNamespace, g.GetName(), text)
				}
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
}
