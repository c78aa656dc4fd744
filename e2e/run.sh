#!/usr/bin/env bash
# The end-to-end suite on a real control plane: builds etcd and kube-apiserver from their
# Go modules (cached: a second run does not rebuild), starts them, installs the CRDs and
# runs the tests against them, then stops everything and checks that nothing is left
# behind; then the same for the Helm chart's test (with helm, also built from its Go module
# once), on a full control plane of its own (below); then the fault stories, on one more (they restart
# its kube-apiserver and pause its etcd), the controller killed at every write point and restarted on a stale cache; then
# the full control plane's Go smoke test
# (kube-controller-manager, kube-scheduler and kwok's fake Nodes besides) and the
# controller's rollout stories on it; last, the Gateway API conformance suite against the
# controller, on a full control plane. Needs Go 1.26 or later and the Go module proxy (or a
# filled module cache). Exit status: the tests', 125 when the control plane or helm could
# not be built or started, 1 when it left something behind.
set -euo pipefail
cd "$(dirname "$0")"

# Every binary, the full control plane's too (each set skipped when up to date). Only the
# chart's and the last control plane below are full ones, whatever the caller's environment
# says.
unset E2E_FULL
E2E_FULL=1 ./controlplane.sh build

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
faults_marker="$(mktemp)"
full_marker="$(mktemp)"
conformance_marker="$(mktemp)"
node_marker="$(mktemp)"
trap 'rm -f "$marker" "$chart_marker" "$faults_marker" "$full_marker" "$conformance_marker" "$node_marker"' EXIT
rc=0
# The Go smoke tests, then the controller's stories (gateway-reconcile-kube/tests/writes.rs,
# recovery.rs, caches.rs, revision4.rs and revision5.rs, one file after the other, each run even when an
# earlier one failed; ignored by a plain `cargo test`), built before the control plane
# starts. The operability stories run the binary in processes of their own, mostly waiting
# (two of them watch for two minutes): they run side by side. One story (in recovery.rs)
# updates the GatewayConfiguration CRD (a variant), which ends every watch of the kind: it
# runs alone, after the others.
# Last, the unobserved states (tests/unobserved.rs: the controller behind `e2e-helper
# crash-proxy` dropping or coalescing its watch events; about 35 s; UNOBSERVED=more runs
# more).
(cd .. && cargo test -p gateway-reconcile-kube --test writes --test recovery --test caches --test revision4 --test revision5 --test replay --test operability --test chart --test faults --test crash_points --test stale_reads --test unobserved --test rollouts --test real_node --no-run)
./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" &&
    (cd controlplane && go test -count=1 -v ./...) && (cd controlplane/pki && go test -count=1 ./...) &&
    cd .. && cargo test -p gateway-reconcile-kube --no-fail-fast --test writes --test recovery --test caches \
      --test revision4 --test revision5 -- --ignored --test-threads="${E2E_THREADS:-2}" \
      --skip an_unreadable_configuration_blinds_nothing_but_its_gateway &&
    cargo test -p gateway-reconcile-kube --test recovery -- --ignored --exact an_unreadable_configuration_blinds_nothing_but_its_gateway &&
    cargo test -p gateway-reconcile-kube --test replay -- --ignored --nocapture &&
    cargo test -p gateway-reconcile-kube --test operability -- --ignored --test-threads=6 &&
    cargo test -p gateway-reconcile-kube --test unobserved -- --ignored --nocapture' \
  "$marker" || rc=$?

# The Helm chart (gateway-reconcile-kube/tests/chart.rs) on a control plane of its own: its
# bindings must be the only ones naming the controller's user, and its admission policy
# must not reach the stories above. A full one (E2E_FULL=1): `helm install` with the
# defaults gets its Pods scheduled and Ready (kwok), and the controller, run as the chart's
# ServiceAccount, gets its LB Pods through the real Deployment controller.
chart_rc=0
E2E_FULL=1 ./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" &&
    cd .. && cargo test -p gateway-reconcile-kube --test chart -- --ignored' \
  "$chart_marker" || chart_rc=$?
[[ "$rc" != 0 ]] || rc="$chart_rc"

