package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gateway-reconcile/e2e/controlplane/pki"
)

// controllerUser is the identity of the controller under test: its requests are told from
// the test's in the audit log by this user.username.
const controllerUser = "gateway-reconcile-controller"

// writePKI (e2e-helper pki DIR SERVER_URL USER) writes into DIR:
//
//	ca.crt, ca.key            a self-signed CA (also the client CA of the API server)
//	apiserver.crt, .key       the serving certificate: 127.0.0.1, ::1, localhost and the
//	                          in-cluster names of the kubernetes Service
//	admin.crt, admin.key      a client certificate for USER in group system:masters
//	sa.key, sa.pub            the service-account token signing key pair
//	kubeconfig                SERVER_URL with the CA and the admin credential inlined
//	controller.crt, .key      a client certificate for the user gateway-reconcile-controller
//	                          (no group: it has only what RBAC bindings give it)
//	controller.kubeconfig     SERVER_URL with the CA and the controller credential inlined
//
// Keys are PKCS#8 PEM ("PRIVATE KEY"), which every client library reads.
func writePKI(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("want DIR SERVER_URL USER")
	}
	dir, server, user := args[0], args[1], args[2]

	ca, err := pki.NewCA("e2e-ca")
	if err != nil {
		return err
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		return err
	}
	// 10.0.0.1 is the kubernetes Service's address in --service-cluster-ip-range.
	serveCert, serveKey, err := ca.Serving("kube-apiserver", "127.0.0.1", "::1", "10.0.0.1",
		"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local")
	if err != nil {
		return err
	}
	adminCert, adminKey, err := ca.Client(user, "system:masters")
	if err != nil {
		return err
	}
	ctlCert, ctlKey, err := ca.Client(controllerUser)
	if err != nil {
		return err
	}
	saKey, saPub, err := pki.SigningKeyPair()
	if err != nil {
		return err
	}

	files := []struct {
		name string
		data []byte
	}{
		{"ca.crt", ca.CertPEM},
		{"ca.key", caKey},
		{"apiserver.crt", serveCert},
		{"apiserver.key", serveKey},
		{"admin.crt", adminCert},
		{"admin.key", adminKey},
		{"sa.key", saKey},
		{"sa.pub", saPub},
		{"kubeconfig", ca.Kubeconfig(server, user, adminCert, adminKey)},
		{"controller.crt", ctlCert},
		{"controller.key", ctlKey},
		{"controller.kubeconfig", ca.Kubeconfig(server, controllerUser, ctlCert, ctlKey)},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
