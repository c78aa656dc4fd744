package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The annotation kwok is started to manage nodes by (--manage-nodes-with-annotation-selector).
const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	kwokNodeValue      = "fake"
)

// fakeNodes creates N Nodes named PREFIX-0 .. PREFIX-(N-1), annotated for kwok, with a
// capacity no test will exhaust, and waits (at most TIMEOUT seconds) until each one is
// schedulable: condition Ready True (set by kwok) and neither the not-ready nor the
// unreachable taint (the API server's TaintNodesByCondition admission puts the not-ready
// taint on every new Node; the node lifecycle controller of kube-controller-manager lifts
// it once the Node is Ready). Prints the names, one a line.
func fakeNodes(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("want KUBECONFIG PREFIX N TIMEOUT_SECONDS")
	}
	kube, err := clientset(args[0])
	if err != nil {
		return err
	}
	prefix := args[1]
	n, err := strconv.Atoi(args[2])
	if err != nil || n < 1 || n > 100 {
		return fmt.Errorf("N must be 1..100, got %q", args[2])
	}
	timeout, err := strconv.Atoi(args[3])
	if err != nil || timeout < 1 {
		return fmt.Errorf("TIMEOUT_SECONDS must be a positive number, got %q", args[3])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeout)*time.Second)
	defer cancel()

	resources := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: names[i],
				Labels: map[string]string{
					"type":                   "kwok",
					"kubernetes.io/hostname": names[i],
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     "amd64",
				},
				Annotations: map[string]string{kwokNodeAnnotation: kwokNodeValue},
			},
			// A Node's status may be set on create (a kubelet registers so); kwok's
			// node-initialize Stage keeps the capacity and allocatable it finds.
			Status: corev1.NodeStatus{Capacity: resources, Allocatable: resources},
		}
		if _, err := kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create node %s: %w", names[i], err)
		}
	}

	var pending []string
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		pending = pending[:0]
		for _, name := range names {
			node, err := kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				pending = append(pending, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			if why := unschedulable(node); why != "" {
				pending = append(pending, name+": "+why)
			}
		}
		return len(pending) == 0, nil
	})
	if err != nil {
		sort.Strings(pending)
		return fmt.Errorf("nodes not schedulable after %ds: %s", timeout, strings.Join(pending, "; "))
	}
	for _, name := range names {
		fmt.Println(name)
	}
	return nil
}

// unschedulable says why the scheduler would not place a Pod on the Node ("" when it would).
func unschedulable(node *corev1.Node) string {
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			ready = true
		}
	}
	if !ready {
		return "not Ready"
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return "taint " + t.Key
		}
	}
	if node.Spec.Unschedulable {
		return "cordoned"
	}
	return ""
}

// waitServiceAccount waits (at most TIMEOUT seconds) until the ServiceAccount exists: the
// default one of a namespace is made by kube-controller-manager's serviceaccount
// controller, and the API server refuses a Pod whose ServiceAccount is missing.
func waitServiceAccount(args []string) error {
	if len(args) != 4 {
		return fmt.Errorf("want KUBECONFIG NAMESPACE NAME TIMEOUT_SECONDS")
	}
	kube, err := clientset(args[0])
	if err != nil {
		return err
	}
	timeout, err := strconv.Atoi(args[3])
	if err != nil || timeout < 1 {
		return fmt.Errorf("TIMEOUT_SECONDS must be a positive number, got %q", args[3])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeout)*time.Second)
	defer cancel()
	var last error
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, last = kube.CoreV1().ServiceAccounts(args[1]).Get(ctx, args[2], metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("serviceaccount %s/%s not there after %ds: %v", args[1], args[2], timeout, last)
	}
	return nil
}

func clientset(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// schedulableNode waits (at most TIMEOUT seconds) until the Node NAME, which a kubelet
// registers itself, exists and is schedulable (see unschedulable).
func schedulableNode(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("want KUBECONFIG NAME TIMEOUT_SECONDS")
	}
	kube, err := clientset(args[0])
	if err != nil {
		return err
	}
	timeout, err := strconv.Atoi(args[2])
	if err != nil || timeout < 1 {
		return fmt.Errorf("TIMEOUT_SECONDS must be a positive number, got %q", args[2])
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(timeout)*time.Second)
	defer cancel()
	why := "not registered"
	err = wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		node, err := kube.CoreV1().Nodes().Get(ctx, args[1], metav1.GetOptions{})
		if err != nil {
			why = err.Error()
			return false, nil
		}
		why = unschedulable(node)
		return why == "", nil
	})
	if err != nil {
		return fmt.Errorf("node %s not schedulable after %ds: %s", args[1], timeout, why)
	}
	return nil
}
