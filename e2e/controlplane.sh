#!/usr/bin/env bash
# A throwaway Kubernetes control plane for the end-to-end tests: etcd and kube-apiserver,
# built from their Go modules (e2e/controlplane/go.mod pins the versions), on loopback, in
# a temporary directory. No kubelet, scheduler or controller-manager, unless E2E_FULL=1
# (below).
#
#   e2e/controlplane.sh build             build the binaries (skipped when up to date)
#   e2e/controlplane.sh run -- CMD...     build, start, install the CRDs, run CMD, stop
#   e2e/controlplane.sh kill-apiserver    (from CMD) SIGKILL the running kube-apiserver
#   e2e/controlplane.sh start-apiserver   (from CMD) start kube-apiserver again, with the same
#                                         flags on the same etcd, and wait until it is ready
#   e2e/controlplane.sh restart-apiserver (from CMD) the two above
#
# CMD runs with these variables exported:
#   KUBECONFIG       kubeconfig of the admin user (client certificate, group system:masters)
#   AUDIT_LOG        the API server's audit log: one JSON line per write request
#                    (create, update, patch, delete, deletecollection, subresources included)
#   E2E_ADMIN_USER   the admin user name, as it appears in the audit log (user.username)
#   E2E_SERVER       the API server URL (https://127.0.0.1:PORT)
#   E2E_DIR          the temporary directory (certificates, logs; removed afterwards)
#   E2E_CA_CERT, E2E_CA_KEY  the CA that signed the serving certificate (for test webhooks)
#   E2E_CONTROLLER_KUBECONFIG  kubeconfig of the user gateway-reconcile-controller (no
#                    group; RBAC gives it what it has)
#   E2E_ETCD_PID     etcd's process id (a test may pause it: SIGSTOP, SIGCONT)
#   E2E_APISERVER_PID  the first kube-apiserver's process id; $E2E_DIR/kube-apiserver.pid
#                    holds the running one's (start-apiserver writes it)
#
# Exit status: CMD's, or 125 when the control plane could not be built or started (the
# message and the last lines of the failing component's log go to stderr), 2 for a usage
# error. Everything started is stopped and the directory removed on every exit path.
#
# E2E_FULL=1 (for `build` and `run`): the full control plane. Besides etcd and
# kube-apiserver, it builds and starts kube-controller-manager and kube-scheduler (same
# module and version as kube-apiserver) and kwok (e2e/kwok/go.mod pins it), which plays the
# kubelet of a few fake Nodes it is given: Pods scheduled to them start and become Ready
# (kwok's Stages in e2e/kwok/stages/; a Pod labelled e2e.gateway-reconcile/unready=true
# runs but never becomes Ready). CMD then also gets:
#   E2E_FULL=1
#   E2E_NODES        the fake Nodes' names, split on spaces (Ready and schedulable)
#   E2E_CONTROLLER_MANAGER_PID, E2E_SCHEDULER_PID, E2E_KWOK_PID  their process ids
# Their logs are kube-controller-manager.log, kube-scheduler.log and kwok.log in E2E_DIR.
# Without E2E_FULL=1 (the default), nothing of this is built or started.
#
# Environment knobs: E2E_KEEP_DIR=1 keeps the directory (its path is printed);
# E2E_START_TIMEOUT (seconds, default 180) bounds the wait for each component's readiness;
# E2E_APISERVER_ARGS adds kube-apiserver flags (split on spaces), E2E_KCM_ARGS
# kube-controller-manager flags (full control plane only; e.g. its client's
# --kube-api-qps/--kube-api-burst, 20 and 30 by default); MERIDIO2_SRC is Meridio-2's
# source, whose GatewayConfiguration and L34Route CRDs are installed (crds/ when it is
# absent); E2E_CRDS replaces those CRD files (paths split on spaces); E2E_AUDIT_READ_USERS logs every read of these
# users too (names split on spaces or commas).
# E2E_AUDIT_WATCHES=1 also logs the watches of the controller under test (once, when each
# ends). The *-apiserver commands find the control plane through E2E_DIR; the teardown of
# `run` stops a kube-apiserver they started too (and resumes a paused etcd to stop it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
module="$here/controlplane"
bin="$module/bin"
crd_dir="$here/crds"
kwok_module="$here/kwok"

