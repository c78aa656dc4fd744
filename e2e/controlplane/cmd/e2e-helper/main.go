// Command e2e-helper does the small jobs of the end-to-end control plane script that would
// otherwise need openssl, curl or kubectl on the machine:
//
//	e2e-helper ports N                    print N free loopback TCP ports, one a line
//	e2e-helper pki DIR SERVER_URL USER    write the certificates, keys and kubeconfig
//	e2e-helper probe URL [DIR]            exit 0 when GET URL answers 200 (DIR: use its
//	                                      ca.crt and admin client certificate)
//	e2e-helper crds KUBECONFIG FILE...    create or update the CRDs in the YAML files and
//	                                      wait until each is Established
//	e2e-helper client DIR SERVER_URL NAME USER [GROUP]
//	                                      one more client certificate and kubeconfig
//	                                      (DIR/NAME.kubeconfig), signed by DIR's CA
//	e2e-helper fake-nodes KUBECONFIG PREFIX N TIMEOUT_SECONDS
//	                                      create N Nodes for kwok, wait until schedulable
//	e2e-helper wait-serviceaccount KUBECONFIG NAMESPACE NAME TIMEOUT_SECONDS
//	                                      wait until the ServiceAccount exists
//	e2e-helper schedulable-node KUBECONFIG NAME TIMEOUT_SECONDS
//	                                      wait until a kubelet's Node is schedulable
//	e2e-helper forward LISTEN TARGET      copy TCP connections on LISTEN to TARGET
//	                                      (the real node's way to the API server)
//	e2e-helper crash-proxy [-kill-at K -mode after|before -pid-file F] -log F DIR SERVER_URL
//	                                      forward a controller's requests as its user,
//	                                      log its writes, SIGKILL it at the K-th;
//	                                      [-watch-resources R,... -drop-every K |
//	                                      -drop-fraction F -seed S | -coalesce D
//	                                      -drop-then continue|gone -event-log F]:
//	                                      drop or coalesce watch events
//	e2e-helper hold-proxy LISTEN TARGET   forward like forward; SIGUSR1 holds every byte,
//	                                      SIGUSR2 lets them pass again
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "ports":
		err = ports(args)
	case "pki":
		err = writePKI(args)
	case "probe":
		err = probe(args)
	case "crds":
		err = crds(args)
	case "client":
		err = client(args)
	case "fake-nodes":
		err = fakeNodes(args)
	case "wait-serviceaccount":
		err = waitServiceAccount(args)
	case "schedulable-node":
		err = schedulableNode(args)
	case "forward":
		err = forward(args)
	case "crash-proxy":
		err = crashProxy(args)
	case "hold-proxy":
		err = holdProxy(args)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e-helper %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: e2e-helper ports N | pki DIR SERVER_URL USER | probe URL [DIR] | crds KUBECONFIG FILE... |\n"+
		"  client DIR SERVER_URL NAME USER [GROUP] | fake-nodes KUBECONFIG PREFIX N TIMEOUT_SECONDS |\n"+
		"  wait-serviceaccount KUBECONFIG NAMESPACE NAME TIMEOUT_SECONDS |\n"+
		"  schedulable-node KUBECONFIG NAME TIMEOUT_SECONDS | forward LISTEN TARGET |\n"+
		"  crash-proxy [-kill-at K -mode after|before -pid-file F] [-watch-resources R,... -drop-every K |\n"+
		"    -drop-fraction F -seed S | -coalesce D -drop-then continue|gone -event-log F] -log F DIR SERVER_URL |\n"+
		"  hold-proxy LISTEN TARGET")
	os.Exit(2)
}
