// Package pki makes the certificates and kubeconfigs of the end-to-end control plane
// (e2e/controlplane.sh): its CA, the API server's serving certificate, client
// certificates, and kubeconfigs with the CA and a client credential inlined.
//
// e2e-helper writes the control plane's own with it. The harnesses that run a controller
// as a user of their own (the conformance suite's, the load harness) mint that user's
// kubeconfig with MintKubeconfig, signed by the CA the control plane exports, so that the
// API server authenticates it like any other client certificate.
//
// Keys are ECDSA P-256 (but the service-account signing key, RSA), written as PKCS#8 PEM
// ("PRIVATE KEY"), which every client library reads. Certificates are valid from an hour
// ago (a clock a little behind still accepts them) for two days: far longer than any run.
package pki

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
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// validity is how long every certificate is valid, from an hour ago.
const validity = 48 * time.Hour

// CA is a certificate authority: it signs the serving and client certificates.
type CA struct {
	Cert    *x509.Certificate
	CertPEM []byte
	Key     crypto.Signer
}

// NewCA makes a self-signed CA named commonName.
func NewCA(commonName string) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	notBefore := time.Now().Add(-time.Hour)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             notBefore,
		NotAfter:              notBefore.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, CertPEM: encodePEM("CERTIFICATE", der), Key: key}, nil
}

// LoadCA reads a CA from its certificate and its key (PKCS#8), both PEM files.
func LoadCA(certFile, keyFile string) (*CA, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s: no PEM certificate", certFile)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	if block, _ = pem.Decode(keyPEM); block == nil {
		return nil, fmt.Errorf("%s: no PEM block", keyFile)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: a %T cannot sign", keyFile, key)
	}
	return &CA{Cert: cert, CertPEM: certPEM, Key: signer}, nil
}

// ControlPlaneCA is the CA of the running control plane, from the files `controlplane.sh
// run` names in E2E_CA_CERT and E2E_CA_KEY.
func ControlPlaneCA() (*CA, error) {
	certFile, keyFile := os.Getenv("E2E_CA_CERT"), os.Getenv("E2E_CA_KEY")
	if certFile == "" || keyFile == "" {
		return nil, errors.New("E2E_CA_CERT or E2E_CA_KEY is not set: run under e2e/controlplane.sh run")
	}
	return LoadCA(certFile, keyFile)
}

// KeyPEM is the CA's key as PKCS#8 PEM.
func (ca *CA) KeyPEM() ([]byte, error) {
	return encodeKey(ca.Key)
}

// sign issues a certificate from tmpl for a new key: the CA sets its serial number,
// validity and key usage; tmpl gives the subject, the extended key usage and the names.
func (ca *CA) sign(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	t := *tmpl
	t.SerialNumber = serial()
	t.NotBefore = time.Now().Add(-time.Hour)
	t.NotAfter = t.NotBefore.Add(validity)
	t.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, &t, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate of %q: %w", t.Subject.CommonName, err)
	}
	if keyPEM, err = encodeKey(key); err != nil {
		return nil, nil, err
	}
	return encodePEM("CERTIFICATE", der), keyPEM, nil
}

// Client issues a client certificate: the API server reads user from its CN and the
// groups from its O.
func (ca *CA) Client(user string, groups ...string) (certPEM, keyPEM []byte, err error) {
	return ca.sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: user, Organization: groups},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// Serving issues a serving certificate for hosts, each an IP address or a DNS name.
func (ca *CA) Serving(commonName string, hosts ...string) (certPEM, keyPEM []byte, err error) {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return ca.sign(tmpl)
}

// Kubeconfig is a kubeconfig for server (namespace default) with the CA and user's client
// credential inlined, so that it stands alone.
func (ca *CA) Kubeconfig(server, user string, certPEM, keyPEM []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Appendf(nil, `apiVersion: v1
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
`, server, b64(ca.CertPEM), user, b64(certPEM), b64(keyPEM), user)
}

// WriteKubeconfig writes to path a kubeconfig for server with a new client certificate
// for user in groups.
func (ca *CA) WriteKubeconfig(path, server, user string, groups ...string) error {
	cert, key, err := ca.Client(user, groups...)
	if err != nil {
		return err
	}
	return os.WriteFile(path, ca.Kubeconfig(server, user, cert, key), 0o600)
}

// MintKubeconfig writes to path a kubeconfig for user in groups on the running control
// plane (E2E_SERVER), its client certificate signed by the control plane's CA. For a
// controller that runs as a user of its own, its requests told apart in the audit log.
func MintKubeconfig(path, user string, groups ...string) error {
	server := os.Getenv("E2E_SERVER")
	if server == "" {
		return errors.New("E2E_SERVER is not set: run under e2e/controlplane.sh run")
	}
	ca, err := ControlPlaneCA()
	if err != nil {
		return err
	}
	return ca.WriteKubeconfig(path, server, user, groups...)
}

// SigningKeyPair makes the key pair that signs and verifies the service-account tokens
// (RSA 2048: RS256, which every token reader accepts), as PKCS#8 and PKIX PEM.
func SigningKeyPair() (keyPEM, publicPEM []byte, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = encodeKey(key); err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return nil, nil, err
	}
	return keyPEM, encodePEM("PUBLIC KEY", der), nil
}

// encodeKey is key as PKCS#8 PEM ("PRIVATE KEY").
func encodeKey(key crypto.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return encodePEM("PRIVATE KEY", der), nil
}

func encodePEM(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// serial is a random serial number: RFC 5280 wants it unique per CA, and 126 random bits
// make it so without keeping a count.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail on a supported platform
	}
	return n
}
