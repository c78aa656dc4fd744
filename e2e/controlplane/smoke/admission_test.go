package smoke

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	policies = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	bindings = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
	webhooks = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
)

// TestAdmissionMakesWritesFail shows the two ways later tests make a Deployment write fail
// on this server: a ValidatingAdmissionPolicy (a 4xx of the test's choice) and a validating
// webhook that cannot be reached with failurePolicy Fail (a 500). Both take effect a moment
// after they are created (the server's informers), so the test polls.
func TestAdmissionMakesWritesFail(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	nsSelector := fmt.Sprintf(`{"matchLabels":{"kubernetes.io/metadata.name":%q}}`, e.ns)
	deployment := func() *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: obj(`{"apiVersion":"apps/v1","kind":"Deployment",
			"metadata":{"generateName":"refused-"},
			"spec":{"selector":{"matchLabels":{"app":"x"}},"template":{"metadata":{"labels":{"app":"x"}},
			"spec":{"containers":[{"name":"c","image":"registry.example/c:1"}]}}}}`)}
	}
	// createUntil creates Deployments until one fails as check wants (or 20 s pass).
	createUntil := func(t *testing.T, check func(error) bool) error {
		t.Helper()
		var err error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
			_, err = e.dyn.Resource(deployments).Namespace(e.ns).Create(ctx, deployment(), metav1.CreateOptions{})
			if check(err) {
				return err
			}
		}
		t.Fatalf("the write never failed as expected; last answer: %v", err)
		return nil
	}

	t.Run("ValidatingAdmissionPolicy", func(t *testing.T) {
		name := "smoke-" + e.ns
		policy := obj(fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",
			"metadata":{"name":%q},
			"spec":{"failurePolicy":"Fail",
			  "matchConstraints":{"resourceRules":[{"apiGroups":["apps"],"apiVersions":["v1"],
			    "operations":["CREATE","UPDATE"],"resources":["deployments"]}]},
			  "validations":[{"expression":"false","message":"smoke: writes refused","reason":"Invalid"}]}}`, name))
		binding := obj(fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding",
			"metadata":{"name":%q},
			"spec":{"policyName":%q,"validationActions":["Deny"],"matchResources":{"namespaceSelector":%s}}}`, name, name, nsSelector))
		if _, err := e.dyn.Resource(policies).Create(ctx, &unstructured.Unstructured{Object: policy}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.dyn.Resource(bindings).Create(ctx, &unstructured.Unstructured{Object: binding}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err := createUntil(t, apierrors.IsInvalid)
		t.Logf("refused by the policy: %v (%+v)", err, err.(apierrors.APIStatus).Status().Details)
		if !strings.Contains(err.Error(), "smoke: writes refused") {
			t.Errorf("refusal %q does not carry the policy's message", err)
		}
		if code := err.(apierrors.APIStatus).Status().Code; code != http.StatusUnprocessableEntity {
			t.Errorf("code %d, want 422", code)
		}
		for _, r := range []struct {
			gvr  schema.GroupVersionResource
			name string
		}{{bindings, name}, {policies, name}} {
			if err := e.dyn.Resource(r.gvr).Delete(ctx, r.name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Writes go through again once the binding is gone.
		createUntil(t, func(err error) bool { return err == nil })
	})

	t.Run("unreachable webhook", func(t *testing.T) {
		ca, err := os.ReadFile(os.Getenv("E2E_CA_CERT"))
		if err != nil {
			t.Fatal(err)
		}
		name := "smoke-" + e.ns
		// Port 1 on loopback: connection refused. URL webhooks need no Service.
		hook := obj(fmt.Sprintf(`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration",
			"metadata":{"name":%q},
			"webhooks":[{"name":"refuse.smoke.e2e","failurePolicy":"Fail","sideEffects":"None",
			  "admissionReviewVersions":["v1"],"timeoutSeconds":2,
			  "clientConfig":{"url":"https://127.0.0.1:1/validate","caBundle":%q},
			  "rules":[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE","UPDATE"],"resources":["deployments"]}],
			  "namespaceSelector":%s}]}`, name, base64.StdEncoding.EncodeToString(ca), nsSelector))
		if _, err := e.dyn.Resource(webhooks).Create(ctx, &unstructured.Unstructured{Object: hook}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		err = createUntil(t, apierrors.IsInternalError)
		t.Logf("refused by the webhook call: %v (reason %s)", err, err.(apierrors.APIStatus).Status().Reason)
		if !strings.Contains(err.Error(), "failed calling webhook") {
			t.Errorf("error %q does not say the webhook call failed", err)
		}
		if err := e.dyn.Resource(webhooks).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		createUntil(t, func(err error) bool { return err == nil })
	})

}
