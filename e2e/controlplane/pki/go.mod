module github.com/gateway-reconcile/e2e/controlplane/pki

go 1.26.0
