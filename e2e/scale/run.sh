#!/usr/bin/env bash
# The load harness (docs/scale.md, "How the harness measures"): for each N of SCALE_N and
# each controller of SCALE_CONTROLLERS, a fresh control plane (e2e/controlplane.sh), N
# Gateways created before the controller starts, then the stories of `scale run` (for ours
# also the memory floor: its base with no Gateway, and the bytes its caches hold, by
# gateway-reconcile-kube's example held_bytes); a side-by-side table at the end.
#
#   e2e/scale/run.sh                         N = 20, ours and Meridio-2 (when its source is there)
#   SCALE_N="100 1000" e2e/scale/run.sh      the figures of docs/scale.md
#   SCALE_SEED=1 e2e/scale/run.sh            also the seed story (updates refused by admission;
#                                            ours must report the refusal in every sample)
#   SCALE_FULL=1 SCALE_N=100 e2e/scale/run.sh  instead, the ready story on the full control
#                                            plane (E2E_FULL=1): the time from each Gateway's
#                                            creation until its LB Pods are Ready
#   SCALE_LIMIT=1 SCALE_N=1000 e2e/scale/run.sh  instead, the limit story (ours only): the floor
#                                            of the control plane, a bare client making ours'
#                                            requests at several concurrencies, and ours on the
#                                            same control plane, in rounds: the start, the
#                                            restart (the streaming lists alone, in a process of
#                                            their own), the edit of a shared configuration
#
# Knobs: SCALE_N (default 20); SCALE_CONTROLLERS (default "ours meridio-2"); SCALE_IDLE (the
# idle window, default 60s); SCALE_PROFILE (cargo profile of our controller, default
# release; `debug` reuses the test build); SCALE_OURS_ARGS (more arguments of our
# controller, e.g. `--streaming-lists=false`); SCALE_OUT (where the JSON results go, default
# e2e/scale/results); SCALE_SEED_SAMPLE (how long the seed story samples the Gateway's
# status, default 2m); SCALE_FULL=1 (the ready story on the full control plane, above;
# E2E_KCM_ARGS passes kube-controller-manager flags through controlplane.sh); SCALE_LIMIT=1 (the
# limit story, above; SCALE_LIMIT_CONCURRENCY, the Gateways in flight of each point of its
# sweep, default "1,4,8,16,32,64"; SCALE_LIMIT_HTTP, its transports, default "h2,http1";
# SCALE_LIMIT_ROUNDS, default 1; SCALE_LIMIT_OURS, ours' --concurrency of each start, default
# 8; SCALE_LIMIT_EDIT, the edit floor's Gateways in flight, default "8,64");
# SCALE_KEEP_LOGS (a directory that keeps the controllers' logs, which otherwise go with the
# control plane's directory at the end); SCALE_PERF (a directory: the run story profiles
# ours' start, `perf record -F 499 --call-graph dwarf` attached to its process from its
# start until every Gateway is healthy, and its restart until every Gateway is reconciled,
# as root or with kernel.perf_event_paranoid at most 1; the data is then folded into
# DIR/ours-N-start.svg and DIR/ours-N-restart.svg, the folded stacks kept beside them, by
# the `inferno` crate's inferno-collapse-perf and inferno-flamegraph, which must be on PATH:
# `cargo install inferno --root SOMEWHERE`; .ci/run neither installs them nor sets the knob;
# SCALE_PERF_MINWIDTH, the flame graph's narrowest frame in percent, default 0.1; a profiled
# run's CPU figures are not the measurement, sampling costs the profiled process too);
# CARGO_TARGET_DIR (where cargo builds, as cargo reads it; default target); MERIDIO2_SRC
# (Meridio-2's source, default ../shared/meridio-2 from the repository root: copied, then
# built with its Go dependencies from the module proxy; when absent, the comparison is
# skipped with a message). Exit status: 1 when our
# controller misses a goal or a run fails, 125 when the control plane could not start.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$here/bin"
out="${SCALE_OUT:-$here/results}"
sizes="${SCALE_N:-20}"
controllers="${SCALE_CONTROLLERS:-ours meridio-2}"
idle="${SCALE_IDLE:-60s}"
profile="${SCALE_PROFILE:-release}"
ours_args="${SCALE_OURS_ARGS:-}"
meridio_src="${MERIDIO2_SRC:-$root/../shared/meridio-2}"
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" == /* ]] || target="$root/$target"
limit="${SCALE_LIMIT:-}"
perf_dir="${SCALE_PERF:-}"
if [[ -n "$perf_dir" ]]; then
  for tool in perf inferno-collapse-perf inferno-flamegraph; do
    command -v "$tool" >/dev/null || { echo "scale: SCALE_PERF needs $tool on PATH (inferno: cargo install inferno)" >&2; exit 2; }
  done
  mkdir -p "$perf_dir"
  perf_dir="$(cd "$perf_dir" && pwd)"
  export SCALE_PERF="$perf_dir"
