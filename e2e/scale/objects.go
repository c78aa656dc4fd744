package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	domain         = "meridio-2.nordix.org"
	controllerName = "meridio-2.nordix.org/gateway-controller"
	className      = "scale"
	// The GatewayConfiguration of the first namespace that all its Gateways share: the
	// edit story edits it.
	sharedConfig = "shared"
	// Gateways per GatewayConfiguration in the other namespaces.
	perConfig = 10
)

var (
	gvrNamespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrClass     = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	gvrGateway   = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	gvrConfig    = schema.GroupVersionResource{Group: domain, Version: "v1alpha1", Resource: "gatewayconfigurations"}
	gvrRoute     = schema.GroupVersionResource{Group: domain, Version: "v1alpha1", Resource: "l34routes"}
	gvrDeploy    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrRole      = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	gvrBinding   = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	gvrPolicy    = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	gvrPolicyB   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// adminClient is the test's own client (the admin user of KUBECONFIG), with client-side
// limits raised: creating thousands of objects is the harness's job, not the measure.
func adminClient() (dynamic.Interface, *rest.Config, error) {
	path := os.Getenv("KUBECONFIG")
	if path == "" {
		return nil, nil, fmt.Errorf("KUBECONFIG is not set: run under e2e/controlplane.sh run")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, nil, err
	}
	cfg.QPS = 2000
	cfg.Burst = 4000
	dyn, err := dynamic.NewForConfig(cfg)
	return dyn, cfg, err
}

// gatewayRef names one Gateway of the run.
type gatewayRef struct{ namespace, name string }

// layout places N Gateways over the namespaces: Gateway i in namespace i mod namespaces.
// In the first namespace every Gateway uses the GatewayConfiguration `shared`; in the
// others one GatewayConfiguration serves perConfig Gateways.
type layout struct {
	n, namespaces int
}

func (l layout) namespace(ns int) string { return fmt.Sprintf("scale-%d", ns) }

func (l layout) gateways() []gatewayRef {
	refs := make([]gatewayRef, 0, l.n)
	for i := 0; i < l.n; i++ {
		refs = append(refs, gatewayRef{l.namespace(i % l.namespaces), fmt.Sprintf("gw-%05d", i)})
	}
	return refs
}

// config is the GatewayConfiguration Gateway i uses.
func (l layout) config(i int) string {
	if i%l.namespaces == 0 {
		return sharedConfig
	}
	return fmt.Sprintf("conf-%d", (i/l.namespaces)/perConfig)
}

// shared are the Gateways of the shared GatewayConfiguration (the edit story's K).
func (l layout) shared() []gatewayRef {
	var refs []gatewayRef
	for i, g := range l.gateways() {
		if l.config(i) == sharedConfig {
			refs = append(refs, g)
		}
	}
	return refs
}

func configuration(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": domain + "/v1alpha1", "kind": "GatewayConfiguration",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"networkAttachments": []any{map[string]any{"type": "NAD",
				"nad": map[string]any{"name": "vlan", "namespace": namespace, "interface": "eth1"}}},
			"internalSubnets": []any{map[string]any{"attachmentType": "NAD", "cidr": "169.254.100.0/24"}},
			// Stated, not defaulted: the two CRDs default enforceReplicas differently.
			"horizontalScaling": map[string]any{"replicas": int64(2), "enforceReplicas": false},
		},
	}}
}

func gateway(namespace, name, config string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"gatewayClassName": className,
			"listeners":        []any{map[string]any{"name": "tcp", "port": int64(80), "protocol": "TCP"}},
			"infrastructure": map[string]any{"parametersRef": map[string]any{
				"group": domain, "kind": "GatewayConfiguration", "name": config}},
		},
	}}
}

func route(namespace, name string, i int) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": domain + "/v1alpha1", "kind": "L34Route",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{
			"parentRefs":       []any{map[string]any{"name": name}},
			"destinationCIDRs": []any{fmt.Sprintf("20.%d.%d.%d/32", i>>16&255, i>>8&255, i&255)},
			"destinationPorts": []any{"80"},
			"protocols":        []any{"TCP"},
			"priority":         int64(1),
		},
	}}
}

// item is one object to create.
type item struct {
	gvr    schema.GroupVersionResource
	object *unstructured.Unstructured
}

// createAll creates the items with `workers` goroutines; an object that already exists
// counts as created.
func createAll(ctx context.Context, dyn dynamic.Interface, items []item, workers int) error {
	return forEach(len(items), workers, func(i int) error {
		it := items[i]
		var err error
		if ns := it.object.GetNamespace(); ns != "" {
			_, err = dyn.Resource(it.gvr).Namespace(ns).Create(ctx, it.object, metav1.CreateOptions{})
		} else {
			_, err = dyn.Resource(it.gvr).Create(ctx, it.object, metav1.CreateOptions{})
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create %s %s/%s: %w", it.object.GetKind(),
				it.object.GetNamespace(), it.object.GetName(), err)
		}
		return nil
	})
}

