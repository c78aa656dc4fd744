// Package smoke checks the end-to-end control plane itself: the API server is ready, the
// CRDs are installed and enforce their schemas, objects of every kind the crate reads can be
// written, Deployments come back server-defaulted, status subresources can be written, and
// the audit log records each write request once. size_test.go shows that no object much
// larger than etcd's request limit (1.5 MiB) is stored.
//
// Run it through the control plane script (it needs KUBECONFIG and AUDIT_LOG):
//
//	e2e/controlplane.sh run -- sh -c 'cd e2e/controlplane && go test -count=1 -v ./smoke'
package smoke

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const wantVersion = "v1.36.3"

var (
	gatewayClasses = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}
	gateways       = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}
	configurations = schema.GroupVersionResource{Group: "meridio-2.nordix.org", Version: "v1alpha1", Resource: "gatewayconfigurations"}
	routes         = schema.GroupVersionResource{Group: "meridio-2.nordix.org", Version: "v1alpha1", Resource: "l34routes"}
	deployments    = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crds           = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

type env struct {
	cfg     *rest.Config
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	ns      string
	class   string
	admin   string
	auditAt string
}

func setup(t *testing.T) *env {
	t.Helper()
	kubeconfig, audit := os.Getenv("KUBECONFIG"), os.Getenv("AUDIT_LOG")
	if kubeconfig == "" || audit == "" {
		t.Skip("KUBECONFIG and AUDIT_LOG are not set: run this through e2e/controlplane.sh run -- ...")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{cfg: cfg, admin: os.Getenv("E2E_ADMIN_USER"), auditAt: audit}
	if e.admin == "" {
		t.Fatal("E2E_ADMIN_USER is not set")
	}
	if e.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if e.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	ns, err := e.kube.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "smoke-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e.ns = ns.Name
	e.class = ns.Name // cluster-scoped: unique per run
	return e
}

func TestControlPlane(t *testing.T) {
	e := setup(t)
	ctx := context.Background()

	t.Run("ready and version", func(t *testing.T) {
		body, err := e.kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil || string(body) != "ok" {
			t.Fatalf("/readyz: %q, %v", body, err)
		}
		v, err := e.kube.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		if v.GitVersion != wantVersion {
			t.Fatalf("server version %q, want %q", v.GitVersion, wantVersion)
		}
	})

	t.Run("CRDs established", func(t *testing.T) {
		client, err := apiextensions.NewForConfig(e.cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{
			"gatewayclasses.gateway.networking.k8s.io", "gateways.gateway.networking.k8s.io",
			"gatewayconfigurations.meridio-2.nordix.org", "l34routes.meridio-2.nordix.org",
		} {
			crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			established := false
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					established = true
				}
			}
			if !established {
				t.Errorf("%s not Established: %+v", name, crd.Status.Conditions)
			}
			if name == "gatewayclasses.gateway.networking.k8s.io" {
				if got := crd.Annotations["gateway.networking.k8s.io/bundle-version"]; got != "v1.5.1" {
					t.Errorf("Gateway API bundle version %q, want v1.5.1", got)
				}
				if got := crd.Annotations["gateway.networking.k8s.io/channel"]; got != "standard" {
					t.Errorf("Gateway API channel %q, want standard", got)
				}
			}
		}
	})

	t.Run("GatewayClass and Gateway", func(t *testing.T) {
		e.create(t, gatewayClasses, "", fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass",
			"metadata":{"name":%q},"spec":{"controllerName":"meridio-2.nordix.org/gateway-controller"}}`, e.class))
		gw := e.create(t, gateways, e.ns, fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
			"metadata":{"name":"sllb"},
			"spec":{"gatewayClassName":%q,
			  "infrastructure":{"parametersRef":{"group":"meridio-2.nordix.org","kind":"GatewayConfiguration","name":"config"}},
			  "listeners":[{"name":"all","protocol":"TCP","port":80}]}}`, e.class))
		if gw.GetGeneration() != 1 || gw.GetUID() == "" {
			t.Fatalf("gateway generation %d uid %q", gw.GetGeneration(), gw.GetUID())
		}
		status := obj(`{"conditions":[{"type":"Accepted","status":"True","reason":"Accepted",
			"message":"Gateway accepted by meridio-2.nordix.org/gateway-controller","observedGeneration":1,
			"lastTransitionTime":"2026-01-01T00:00:00Z"}],
			"addresses":[{"type":"IPAddress","value":"20.0.0.1"}]}`)
		gw.Object["status"] = status
		got, err := e.dyn.Resource(gateways).Namespace(e.ns).UpdateStatus(ctx, gw, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := nested(got.Object, "status", "conditions"); len(c.([]any)) != 1 {
			t.Fatalf("gateway status conditions %v", c)
		}
		if got.GetGeneration() != 1 {
			t.Fatalf("status write bumped the gateway generation to %d", got.GetGeneration())
		}
	})

	t.Run("GatewayConfiguration", func(t *testing.T) {
		gc := e.create(t, configurations, e.ns, `{"apiVersion":"meridio-2.nordix.org/v1alpha1","kind":"GatewayConfiguration",
			"metadata":{"name":"config"},
			"spec":{"networkAttachments":[{"type":"NAD","nad":{"name":"macvlan","namespace":"","interface":"net1"}}],
			  "internalSubnets":[{"cidr":"169.111.100.0/24"},{"cidr":"fd00:100::/64"}],
			  "horizontalScaling":{"replicas":2},
			  "verticalScaling":{"containers":[{"name":"loadbalancer","resources":{"requests":{"cpu":"0.5"}}}]}}}`)
		if gc.GetGeneration() != 1 {
			t.Fatalf("generation %d", gc.GetGeneration())
		}
		// Schema defaults.
		if got := nested(gc.Object, "spec", "internalSubnets"); got.([]any)[0].(map[string]any)["attachmentType"] != "NAD" {
			t.Errorf("attachmentType not defaulted: %v", got)
		}
		// The two CRDs the control plane may install default it differently (crds/: false;
		// Meridio-2's own: true): the installed CRD's schema says which one it is.
		crd, err := e.dyn.Resource(crds).Get(ctx, "gatewayconfigurations.meridio-2.nordix.org", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := schemaDefault(t, crd.Object, "spec", "horizontalScaling", "enforceReplicas")
		if got := nested(gc.Object, "spec", "horizontalScaling", "enforceReplicas"); got != want {
			t.Errorf("enforceReplicas not defaulted: %v, the installed CRD's default is %v", got, want)
		}
		if got := nested(gc.Object, "spec", "verticalScaling", "containers"); got.([]any)[0].(map[string]any)["enforceResources"] != false {
			t.Errorf("enforceResources not defaulted: %v", got)
		}
		// A spec change bumps the generation, a label change does not.
		p := e.patch(t, configurations, e.ns, "config", `{"spec":{"horizontalScaling":{"replicas":3}}}`)
		if p.GetGeneration() != 2 {
			t.Errorf("generation after spec patch %d, want 2", p.GetGeneration())
		}
		p = e.patch(t, configurations, e.ns, "config", `{"metadata":{"labels":{"a":"b"}}}`)
		if p.GetGeneration() != 2 {
			t.Errorf("generation after label patch %d, want 2", p.GetGeneration())
		}
		// Status subresource.
		p.Object["status"] = obj(`{"conditions":[{"type":"Ready","status":"True","reason":"Ok","message":"",
			"lastTransitionTime":"2026-01-01T00:00:00Z"}]}`)
		if _, err := e.dyn.Resource(configurations).Namespace(e.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("GatewayConfiguration schema limits", func(t *testing.T) {
		cases := map[string]struct{ spec, want string }{
			"attachment type not NAD": {
				`{"networkAttachments":[],"internalSubnets":[{"attachmentType":"DRA","cidr":"10.0.0.0/8"}],"horizontalScaling":{"replicas":1}}`,
				`Unsupported value: "DRA"`},
			"two subnets of one family": {
				`{"networkAttachments":[],"internalSubnets":[{"cidr":"10.0.0.0/8"},{"cidr":"11.0.0.0/8"}],"horizontalScaling":{"replicas":1}}`,
				"Each internalSubnet must represent a different IP family"},
			"not a CIDR": {
				`{"networkAttachments":[],"internalSubnets":[{"cidr":"10.0.0.300/8"}],"horizontalScaling":{"replicas":1}}`,
				"Must be a valid CIDR notation!"},
			"no subnet": {
				`{"networkAttachments":[],"internalSubnets":[],"horizontalScaling":{"replicas":1}}`,
				"spec.internalSubnets: Invalid value: 0"},
			"NAD missing": {
				`{"networkAttachments":[{"type":"NAD"}],"internalSubnets":[{"cidr":"10.0.0.0/8"}],"horizontalScaling":{"replicas":1}}`,
				"NAD field must not be null when type is NAD"},
			"zero replicas": {
				`{"networkAttachments":[],"internalSubnets":[{"cidr":"10.0.0.0/8"}],"horizontalScaling":{"replicas":0}}`,
				"spec.horizontalScaling.replicas: Invalid value: 0"},
			"eleven attachments": {
				`{"networkAttachments":[` + strings.Repeat(`{"type":"NAD","nad":{"name":"n","namespace":"","interface":"i"}},`, 10) +
					`{"type":"NAD","nad":{"name":"n","namespace":"","interface":"i"}}],"internalSubnets":[{"cidr":"10.0.0.0/8"}],"horizontalScaling":{"replicas":1}}`,
				"Too many: 11: must have at most 10 items"},
			"three subnets": {
				`{"networkAttachments":[],"internalSubnets":[{"cidr":"10.0.0.0/8"},{"cidr":"fd00::/64"},{"cidr":"11.0.0.0/8"}],"horizontalScaling":{"replicas":1}}`,
				"Too many: 3: must have at most 2 items"},
			"negative quantity pattern": {
				`{"networkAttachments":[],"internalSubnets":[{"cidr":"10.0.0.0/8"}],"horizontalScaling":{"replicas":1},
				  "verticalScaling":{"containers":[{"name":"x","resources":{"requests":{"cpu":"lots"}}}]}}`,
				"spec.verticalScaling.containers[0].resources.requests.cpu"},
		}
		for name, c := range cases {
			u := obj(`{"apiVersion":"meridio-2.nordix.org/v1alpha1","kind":"GatewayConfiguration","metadata":{"generateName":"bad-"}}`)
			u["spec"] = obj(c.spec)
			_, err := e.dyn.Resource(configurations).Namespace(e.ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: want 422 Invalid containing %q, got %v", name, c.want, err)
			}
		}
	})

	t.Run("L34Route", func(t *testing.T) {
		r := e.create(t, routes, e.ns, `{"apiVersion":"meridio-2.nordix.org/v1alpha1","kind":"L34Route",
			"metadata":{"name":"vip"},
			"spec":{"parentRefs":[{"name":"sllb"}],"destinationCIDRs":["20.0.0.1/32","2001:db8::1/128"],
			  "protocols":["TCP"],"priority":1}}`)
		ref := nested(r.Object, "spec", "parentRefs").([]any)[0].(map[string]any)
		if ref["group"] != "gateway.networking.k8s.io" || ref["kind"] != "Gateway" {
			t.Errorf("parentRef not defaulted: %v", ref)
		}
		_, err := e.dyn.Resource(routes).Namespace(e.ns).Create(ctx, &unstructured.Unstructured{Object: obj(
			`{"apiVersion":"meridio-2.nordix.org/v1alpha1","kind":"L34Route","metadata":{"name":"bad"},
			"spec":{"parentRefs":[{"name":"sllb"}],"destinationCIDRs":["20.0.0.0/24"],"protocols":["TCP"],"priority":1}}`)},
			metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "each destinationCIDR must be an IPv4/32 or IPv6/128 CIDR") {
			t.Errorf("a /24 destination CIDR: want 422 Invalid, got %v", err)
		}
		// The list bounds the core enforces on routes it reads (it skips such a route).
		cidrs := make([]string, 101)
		for i := range cidrs {
			cidrs[i] = fmt.Sprintf("%q", fmt.Sprintf("20.0.%d.%d/32", i/256, i%256))
		}
		for name, c := range map[string]struct{ spec, want string }{
			"101 destinationCIDRs": {
				`{"parentRefs":[{"name":"sllb"}],"destinationCIDRs":[` + strings.Join(cidrs, ",") + `],"protocols":["TCP"],"priority":1}`,
				"spec.destinationCIDRs: Too many: 101: must have at most 100 items"},
			"two parentRefs": {
				`{"parentRefs":[{"name":"sllb"},{"name":"other"}],"destinationCIDRs":["20.0.0.1/32"],"protocols":["TCP"],"priority":1}`,
				"spec.parentRefs: Too many: 2: must have at most 1 item"},
		} {
			u := obj(`{"apiVersion":"meridio-2.nordix.org/v1alpha1","kind":"L34Route","metadata":{"generateName":"bad-"}}`)
			u["spec"] = obj(c.spec)
			_, err := e.dyn.Resource(routes).Namespace(e.ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: want 422 Invalid containing %q, got %v", name, c.want, err)
			}
		}
	})

	t.Run("Gateway infrastructure limits", func(t *testing.T) {
		// The Gateway API bounds the labels and annotations the core copies to the LB
		// Deployment (it refuses a Gateway over them with InvalidParameters).
		entries := make([]string, 9)
		for i := range entries {
			entries[i] = fmt.Sprintf(`"k%d":"v"`, i)
		}
		for _, field := range []string{"labels", "annotations"} {
			u := obj(fmt.Sprintf(`{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway",
				"metadata":{"generateName":"bad-"},
				"spec":{"gatewayClassName":%q,"listeners":[{"name":"all","port":4000,"protocol":"TCP"}],
				  "infrastructure":{%q:{%s}}}}`, e.class, field, strings.Join(entries, ",")))
			_, err := e.dyn.Resource(gateways).Namespace(e.ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{})
			want := fmt.Sprintf("spec.infrastructure.%s: Too many: 9: must have at most 8 items", field)
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
				t.Errorf("9 %s: want 422 Invalid containing %q, got %v", field, want, err)
			}
		}
	})

	t.Run("Deployment defaulting and status", func(t *testing.T) {
		// Written without any default, with quantities in non-canonical form.
		d := e.create(t, deployments, e.ns, `{"apiVersion":"apps/v1","kind":"Deployment",
			"metadata":{"name":"sllbr-sllb"},
			"spec":{"selector":{"matchLabels":{"app":"sllbr-sllb"}},
			  "template":{"metadata":{"labels":{"app":"sllbr-sllb"}},
			    "spec":{"containers":[{"name":"loadbalancer","image":"registry.example/lb:1",
			      "env":[{"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
			      "resources":{"requests":{"cpu":"0.5","memory":"1024Mi"}}}]}}}}`)
		want := map[string]any{
			"spec.replicas":                                                       int64(1),
			"spec.revisionHistoryLimit":                                           int64(10),
			"spec.progressDeadlineSeconds":                                        int64(600),
			"spec.strategy.type":                                                  "RollingUpdate",
			"spec.strategy.rollingUpdate.maxSurge":                                "25%",
			"spec.strategy.rollingUpdate.maxUnavailable":                          "25%",
			"spec.template.spec.restartPolicy":                                    "Always",
			"spec.template.spec.dnsPolicy":                                        "ClusterFirst",
			"spec.template.spec.schedulerName":                                    "default-scheduler",
			"spec.template.spec.terminationGracePeriodSeconds":                    int64(30),
			"spec.template.spec.containers.0.terminationMessagePath":              "/dev/termination-log",
			"spec.template.spec.containers.0.terminationMessagePolicy":            "File",
			"spec.template.spec.containers.0.imagePullPolicy":                     "IfNotPresent",
			"spec.template.spec.containers.0.env.0.valueFrom.fieldRef.apiVersion": "v1",
			"spec.template.spec.containers.0.resources.requests.cpu":              "500m",
			"spec.template.spec.containers.0.resources.requests.memory":           "1Gi",
			"metadata.generation":                                                 int64(1),
		}
		for path, w := range want {
			if got := nested(d.Object, strings.Split(path, ".")...); got != w {
				t.Errorf("%s = %#v, want %#v", path, got, w)
			}
		}

		// Status through the status subresource; the generation stays.
		d.Object["status"] = obj(`{"observedGeneration":1,"replicas":1,"updatedReplicas":1,"readyReplicas":1,
			"availableReplicas":1,"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable",
			"message":"Deployment has minimum availability.","lastUpdateTime":"2026-01-01T00:00:00Z",
			"lastTransitionTime":"2026-01-01T00:00:00Z"}]}`)
		s, err := e.dyn.Resource(deployments).Namespace(e.ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := nested(s.Object, "status", "availableReplicas"); got != int64(1) || s.GetGeneration() != 1 {
			t.Fatalf("after status write: availableReplicas %v generation %d", got, s.GetGeneration())
		}
		// A Deployment's generation goes up when its spec or its annotations change
		// (apps/v1 Deployment strategy: annotations are copied to the ReplicaSets), not when
		// only its labels change.
		if p := e.patch(t, deployments, e.ns, "sllbr-sllb", `{"metadata":{"labels":{"x":"y"}}}`); p.GetGeneration() != 1 {
			t.Errorf("generation after label patch %d, want 1", p.GetGeneration())
		}
		if p := e.patch(t, deployments, e.ns, "sllbr-sllb", `{"metadata":{"annotations":{"x":"y"}}}`); p.GetGeneration() != 2 {
			t.Errorf("generation after annotation patch %d, want 2", p.GetGeneration())
		}
		if p := e.patch(t, deployments, e.ns, "sllbr-sllb", `{"spec":{"replicas":2}}`); p.GetGeneration() != 3 {
			t.Errorf("generation after replicas patch %d, want 3", p.GetGeneration())
		}
	})

	t.Run("audit log", func(t *testing.T) {
		type key struct{ verb, resource, subresource string }
		want := map[key]int{
			{"create", "gatewayclasses", ""}:              1,
			{"create", "gateways", ""}:                    3, // 1 accepted, 2 rejected
			{"update", "gateways", "status"}:              1,
			{"create", "gatewayconfigurations", ""}:       10, // 1 accepted, 9 rejected
			{"patch", "gatewayconfigurations", ""}:        2,
			{"update", "gatewayconfigurations", "status"}: 1,
			{"create", "l34routes", ""}:                   4, // 1 accepted, 3 rejected
			{"create", "deployments", ""}:                 1,
			{"update", "deployments", "status"}:           1,
			{"patch", "deployments", ""}:                  3,
		}
		var got map[key]int
		var rejected int
		deadline := time.Now().Add(15 * time.Second)
		for {
			got, rejected = map[key]int{}, 0
			for _, ev := range readAudit(t, e.auditAt) {
				if ev.Stage != "ResponseComplete" {
					t.Fatalf("audit event at stage %q: the policy logs each request once", ev.Stage)
				}
				switch ev.Verb {
				case "create", "update", "patch", "delete", "deletecollection":
				default:
					t.Fatalf("audit event for a %q request: the policy logs writes only", ev.Verb)
				}
				if ev.User.Username != e.admin {
					continue
				}
				if ev.ObjectRef.Namespace != e.ns && ev.ObjectRef.Resource != "gatewayclasses" {
					continue
				}
				if ev.ObjectRef.Resource == "gatewayclasses" && ev.ObjectRef.Name != e.class {
					continue
				}
				got[key{ev.Verb, ev.ObjectRef.Resource, ev.ObjectRef.Subresource}]++
				if ev.ResponseStatus.Code == 422 {
					rejected++
				}
			}
			if fmt.Sprint(got) == fmt.Sprint(want) && rejected == 14 || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("audit writes by %s:\n got  %v\n want %v", e.admin, got, want)
		}
		if rejected != 14 {
			t.Errorf("audit events with code 422: %d, want 14", rejected)
		}
	})
}

type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

func readAudit(t *testing.T, path string) []auditEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			// The server may be writing the last line right now.
			continue
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) create(t *testing.T, gvr schema.GroupVersionResource, ns, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: obj(manifest)}
	var ri dynamic.ResourceInterface = e.dyn.Resource(gvr)
	if ns != "" {
		ri = e.dyn.Resource(gvr).Namespace(ns)
	}
	out, err := ri.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create %s: %v", gvr.Resource, err)
	}
	return out
}

