package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wideReplicasStory: a value the real CRD accepts and a Deployment cannot hold (the crate
// read it as int32 once and could not read the object; it now reads int64 and refuses the
// count as InvalidParameters on a Gateway that uses it). One healthy Gateway; then someone creates another GatewayConfiguration, used by no Gateway,
// with `replicas: 2147483648` (the CRD's `type: integer` has no format); then the healthy
// Gateway's own GatewayConfiguration is edited. Prints whether the edit reaches the
// Deployment and the status within 30 s, and the controller's warnings.
func wideReplicasStory(o options) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := startOneGateway(ctx, o)
	if err != nil {
		return err
	}
	defer s.c.stop()
	dyn, c, obs, g := s.dyn, s.c, s.obs, s.g
	wide := configuration(g.namespace, "wide")
	wide.Object["spec"].(map[string]any)["horizontalScaling"] = map[string]any{"replicas": int64(2147483648), "enforceReplicas": false}
	if _, err := dyn.Resource(gvrConfig).Namespace(g.namespace).Create(ctx, wide, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("the API server refused replicas 2147483648: %w", err)
	}
	fmt.Printf("%s: GatewayConfiguration %s/wide with replicas 2147483648 created (the API server accepts it)\n", o.controller, g.namespace)
	time.Sleep(2 * time.Second)
	t := time.Now()
	if err := editShared(ctx, dyn, g.namespace, `{"replicas":3,"enforceReplicas":true}`); err != nil {
		return err
	}
	d, err := obs.waitAll("the edit of the Gateway's own GatewayConfiguration on its Deployment", []gatewayRef{g},
		lbName, replicas(3), t, 30*time.Second, c.alive)
	if err != nil {
		fmt.Printf("%s: %v\n", o.controller, err)
	} else {
		fmt.Printf("%s: the edit reached the Deployment after %.2f s\n", o.controller, d.Seconds())
	}
	// A restart: the controller lists every GatewayConfiguration, "wide" among them.
	c.stop()
	if err := c.start(); err != nil {
		return err
	}
	time.Sleep(5 * time.Second)
	t = time.Now()
	if err := editShared(ctx, dyn, g.namespace, `{"replicas":4}`); err != nil {
		return err
	}
	d, err = obs.waitAll("after a restart, the next edit on the Deployment", []gatewayRef{g},
		lbName, replicas(4), t, 30*time.Second, c.alive)
	if err != nil {
		fmt.Printf("%s: %v\n", o.controller, err)
	} else {
		fmt.Printf("%s: after a restart, the next edit reached the Deployment after %.2f s\n", o.controller, d.Seconds())
	}
	if u, ok := obs.get(obs.gateways, g); ok {
		fmt.Printf("%s: the Gateway's conditions:\n", o.controller)
		cs := conditions(u)
		var sorted []condition
		for _, k := range sortedKeys(cs) {
			sorted = append(sorted, cs[k])
		}
		fmt.Print(render(sorted))
	}
	c.stop()
	return showWarnings(o.controller, c.log)
}

// showWarnings prints the first warnings or errors of a controller's log.
func showWarnings(kind, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<24)
	shown := 0
	for s.Scan() && shown < 3 {
		line := s.Text()
		if strings.Contains(line, "WARN") || strings.Contains(line, "ERROR") || strings.Contains(line, "\"level\":\"WARN\"") {
			if len(line) > 600 {
				line = line[:600] + "..."
			}
			fmt.Printf("%s log: %s\n", kind, line)
			shown++
		}
	}
	return nil
}
