package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/gateway-reconcile/e2e/controlplane/pki"
)

// crashProxy (e2e-helper crash-proxy [flags] DIR SERVER_URL) sits on loopback between a
// controller and the API server: it terminates the controller's TLS with a serving
// certificate for 127.0.0.1 signed by DIR's CA (so the controller's kubeconfig, with only its
// server changed, still verifies it), and forwards every request to SERVER_URL with the
// controller's own client certificate (DIR/controller.crt by default), so the API server,
// its RBAC and its audit log see the controller's user.
//
// It counts the write requests (POST, PUT, PATCH, DELETE; gets, lists and watches pass
// uncounted) and, with -kill-at K, SIGKILLs the process whose id is in -pid-file at the
// K-th: right after its answer has been forwarded in full (-mode after), or instead of
// sending it (-mode before: the request never reaches the API server). It kills once; a
// write that arrives after the K-th on a connection opened before the kill (the killed
// process's, in flight) is dropped unsent, and the writes of a process started later pass.
//
// With -watch-resources and -drop-every, -drop-fraction (-seed) or -coalesce, it perturbs
// the watch events of those resources (see perturb) and logs each event it drops or
// replaces to -event-log: "event N RESOURCE TYPE NAMESPACE/NAME RV dropped|coalesced".
//
// It prints "listening ADDR" on its first line of output, then logs one line per write to
// -log: "N METHOD PATH CODE" (CODE "-" for a write not sent), and "kill N MODE PID" when it
// kills. Runs until TERM or INT.
func crashProxy(args []string) error {
	fs := flag.NewFlagSet("crash-proxy", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "where to listen (loopback)")
	killAt := fs.Int64("kill-at", 0, "the write at which to kill (0: never)")
	mode := fs.String("mode", "after", "kill after the write's answer, or before it is sent")
	pidFile := fs.String("pid-file", "", "file holding the process id to kill")
	logFile := fs.String("log", "", "the write log (required)")
	cert := fs.String("cert", "", "client certificate for the API server (default DIR/controller.crt)")
	key := fs.String("key", "", "its key (default DIR/controller.key)")
	resources := fs.String("watch-resources", "", "the watched resources perturbed (plurals, comma-separated)")
	dropEvery := fs.Int64("drop-every", 0, "drop every K-th event of those (0: none)")
	fraction := fs.Float64("drop-fraction", 0, "drop this fraction of their events, at random")
	seed := fs.Int64("seed", 1, "the random drops' seed")
	coalesce := fs.Duration("coalesce", 0, "hold their events this long, send each object's last")
	then := fs.String("drop-then", "continue", "after a drop, the stream goes on (continue) or ends with 410 (gone)")
	eventLog := fs.String("event-log", "", "the perturbation's log (required with one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 || *logFile == "" || (*mode != "after" && *mode != "before") ||
		(*killAt > 0 && *pidFile == "") {
		return errors.New("want [-kill-at K -mode after|before -pid-file F] -log F DIR SERVER_URL")
	}
	dir, server := fs.Arg(0), fs.Arg(1)
	if *cert == "" {
		*cert = filepath.Join(dir, "controller.crt")
	}
	if *key == "" {
		*key = filepath.Join(dir, "controller.key")
	}
	target, err := url.Parse(server)
	if err != nil {
		return err
	}

	log, err := os.OpenFile(*logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	p := &proxy{
		killAt:  *killAt,
		before:  *mode == "before",
		pidFile: *pidFile,
		log:     log,
		killed:  make(chan struct{}),
	}
	var events *os.File
	if *eventLog != "" {
		if events, err = os.OpenFile(*eventLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
			return err
		}
		defer events.Close()
	}
	var eventsMu sync.Mutex
	p.perturb, err = newPerturb(*resources, *dropEvery, *fraction, *seed, *coalesce, *then,
		func(format string, args ...any) {
			eventsMu.Lock()
			defer eventsMu.Unlock()
			fmt.Fprintf(events, format+"\n", args...)
		})
	if err != nil {
		return err
	}
	if p.perturb != nil && events == nil {
		return errors.New("-event-log is required with a perturbation")
	}
	srv, err := p.server(dir, target, *cert, *key)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; srv.Close() }()
	fmt.Printf("listening %s\n", ln.Addr())
	if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// server makes the proxy's TLS server (not started): its serving certificate for 127.0.0.1
// signed by DIR's CA, and the forwarding to target with the client certificate cert, key.
func (p *proxy) server(dir string, target *url.URL, cert, key string) (*http.Server, error) {
	ca, err := pki.LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, err
	}
	servingCert, servingKey, err := ca.Serving("e2e-crash-proxy", "127.0.0.1")
	if err != nil {
		return nil, err
	}
	serving, err := tls.X509KeyPair(servingCert, servingKey)
	if err != nil {
		return nil, err
	}
	client, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			// The controller's own credential is the proxy's: drop any it sent.
			r.Out.Header.Del("Authorization")
		},
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{client}},
			MaxIdleConnsPerHost: 64,
		},
		// Watches stream: each event reaches the controller as it comes.
		FlushInterval: -1,
	}
	return &http.Server{
		Handler: p,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{serving},
			// HTTP/1.1 only: a response written with its length and flushed is complete on
			// the controller's socket before the kill.
			NextProtos: []string{"http/1.1"},
		},
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, p.conns.Add(1))
		},
	}, nil
}