# Pinned versions. The kube-apiserver and etcd versions are the ones in controlplane/go.mod
# (k8s.io/kubernetes and go.etcd.io/etcd/server/v3); the ldflags below stamp the same
# Kubernetes version into the binary, as the release build does.
kube_version="v1.36.3"
# Gateway API release the Rust gateway-api crate 0.22 is generated from.
gateway_api_version="v1.5.1"
admin_user="e2e-admin"
# The kwok release e2e/kwok/go.mod pins (for messages only: the module file decides).
kwok_version="v0.8.0"
# The full control plane's fake Nodes: kwok-node-0 .. kwok-node-(N-1).
fake_nodes=3
# The real node (E2E_NODE=real, which implies E2E_FULL=1): e2e/node.sh.
# shellcheck source=node.sh
source "$here/node.sh"
[[ "${E2E_NODE:-}" != real ]] || export E2E_FULL=1

die() {
  echo "controlplane.sh: $*" >&2
  exit 125
}

go_env() {
  command -v go >/dev/null 2>&1 || die "go is not installed (Go 1.26 or later is needed)"
}

# The build is skipped when the binaries exist and were built from the same inputs: the
# module files, the helper sources, the Go version and this script's build flags.
build_stamp() {
  {
    go version
    ldflags
    cat "$module/go.mod" "$module/go.sum"
    find "$module/cmd" "$module/pki" \( -name '*.go' -o -name go.mod \) -type f | LC_ALL=C sort | xargs cat
  } | sha256sum | cut -d' ' -f1
}

ldflags() {
  local v=k8s.io/component-base/version
  echo "-s -w -X $v.gitVersion=$kube_version -X $v.gitMajor=${kube_version:1:1}" \
    "-X $v.gitMinor=$(echo "$kube_version" | cut -d. -f2) -X $v.gitTreeState=clean"
}

build() {
  go_env
  build_bare
  [[ "${E2E_FULL:-}" != 1 ]] || build_full
  [[ "${E2E_NODE:-}" != real ]] || node_build
}

build_bare() {
  local stamp
  stamp="$(cd "$module" && build_stamp)"
  if [[ -x "$bin/kube-apiserver" && -x "$bin/etcd" && -x "$bin/e2e-helper" &&
        "$(cat "$bin/.stamp" 2>/dev/null)" == "$stamp" ]]; then
    return 0
  fi
  echo "controlplane.sh: building kube-apiserver $kube_version, etcd and e2e-helper (the first build takes a while)" >&2
  mkdir -p "$bin"
  rm -f "$bin/.stamp"
  (cd "$module" && go build -buildvcs=false -ldflags "$(ldflags)" -o "$bin/" \
      k8s.io/kubernetes/cmd/kube-apiserver ./cmd/etcd ./cmd/e2e-helper) ||
    die "build failed"
  echo "$stamp" >"$bin/.stamp"
}

# The full control plane's binaries: kube-controller-manager and kube-scheduler from the
# control plane's module (the same k8s.io/kubernetes as kube-apiserver), kwok from a module
# of its own (kwok/go.mod: its k8s.io libraries are not the control plane's). Skipped when
# they exist and were built from the same module files, Go version and flags.
full_stamp() {
  {
    go version
    ldflags
    cat "$module/go.mod" "$module/go.sum" "$kwok_module/go.mod" "$kwok_module/go.sum"
  } | sha256sum | cut -d' ' -f1
}

