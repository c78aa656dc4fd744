#!/usr/bin/env bash
# The end-to-end suite on a real control plane: builds etcd and kube-apiserver from their
# Go modules (cached: a second run does not rebuild), starts them, installs the CRDs and
# runs the tests against them, then stops everything and checks that nothing is left
# behind; then the same for the Helm chart's test (with helm, also built from its Go module
# once), on a control plane of its own. Needs Go 1.26 or later and the Go module proxy (or a
# filled module cache). Exit status: the tests', 125 when the control plane or helm could
# not be built or started, 1 when it left something behind.
set -euo pipefail
cd "$(dirname "$0")"

./controlplane.sh build

# helm, for the chart test: built from its Go module once, then reused (the stamp holds the
# version: a `go install` build reports only "v3.22").
helm_version="v3.22.0"
export HELM="$PWD/controlplane/bin/helm"
if [[ ! -x "$HELM" || "$(cat "$HELM.version" 2>/dev/null)" != "$helm_version" ]]; then
  echo "run.sh: building helm $helm_version" >&2
  GOBIN="$PWD/controlplane/bin" go install "helm.sh/helm/v3/cmd/helm@$helm_version" ||
    { echo "run.sh: helm could not be built" >&2; exit 125; }
  echo "$helm_version" >"$HELM.version"
fi

marker="$(mktemp)"
chart_marker="$(mktemp)"
trap 'rm -f "$marker" "$chart_marker"' EXIT
rc=0
# The Go smoke tests, then the controller's stories (gateway-reconcile-kube/tests/e2e.rs,
# ignored by a plain `cargo test`), built before the control plane starts. The operability
# stories run the binary in processes of their own, mostly waiting (two of them watch for
# two minutes): they run side by side.
(cd .. && cargo test -p gateway-reconcile-kube --test e2e --test replay --test operability --test chart --no-run)
./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" &&
    (cd controlplane && go test -count=1 -v ./...) &&
    cd .. && cargo test -p gateway-reconcile-kube --test e2e -- --ignored --test-threads="${E2E_THREADS:-2}" &&
    cargo test -p gateway-reconcile-kube --test replay -- --ignored --nocapture &&
    cargo test -p gateway-reconcile-kube --test operability -- --ignored --test-threads=6' \
  "$marker" || rc=$?

# The Helm chart (gateway-reconcile-kube/tests/chart.rs) on a control plane of its own: its
# bindings must be the only ones naming the controller's user, and its admission policy
# must not reach the stories above.
chart_rc=0
./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" &&
    cd .. && cargo test -p gateway-reconcile-kube --test chart -- --ignored' \
  "$chart_marker" || chart_rc=$?
[[ "$rc" != 0 ]] || rc="$chart_rc"

# Each control plane is gone: its directory removed, its API port closed.
for m in "$marker" "$chart_marker"; do
  dir="" server=""
  read -r dir server <"$m" || true
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
done
exit "$rc"
