package main

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gateway-reconcile/e2e/controlplane/pki"
)

// upstream is a stand-in API server: it records each request it receives with the user
// its client certificate names.
type upstream struct {
	mu   sync.Mutex
	seen []string
}

func (u *upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user := ""
	if len(r.TLS.PeerCertificates) > 0 {
		user = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	u.mu.Lock()
	u.seen = append(u.seen, r.Method+" "+r.URL.Path+" "+user)
	u.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Query().Get("watch") == "true" {
		// A watch: three events, each flushed as an API server streams them.
		for rv := 1; rv <= 3; rv++ {
			_, _ = w.Write([]byte(line("MODIFIED", "a", rv)))
			_ = http.NewResponseController(w).Flush()
		}
		return
	}
	_, _ = w.Write([]byte(`{"kind":"Status"}`))
}

func (u *upstream) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

// crashSetup starts a CA in a directory, an upstream that requires its client certificates,
// a victim process (its id in a pid file) and the proxy killing at killAt and perturbing
// watches as perturb says (nil: not); it returns a client of the proxy (a new connection
// per call) and the proxy's log.
func crashSetup(t *testing.T, killAt int64, before bool, perturb *perturb) (u *upstream, victim *exec.Cmd,
	client func() *http.Client, base string, logPath string) {
	t.Helper()
	dir := t.TempDir()
	ca, err := pki.NewCA("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	caKey, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	ctlCert, ctlKey, err := ca.Client(controllerUser)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.crt": ca.CertPEM, "ca.key": caKey,
		"controller.crt": ctlCert, "controller.key": ctlKey} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)

	u = &upstream{}
	up := httptest.NewUnstartedServer(u)
	upCert, upKey, err := ca.Serving("upstream", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(upCert, upKey)
	if err != nil {
		t.Fatal(err)
	}
	up.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: roots,
		ClientAuth: tls.RequireAndVerifyClientCert}
	up.StartTLS()
	t.Cleanup(up.Close)

	victim = exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	pidFile := filepath.Join(dir, "pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(victim.Process.Pid)), 0o600); err != nil {
		t.Fatal(err)
	}

	logPath = filepath.Join(dir, "writes.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	p := &proxy{killAt: killAt, before: before, pidFile: pidFile, log: log,
		killed: make(chan struct{}), perturb: perturb}
	target, _ := url.Parse(up.URL)
	srv, err := p.server(dir, target, filepath.Join(dir, "controller.crt"),
		filepath.Join(dir, "controller.key"))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { srv.Close() })
	client = func() *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots}}}
	}
	return u, victim, client, "https://" + ln.Addr().String(), logPath
}

// killedWithin waits for the victim to end by SIGKILL.
func killedWithin(t *testing.T, victim *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- victim.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("the victim ended with %v, not SIGKILL", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the victim was not killed")
	}
}

func send(c *http.Client, method, url string) (int, error) {
	req, _ := http.NewRequest(method, url, strings.NewReader("{}"))
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	// Read whole, so that the connection is kept for the next request.
	_, err = io.Copy(io.Discard, res.Body)
	return res.StatusCode, err
}

func TestCrashProxyKillsAfterTheKthWriteAndDropsTheKilledOnesNext(t *testing.T) {
	u, victim, client, base, logPath := crashSetup(t, 2, false, nil)
	first := client()
	for _, step := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/pods"}, // a read: not counted
		{http.MethodPost, "/apis/apps/v1/namespaces/ns/deployments"},
		{http.MethodPut, "/apis/apps/v1/namespaces/ns/deployments/d"},
	} {
		if code, err := send(first, step.method, base+step.path); err != nil || code != 200 {
			t.Fatalf("%s %s: %d %v", step.method, step.path, code, err)
		}
	}
	killedWithin(t, victim)
	// The killed process's connection (kept alive): its next write is not sent on.
	if _, err := send(first, http.MethodPatch, base+"/apis/x/v1/namespaces/ns/things/a"); err == nil {
		text, _ := os.ReadFile(logPath)
		t.Fatalf("a write on the killed process's connection was answered; log:\n%s", text)
	}
	// A new process's connection: forwarded.
	if code, err := send(client(), http.MethodDelete, base+"/apis/x/v1/namespaces/ns/things/b"); err != nil || code != 200 {
		t.Fatalf("the new process's write: %d %v", code, err)
	}
	want := []string{
		"GET /api/v1/pods " + controllerUser,
		"POST /apis/apps/v1/namespaces/ns/deployments " + controllerUser,
		"PUT /apis/apps/v1/namespaces/ns/deployments/d " + controllerUser,
		"DELETE /apis/x/v1/namespaces/ns/things/b " + controllerUser,
	}
	if got := u.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("upstream saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantLog := "1 POST /apis/apps/v1/namespaces/ns/deployments 200\n" +
		"2 PUT /apis/apps/v1/namespaces/ns/deployments/d 200\n" +
		"kill 2 after " + strconv.Itoa(victim.Process.Pid) + "\n" +
		"3 PATCH /apis/x/v1/namespaces/ns/things/a -\n" +
		"4 DELETE /apis/x/v1/namespaces/ns/things/b 200\n"
	// The proxy logs a write once its answer is sent on: the last line may follow the
	// answer by a moment.
	text := logWithin(logPath, len(wantLog), 2*time.Second)
	if string(text) != wantLog {
		t.Fatalf("log:\n%s\nwant:\n%s", text, wantLog)
	}
}

func TestCrashProxyKillsBeforeTheKthWriteIsSent(t *testing.T) {
	u, victim, client, base, logPath := crashSetup(t, 1, true, nil)
	if _, err := send(client(), http.MethodPost, base+"/apis/apps/v1/namespaces/ns/deployments"); err == nil {
		t.Fatal("the write was answered")
	}
	killedWithin(t, victim)
	if got := u.requests(); len(got) != 0 {
		t.Fatalf("the write reached the API server: %v", got)
	}
	want := "kill 1 before " + strconv.Itoa(victim.Process.Pid) + "\n" +
		"1 POST /apis/apps/v1/namespaces/ns/deployments -\n"
	text := logWithin(logPath, len(want), 2*time.Second)
	if string(text) != want {
		t.Fatalf("log:\n%s\nwant:\n%s", text, want)
	}
}

// logWithin reads the proxy's log until it holds at least n bytes, or the limit passes.
func logWithin(path string, n int, limit time.Duration) []byte {
	deadline := time.Now().Add(limit)
	for {
		text, _ := os.ReadFile(path)
		if len(text) >= n || time.Now().After(deadline) {
			return text
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCrashProxyPerturbsTheNamedWatchesOnly(t *testing.T) {
	p, err := newPerturb("things", 2, 0, 1, 0, "continue", func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	_, _, client, base, _ := crashSetup(t, 0, false, p)
	get := func(path string) string {
		res, err := client().Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	all := line("MODIFIED", "a", 1) + line("MODIFIED", "a", 2) + line("MODIFIED", "a", 3)
	if got := get("/apis/x/v1/namespaces/ns/others?watch=true"); got != all {
		t.Fatalf("another resource's watch: %q", got)
	}
	want := line("MODIFIED", "a", 1) + line("MODIFIED", "a", 3)
	if got := get("/apis/x/v1/namespaces/ns/things?watch=true"); got != want {
		t.Fatalf("the perturbed watch: %q, want %q", got, want)
	}
}