// connKey holds, in a request's context, the sequence number of its connection.
type connKey struct{}

type proxy struct {
	forward *httputil.ReverseProxy
	killAt  int64
	before  bool
	pidFile string
	// Nil: watches pass untouched.
	perturb *perturb

	writes atomic.Int64
	conns  atomic.Uint64
	// Closed once the kill is done; connsAtKill is then the last connection opened before.
	killed      chan struct{}
	killOnce    sync.Once
	connsAtKill uint64

	logMu sync.Mutex
	log   *os.File
}

func isWrite(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if resource, ok := p.perturb.watched(r); ok {
		s := p.perturb.stream(w, r, resource)
		p.forward.ServeHTTP(s, r)
		s.end()
		return
	}
	if !isWrite(r.Method) {
		p.forward.ServeHTTP(w, r)
		return
	}
	n := p.writes.Add(1)
	conn, _ := r.Context().Value(connKey{}).(uint64)
	if p.killAt > 0 && n > p.killAt {
		// Sent by the killed process while the kill was on its way: not sent on.
		<-p.killed
		if conn <= p.connsAtKill {
			p.logf("%d %s %s -", n, r.Method, r.URL.Path)
			panic(http.ErrAbortHandler)
		}
	}
	if n == p.killAt && p.before {
		p.kill(n)
		p.logf("%d %s %s -", n, r.Method, r.URL.Path)
		panic(http.ErrAbortHandler)
	}
	// The answer is held whole, then written with its length and flushed: once Flush
	// returns, the controller's socket has all of it.
	b := &buffered{header: http.Header{}}
	p.forward.ServeHTTP(b, r)
	for k, v := range b.header {
		if k != "Content-Length" && k != "Transfer-Encoding" {
			w.Header()[k] = v
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(b.body.Len()))
	w.WriteHeader(b.code)
	_, _ = w.Write(b.body.Bytes())
	_ = http.NewResponseController(w).Flush()
	p.logf("%d %s %s %d", n, r.Method, r.URL.Path, b.code)
	if n == p.killAt {
		p.kill(n)
	}
}

// kill SIGKILLs the process of the pid file, once; a failure is logged (the story then
// sees no kill and fails).
func (p *proxy) kill(n int64) {
	p.killOnce.Do(func() {
		defer close(p.killed)
		p.connsAtKill = p.conns.Load()
		mode := "after"
		if p.before {
			mode = "before"
		}
		text, err := os.ReadFile(p.pidFile)
		if err == nil {
			var pid int
			pid, err = strconv.Atoi(strings.TrimSpace(string(text)))
			if err == nil {
				err = syscall.Kill(pid, syscall.SIGKILL)
			}
			if err == nil {
				p.logf("kill %d %s %d", n, mode, pid)
				return
			}
		}
		p.logf("kill-failed %d %s %v", n, mode, err)
	})
}

func (p *proxy) logf(format string, args ...any) {
	p.logMu.Lock()
	defer p.logMu.Unlock()
	fmt.Fprintf(p.log, format+"\n", args...)
}

// buffered is a ResponseWriter that keeps the answer to write it on in one piece.
type buffered struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (b *buffered) Header() http.Header { return b.header }

func (b *buffered) WriteHeader(code int) {
	if b.code == 0 {
		b.code = code
	}
}

func (b *buffered) Write(data []byte) (int, error) {
	if b.code == 0 {
		b.code = http.StatusOK
	}
	return b.body.Write(data)
}

// Flush does nothing: the whole answer is written at once.
func (b *buffered) Flush() {}