func (e *env) patch(t *testing.T, gvr schema.GroupVersionResource, ns, name, patch string) *unstructured.Unstructured {
	t.Helper()
	out, err := e.dyn.Resource(gvr).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch %s/%s: %v", gvr.Resource, name, err)
	}
	return out
}

func obj(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(fmt.Sprintf("bad JSON in test: %v: %s", err, s))
	}
	return m
}

// nested walks maps by key and lists by decimal index; nil when absent. JSON numbers from
// the dynamic client are int64.
func nested(m map[string]any, path ...string) any {
	var cur any = m
	for _, p := range path {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// schemaDefault is the `default` the served version of a CRD declares for the field at
// path (under spec.versions[].schema.openAPIV3Schema); the test fails when it declares none.
func schemaDefault(t *testing.T, crd map[string]any, path ...string) any {
	t.Helper()
	versions, _ := nested(crd, "spec", "versions").([]any)
	for _, v := range versions {
		version, _ := v.(map[string]any)
		if served, _ := version["served"].(bool); !served {
			continue
		}
		node, _ := nested(version, "schema", "openAPIV3Schema").(map[string]any)
		for _, key := range path {
			properties, _ := node["properties"].(map[string]any)
			node, _ = properties[key].(map[string]any)
		}
		if d, ok := node["default"]; ok {
			return d
		}
	}
	t.Fatalf("the installed CRD declares no default for %v", path)
	return nil
}
