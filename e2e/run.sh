#!/usr/bin/env bash
# The end-to-end suite on a real control plane: builds etcd and kube-apiserver from their
# Go modules (cached: a second run does not rebuild), starts them, installs the CRDs and
# runs the tests against them, then stops everything. Needs Go 1.26 or later and the Go
# module proxy (or a filled module cache). Exit status: the tests', 125 when the control
# plane could not be built or started.
set -euo pipefail
cd "$(dirname "$0")"

./controlplane.sh build
./controlplane.sh run -- sh -c 'cd controlplane && go test -count=1 -v ./...'