// forEach calls do(i) for i in [0, n) from `workers` goroutines, each taking the next
// index; the first error stops them (calls under way finish) and is returned.
func forEach(n, workers int, do func(int) error) error {
	var next atomic.Int64
	var stop atomic.Bool
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || stop.Load() {
					return
				}
				if err := do(i); err != nil {
					once.Do(func() { first = err })
					stop.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// populate creates the namespaces, the GatewayClass, the GatewayConfigurations, the
// Gateways and one L34Route per Gateway.
func populate(ctx context.Context, dyn dynamic.Interface, l layout, workers int) error {
	var first []item
	for ns := 0; ns < l.namespaces; ns++ {
		first = append(first, item{gvrNamespace, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": l.namespace(ns)}}}})
	}
	first = append(first, item{gvrClass, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": className},
		"spec":     map[string]any{"controllerName": controllerName}}}})
	if err := createAll(ctx, dyn, first, workers); err != nil {
		return err
	}
	configs := map[gatewayRef]bool{}
	var items []item
	for i, g := range l.gateways() {
		c := gatewayRef{g.namespace, l.config(i)}
		if !configs[c] {
			configs[c] = true
			items = append(items, item{gvrConfig, configuration(c.namespace, c.name)})
		}
		items = append(items, item{gvrGateway, gateway(g.namespace, g.name, c.name)},
			item{gvrRoute, route(g.namespace, g.name, i)})
	}
	return createAll(ctx, dyn, items, workers)
}

// applyYAML creates the object of a YAML file (an existing one is left as it is).
func applyYAML(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, path string) (*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var object map[string]any
	if err := yaml.Unmarshal(data, &object); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	u := &unstructured.Unstructured{Object: object}
	_, err = dyn.Resource(gvr).Create(ctx, u, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create %s: %w", u.GetName(), err)
	}
	return u, nil
}

// bindClusterRole creates the ClusterRole of `path` and binds it to `user`.
func bindClusterRole(ctx context.Context, dyn dynamic.Interface, path, user string) error {
	role, err := applyYAML(ctx, dyn, gvrRole, path)
	if err != nil {
		return err
	}
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": role.GetName() + "-scale"},
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
			"name": role.GetName()},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	}}
	_, err = dyn.Resource(gvrBinding).Create(ctx, binding, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// bindClusterAdmin binds the built-in ClusterRole cluster-admin to `user`.
func bindClusterAdmin(ctx context.Context, dyn dynamic.Interface, user string) error {
	binding := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": map[string]any{"name": user + "-cluster-admin"},
		"roleRef": map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
			"name": "cluster-admin"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	}}
	_, err := dyn.Resource(gvrBinding).Create(ctx, binding, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// editShared merge-patches the spec of GatewayConfiguration "shared" in namespace with
// horizontalScaling (a JSON object).
func editShared(ctx context.Context, dyn dynamic.Interface, namespace, horizontalScaling string) error {
	patch := []byte(`{"spec":{"horizontalScaling":` + horizontalScaling + `}}`)
	_, err := dyn.Resource(gvrConfig).Namespace(namespace).Patch(ctx, sharedConfig,
		types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// opening is how every story of a controller begins: the admin's client, the controller
// under test (its identity and RBAC in place, not started yet) and where the Gateways go.
type opening struct {
	dyn dynamic.Interface
	c   *controller
	l   layout
}

// openStory begins a story of o's controller over o's Gateways; on success the caller
// stops s.c (which does nothing if it never started).
func openStory(ctx context.Context, o options) (*opening, error) {
	dyn, _, err := adminClient()
	if err != nil {
		return nil, err
	}
	c, err := newController(ctx, dyn, o)
	if err != nil {
		return nil, err
	}
	return &opening{dyn: dyn, c: c, l: layout{n: o.n, namespaces: o.namespaces}}, nil
}

// oneGateway is how the one-Gateway stories begin: one namespace with its shared
// GatewayConfiguration and one Gateway on it, the controller started, the Gateway healthy.
type oneGateway struct {
	*opening
	obs *observer
	g   gatewayRef
}

// startOneGateway starts a one-Gateway story; on success the caller stops s.c.
func startOneGateway(ctx context.Context, o options) (s *oneGateway, err error) {
	// One Gateway in one namespace, whatever -n and -namespaces say.
	o.n, o.namespaces = 1, 1
	op, err := openStory(ctx, o)
	if err != nil {
		return nil, err
	}
	dyn, c, l := op.dyn, op.c, op.l
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	if err := populate(ctx, dyn, l, 1); err != nil {
		return nil, err
	}
	obs, err := observe(ctx, dyn)
	if err != nil {
		return nil, err
	}
	g := l.gateways()[0]
	if err := c.start(); err != nil {
		return nil, err
	}
	if _, err := obs.waitAll("the Gateway healthy", []gatewayRef{g}, nil, healthy(o.controller), time.Now(), o.timeout, c.alive); err != nil {
		return nil, err
	}
	return &oneGateway{opening: op, obs: obs, g: g}, nil
}