fi
if [[ "$limit" == 1 ]]; then
  controllers=ours
fi
mkdir -p "$bin" "$out"

full="${SCALE_FULL:-}"
if [[ "$full" == 1 ]]; then
  export E2E_FULL=1
fi
"$here/../controlplane.sh" build
(cd "$here" && go vet . && go test . && go build -o "$bin/scale" .)

# Our controller.
if [[ "$profile" == debug ]]; then
  # The binary the crate's test build makes (with the dev-dependencies' features, so a
  # `cargo test` before it, as in CI, leaves nothing to build).
  (cd "$root" && cargo test -p gateway-reconcile-kube --no-run)
  ours="$target/debug/gateway-reconcile-controller"
else
  (cd "$root" && cargo build --profile "$profile" -p gateway-reconcile-kube --bin gateway-reconcile-controller)
  ours="$target/$profile/gateway-reconcile-controller"
fi
# The limit story renders the bodies with the crate's CLI (its plan), built on its own: in
# one cargo invocation with the controller, the core's features would be unified (sim).
plan=""
if [[ "$limit" == 1 ]]; then
  if [[ "$profile" == debug ]]; then
    (cd "$root" && cargo build -p gateway-reconcile --bin gateway-reconcile)
  else
    (cd "$root" && cargo build --profile "$profile" -p gateway-reconcile --bin gateway-reconcile)
  fi
  plan="$target/$profile/gateway-reconcile"
fi

# The memory floor of the run story (ours): gateway-reconcile-kube's example measuring the
# bytes its caches hold.
held=""
if [[ "$limit" != 1 && "$full" != 1 && " $controllers " == *" ours "* ]]; then
  if [[ "$profile" == debug ]]; then
    (cd "$root" && cargo build -p gateway-reconcile-kube --example held_bytes)
  else
    (cd "$root" && cargo build --profile "$profile" -p gateway-reconcile-kube --example held_bytes)
  fi
  held="$target/$profile/examples/held_bytes"
fi

# Meridio-2's controller-manager, built from a copy of its source. Both controllers then
# run on Meridio-2's own CRDs (all of config/crd/bases: its manager also runs the
# DistributionGroup and EndpointNetworkConfiguration controllers, which need theirs).
crds=""
if [[ " $controllers " == *" meridio-2 "* ]]; then
  if [[ -f "$meridio_src/cmd/controller-manager/main.go" ]]; then
    copy="$bin/meridio-2-src"
    rm -rf "$copy" && mkdir -p "$copy" && cp -a "$meridio_src/." "$copy/"
    commit="$(git -C "$meridio_src" rev-parse --show-toplevel 2>/dev/null || true)"
    if [[ "$commit" -ef "$meridio_src" ]]; then
      commit="commit $(git -C "$meridio_src" rev-parse --short HEAD)"
    else
      commit="not a git checkout"
    fi
    echo "scale: building Meridio-2's controller-manager from a copy of $meridio_src ($commit)" >&2
    (cd "$copy" && GOFLAGS=-mod=mod go build -o "$bin/meridio-2-controller-manager" ./cmd/controller-manager)
    mkdir -p "$bin/meridio-2-templates"
    cp "$copy/config/templates/lb-deployment.yaml" "$bin/meridio-2-templates/"
    crds="$(ls "$copy"/config/crd/bases/*.yaml | tr '\n' ' ')"
  else
    echo "scale: Meridio-2's source is not at $meridio_src (set MERIDIO2_SRC): the comparison is skipped" >&2
    controllers="${controllers//meridio-2/}"
  fi
fi

export E2E_AUDIT_READ_USERS="gateway-reconcile-controller meridio-2-controller"
# Thousands of creates at once: the API server's default in-flight limits (400 and 200)
# would answer 429 to the harness. The audit log must not rotate: the stories count a
# phase's requests between two offsets of one file, and the default rotates it at 100 MB
# (which N = 5,000 passes); 100,000 MB here.
export E2E_APISERVER_ARGS="--max-requests-inflight=1000 --max-mutating-requests-inflight=500 --audit-log-maxsize=100000 ${E2E_APISERVER_ARGS:-}"
export E2E_CRDS="$crds"
[[ -n "$crds" ]] || unset E2E_CRDS