# The fault stories (gateway-reconcile-kube/tests/faults.rs), one at a time: they kill and
# start its kube-apiserver and pause its etcd. A request waiting on a paused etcd ends after
# 8 s; --min-request-timeout would end watches that ask for no timeout of their own within
# 4 to 8 s (the story shows that the controller's do ask: see docs/reliability.md,
# "Control-plane faults"). Then, run even when a fault story failed, the controller killed
# at every write point of four scenarios (tests/crash_points.rs, behind `e2e-helper
# crash-proxy`; about 2.5 minutes; CRASH_POINTS=N tries fewer), its table printed; then the
# controller restarted against a second kube-apiserver whose etcd link is held, its watch
# cache stale (tests/stale_reads.rs; about 35 s).
faults_rc=0
E2E_APISERVER_ARGS="--request-timeout=8s --min-request-timeout=4" E2E_AUDIT_WATCHES=1 \
  ./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" && cd .. && status=0 &&
    { cargo test -p gateway-reconcile-kube --test faults -- --ignored --test-threads=1 || status=$?; } &&
    { cargo test -p gateway-reconcile-kube --test crash_points -- --ignored --test-threads=1 --nocapture ||
      status=$?; } &&
    { cargo test -p gateway-reconcile-kube --test stale_reads -- --ignored --test-threads=1 --nocapture ||
      status=$?; } && exit "$status"' \
  "$faults_marker" || faults_rc=$?
[[ "$rc" != 0 ]] || rc="$faults_rc"

# The full control plane (E2E_FULL=1: kube-controller-manager, kube-scheduler, kwok and its
# fake Nodes): the Go smoke test that needs it (the others run on the first control plane;
# this one skips there), then the controller's rollout stories
# (gateway-reconcile-kube/tests/rollouts.rs, two at a time; they skip without E2E_FULL=1).
# The real Deployment controller's rollouts (e2e/README.md, "The full control plane").
full_rc=0
E2E_FULL=1 ./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" &&
    (cd controlplane && go test -count=1 -v -run "^TestFullControlPlane$" ./smoke) &&
    cd .. && cargo test -p gateway-reconcile-kube --test rollouts -- --ignored --test-threads=2' \
  "$full_marker" || full_rc=$?
[[ "$rc" != 0 ]] || rc="$full_rc"

# The real node (E2E_NODE=real: containerd and a kubelet in place of kwok): the chart
# installed as the kube crate's README says, its Pods and the LB Pods run as containers
# from images built here (the controller's from the shipped Dockerfile, by e2e/image.sh).
# The node's leftovers (its cgroups, network namespace, veth, mounts) are checked below.
node_rc=0
if ./image.sh build; then
  E2E_NODE=real ./controlplane.sh run -- sh -c 'echo "$E2E_DIR $E2E_SERVER" >"$0" &&
      cd .. && cargo test -p gateway-reconcile-kube --test real_node -- --ignored --nocapture' \
    "$node_marker" || node_rc=$?
else
  node_rc=125
fi
[[ "$rc" != 0 ]] || rc="$node_rc"

# The Gateway API conformance suite, unmodified, against the controller (the binary the
# test build above made), on a full control plane of its own (e2e/conformance/run.sh,
# docs/conformance.md). Its report and logs go to e2e/conformance/results/.
conformance_rc=0
CONFORMANCE_MARKERS="$conformance_marker" CONFORMANCE_BIN="${CARGO_TARGET_DIR:-$PWD/../target}/debug/gateway-reconcile-controller" \
  ./conformance/run.sh ours || conformance_rc=$?
[[ "$rc" != 0 ]] || rc="$conformance_rc"

# Each control plane is gone: its directory removed, its API port closed, none of its
# processes left (each one's command line names the directory). A marker holds one line
# per control plane ("E2E_DIR E2E_SERVER").
for m in "$marker" "$chart_marker" "$faults_marker" "$full_marker" "$conformance_marker" "$node_marker"; do
  while read -r dir server; do
    [[ -n "${dir:-}" ]] || continue
    if [[ -e "$dir" ]]; then
      echo "run.sh: the control plane left $dir behind" >&2
      exit 1
    fi
    port="${server##*:}"
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "run.sh: something still listens on the API server's port $port" >&2
      exit 1
    fi
    leftovers="$(./controlplane.sh node-leftovers "$dir")"
    if [[ -n "$leftovers" ]]; then
      echo "run.sh: the real node of $dir left behind: $leftovers" >&2
      exit 1
    fi
    for cmdline in /proc/[0-9]*/cmdline; do
      if { tr '\0' ' ' <"$cmdline"; } 2>/dev/null | grep -qF -- "$dir/"; then
        pid="${cmdline#/proc/}"
        echo "run.sh: process ${pid%/cmdline} of the control plane in $dir still runs" >&2
        exit 1
      fi
    done
  done <"$m"
done
exit "$rc"
