# The real node of the end-to-end control plane (E2E_NODE=real, with E2E_FULL=1): containerd
# and a kubelet, registered as the Node e2e-node-0, in a network namespace of their own.
# Sourced by controlplane.sh, which calls node_build, node_start and node_stop; the choices
# that differ from a production node are in docs/real-server-differences.md ("The real node").
#
# The node's network: the namespace $node_ns holds containerd, the kubelet, the CNI bridge
# and every Pod's address (10.204.0.0/24). A veth pair joins it to the host: 10.203.0.1 (host)
# and 10.203.0.2 (the node's InternalIP). No route leads anywhere else, and nothing is
# masqueraded on the host: the Pods reach the API server and nothing more. The API server
# listens on loopback only; `e2e-helper forward` copies 10.203.0.1:PORT to it, and a DNAT
# rule in the node's namespace sends the kubernetes Service's address (10.0.0.1:443) there
# (the one Service a Pod here uses: kube-proxy is not run).
#
# Every file and mount of the node is its own: containerd's root, state and socket, the
# kubelet's root, the Pods' logs and the CNI configuration and address leases live under
# $tmp/node; the node's processes share one mount namespace, in which /run/netns,
# /run/containerd and /var/log/containers are private tmpfs mounts, so nothing of it
# reaches the host's filesystem, and its mounts end with it. Its processes live in a PID
# namespace of their own, and they and the Pods in the cgroups /$node_cgroup (every
# hierarchy; the Pods under the kubelet's kubepods there). node_stop kills the PID
# namespace's first process (the kernel then kills and reaps the rest), kills what is
# still in the cgroups, removes them and the network namespace; node_leftovers says what
# a node left behind (run.sh checks it).
#
# A Node's fixed addresses: one real node runs on a machine at a time.

node_name="e2e-node-0"
node_host_ip="10.203.0.1"
node_ip="10.203.0.2"
node_pod_cidr="10.204.0.0/24"
# The images the node runs, built here (node_images): no registry is reached.
node_pause_image="localhost/gateway-reconcile-e2e/pause:1"
# The LB template's images (the chart's files/lb-template.yaml) are this stand-in
# (e2e/controlplane/cmd/lb-standin), imported under the names the template gives.
node_lb_image="ghcr.io/nordix/meridio-2/stateless-load-balancer:latest"
node_router_image="ghcr.io/nordix/meridio-2/router:latest"
# The router told to exit 1 at once (a crashing LB, for the rollout-stall story).
node_crash_image="ghcr.io/nordix/meridio-2/router:crash"
# Debian's packages the node needs (a fresh machine has none of them).
node_packages=(containerd runc containernetworking-plugins iptables buildah)

