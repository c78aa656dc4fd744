#!/usr/bin/env bash
# The end-to-end suite on a real control plane: builds etcd and kube-apiserver from their
# Go modules (cached: a second run does not rebuild), starts them, installs the CRDs and
# runs the tests against them, then stops everything and checks that nothing is left
# behind. Needs Go 1.26 or later and the Go module proxy (or a filled module cache).
# Exit status: the tests', 125 when the control plane could not be built or started, 1
# when it left something behind.
set -euo pipefail
cd "$(dirname "$0")"

./controlplane.sh build

marker="$(mktemp)"
trap 'rm -f "$marker"' EXIT
rc=0
# The Go smoke tests, then the controller's stories (gateway-reconcile-kube/tests/e2e.rs,
# ignored by a plain `cargo test`), built before the control plane starts. The operability
# stories run the binary in processes of their own, mostly waiting (two of them watch for
# two minutes): they run side by side.
(cd .. && cargo test -p gateway-reconcile-kube --test e2e --test replay --test operability --no-run)
./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" &&
    (cd controlplane && go test -count=1 -v ./...) &&
    cd .. && cargo test -p gateway-reconcile-kube --test e2e -- --ignored --test-threads="${E2E_THREADS:-2}" &&
    cargo test -p gateway-reconcile-kube --test replay -- --ignored --nocapture &&
    cargo test -p gateway-reconcile-kube --test operability -- --ignored --test-threads=6' \
  "$marker" || rc=$?

# The control plane is gone: its directory removed, its API port closed.
read -r dir server <"$marker" || true
if [[ -n "${dir:-}" ]]; then
  if [[ -e "$dir" ]]; then
    echo "run.sh: the control plane left $dir behind" >&2
    exit 1
  fi
  port="${server##*:}"
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "run.sh: something still listens on the API server's port $port" >&2
    exit 1
  fi
fi
exit "$rc"