rc=0
results=()
if [[ "$full" == 1 ]]; then
  # The ready story, one full control plane per N and controller (E2E_FULL is exported).
  for n in $sizes; do
    for c in $controllers; do
      case "$c" in
        ours) args=(-controller ours -bin "$ours" -clusterrole "$root/gateway-reconcile-kube/deploy/clusterrole.yaml" -ours-args "$ours_args") ;;
        meridio-2) args=(-controller meridio-2 -bin "$bin/meridio-2-controller-manager" -templates "$bin/meridio-2-templates") ;;
        *) echo "scale: unknown controller $c" >&2; exit 2 ;;
      esac
      file="$out/ready-$c-$n.json"
      rm -f "$file"
      echo "scale: ready story, $c, N = $n (full control plane)" >&2
      "$here/../controlplane.sh" run -- "$bin/scale" ready "${args[@]}" -n "$n" -out "$file" || {
        r=$?
        echo "scale: ready story, $c at N = $n failed (status $r)" >&2
        [[ $r == 125 ]] && exit 125
        rc=1
      }
      [[ -f "$file" ]] && results+=("$file")
    done
  done
  if ((${#results[@]} > 0)); then
    "$bin/scale" ready-table "${results[@]}"
  fi
  exit "$rc"
fi

if [[ "$limit" == 1 ]]; then
  # The limit story, one control plane per N: the bare client's sweep, then ours' start.
  for n in $sizes; do
    file="$out/limit-$n.json"
    rm -f "$file"
    echo "scale: limit story, N = $n" >&2
    "$here/../controlplane.sh" run -- "$bin/scale" limit -controller ours -bin "$ours" -plan "$plan" -check \
      -clusterrole "$root/gateway-reconcile-kube/deploy/clusterrole.yaml" -ours-args "$ours_args" \
      -concurrency "${SCALE_LIMIT_CONCURRENCY:-1,4,8,16,32,64}" -http "${SCALE_LIMIT_HTTP:-h2,http1}" \
      -rounds "${SCALE_LIMIT_ROUNDS:-1}" -ours-concurrency "${SCALE_LIMIT_OURS:-8}" -edit-concurrency "${SCALE_LIMIT_EDIT:-8,64}" \
      -n "$n" -out "$file" || {
      r=$?
      echo "scale: limit story at N = $n failed (status $r)" >&2
      [[ $r == 125 ]] && exit 125
      rc=1
    }
  done
  exit "$rc"
fi

for n in $sizes; do
  for c in $controllers; do
    case "$c" in
      ours) args=(-controller ours -bin "$ours" -check -clusterrole "$root/gateway-reconcile-kube/deploy/clusterrole.yaml" -ours-args "$ours_args" -held "$held") ;;
      meridio-2) args=(-controller meridio-2 -bin "$bin/meridio-2-controller-manager" -templates "$bin/meridio-2-templates") ;;
      *) echo "scale: unknown controller $c" >&2; exit 2 ;;
    esac
    file="$out/$c-$n.json"
    rm -f "$file"
    echo "scale: $c, N = $n" >&2
    "$here/../controlplane.sh" run -- "$bin/scale" run "${args[@]}" -n "$n" -idle "$idle" -out "$file" || {
      r=$?
      echo "scale: $c at N = $n failed (status $r)" >&2
      [[ $r == 125 ]] && exit 125
      rc=1
    }
    [[ -f "$file" ]] && results+=("$file")
  done
done

# SCALE_PERF: each start's and restart's profile folded into a flame graph (the folded
# stacks kept beside).
if [[ -n "$perf_dir" ]]; then
  for data in "$perf_dir"/*-start.perf.data "$perf_dir"/*-restart.perf.data; do
    [[ -f "$data" ]] || continue
    base="${data%.perf.data}"
    name="$(basename "$base")"
    until="every Gateway is healthy"
    [[ "$name" != *-restart ]] || until="every Gateway is reconciled"
    # Rust's generic arguments dropped from the symbols (`scale flame-names`): with them, a
    # frame's name runs to kilobytes and the flame graph to megabytes.
    perf script -i "$data" 2>/dev/null | inferno-collapse-perf | "$bin/scale" flame-names > "$base.folded"
    inferno-flamegraph --minwidth "${SCALE_PERF_MINWIDTH:-0.1}" --title "$name" \
      --subtitle "perf record -F 499 --call-graph dwarf, from the process start until $until" \
      < "$base.folded" > "$base.svg"
    echo "scale: flame graph $base.svg ($(wc -l < "$base.folded") distinct stacks)" >&2
  done
fi

if [[ "${SCALE_SEED:-}" == 1 ]]; then
  for c in $controllers; do
    case "$c" in
      ours) args=(-controller ours -bin "$ours" -check -clusterrole "$root/gateway-reconcile-kube/deploy/clusterrole.yaml") ;;
      meridio-2) args=(-controller meridio-2 -bin "$bin/meridio-2-controller-manager" -templates "$bin/meridio-2-templates") ;;
    esac
    echo "scale: seed story, $c" >&2
    "$here/../controlplane.sh" run -- "$bin/scale" seed "${args[@]}" -sample "${SCALE_SEED_SAMPLE:-2m}" \
      -out "$out/seed-$c.json" || rc=1
  done
fi

if ((${#results[@]} > 0)); then
  echo
  "$bin/scale" table "${results[@]}"
fi
exit "$rc"