# node_install: Debian's packages, when one is missing (CI runs as root).
node_install() {
  local missing=() p
  for p in "${node_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  echo "controlplane.sh: installing ${missing[*]} (Debian's packages)" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
    >"$bin/apt.log" 2>&1 || { tail -n 20 "$bin/apt.log" >&2; die "cannot install ${missing[*]}"; }
}

node_stamp() {
  { go version; cat "$here/node.sh" "$module/go.mod" "$module/go.sum" "$module"/cmd/pause/*.go "$module"/cmd/lb-standin/*.go; } |
    sha256sum | cut -d' ' -f1
}

# node_build: the kubelet (from the control plane's module, as kube-controller-manager), the
# sandbox image and the LB stand-in image (static Go programs, one file each, committed by
# buildah as OCI archives under bin/images). Skipped when built from the same sources.
node_build() {
  node_install
  local stamp
  stamp="$(node_stamp)"
  if [[ -x "$bin/kubelet" && -f "$bin/images/pause.tar" && -f "$bin/images/lb.tar" && -f "$bin/images/router.tar" &&
        -f "$bin/images/crash.tar" &&
        "$(cat "$bin/.stamp-node" 2>/dev/null)" == "$stamp" ]]; then
    return 0
  fi
  echo "controlplane.sh: building the kubelet $kube_version and the node's images" >&2
  rm -f "$bin/.stamp-node"
  (cd "$module" && go build -buildvcs=false -ldflags "$(ldflags)" -o "$bin/" k8s.io/kubernetes/cmd/kubelet) ||
    die "build failed (kubelet)"
  local work
  work="$(mktemp -d)"
  (cd "$module" && CGO_ENABLED=0 go build -buildvcs=false -ldflags "-s -w" -o "$work/" ./cmd/pause ./cmd/lb-standin) ||
    { rm -rf "$work"; die "build failed (pause, lb-standin)"; }
  mkdir -p "$bin/images"
  # One layer with the static binary, a numeric user (no passwd file in the image). The two
  # LB containers share the Pod's network: each its own readiness port; the router sets
  # the readiness gates, as Meridio-2's does.
  node_image "$work/pause" /pause 65535:65535 '["/pause"]' "$node_pause_image" "$bin/images/pause.tar" &&
    node_image "$work/lb-standin" /lb-standin 65532:65532 '["/lb-standin", "--ready-port", "8088"]' \
      "$node_lb_image" "$bin/images/lb.tar" &&
    node_image "$work/lb-standin" /lb-standin 65532:65532 '["/lb-standin", "--ready-port", "8089", "--set-gates"]' \
      "$node_router_image" "$bin/images/router.tar" &&
    node_image "$work/lb-standin" /lb-standin 65532:65532 '["/lb-standin", "--exit", "1"]' \
      "$node_crash_image" "$bin/images/crash.tar" ||
    { rm -rf "$work"; die "cannot build the node's images (buildah)"; }
  rm -rf "$work"
  echo "$stamp" >"$bin/.stamp-node"
}

# node_image FILE PATH USER ENTRYPOINT NAME ARCHIVE: an image of FILE alone, at PATH.
node_image() {
  local c
  c="$(buildah from scratch)" || return 1
  buildah copy -q "$c" "$1" "$2" >/dev/null &&
    buildah config --user "$3" --entrypoint "$4" "$c" &&
    buildah commit -q --rm "$c" "$5" >/dev/null &&
    rm -f "$6" && buildah push -q "$5" "oci-archive:$6:$5" >/dev/null
}

# node_netns DIR: the name of the node's network namespace and cgroups for the control plane
# in DIR (its random suffix).
node_netns() {
  echo "e2e-node-$(basename "$1" | tr -cd 'a-zA-Z0-9' | tail -c 8)"
}

# node_start SERVER_PORT FORWARD_PORT KUBELET_PORT HEALTHZ_PORT: the node, up to its Node
# Ready; exports E2E_NODES and E2E_NODE_NS.
node_start() {
  local api_port="$1" fwd_port="$2" kubelet_port="$3" healthz_port="$4" pid
  local nd="$tmp/node"
  node_ns="$(node_netns "$tmp")"
  node_cgroup="$node_ns"
  # The host's end of the veth pair (at most 15 characters).
  node_veth="e2en${node_ns#e2e-node-}"
  mkdir -p "$nd"/{containerd,state,kubelet,pod-logs,cni,cni-ipam}

  ! ip -4 addr show | grep -F " $node_host_ip/" >/dev/null ||
    die "a real node already runs on this machine ($node_host_ip is taken): one at a time"
  ip netns add "$node_ns" || die "cannot create the network namespace $node_ns"
  ip link add "$node_veth" type veth peer name eth0 netns "$node_ns" ||
    die "cannot create the node's veth pair"
  echo "$node_veth" >"$nd/veth"
  ip addr add "$node_host_ip/30" dev "$node_veth" && ip link set "$node_veth" up &&
    ip -n "$node_ns" addr add "$node_ip/30" dev eth0 && ip -n "$node_ns" link set eth0 up &&
    ip -n "$node_ns" link set lo up &&
    ip -n "$node_ns" route add 10.0.0.1/32 via "$node_host_ip" || die "cannot address the node's veth pair"
  # The Service address of the API server, to the forwarder on the host side (Pods come in
  # through PREROUTING, the kubelet's own connections through OUTPUT).
  ip netns exec "$node_ns" iptables -t nat -A PREROUTING -d 10.0.0.1/32 -p tcp --dport 443 \
      -j DNAT --to-destination "$node_host_ip:$fwd_port" &&
    ip netns exec "$node_ns" iptables -t nat -A OUTPUT -d 10.0.0.1/32 -p tcp --dport 443 \
      -j DNAT --to-destination "$node_host_ip:$fwd_port" || die "cannot set the node's DNAT rules (iptables)"

  "$bin/e2e-helper" forward "$node_host_ip:$fwd_port" "127.0.0.1:$api_port" >"$tmp/forward.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  names+=(forward)

  # The kubelet's identity (the Node authorizer and NodeRestriction know it by these).
  "$bin/e2e-helper" client "$tmp" "https://10.0.0.1:443" kubelet "system:node:$node_name" system:nodes ||
    die "cannot write the kubelet's certificate"

  cat >"$nd/cni/10-e2e.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "e2e",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true,
      "ipam": {
        "type": "host-local", "dataDir": "$nd/cni-ipam",
        "ranges": [[{ "subnet": "$node_pod_cidr" }]], "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    { "type": "portmap", "capabilities": { "portMappings": true } }
  ]
}
EOF
  # restrict_oom_score_adj: processes here may not lower an OOM score (no CAP_SYS_RESOURCE);
  # without it every sandbox fails to start.
  cat >"$nd/containerd.toml" <<EOF
version = 2
root = "$nd/containerd"
state = "$nd/state"
[grpc]
  address = "$nd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$node_pause_image"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$nd/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
EOF
  # The kubelet's choices for this machine (docs/real-server-differences.md, "The real
  # node"): cgroup v1 (opted in), cgroupfs, no QoS cgroups and no node allocatable
  # enforcement, swap allowed, eviction only near a full disk.
  cat >"$nd/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: true
cgroupRoot: /$node_cgroup
enforceNodeAllocatable: []
failSwapOn: false
localStorageCapacityIsolation: false
resolvConf: ""
address: $node_ip
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
containerRuntimeEndpoint: unix://$nd/containerd.sock
podLogsDir: $nd/pod-logs
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: false }
  x509: { clientCAFile: $tmp/ca.crt }
authorization:
  mode: AlwaysAllow
evictionHard: { memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1% }
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
serializeImagePulls: false
EOF
  local c
  for c in /sys/fs/cgroup/*/; do
    [[ -L "${c%/}" || ! -e "${c}cgroup.procs" ]] || mkdir -p "$c$node_cgroup" || die "cannot create the cgroup $c$node_cgroup"
  done
  # A new cpuset cgroup has no CPUs nor memory nodes: its parent's.
  if [[ -d "/sys/fs/cgroup/cpuset/$node_cgroup" ]]; then
    cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$node_cgroup/cpuset.cpus" &&
      cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$node_cgroup/cpuset.mems" ||
      die "cannot set up the cpuset cgroup $node_cgroup"
  fi
  # One shell holds the node: it joins the node's network namespace (nsenter, not `ip netns
  # exec`, which mounts a sysfs of its own over /sys and so hides the cgroup hierarchies
  # from the kubelet), new mount and PID namespaces (the first process, this shell, dies
  # with the process started here: --kill-child), and the node's cgroups; makes its
  # private mounts; then runs containerd (the images imported first) and the kubelet.
  nsenter --net="/run/netns/$node_ns" unshare --mount --propagation slave --pid --fork --mount-proc --kill-child bash -c '
    set -e
    for c in /sys/fs/cgroup/*/; do
      [[ ! -d "$c$0" ]] || echo $$ >"$c$0/cgroup.procs"
    done
    mkdir -p /var/log/containers
    for d in /run/netns /run/containerd /var/log/containers; do mkdir -p "$d"; mount -t tmpfs tmpfs "$d"; done
    containerd --config "$1/containerd.toml" >"$1/containerd.log" 2>&1 &
    for _ in $(seq 1 200); do ctr -a "$1/containerd.sock" version >/dev/null 2>&1 && break; sleep 0.1; done
    for image in "$2"/*.tar; do
      ctr -a "$1/containerd.sock" -n k8s.io images import --all-platforms "$image" >>"$1/import.log" 2>&1
    done
    "$3/kubelet" --config "$1/kubelet.yaml" --kubeconfig "$4/kubelet.kubeconfig" \
      --root-dir "$1/kubelet" --cert-dir "$1/kubelet/pki" --hostname-override "$5" --node-ip "$6" \
      >"$1/kubelet.log" 2>&1 &
    wait $!
  ' "$node_cgroup" "$nd" "$bin/images" "$bin" "$tmp" "$node_name" "$node_ip" \
    >"$nd/node.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  names+=(node)
  echo "$pid" >"$nd/node.pid"
  echo "$node_ns" >"$nd/netns"
  export E2E_NODE_PID="$pid" E2E_NODE_NS="$node_ns"
  wait_until kubelet "$pid" "$nd/kubelet.log" "Node $node_name not Ready" \
    "$bin/e2e-helper" schedulable-node "$tmp/kubeconfig" "$node_name" 5
  export E2E_NODES="$node_name"
}

# node_stop: the kubelet, then every process left in the node's cgroups (containerd, its
# shims, the Pods' processes) killed at once, the cgroups and the network namespace (with
# its veth pair and bridge) removed. The node's mounts end with its last process.
node_stop() {
  [[ -n "${node_ns:-}" ]] || return 0
  local pid
  # The node's processes live in a PID namespace of their own, whose first process dies
  # with the one started here (--kill-child): the kernel then kills every process in it,
  # the Pods' included, and reaps them.
  if pid="$(cat "$tmp/node/node.pid" 2>/dev/null)" && [[ -n "$pid" ]]; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  local procs tries=0
  while procs="$(find /sys/fs/cgroup/*/"$node_cgroup" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)" &&
        [[ -n "$procs" ]]; do
    # shellcheck disable=SC2086 # one pid a line
    kill -KILL $procs 2>/dev/null || true
    ((++tries < 100)) || { echo "controlplane.sh: processes left in the node's cgroups: $procs" >&2; break; }
    sleep 0.1
  done
  # Anything of the node that escaped its cgroups still names its directory.
  local p
  for p in /proc/[0-9]*/cmdline; do
    if { tr '\0' ' ' <"$p"; } 2>/dev/null | grep -qF -- "$tmp/node/"; then
      p="${p#/proc/}"
      echo "controlplane.sh: process ${p%/cmdline} of the node outside its cgroups, killed: $(tr '\0' ' ' <"/proc/$p" 2>/dev/null)" >&2
      kill -KILL "${p%/cmdline}" 2>/dev/null || true
    fi
  done
  local c
  for c in /sys/fs/cgroup/*/"$node_cgroup"; do
    [[ -d "$c" ]] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  ip netns del "$node_ns" 2>/dev/null || true
  node_ns=""
}

# node_leftovers DIR: what the node of the control plane in DIR left behind (a cgroup, the
# network namespace, the host's end of its veth pair, a mount under DIR), one a line; it
# succeeds whether it finds any or not (run.sh reads what it prints).
node_leftovers() {
  local ns c
  ns="$(node_netns "$1")"
  for c in /sys/fs/cgroup/*/"$ns"; do [[ ! -e "$c" ]] || echo "cgroup $c"; done
  ! ip netns list 2>/dev/null | grep -qw "$ns" || echo "network namespace $ns"
  ! ip link show "e2en${ns#e2e-node-}" >/dev/null 2>&1 || echo "veth e2en${ns#e2e-node-}"
  grep -F " $1/" /proc/self/mountinfo | awk '{ print "mount " $5 }' || true
}
