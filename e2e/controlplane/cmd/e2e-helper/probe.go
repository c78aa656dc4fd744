package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// probe does one GET of URL and succeeds on 200. With DIR it trusts DIR/ca.crt and presents
// the admin client certificate (DIR/admin.crt, DIR/admin.key). On failure it prints the
// status and the start of the body (readyz lists the checks that fail).
func probe(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("want URL [DIR]")
	}
	client := &http.Client{Timeout: 5 * time.Second}
	if len(args) == 2 {
		dir := args[1]
		caPEM, err := os.ReadFile(filepath.Join(dir, "ca.crt"))
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return fmt.Errorf("no certificate in %s", filepath.Join(dir, "ca.crt"))
		}
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "admin.crt"), filepath.Join(dir, "admin.key"))
		if err != nil {
			return err
		}
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs:      pool,
			Certificates: []tls.Certificate{cert},
			MinVersion:   tls.VersionTLS12,
		}}
	}
	resp, err := client.Get(args[0])
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", args[0], resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
