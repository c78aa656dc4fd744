package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// client writes one more client identity, signed by the CA that pki wrote into DIR:
//
//	NAME.crt, NAME.key     a client certificate for USER (CN), in GROUP (O) when given
//	NAME.kubeconfig        SERVER_URL with the CA and this credential inlined
//
// The full control plane gives kube-controller-manager, kube-scheduler and kwok an identity
// each, so that their requests are told apart from the test's in the audit log.
func client(args []string) error {
	if len(args) != 4 && len(args) != 5 {
		return fmt.Errorf("want DIR SERVER_URL NAME USER [GROUP]")
	}
	dir, server, name, user := args[0], args[1], args[2], args[3]
	subject := pkix.Name{CommonName: user}
	if len(args) == 5 {
		subject.Organization = []string{args[4]}
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err != nil {
		return err
	}
	ca, err := parseCertificate(caPEM)
	if err != nil {
		return fmt.Errorf("ca.crt: %w", err)
	}
	caKeyPEM, err := os.ReadFile(filepath.Join(dir, "ca.key"))
	if err != nil {
		return err
	}
	block, _ := pem.Decode(caKeyPEM)
	if block == nil {
		return fmt.Errorf("ca.key: no PEM block")
	}
	caKey, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("ca.key: %w", err)
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    now,
		NotAfter:     now.Add(48 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("%s certificate: %w", name, err)
	}
	keyPEM, err := pkcs8(key)
	if err != nil {
		return err
	}
	certPEM := pemBlock("CERTIFICATE", der)
	for file, data := range map[string][]byte{
		name + ".crt":        certPEM,
		name + ".key":        keyPEM,
		name + ".kubeconfig": []byte(kubeconfigYAML(server, user, caPEM, certPEM, keyPEM)),
	} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

func parseCertificate(data []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
