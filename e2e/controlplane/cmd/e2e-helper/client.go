package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gateway-reconcile/e2e/controlplane/pki"
)

// client writes one more client identity, signed by the CA that `e2e-helper pki` wrote into DIR:
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
	dir, server, name, user, groups := args[0], args[1], args[2], args[3], args[4:]
	ca, err := pki.LoadCA(filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key"))
	if err != nil {
		return err
	}
	cert, key, err := ca.Client(user, groups...)
	if err != nil {
		return err
	}
	for file, data := range map[string][]byte{
		name + ".crt":        cert,
		name + ".key":        key,
		name + ".kubeconfig": ca.Kubeconfig(server, user, cert, key),
	} {
		if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