build_full() {
  local stamp
  stamp="$(full_stamp)"
  if [[ -x "$bin/kube-controller-manager" && -x "$bin/kube-scheduler" && -x "$bin/kwok" &&
        "$(cat "$bin/.stamp-full" 2>/dev/null)" == "$stamp" ]]; then
    return 0
  fi
  echo "controlplane.sh: building kube-controller-manager and kube-scheduler $kube_version and kwok $kwok_version (the first build takes a while)" >&2
  mkdir -p "$bin"
  rm -f "$bin/.stamp-full"
  (cd "$module" && go build -buildvcs=false -ldflags "$(ldflags)" -o "$bin/" \
      k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler) ||
    die "build failed (kube-controller-manager, kube-scheduler)"
  (cd "$kwok_module" && go build -buildvcs=false -ldflags "-s -w" -o "$bin/" sigs.k8s.io/kwok/cmd/kwok) ||
    die "build failed (kwok)"
  echo "$stamp" >"$bin/.stamp-full"
}

# The Gateway API CRDs, from the sigs.k8s.io/gateway-api module itself (downloaded into, and
# afterwards read from, the Go module cache; checked against the Go checksum database).
gateway_api_crds() {
  local dir
  dir="$(cd "$tmp" && GOFLAGS= GO111MODULE=on \
           go mod download -json "sigs.k8s.io/gateway-api@$gateway_api_version" |
         sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')" ||
    die "cannot download sigs.k8s.io/gateway-api@$gateway_api_version"
  [[ -n "$dir" && -d "$dir/config/crd/standard" ]] ||
    die "sigs.k8s.io/gateway-api@$gateway_api_version: no config/crd/standard in the module"
  echo "$dir/config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml"
  echo "$dir/config/crd/standard/gateway.networking.k8s.io_gateways.yaml"
}

tmp=""
pids=()
names=()

# Whether PID runs (a zombie, killed but not yet waited for, does not).
alive() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ "${stat:0:1}" != Z ]]
}

# stop NAME PID: SIGTERM (after SIGCONT: a test may have paused it), then SIGKILL after
# 10s; PID need not be a child of this shell.
stop() {
  local name="$1" pid="$2"
  kill -CONT "$pid" 2>/dev/null || true
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 1 100); do
    alive "$pid" || return 0
    sleep 0.1
  done
  echo "controlplane.sh: $name did not stop in 10s, killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
}

