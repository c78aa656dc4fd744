package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A serving and a client certificate of one CA pass a mutual TLS handshake on loopback,
// as the API server and its clients make it: the server names 127.0.0.1, the client's
// user and groups reach the server.
func TestServingAndClient(t *testing.T) {
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	serveCert, serveKey, err := ca.Serving("server", "127.0.0.1", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey, err := ca.Client("alice", "team-a", "team-b")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		subject := r.TLS.PeerCertificates[0].Subject
		_, _ = io.WriteString(w, subject.CommonName)
		for _, o := range subject.Organization {
			_, _ = io.WriteString(w, " "+o)
		}
	}))
	pair, err := tls.X509KeyPair(serveCert, serveKey)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool,
		ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	defer srv.Close()

	pair, err = tls.X509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{pair}}}}
	resp, err := client.Get(srv.URL) // https://127.0.0.1:PORT
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if got, want := string(body), "alice team-a team-b"; got != want {
		t.Errorf("the server saw %q, want %q", got, want)
	}
}

// MintKubeconfig reads the control plane's CA from the files E2E_CA_CERT and E2E_CA_KEY
// name, and writes a kubeconfig (0600: it holds a key) for E2E_SERVER with that CA and a
// client certificate for the user that the CA verifies. (The smoke tests read one with
// client-go on the real server.)
func TestMintKubeconfig(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	key, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	if err := os.WriteFile(certFile, ca.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2E_CA_CERT", certFile)
	t.Setenv("E2E_CA_KEY", keyFile)
	t.Setenv("E2E_SERVER", "https://127.0.0.1:6443")

	path := filepath.Join(dir, "bob.kubeconfig")
	if err := MintKubeconfig(path, "bob"); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig mode: %v, %v; want 0600", st.Mode(), err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The fields, each on a line of its own.
	fields := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ": "); ok {
			fields[strings.TrimPrefix(k, "- ")] = v
		}
	}
	decode := func(k string) []byte {
		b, err := base64.StdEncoding.DecodeString(fields[k])
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %q (%v)", k, fields[k], err)
		}
		return b
	}
	if fields["server"] != "https://127.0.0.1:6443" || fields["user"] != "bob" {
		t.Errorf("server %q, user %q", fields["server"], fields["user"])
	}
	if string(decode("certificate-authority-data")) != string(ca.CertPEM) {
		t.Error("the kubeconfig's CA is not the control plane's")
	}
	certPEM, keyPEM := decode("client-certificate-data"), decode("client-key-data")
	if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Errorf("the client certificate and key do not pair: %v", err)
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		t.Fatal("no client certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.Subject.CommonName != "bob" || len(cert.Subject.Organization) != 0 {
		t.Errorf("subject %v, want CN=bob and no group", cert.Subject)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the client certificate does not verify against the CA: %v", err)
	}
}

func TestMintKubeconfigOutsideAControlPlane(t *testing.T) {
	t.Setenv("E2E_SERVER", "https://127.0.0.1:6443")
	t.Setenv("E2E_CA_CERT", "")
	if err := MintKubeconfig(filepath.Join(t.TempDir(), "x"), "x"); err == nil {
		t.Error("no error without E2E_CA_CERT")
	}
}
