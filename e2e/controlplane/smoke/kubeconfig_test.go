package smoke

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gateway-reconcile/e2e/controlplane/pki"
)

// A kubeconfig minted as the harnesses mint their controllers' (pki.MintKubeconfig, from
// the CA the control plane exports) is read by client-go, and the API server
// authenticates its user and group from the client certificate.
func TestMintedKubeconfig(t *testing.T) {
	if os.Getenv("E2E_SERVER") == "" {
		t.Skip("E2E_SERVER is not set: run this through e2e/controlplane.sh run -- ...")
	}
	const user, group = "e2e-smoke-minted", "e2e-smoke-group"
	path := filepath.Join(t.TempDir(), "minted.kubeconfig")
	if err := pki.MintKubeconfig(path, user, group); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Every authenticated user may ask who it is (the system:basic-user ClusterRole).
	review, err := kube.AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	info := review.Status.UserInfo
	if info.Username != user || !slices.Contains(info.Groups, group) {
		t.Errorf("authenticated as %q in %v, want %q in %q", info.Username, info.Groups, user, group)
	}
}