# The kube-apiserver of $tmp/kube-apiserver.pid, if that process still runs it.
current_apiserver() {
  local pid
  pid="$(cat "$1/kube-apiserver.pid" 2>/dev/null)" || return 1
  [[ -n "$pid" ]] && { tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null | grep -q "$1/apiserver.crt" &&
    echo "$pid"
}

stop_all() {
  local i pid
  # The real node first: its kubelet, then what runs in its cgroups.
  [[ -z "$tmp" ]] || node_stop
  # A test may have paused etcd: a kube-apiserver stops gracefully only with it.
  for pid in "${pids[@]}"; do kill -CONT "$pid" 2>/dev/null || true; done
  # Stop in reverse order of start: kwok, kube-scheduler and kube-controller-manager (in
  # the full control plane), kube-apiserver, then etcd.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    # A kube-apiserver started again by start-apiserver is no child of this shell.
    if [[ "${names[$i]}" == kube-apiserver && -n "$tmp" ]] && pid="$(current_apiserver "$tmp")" &&
       [[ " ${pids[*]} " != *" $pid "* ]]; then
      stop kube-apiserver "$pid"
    fi
    pid="${pids[$i]}"
    stop "${names[$i]}" "$pid"
    wait "$pid" 2>/dev/null || true
  done
  pids=()
  names=()
  if [[ -n "$tmp" && -d "$tmp" ]]; then
    if [[ "${E2E_KEEP_DIR:-}" == 1 ]]; then
      echo "controlplane.sh: kept $tmp" >&2
    else
      rm -rf "$tmp"
    fi
  fi
}

# wait_until NAME PID LOG WHAT COMMAND...: runs COMMAND (a wait of a few seconds) again
# until it succeeds, while the process PID runs, for at most E2E_START_TIMEOUT seconds;
# fails with the last lines of LOG (NAME's log) and COMMAND's last error.
wait_until() {
  local name="$1" pid="$2" log="$3" what="$4"
  shift 4
  local deadline=$((SECONDS + ${E2E_START_TIMEOUT:-180})) last=""
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null && rc=0 || rc=$?
      fail_start "$name" "$log" "it exited (status $rc)"
    fi
    if last="$("$@" 2>&1 >/dev/null)"; then
      return 0
    fi
    if ((SECONDS >= deadline)); then
      fail_start "$name" "$log" "$what after ${E2E_START_TIMEOUT:-180}s (last try: $last)"
    fi
    sleep 0.25
  done
}

# Fails with the last lines of the component's log.
fail_start() {
  local name="$1" log="$2" why="$3"
  {
    echo "controlplane.sh: $name failed to start: $why"
    echo "---- last lines of $name's log ----"
    tail -n 40 "$log" 2>/dev/null || true
    echo "----"
  } >&2
  exit 125
}

# wait_ready NAME PID LOG URL [DIR]
wait_ready() {
  local name="$1" pid="$2" log="$3" url="$4" dir="${5:-}"
  local deadline=$((SECONDS + ${E2E_START_TIMEOUT:-180})) last=""
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null && rc=0 || rc=$?
      fail_start "$name" "$log" "it exited (status $rc)"
    fi
    if last="$("$bin/e2e-helper" probe "$url" $dir 2>&1)"; then
      return 0
    fi
    if ((SECONDS >= deadline)); then
      fail_start "$name" "$log" "not ready after ${E2E_START_TIMEOUT:-180}s (last probe: $last)"
    fi
    sleep 0.25
  done
}

# The controllers kube-controller-manager runs in the full control plane: the Deployment
# and ReplicaSet controllers, the garbage collector, the namespace controller, the
# ServiceAccount controllers (a namespace's `default` ServiceAccount, which the API server's
# ServiceAccount admission needs before it admits a Pod; tokens), the node lifecycle
# controller (it lifts the not-ready taint the API server puts on every new Node, once kwok
# has made it Ready) and the kube-root-ca.crt publisher (the ConfigMap the Pods' token
# volume names).
kcm_controllers="deployment-controller,replicaset-controller,garbage-collector-controller"
kcm_controllers+=",namespace-controller,serviceaccount-controller,serviceaccount-token-controller"
kcm_controllers+=",node-lifecycle-controller,root-ca-certificate-publisher-controller"

# start_full SERVER KCM_PORT SCHEDULER_PORT KWOK_PORT: kube-controller-manager,
# kube-scheduler, kwok and its fake Nodes (E2E_FULL=1), each waited for; exports what CMD
# gets besides.
start_full() {
  local server="$1" kcm_port="$2" sched_port="$3" kwok_port="$4" pid

  # Identities: kube-controller-manager and kube-scheduler as the users the API server's
  # bootstrap RBAC policy binds (system:kube-controller-manager, system:kube-scheduler);
  # kwok, which writes Node and Pod status and Node leases, in group system:masters, as a
  # user of its own (kwok-controller) so that its writes are told apart from the test's.
  { "$bin/e2e-helper" client "$tmp" "$server" kube-controller-manager system:kube-controller-manager &&
    "$bin/e2e-helper" client "$tmp" "$server" kube-scheduler system:kube-scheduler &&
    "$bin/e2e-helper" client "$tmp" "$server" kwok kwok-controller system:masters; } ||
    die "cannot write certificates"

  # Both serve their health endpoints with the API server's certificate (127.0.0.1, signed
  # by ca.crt), so that the probe, which trusts ca.crt, can check them. Each controller
  # runs as a ServiceAccount of its own in kube-system (--use-service-account-credentials,
  # as kubeadm runs it), bound by the bootstrap policy: the audit log names, e.g.,
  # system:serviceaccount:kube-system:deployment-controller. sa.key signs the legacy
  # tokens; the API server verifies them with sa.pub (--service-account-key-file).
  # E2E_KCM_ARGS (split on spaces) is appended.
  # shellcheck disable=SC2086
  "$bin/kube-controller-manager" \
    --kubeconfig "$tmp/kube-controller-manager.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$kcm_port" \
    --tls-cert-file "$tmp/apiserver.crt" --tls-private-key-file "$tmp/apiserver.key" \
    --leader-elect=false \
    --controllers "$kcm_controllers" \
    --use-service-account-credentials=true \
    --service-account-private-key-file "$tmp/sa.key" \
    --root-ca-file "$tmp/ca.crt" \
    --profiling=false ${E2E_KCM_ARGS:-} >"$tmp/kube-controller-manager.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  names+=(kube-controller-manager)
  echo "$pid" >"$tmp/kube-controller-manager.pid"
  export E2E_CONTROLLER_MANAGER_PID="$pid"
  wait_ready kube-controller-manager "$pid" "$tmp/kube-controller-manager.log" \
    "https://127.0.0.1:$kcm_port/healthz" "$tmp"
  # Its controllers run: the serviceaccount controller has made the default namespace's.
  wait_until kube-controller-manager "$pid" "$tmp/kube-controller-manager.log" \
    "no ServiceAccount default/default" \
    "$bin/e2e-helper" wait-serviceaccount "$tmp/kubeconfig" default default 5

  "$bin/kube-scheduler" \
    --kubeconfig "$tmp/kube-scheduler.kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$sched_port" \
    --tls-cert-file "$tmp/apiserver.crt" --tls-private-key-file "$tmp/apiserver.key" \
    --leader-elect=false \
    --profiling=false >"$tmp/kube-scheduler.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  names+=(kube-scheduler)
  echo "$pid" >"$tmp/kube-scheduler.pid"
  export E2E_SCHEDULER_PID="$pid"
  wait_ready kube-scheduler "$pid" "$tmp/kube-scheduler.log" "https://127.0.0.1:$sched_port/readyz" "$tmp"
  export E2E_FULL=1

  # The real node in place of kwok's (E2E_NODE=real, e2e/node.sh).
  if [[ "${E2E_NODE:-}" == real ]]; then
    node_start "${server##*:}" "$5" "$6" "$7"
    return
  fi

  # kwok: the Nodes annotated kwok.x-k8s.io/node=fake only, and the Pods bound to them;
  # the Stages of kwok/stages/ (node-initialize, node-heartbeat-with-lease, pod-ready,
  # pod-delete from kwok; pod-unready, this project's); a Node lease renewed as a kubelet
  # does (40 s, the node lifecycle controller reads it); Pod IPs from 10.244.0.0/16 (the
  # API server's Service range is 10.0.0.0/24); its health endpoint (plain HTTP) on
  # loopback. KWOK_WORKDIR keeps it from reading a configuration from the home directory.
  local stage configs=()
  for stage in "$kwok_module"/stages/*.yaml; do configs+=(--config "$stage"); done
  KWOK_WORKDIR="$tmp/kwok" "$bin/kwok" \
    --kubeconfig "$tmp/kwok.kubeconfig" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds 40 \
    --cidr 10.244.0.0/16 \
    --server-address "127.0.0.1:$kwok_port" \
    "${configs[@]}" >"$tmp/kwok.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  names+=(kwok)
  echo "$pid" >"$tmp/kwok.pid"
  export E2E_KWOK_PID="$pid"
  wait_ready kwok "$pid" "$tmp/kwok.log" "http://127.0.0.1:$kwok_port/healthz"

  # The fake Nodes, Ready (kwok) and without the not-ready taint (node lifecycle controller).
  wait_until kwok "$pid" "$tmp/kwok.log" "fake Nodes not schedulable (see kube-controller-manager.log too)" \
    "$bin/e2e-helper" fake-nodes "$tmp/kubeconfig" kwok-node "$fake_nodes" 5
  local i nodes=()
  for ((i = 0; i < fake_nodes; i++)); do nodes+=("kwok-node-$i"); done
  export E2E_NODES="${nodes[*]}"
}

run() {
  if [[ $# -eq 0 ]]; then
    echo "usage: $0 run -- COMMAND [ARGS...]" >&2
    exit 2
  fi
  build
  local crd_files started="$SECONDS"
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/e2e-controlplane.XXXXXX")"
  trap stop_all EXIT
  trap 'on_signal INT 130' INT
  trap 'on_signal TERM 143' TERM
  crd_files="$(gateway_api_crds)" || exit 125

  local etcd_client etcd_peer api_port kcm_port sched_port kwok_port fwd_port kubelet_port healthz_port
  if [[ "${E2E_FULL:-}" == 1 ]]; then
    { read -r etcd_client; read -r etcd_peer; read -r api_port; read -r kcm_port; read -r sched_port
      read -r kwok_port; read -r fwd_port; read -r kubelet_port; read -r healthz_port; } < <("$bin/e2e-helper" ports 9) ||
      die "cannot find free ports"
    [[ -n "$healthz_port" ]] || die "cannot find free ports"
  else
    { read -r etcd_client; read -r etcd_peer; read -r api_port; } < <("$bin/e2e-helper" ports 3) ||
      die "cannot find free ports"
    [[ -n "$api_port" ]] || die "cannot find free ports"
  fi
  local server="https://127.0.0.1:$api_port"
  "$bin/e2e-helper" pki "$tmp" "$server" "$admin_user" || die "cannot write certificates"

  # Audit: every write request, once (at ResponseComplete), with metadata (verb, user,
  # objectRef with resource and subresource, response code). Reads are not logged, except
  # the GETs and LISTs of the controller under test (to prove a steady state reads nothing).
  local audited_reads="get, list"
  [[ "${E2E_AUDIT_WATCHES:-}" != 1 ]] || audited_reads="get, list, watch"
  cat >"$tmp/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
  users: [gateway-reconcile-controller]
  verbs: [$audited_reads]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
EOF
  # E2E_AUDIT_READ_USERS (names split on spaces or commas): every read of these users too,
  # a watch once when it starts (stage ResponseStarted) and once when it ends; the other
  # rules keep their single ResponseComplete line. For the load harness (e2e/scale).
  if [[ -n "${E2E_AUDIT_READ_USERS:-}" ]]; then
    local users
    users="$(echo "$E2E_AUDIT_READ_USERS" | tr ', ' '\n\n' | sed '/^$/d' | paste -sd, -)"
    cat >"$tmp/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [$users]
  verbs: [get, list, watch]
- level: Metadata
  users: [gateway-reconcile-controller]
  verbs: [get, list]
  omitStages: [ResponseStarted]
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
  omitStages: [ResponseStarted]
- level: None
EOF
  fi

  "$bin/etcd" --data-dir "$tmp/etcd" \
    --listen-client-url "http://127.0.0.1:$etcd_client" \
    --listen-peer-url "http://127.0.0.1:$etcd_peer" >"$tmp/etcd.log" 2>&1 &
  pids+=($!)
  names+=(etcd)
  echo "${pids[0]}" >"$tmp/etcd.pid"
  wait_ready etcd "${pids[0]}" "$tmp/etcd.log" "http://127.0.0.1:$etcd_client/health"

  # E2E_APISERVER_ARGS (split on spaces) is appended, e.g. feature gates a test needs.
  # Admission: the default plugin set, nothing disabled, plus
  # OwnerReferencesPermissionEnforcement (as production clusters run it): setting
  # blockOwnerDeletion needs `update` on the owner's finalizers, which the controller's RBAC
  # must grant. ServiceAccount admission only acts
  # on Pods, which nothing here creates (no kubelet); ValidatingAdmissionPolicy and the
  # admission webhooks stay enabled: tests use them to make writes fail.
  # The real node's kubelet is authorized as a Node (the Node authorizer, NodeRestriction),
  # and the API server reaches it (logs, exec) with the admin's client certificate.
  local authorization=RBAC admission=OwnerReferencesPermissionEnforcement node_args=()
  if [[ "${E2E_NODE:-}" == real ]]; then
    authorization=Node,RBAC
    admission+=,NodeRestriction
    node_args=(--kubelet-client-certificate "$tmp/admin.crt" --kubelet-client-key "$tmp/admin.key"
      --kubelet-preferred-address-types InternalIP)
  fi
  local api_args=(
    "${node_args[@]}"
    --etcd-servers "http://127.0.0.1:$etcd_client"
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port"
    --tls-cert-file "$tmp/apiserver.crt" --tls-private-key-file "$tmp/apiserver.key"
    --client-ca-file "$tmp/ca.crt"
    --authorization-mode "$authorization"
    --enable-admission-plugins "$admission"
    --service-account-issuer https://kubernetes.default.svc.cluster.local
    --service-account-key-file "$tmp/sa.pub"
    --service-account-signing-key-file "$tmp/sa.key"
    --service-cluster-ip-range 10.0.0.0/24
    --audit-policy-file "$tmp/audit-policy.yaml"
    --audit-log-path "$tmp/audit.log" --audit-log-format json --audit-log-mode blocking
    --profiling=false
    ${E2E_APISERVER_ARGS:-}
  )
  # Saved (one argument a line; none holds a newline) for start-apiserver.
  printf '%s\n' "${api_args[@]}" >"$tmp/kube-apiserver.args"
  echo "$server" >"$tmp/server"
  "$bin/kube-apiserver" "${api_args[@]}" >"$tmp/kube-apiserver.log" 2>&1 &
  pids+=($!)
  names+=(kube-apiserver)
  echo "${pids[1]}" >"$tmp/kube-apiserver.pid"
  wait_ready kube-apiserver "${pids[1]}" "$tmp/kube-apiserver.log" "$server/readyz" "$tmp"

  # The GatewayConfiguration and L34Route CRDs: Meridio-2's own (its config/crd/bases, read
  # from MERIDIO2_SRC, default ../shared/meridio-2 from the repository root), what a real
  # cluster runs; when that source is absent, this project's copies in crds/ (they differ:
  # docs/real-server-differences.md, "Meridio-2's CRDs against crds/"). E2E_CRDS (paths
  # split on spaces) replaces both.
  local upstream="${MERIDIO2_SRC:-$here/../../shared/meridio-2}/config/crd/bases"
  local own_crds
  if [[ -f "$upstream/meridio-2.nordix.org_gatewayconfigurations.yaml" && -f "$upstream/meridio-2.nordix.org_l34routes.yaml" ]]; then
    own_crds="$upstream/meridio-2.nordix.org_gatewayconfigurations.yaml $upstream/meridio-2.nordix.org_l34routes.yaml"
    [[ -n "${E2E_CRDS:-}" ]] || echo "controlplane.sh: installing Meridio-2's own GatewayConfiguration and L34Route CRDs from $upstream" >&2
  else
    own_crds="$crd_dir/meridio-2.nordix.org_gatewayconfigurations.yaml $crd_dir/meridio-2.nordix.org_l34routes.yaml"
    [[ -n "${E2E_CRDS:-}" ]] || echo "controlplane.sh: Meridio-2's source is not at ${MERIDIO2_SRC:-$here/../../shared/meridio-2} (set MERIDIO2_SRC): installing this project's CRD copies from crds/ instead" >&2
  fi
  # shellcheck disable=SC2086 # one path a line, no spaces in them
  "$bin/e2e-helper" crds "$tmp/kubeconfig" $crd_files ${E2E_CRDS:-$own_crds} >"$tmp/crds.log" 2>&1 ||
    fail_start "CRD installation" "$tmp/crds.log" "see below"

  echo "controlplane.sh: kube-apiserver $kube_version ready at $server" >&2
  if [[ "${E2E_FULL:-}" == 1 ]]; then
    start_full "$server" "$kcm_port" "$sched_port" "$kwok_port" "$fwd_port" "$kubelet_port" "$healthz_port"
    local nodes_by=kwok
    [[ "${E2E_NODE:-}" != real ]] || nodes_by="a kubelet and containerd"
    echo "controlplane.sh: full control plane ready in $((SECONDS - started))s: kube-controller-manager, kube-scheduler, $nodes_by, Nodes $E2E_NODES" >&2
  fi
  # COMMAND runs in the background (stdin kept) so that a signal to this script is handled
  # at once: it is passed on to COMMAND, then everything is stopped.
  KUBECONFIG="$tmp/kubeconfig" AUDIT_LOG="$tmp/audit.log" E2E_ADMIN_USER="$admin_user" \
    E2E_SERVER="$server" E2E_DIR="$tmp" E2E_CA_CERT="$tmp/ca.crt" E2E_CA_KEY="$tmp/ca.key" \
    E2E_CONTROLLER_KUBECONFIG="$tmp/controller.kubeconfig" \
    E2E_ETCD_PID="${pids[0]}" E2E_APISERVER_PID="${pids[1]}" \
    "$@" <&0 &
  cmd_pid=$!
  local rc=0
  wait "$cmd_pid" || rc=$?
  cmd_pid=""
  exit "$rc"
}

cmd_pid=""
# on_signal SIGNAL STATUS: pass the signal on to COMMAND, wait for it, exit (teardown runs
# from the EXIT trap).
on_signal() {
  if [[ -n "$cmd_pid" ]]; then
    kill -"$1" "$cmd_pid" 2>/dev/null || true
    wait "$cmd_pid" 2>/dev/null || true
  fi
  exit "$2"
}

# The control plane CMD runs on (E2E_DIR).
control_plane_dir() {
  [[ -n "${E2E_DIR:-}" && -f "$E2E_DIR/kube-apiserver.args" ]] ||
    { echo "controlplane.sh: E2E_DIR is not a running control plane's directory" >&2; exit 2; }
}

kill_apiserver() {
  control_plane_dir
  local pid
  pid="$(current_apiserver "$E2E_DIR")" || return 0
  kill -KILL "$pid" 2>/dev/null || true
  # Gone once its port is closed (the leader thread turns zombie before the others end).
  local server port
  server="$(cat "$E2E_DIR/server")"
  port="${server##*:}"
  while alive "$pid" || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do sleep 0.05; done
}

start_apiserver() {
  control_plane_dir
  if current_apiserver "$E2E_DIR" >/dev/null; then
    echo "controlplane.sh: kube-apiserver already runs" >&2
    exit 2
  fi
  local args=()
  mapfile -t args <"$E2E_DIR/kube-apiserver.args"
  echo "controlplane.sh: starting kube-apiserver again" >>"$E2E_DIR/kube-apiserver.log"
  "$bin/kube-apiserver" "${args[@]}" >>"$E2E_DIR/kube-apiserver.log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$E2E_DIR/kube-apiserver.pid"
  wait_ready kube-apiserver "$pid" "$E2E_DIR/kube-apiserver.log" "$(cat "$E2E_DIR/server")/readyz" "$E2E_DIR"
}

case "${1:-}" in
  kill-apiserver)
    kill_apiserver
    ;;
  start-apiserver)
    start_apiserver
    ;;
  restart-apiserver)
    kill_apiserver
    start_apiserver
    ;;
  build)
    build
    ;;
  node-leftovers)
    node_leftovers "${2:?usage: $0 node-leftovers DIR}"
    ;;
  run)
    shift
    [[ "${1:-}" == "--" ]] && shift
    run "$@"
    ;;
  *)
    echo "usage: $0 build | run -- COMMAND [ARGS...] | kill-apiserver | start-apiserver | restart-apiserver | node-leftovers DIR" >&2
    exit 2
    ;;
esac
