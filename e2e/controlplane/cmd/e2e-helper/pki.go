package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki writes into DIR:
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
// controllerUser is the identity of the controller under test: its requests are told from
// the test's in the audit log by this user.username.
const controllerUser = "gateway-reconcile-controller"

func pki(args []string) error {
	if len(args) != 3 {
		return fmt.Errorf("want DIR SERVER_URL USER")
	}
	dir, server, user := args[0], args[1], args[2]
	now := time.Now().Add(-time.Hour)
	notAfter := now.Add(48 * time.Hour)

	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "e2e-ca"},
		NotBefore:             now,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}

	leaf := func(name string, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl.SerialNumber = serial()
		tmpl.NotBefore = now
		tmpl.NotAfter = notAfter
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
		if err != nil {
			return nil, nil, fmt.Errorf("%s certificate: %w", name, err)
		}
		keyPEM, err = pkcs8(key)
		if err != nil {
			return nil, nil, err
		}
		return pemBlock("CERTIFICATE", der), keyPEM, nil
	}

	serveCert, serveKey, err := leaf("serving", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local"},
	})
	if err != nil {
		return err
	}
	adminCert, adminKey, err := leaf("admin", &x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return err
	}

	ctlCert, ctlKey, err := leaf("controller", &x509.Certificate{
		Subject:     pkix.Name{CommonName: controllerUser},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saKeyPEM, err := pkcs8(saKey)
	if err != nil {
		return err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	caKeyPEM, err := pkcs8(caKey)
	if err != nil {
		return err
	}
	caPEM := pemBlock("CERTIFICATE", caDER)

	kubeconfigOf := func(user string, cert, key []byte) string {
		return kubeconfigYAML(server, user, caPEM, cert, key)
	}
	kubeconfig := kubeconfigOf(user, adminCert, adminKey)

	files := []struct {
		name string
		data []byte
	}{
		{"ca.crt", caPEM},
		{"ca.key", caKeyPEM},
		{"apiserver.crt", serveCert},
		{"apiserver.key", serveKey},
		{"admin.crt", adminCert},
		{"admin.key", adminKey},
		{"sa.key", saKeyPEM},
		{"sa.pub", pemBlock("PUBLIC KEY", saPubDER)},
		{"kubeconfig", []byte(kubeconfig)},
		{"controller.crt", ctlCert},
		{"controller.key", ctlKey},
		{"controller.kubeconfig", []byte(kubeconfigOf(controllerUser, ctlCert, ctlKey))},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// kubeconfigYAML is a kubeconfig for SERVER_URL with the CA and a client credential inlined.
func kubeconfigYAML(server, user string, caPEM, cert, key []byte) string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: %s
    namespace: default
current-context: e2e
`, server, b64(caPEM), user, b64(cert), b64(key), user)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err)
	}
	return n
}

func pkcs8(key crypto.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pemBlock("PRIVATE KEY", der), nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}
