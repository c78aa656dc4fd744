// The full control plane (E2E_FULL=1): kube-controller-manager, kube-scheduler and kwok's
// fake Nodes beside etcd and kube-apiserver. TestFullControlPlane drives real Deployments
// through a rollout, a template update, scaling, a pause, a stalled rollout, garbage
// collection and a namespace deletion, and logs what the real Deployment controller
// reports at each step, in order (docs/real-server-differences.md, "What the real
// Deployment controller reports", keeps the observations):
//
//	E2E_FULL=1 e2e/controlplane.sh run -- sh -c 'cd e2e/controlplane && go test -count=1 -v -run TestFull ./smoke'
package smoke

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
)

// The label kwok's pod-unready Stage (e2e/kwok/stages/pod-unready.yaml) keeps Pods unready by.
const unreadyLabel = "e2e.gateway-reconcile/unready"

func TestFullControlPlane(t *testing.T) {
	if os.Getenv("E2E_FULL") != "1" {
		t.Skip("E2E_FULL is not 1: this test needs the full control plane " +
			"(E2E_FULL=1 e2e/controlplane.sh run -- ...: kube-controller-manager, kube-scheduler, kwok)")
	}
	kubeconfig := os.Getenv("KUBECONFIG")
	nodes := strings.Fields(os.Getenv("E2E_NODES"))
	if kubeconfig == "" || len(nodes) == 0 {
		t.Fatal("E2E_FULL=1 but KUBECONFIG or E2E_NODES is not set: run this through E2E_FULL=1 e2e/controlplane.sh run -- ...")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	f := &full{t: t, ctx: ctx, kube: kube, nodes: nodes}

	if !t.Run("fake nodes", f.fakeNodes) {
		return
	}
	f.ns = f.namespace("full-")
	f.rec = record(ctx, t, kube, f.ns)
	steps := []struct {
		name string
		run  func(*testing.T)
	}{
		{"default ServiceAccount", f.serviceAccount},
		{"rollout", f.rollout},
		{"template update", f.templateUpdate},
		{"scale", f.scale},
		{"pause", f.pause},
		{"progress deadline exceeded", f.progressDeadline},
		{"garbage collection", f.garbageCollection},
		{"namespace deletion", f.namespaceDeletion},
	}
	for _, s := range steps {
		if !t.Run(s.name, s.run) {
			return // each step builds on the one before
		}
	}
	_ = kube.CoreV1().Namespaces().Delete(context.Background(), f.ns, metav1.DeleteOptions{})
}

type full struct {
	t     *testing.T
	ctx   context.Context
	kube  kubernetes.Interface
	nodes []string
	ns    string
	rec   *recorder
	// The namespace of the stalled Deployment, deleted whole by the last step.
	stuckNS string
}

func (f *full) fakeNodes(t *testing.T) {
	for _, name := range f.nodes {
		node, err := f.kube.CoreV1().Nodes().Get(f.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Annotations["kwok.x-k8s.io/node"] != "fake" {
			t.Errorf("node %s: annotation kwok.x-k8s.io/node=%q, want fake", name, node.Annotations["kwok.x-k8s.io/node"])
		}
		if c := nodeCondition(node, corev1.NodeReady); c == nil || c.Status != corev1.ConditionTrue {
			t.Errorf("node %s not Ready: %+v", name, c)
		}
		for _, taint := range node.Spec.Taints {
			t.Errorf("node %s has taint %s:%s", name, taint.Key, taint.Effect)
		}
		if pods := node.Status.Allocatable.Pods(); pods.Value() < 100 {
			t.Errorf("node %s: allocatable pods %s", name, pods)
		}
		// kwok holds and renews the Node's lease, as a kubelet does (the node lifecycle
		// controller reads it); the holder is kwok's own identity, not the Node's name.
		lease, err := f.kube.CoordinationV1().Leases("kube-node-lease").Get(f.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Errorf("node %s: lease: %v", name, err)
		} else if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" || lease.Spec.RenewTime == nil {
			t.Errorf("node %s: lease holder %v renewed %v", name, lease.Spec.HolderIdentity, lease.Spec.RenewTime)
		}
	}
}

func (f *full) namespace(prefix string) string {
	f.t.Helper()
	ns, err := f.kube.CoreV1().Namespaces().Create(f.ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return ns.Name
}

// The serviceaccount controller makes every namespace's `default` ServiceAccount; the API
// server admits no Pod before it exists.
func (f *full) serviceAccount(t *testing.T) {
	poll(t, f.ctx, 60*time.Second, "ServiceAccount default in "+f.ns, func() (bool, string) {
		_, err := f.kube.CoreV1().ServiceAccounts(f.ns).Get(f.ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

func deployment(name string, replicas int32, deadline int32, labels map[string]string) *appsv1.Deployment {
	podLabels := map[string]string{"app": name}
	for k, v := range labels {
		podLabels[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas:                &replicas,
			ProgressDeadlineSeconds: &deadline,
			Selector:                &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "app", Image: "registry.example/" + name + ":1", // no container runs: any image
				}}},
			},
		},
	}
}

// complete: the rollout of the Deployment's current generation is done, every replica
// updated, ready and available.
func complete(d *appsv1.Deployment) bool {
	s, want := d.Status, *d.Spec.Replicas
	p, a := deploymentCondition(d, appsv1.DeploymentProgressing), deploymentCondition(d, appsv1.DeploymentAvailable)
	return s.ObservedGeneration == d.Generation && s.Replicas == want && s.UpdatedReplicas == want &&
		s.ReadyReplicas == want && s.AvailableReplicas == want && s.UnavailableReplicas == 0 &&
		p != nil && p.Status == corev1.ConditionTrue && p.Reason == "NewReplicaSetAvailable" &&
		a != nil && a.Status == corev1.ConditionTrue && a.Reason == "MinimumReplicasAvailable"
}

func (f *full) rollout(t *testing.T) {
	d, err := f.kube.AppsV1().Deployments(f.ns).Create(f.ctx, deployment("web", 2, 60, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	since := f.rec.mark(d)
	d = f.waitDeployment(t, "web", 90*time.Second, "complete at generation 1", complete)
	f.logTimeline(t, "rollout of a new Deployment (2 replicas)", since)

	rss := f.replicaSets(t, d)
	if len(rss) != 1 {
		t.Fatalf("%d ReplicaSets, want 1", len(rss))
	}
	rs := rss[0]
	if *rs.Spec.Replicas != 2 || rs.Status.ReadyReplicas != 2 || rs.Annotations["deployment.kubernetes.io/revision"] != "1" {
		t.Errorf("ReplicaSet %s: spec.replicas %d, ready %d, revision %q", rs.Name, *rs.Spec.Replicas,
			rs.Status.ReadyReplicas, rs.Annotations["deployment.kubernetes.io/revision"])
	}
	f.checkPods(t, rs, 2, true)
	// The controller's first write (the entry at `since` is the create itself): the
	// Progressing condition alone, written as it creates the ReplicaSet, before its first
	// observedGeneration.
	first := f.rec.first("Deployment/web", since+1)
	if field(first, "obs") != 0 || !strings.Contains(first, "Progressing=True/NewReplicaSetCreated Available=-") {
		t.Errorf("first status write for a new Deployment: %q, want Progressing=True/NewReplicaSetCreated and nothing else", first)
	}
	f.checkMonotonic(t, "Deployment/web", since)
}

// A new pod template: a second ReplicaSet takes over (surge of 25% of 2, rounded up: 1;
// unavailable 25%, rounded down: 0).
func (f *full) templateUpdate(t *testing.T) {
	d := f.patch(t, "web", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/web:2"}]}}}}`)
	if d.Generation != 2 {
		t.Fatalf("generation %d after a template update, want 2", d.Generation)
	}
	since := f.rec.mark(d)
	d = f.waitDeployment(t, "web", 90*time.Second, "complete at generation 2", complete)
	f.logTimeline(t, "template update (image :1 -> :2)", since)

	rss := f.replicaSets(t, d)
	if len(rss) != 2 {
		t.Fatalf("%d ReplicaSets, want 2", len(rss))
	}
	newRS, oldRS := rss[1], rss[0] // by revision
	if newRS.Spec.Template.Spec.Containers[0].Image != "registry.example/web:2" || *newRS.Spec.Replicas != 2 ||
		newRS.Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("new ReplicaSet %s: image %s, spec.replicas %d, revision %q", newRS.Name,
			newRS.Spec.Template.Spec.Containers[0].Image, *newRS.Spec.Replicas, newRS.Annotations["deployment.kubernetes.io/revision"])
	}
	if *oldRS.Spec.Replicas != 0 {
		t.Errorf("old ReplicaSet %s: spec.replicas %d, want 0", oldRS.Name, *oldRS.Spec.Replicas)
	}
	if d.Annotations["deployment.kubernetes.io/revision"] != "2" {
		t.Errorf("Deployment revision %q, want 2", d.Annotations["deployment.kubernetes.io/revision"])
	}
	// The old Pods are deleted (gracefully: kwok's pod-delete Stage removes them).
	f.waitPods(t, "app=web", 60*time.Second, func(pods []corev1.Pod) bool { return len(pods) == 2 })
	f.checkPods(t, newRS, 2, true)
	f.checkMonotonic(t, "Deployment/web", since)
	// As for a new Deployment, the first write is the condition alone, made as the new
	// ReplicaSet is created, with the old observedGeneration.
	if first := f.rec.first("Deployment/web", since+1); field(first, "obs") != 1 ||
		!strings.Contains(first, "Progressing=True/NewReplicaSetCreated") {
		t.Errorf("first status write after a template update: %q, want observedGeneration 1 and Progressing=True/NewReplicaSetCreated", first)
	}
	// During the rollout the status counts the old and the new ReplicaSet's Pods together:
	// 3 at least (2 and a surge of 1). It sums the ReplicaSets' own status, which lags their
	// spec, so a run may see 4 for a moment (the new one at 2 before the old one reports 1).
	if most := f.rec.max("Deployment/web", since, func(s string) int { return field(s, "replicas") }); most < 3 || most > 4 {
		t.Errorf("most replicas during the rollout: %d, want 3 (2 and a surge of 1) or 4", most)
	}
}

func (f *full) scale(t *testing.T) {
	for _, n := range []int32{3, 1} {
		d := f.patch(t, "web", fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
		since := f.rec.mark(d)
		d = f.waitDeployment(t, "web", 90*time.Second, fmt.Sprintf("complete with %d replicas", n), complete)
		f.logTimeline(t, fmt.Sprintf("scale to %d", n), since)
		rss := f.replicaSets(t, d)
		if len(rss) != 2 || *rss[1].Spec.Replicas != n || *rss[0].Spec.Replicas != 0 {
			t.Errorf("after scaling to %d: %s", n, describeReplicaSets(rss))
		}
		f.waitPods(t, "app=web", 60*time.Second, func(pods []corev1.Pod) bool { return len(pods) == int(n) })
		f.checkMonotonic(t, "Deployment/web", since)
		// A finished rollout stays finished through a scale: Progressing is not evaluated
		// again while every replica is updated.
		if r := f.rec.reasons("Deployment/web", since); !slices.Equal(r, []string{"NewReplicaSetAvailable"}) {
			t.Errorf("Progressing reasons while scaling to %d: %v, want NewReplicaSetAvailable throughout", n, r)
		}
		// Available needs replicas - maxUnavailable available; maxUnavailable is 25%
		// rounded down: 0 of 3, so scaling up from 2 to 3 makes the Deployment unavailable
		// until the third Pod is; scaling down to 1 does not.
		available := f.rec.conditions("Deployment/web", since+1, "Available")
		if n == 3 && !slices.Contains(available, "False/MinimumReplicasUnavailable") {
			t.Errorf("Available while scaling from 2 to 3: %v, want False/MinimumReplicasUnavailable at some point", available)
		}
		if n == 1 && slices.ContainsFunc(available, func(c string) bool { return c != "True/MinimumReplicasAvailable" }) {
			t.Errorf("Available while scaling from 3 to 1: %v, want True throughout", available)
		}
	}
	f.patch(t, "web", `{"spec":{"replicas":2}}`)
	f.waitDeployment(t, "web", 90*time.Second, "complete with 2 replicas", complete)
}

// A paused Deployment: its status follows its generation, but a template change makes no
// ReplicaSet until it is resumed.
func (f *full) pause(t *testing.T) {
	d := f.patch(t, "web", `{"spec":{"paused":true}}`)
	since := f.rec.mark(d)
	paused := func(d *appsv1.Deployment) bool {
		p := deploymentCondition(d, appsv1.DeploymentProgressing)
		return d.Status.ObservedGeneration == d.Generation && p != nil && p.Reason == "DeploymentPaused"
	}
	d = f.waitDeployment(t, "web", 60*time.Second, "Progressing reason DeploymentPaused", paused)
	// The paused condition is written alone first, before the status answers the generation.
	if first := f.rec.first("Deployment/web", since+1); field(first, "obs") != field(first, "gen")-1 ||
		!strings.Contains(first, "Progressing=Unknown/DeploymentPaused") {
		t.Errorf("first status write after pausing: %q, want the previous observedGeneration and Progressing=Unknown/DeploymentPaused", first)
	}
	if p := deploymentCondition(d, appsv1.DeploymentProgressing); p.Status != corev1.ConditionUnknown {
		t.Errorf("paused: Progressing=%s, want Unknown", p.Status)
	}
	if a := deploymentCondition(d, appsv1.DeploymentAvailable); a == nil || a.Status != corev1.ConditionTrue {
		t.Errorf("paused: Available %+v, want True", a)
	}

	d = f.patch(t, "web", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"registry.example/web:3"}]}}}}`)
	d = f.waitDeployment(t, "web", 60*time.Second, "template change seen while paused", func(d *appsv1.Deployment) bool {
		return d.Status.ObservedGeneration == d.Generation
	})
	time.Sleep(2 * time.Second) // a ReplicaSet would be made at once
	if rss := f.replicaSets(t, d); len(rss) != 2 {
		t.Errorf("paused Deployment with a new template: %s, want no new ReplicaSet", describeReplicaSets(rss))
	}
	d, err := f.kube.AppsV1().Deployments(f.ns).Get(f.ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.UpdatedReplicas != 0 || d.Status.AvailableReplicas != 2 {
		t.Errorf("paused with a new template: updated %d available %d, want 0 and 2 (no Pod has the new template)",
			d.Status.UpdatedReplicas, d.Status.AvailableReplicas)
	}
	f.logTimeline(t, "paused, then a template change while paused", since)

	conflicts := f.statusConflicts(t, "web")
	d = f.patch(t, "web", `{"spec":{"paused":false}}`)
	since = f.rec.mark(d)
	d = f.waitDeployment(t, "web", 90*time.Second, "complete after resuming", complete)
	f.logTimeline(t, "resumed", since)
	if rss := f.replicaSets(t, d); len(rss) != 3 || *rss[2].Spec.Replicas != 2 {
		t.Errorf("after resuming: %s, want a third ReplicaSet with 2 replicas", describeReplicaSets(rss))
	}
	// The controller writes DeploymentResumed, then, in the same sync, creates the new
	// ReplicaSet and writes NewReplicaSetCreated with the Deployment it read before its
	// first write: that write is refused (409 Conflict), and the next sync finds the
	// ReplicaSet already there, so NewReplicaSetCreated never shows after a resume.
	reasons := f.rec.reasons("Deployment/web", since+1)
	if len(reasons) == 0 || reasons[0] != "DeploymentResumed" || slices.Contains(reasons, "NewReplicaSetCreated") {
		t.Errorf("Progressing reasons after resuming: %v, want DeploymentResumed first and no NewReplicaSetCreated", reasons)
	}
	poll(t, f.ctx, 10*time.Second, "a 409 on the Deployment controller's status write after the resume (audit log)", func() (bool, string) {
		n := f.statusConflicts(t, "web")
		return n > conflicts, fmt.Sprintf("%d conflicts before the resume, %d now", conflicts, n)
	})
	f.checkMonotonic(t, "Deployment/web", since)
}

// Pods that never become Ready (kwok's pod-unready Stage) stall the rollout: past
// progressDeadlineSeconds, Progressing turns False with reason ProgressDeadlineExceeded.
func (f *full) progressDeadline(t *testing.T) {
	f.stuckNS = f.namespace("full-stuck-")
	poll(t, f.ctx, 60*time.Second, "ServiceAccount default in "+f.stuckNS, func() (bool, string) {
		_, err := f.kube.CoreV1().ServiceAccounts(f.stuckNS).Get(f.ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
	rec := record(f.ctx, t, f.kube, f.stuckNS)
	d, err := f.kube.AppsV1().Deployments(f.stuckNS).Create(f.ctx,
		deployment("stuck", 2, 5, map[string]string{unreadyLabel: "true"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	since := rec.mark(d)
	d = waitDeployment(t, f.ctx, f.kube, f.stuckNS, "stuck", 90*time.Second, "Progressing=False ProgressDeadlineExceeded",
		func(d *appsv1.Deployment) bool {
			p := deploymentCondition(d, appsv1.DeploymentProgressing)
			return d.Status.ObservedGeneration >= d.Generation && p != nil &&
				p.Status == corev1.ConditionFalse && p.Reason == "ProgressDeadlineExceeded"
		})
	(&full{t: t, ctx: f.ctx, kube: f.kube, ns: f.stuckNS, rec: rec}).logTimeline(t, "a rollout whose Pods never become Ready (progressDeadlineSeconds 5)", since)
	if a := deploymentCondition(d, appsv1.DeploymentAvailable); a == nil || a.Status != corev1.ConditionFalse ||
		a.Reason != "MinimumReplicasUnavailable" {
		t.Errorf("Available %+v, want False MinimumReplicasUnavailable", a)
	}
	if s := d.Status; s.Replicas != 2 || s.UpdatedReplicas != 2 || s.ReadyReplicas != 0 || s.AvailableReplicas != 0 ||
		s.UnavailableReplicas != 2 {
		t.Errorf("status %+v, want 2 replicas, 2 updated, 0 ready, 0 available, 2 unavailable", s)
	}
	pods, err := f.kube.CoreV1().Pods(f.stuckNS).List(f.ctx, metav1.ListOptions{LabelSelector: "app=stuck"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 2 {
		t.Fatalf("%d Pods, want 2", len(pods.Items))
	}
	for _, p := range pods.Items {
		if !slices.Contains(f.nodes, p.Spec.NodeName) || p.Status.Phase != corev1.PodRunning || podReady(&p) {
			t.Errorf("Pod %s: node %q phase %s ready %v, want a fake node, Running, not Ready",
				p.Name, p.Spec.NodeName, p.Status.Phase, podReady(&p))
		}
	}
}

// Deleting the Deployment (background propagation) leaves its ReplicaSets and Pods to the
// garbage collector.
func (f *full) garbageCollection(t *testing.T) {
	background := metav1.DeletePropagationBackground
	if err := f.kube.AppsV1().Deployments(f.ns).Delete(f.ctx, "web",
		metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Fatal(err)
	}
	poll(t, f.ctx, 60*time.Second, "ReplicaSets of web collected", func() (bool, string) {
		rss, err := f.kube.AppsV1().ReplicaSets(f.ns).List(f.ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err.Error()
		}
		return len(rss.Items) == 0, fmt.Sprintf("%d ReplicaSets left", len(rss.Items))
	})
	f.waitPods(t, "app=web", 60*time.Second, func(pods []corev1.Pod) bool { return len(pods) == 0 })
}

// The namespace controller empties a deleted namespace (the stalled Deployment, its
// ReplicaSet and Pods), then removes it.
func (f *full) namespaceDeletion(t *testing.T) {
	if err := f.kube.CoreV1().Namespaces().Delete(f.ctx, f.stuckNS, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, f.ctx, 120*time.Second, "namespace "+f.stuckNS+" gone", func() (bool, string) {
		ns, err := f.kube.CoreV1().Namespaces().Get(f.ctx, f.stuckNS, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, fmt.Sprintf("phase %s, conditions %+v", ns.Status.Phase, ns.Status.Conditions)
	})
}

// ---- helpers ----

func (f *full) patch(t *testing.T, name, patch string) *appsv1.Deployment {
	t.Helper()
	d, err := f.kube.AppsV1().Deployments(f.ns).Patch(f.ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("patch %s: %v", name, err)
	}
	return d
}

func (f *full) waitDeployment(t *testing.T, name string, timeout time.Duration, what string, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	return waitDeployment(t, f.ctx, f.kube, f.ns, name, timeout, what, ok)
}

func waitDeployment(t *testing.T, ctx context.Context, kube kubernetes.Interface, ns, name string, timeout time.Duration,
	what string, ok func(*appsv1.Deployment) bool) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	poll(t, ctx, timeout, "Deployment "+name+" "+what, func() (bool, string) {
		var err error
		d, err = kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return ok(d), describeDeployment(d)
	})
	return d
}

// replicaSets are the Deployment's ReplicaSets (controller reference), by revision.
func (f *full) replicaSets(t *testing.T, d *appsv1.Deployment) []appsv1.ReplicaSet {
	t.Helper()
	list, err := f.kube.AppsV1().ReplicaSets(d.Namespace).List(f.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range list.Items {
		if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID {
			out = append(out, rs)
		}
	}
	revision := func(rs appsv1.ReplicaSet) int {
		n, _ := strconv.Atoi(rs.Annotations["deployment.kubernetes.io/revision"])
		return n
	}
	sort.Slice(out, func(i, j int) bool { return revision(out[i]) < revision(out[j]) })
	return out
}

// checkPods: the ReplicaSet's Pods (controller reference) are n, each bound by the scheduler
// to a fake Node and Running; Ready as ready says.
func (f *full) checkPods(t *testing.T, rs appsv1.ReplicaSet, n int, ready bool) {
	t.Helper()
	list, err := f.kube.CoreV1().Pods(rs.Namespace).List(f.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got int
	for _, p := range list.Items {
		if ref := metav1.GetControllerOf(&p); ref == nil || ref.UID != rs.UID || p.DeletionTimestamp != nil {
			continue
		}
		got++
		if !slices.Contains(f.nodes, p.Spec.NodeName) {
			t.Errorf("Pod %s on node %q, not a fake node %v", p.Name, p.Spec.NodeName, f.nodes)
		}
		if c := podCondition(&p, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue {
			t.Errorf("Pod %s: PodScheduled %+v", p.Name, c)
		}
		if p.Status.Phase != corev1.PodRunning || podReady(&p) != ready || p.Status.PodIP == "" {
			t.Errorf("Pod %s: phase %s, ready %v (want %v), podIP %q", p.Name, p.Status.Phase, podReady(&p), ready, p.Status.PodIP)
		}
		if p.Labels["pod-template-hash"] != rs.Labels["pod-template-hash"] {
			t.Errorf("Pod %s: pod-template-hash %q, ReplicaSet's %q", p.Name, p.Labels["pod-template-hash"], rs.Labels["pod-template-hash"])
		}
	}
	if got != n {
		t.Errorf("ReplicaSet %s has %d Pods, want %d", rs.Name, got, n)
	}
}

func (f *full) waitPods(t *testing.T, selector string, timeout time.Duration, ok func([]corev1.Pod) bool) {
	t.Helper()
	poll(t, f.ctx, timeout, "Pods "+selector, func() (bool, string) {
		list, err := f.kube.CoreV1().Pods(f.ns).List(f.ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		var names []string
		for _, p := range list.Items {
			names = append(names, fmt.Sprintf("%s(%s deleting=%v)", p.Name, p.Status.Phase, p.DeletionTimestamp != nil))
		}
		return ok(list.Items), fmt.Sprintf("%d Pods: %v", len(list.Items), names)
	})
}

// statusConflicts counts the Deployment controller's status writes to the Deployment that
// the API server refused with 409 Conflict (audit log).
func (f *full) statusConflicts(t *testing.T, name string) int {
	t.Helper()
	n := 0
	for _, ev := range readAudit(t, os.Getenv("AUDIT_LOG")) {
		if ev.User.Username == "system:serviceaccount:kube-system:deployment-controller" && ev.Verb == "update" &&
			ev.ObjectRef.Resource == "deployments" && ev.ObjectRef.Subresource == "status" &&
			ev.ObjectRef.Namespace == f.ns && ev.ObjectRef.Name == name && ev.ResponseStatus.Code == 409 {
			n++
		}
	}
	return n
}

// checkMonotonic: observedGeneration never goes down, and the counts (replicas, updated,
// ready, available, unavailable) change only in a write that brings observedGeneration up
// to the generation: a status that answers an older spec keeps the counts it had.
func (f *full) checkMonotonic(t *testing.T, key string, since uint64) {
	t.Helper()
	last, counts := 0, ""
	for i, s := range f.rec.texts(key, since) {
		obs := field(s, "obs")
		if obs < last {
			t.Errorf("%s: observedGeneration went from %d to %d", key, last, obs)
		}
		last = obs
		c := fmt.Sprint(field(s, "replicas"), field(s, "updated"), field(s, "ready"), field(s, "available"), field(s, "unavailable"))
		if i > 0 && obs < field(s, "gen") && c != counts {
			t.Errorf("%s: counts moved (%s -> %s) in a status of observedGeneration %d < generation %d: %s",
				key, counts, c, obs, field(s, "gen"), s)
		}
		counts = c
	}
}

func (f *full) logTimeline(t *testing.T, title string, since uint64) {
	t.Helper()
	t.Logf("%s: what the controllers wrote, in order (resourceVersion order; Deployment status, ReplicaSet spec and status):\n%s",
		title, strings.Join(f.rec.lines(since), "\n"))
}

func poll(t *testing.T, ctx context.Context, timeout time.Duration, what string, ok func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, last := ok()
		if done {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: not after %s; last: %s", what, timeout, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func deploymentCondition(d *appsv1.Deployment, kind appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == kind {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}

func nodeCondition(n *corev1.Node, kind corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == kind {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

func podCondition(p *corev1.Pod, kind corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == kind {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	c := podCondition(p, corev1.PodReady)
	return c != nil && c.Status == corev1.ConditionTrue
}

func cond(d *appsv1.Deployment, kind appsv1.DeploymentConditionType) string {
	c := deploymentCondition(d, kind)
	if c == nil {
		return "-"
	}
	return string(c.Status) + "/" + c.Reason
}

// describeDeployment is one line: the generation and spec the status answers, the status.
func describeDeployment(d *appsv1.Deployment) string {
	s := d.Status
	paused := ""
	if d.Spec.Paused {
		paused = " paused"
	}
	return fmt.Sprintf("gen=%d obs=%d spec.replicas=%d%s replicas=%d updated=%d ready=%d available=%d unavailable=%d terminating=%s Progressing=%s Available=%s",
		d.Generation, s.ObservedGeneration, *d.Spec.Replicas, paused, s.Replicas, s.UpdatedReplicas, s.ReadyReplicas,
		s.AvailableReplicas, s.UnavailableReplicas, optional(s.TerminatingReplicas),
		cond(d, appsv1.DeploymentProgressing), cond(d, appsv1.DeploymentAvailable))
}

// optional is "-" for an absent count (terminatingReplicas: a beta field, on by default).
func optional(n *int32) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(int(*n))
}

func describeReplicaSet(rs *appsv1.ReplicaSet) string {
	return fmt.Sprintf("rev=%s spec.replicas=%d replicas=%d ready=%d available=%d terminating=%s obs=%d",
		rs.Annotations["deployment.kubernetes.io/revision"], *rs.Spec.Replicas, rs.Status.Replicas,
		rs.Status.ReadyReplicas, rs.Status.AvailableReplicas, optional(rs.Status.TerminatingReplicas), rs.Status.ObservedGeneration)
}

func describeReplicaSets(rss []appsv1.ReplicaSet) string {
	var out []string
	for i := range rss {
		out = append(out, rss[i].Name+" "+describeReplicaSet(&rss[i]))
	}
	return fmt.Sprintf("%d ReplicaSets [%s]", len(rss), strings.Join(out, "; "))
}

// field reads NAME=N from a describeDeployment line (0 when absent).
func field(line, name string) int {
	for _, w := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// recorder watches the Deployments and ReplicaSets of a namespace and keeps every distinct
// state each one is written in, ordered by resourceVersion (etcd's revision here; the
// API does not promise it is a number, so a test that needs it parses it).
type recorder struct {
	mu      sync.Mutex
	entries []entry
	last    map[string]string
}

type entry struct {
	rv   uint64
	key  string // Kind/name
	text string
}

func record(ctx context.Context, t *testing.T, kube kubernetes.Interface, ns string) *recorder {
	t.Helper()
	r := &recorder{last: map[string]string{}}
	deps, err := kube.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rss, err := kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	watchFrom := func(rv string, w func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: w})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			defer rw.Stop()
			for ev := range rw.ResultChan() {
				switch o := ev.Object.(type) {
				case *appsv1.Deployment:
					r.add(o.ResourceVersion, "Deployment/"+o.Name, describeDeployment(o), ev.Type)
				case *appsv1.ReplicaSet:
					r.add(o.ResourceVersion, "ReplicaSet/"+o.Name, describeReplicaSet(o), ev.Type)
				}
			}
		}()
	}
	watchFrom(deps.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return kube.AppsV1().Deployments(ns).Watch(ctx, o)
	})
	watchFrom(rss.ResourceVersion, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		return kube.AppsV1().ReplicaSets(ns).Watch(ctx, o)
	})
	return r
}

func (r *recorder) add(rv, key, text string, kind watch.EventType) {
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return
	}
	if kind == watch.Deleted {
		text = "deleted"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last[key] == text {
		return
	}
	r.last[key] = text
	r.entries = append(r.entries, entry{n, key, text})
}

// mark is the resourceVersion of the object a step wrote: the step's entries come after it
// (that write itself included).
func (r *recorder) mark(d *appsv1.Deployment) uint64 {
	n, _ := strconv.ParseUint(d.ResourceVersion, 10, 64)
	return n
}

func (r *recorder) sorted(since uint64) []entry {
	time.Sleep(500 * time.Millisecond) // the watches' last events
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []entry
	for _, e := range r.entries {
		if e.rv >= since {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].rv < out[j].rv })
	return out
}

func (r *recorder) lines(since uint64) []string {
	var out []string
	for _, e := range r.sorted(since) {
		name := e.key
		if kind, n, ok := strings.Cut(e.key, "/"); ok && kind == "ReplicaSet" {
			// The pod-template-hash suffix tells the ReplicaSets apart.
			name = "ReplicaSet/" + n[strings.LastIndex(n, "-")+1:]
		}
		out = append(out, fmt.Sprintf("  %-32s %s", name, e.text))
	}
	return out
}

func (r *recorder) texts(key string, since uint64) []string {
	var out []string
	for _, e := range r.sorted(since) {
		if e.key == key {
			out = append(out, e.text)
		}
	}
	return out
}

func (r *recorder) first(key string, since uint64) string {
	if t := r.texts(key, since); len(t) > 0 {
		return t[0]
	}
	return ""
}

func (r *recorder) max(key string, since uint64, value func(string) int) int {
	m := 0
	for _, s := range r.texts(key, since) {
		m = max(m, value(s))
	}
	return m
}

// conditions are the values (Status/Reason) of the Deployment condition KIND in order,
// repeats dropped.
func (r *recorder) conditions(key string, since uint64, kind string) []string {
	var out []string
	for _, s := range r.texts(key, since) {
		for _, w := range strings.Fields(s) {
			if v, ok := strings.CutPrefix(w, kind+"="); ok && (len(out) == 0 || out[len(out)-1] != v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// reasons are the Progressing reasons in order, repeats dropped.
func (r *recorder) reasons(key string, since uint64) []string {
	var out []string
	for _, s := range r.texts(key, since) {
		for _, w := range strings.Fields(s) {
			if v, ok := strings.CutPrefix(w, "Progressing="); ok {
				_, reason, _ := strings.Cut(v, "/")
				if len(out) == 0 || out[len(out)-1] != reason {
					out = append(out, reason)
				}
			}
		}
	}
	return out
}
