// Command lb-standin stands in for Meridio-2's load balancer and router containers on the
// real node, where their images cannot be pulled (no registry is reached). It does what the
// controller and the Pod's readiness depend on, and nothing of load balancing:
//
//   - it serves GET /readyz on --ready-port (200 once started);
//   - as the router (--set-gates), it sets each of its Pod's readiness gates to True, as
//     Meridio-2's router does once it has connectivity: a strategic merge patch of the Pod's
//     status conditions, with the Pod's ServiceAccount token (the Pod's name is its hostname,
//     its namespace the token's);
//   - with --exit N it exits N at once (a crashing LB, for the rollout-stall story).
//
// Standard library only, built static: the image holds this binary and nothing else.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	readyPort := flag.Int("ready-port", 8088, "port of GET /readyz")
	setGates := flag.Bool("set-gates", false, "set the Pod's readiness gates to True")
	exit := flag.Int("exit", -1, "exit with this status at once (a crashing LB)")
	flag.Parse()
	if *exit >= 0 {
		log.Printf("told to exit %d", *exit)
		os.Exit(*exit)
	}
	log.Printf("lb-standin for Gateway %q", os.Getenv("MERIDIO_GATEWAY_NAME"))
	if *setGates {
		go func() {
			// Retried: the Pod's network or the API server may not answer at once.
			for {
				err := setReadinessGates()
				if err == nil {
					log.Printf("readiness gates set")
					return
				}
				log.Printf("readiness gates: %v (retrying)", err)
				time.Sleep(2 * time.Second)
			}
		}()
	}
	http.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	log.Fatal(http.ListenAndServe(fmt.Sprintf(":%d", *readyPort), nil))
}

// setReadinessGates reads the Pod and patches a True condition for each readiness gate it
// declares (none: nothing to do).
func setReadinessGates() error {
	c, base, err := inCluster()
	if err != nil {
		return err
	}
	name, err := os.Hostname()
	if err != nil {
		return err
	}
	ns, err := os.ReadFile(saDir + "/namespace")
	if err != nil {
		return err
	}
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s", base, strings.TrimSpace(string(ns)), name)
	var pod struct {
		Spec struct {
			ReadinessGates []struct {
				ConditionType string `json:"conditionType"`
			} `json:"readinessGates"`
		} `json:"spec"`
	}
	if err := c.do("GET", url, "", nil, &pod); err != nil {
		return err
	}
	type condition struct {
		Type               string `json:"type"`
		Status             string `json:"status"`
		LastTransitionTime string `json:"lastTransitionTime"`
	}
	var conds []condition
	now := time.Now().UTC().Format(time.RFC3339)
	for _, g := range pod.Spec.ReadinessGates {
		conds = append(conds, condition{g.ConditionType, "True", now})
	}
	if len(conds) == 0 {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": conds}})
	if err != nil {
		return err
	}
	return c.do("PATCH", url+"/status", "application/strategic-merge-patch+json", patch, nil)
}

type client struct {
	http  *http.Client
	token string
}

// inCluster is the client of a Pod: the API server at the kubernetes Service's address, its
// CA and the token from the ServiceAccount volume.
func inCluster() (*client, string, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, "", fmt.Errorf("KUBERNETES_SERVICE_HOST or _PORT not set")
	}
	ca, err := os.ReadFile(saDir + "/ca.crt")
	if err != nil {
		return nil, "", err
	}
	token, err := os.ReadFile(saDir + "/token")
	if err != nil {
		return nil, "", err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, "", fmt.Errorf("no certificate in %s/ca.crt", saDir)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	return &client{&http.Client{Transport: tr, Timeout: 10 * time.Second}, strings.TrimSpace(string(token))},
		"https://" + net.JoinHostPort(host, port), nil
}

func (c *client) do(method, url, contentType string, body []byte, out any) error {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return fmt.Errorf("%s %s: %s: %s", method, url, resp.Status, strings.TrimSpace(b.String()))
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}
