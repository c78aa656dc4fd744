#!/usr/bin/env bash
# The Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance at the version
# go.mod pins, tests and manifests unmodified) against a controller running as a process
# on the full control plane (E2E_FULL=1 e2e/controlplane.sh: kube-controller-manager,
# kube-scheduler, kwok's fake Nodes). See docs/conformance.md, "How a run goes".
#
#   e2e/conformance/run.sh                 ours (gateway-reconcile-controller, debug build)
#   e2e/conformance/run.sh meridio-2       Meridio-2's controller-manager, built from a copy
#                                          of its source (MERIDIO2_SRC)
#   e2e/conformance/run.sh ours meridio-2  both, one control plane each
#   CONFORMANCE_SUITE_SRC=DIR e2e/conformance/run.sh ours
#                                          the suite of a gateway-api source tree instead
#                                          (e.g. a commit of its main branch, which the
#                                          module proxy does not serve)
#
# The suite's own release's GatewayClass and Gateway CRDs (from the pinned module, or the
# tree) replace the control plane's before the controller starts.
#
# Writes to CONFORMANCE_OUT (default e2e/conformance/results), NAME being the controller's
# (with -src for a source tree): NAME-report.yaml (the suite's ConformanceReport; ours
# only), NAME.log (the test's output), NAME-controller.log (the controller's log),
# NAME-tests.md (every test of the suite, whether it runs and why not). Knobs:
# CONFORMANCE_BIN (our controller's binary instead of the debug build), MERIDIO2_SRC
# (default ../shared/meridio-2 from the repository root), CONFORMANCE_MARKERS (a file: each
# control plane appends "E2E_DIR E2E_SERVER" to it, for e2e/run.sh's leftover check),
# CONFORMANCE_TIMEOUT (go test -timeout, default 20m), CONFORMANCE_RUN_TESTS (test names,
# commas or spaces between them: only these run, whatever the plan says of them, e.g. a
# test the default run skips; its files are NAME-selected-*, so that a diagnosis never
# replaces the default run's; every CRD of the release's standard channel is installed).
# Exit status: 0 when every run passed, 1 when one failed,
# 125 when a control plane could not be built or started.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$here/bin"
out="${CONFORMANCE_OUT:-$here/results}"
controllers=("$@")
((${#controllers[@]} > 0)) || controllers=(ours)
meridio_src="${MERIDIO2_SRC:-$root/../shared/meridio-2}"
mkdir -p "$bin" "$out"
out="$(cd "$out" && pwd)"

E2E_FULL=1 "$here/../controlplane.sh" build

# The test binary, built before any control plane starts: from this module (the suite
# version go.mod pins), or from a module made here around a source tree of the suite.
# Either way the GatewayClass and Gateway CRDs of the suite's own release (from the same
# module or tree) replace the control plane's before the controller starts: the suite
# refuses CRDs of another release, and the control plane keeps the release its other
# suites pin (docs/conformance.md, "Versions, and how they are pinned").
src="${CONFORMANCE_SUITE_SRC:-}"
if [[ -z "$src" ]]; then
  suite_version="$(cd "$here" && go list -m -f '{{.Version}}' sigs.k8s.io/gateway-api/conformance)"
  api_dir="$(cd "$here" && go mod download sigs.k8s.io/gateway-api && go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)"
  (cd "$here" && go vet ./... && go test -c -o "$bin/conformance.test" .)
  test_bin="$bin/conformance.test"
  tag=""
  suite_crds="$api_dir/config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml $api_dir/config/crd/standard/gateway.networking.k8s.io_gateways.yaml"
else
  src="$(cd "$src" && pwd)"
  [[ -f "$src/conformance/go.mod" && -d "$src/config/crd/standard" ]] ||
    { echo "conformance: $src is not a gateway-api source tree (conformance/go.mod, config/crd/standard)" >&2; exit 2; }
  rev="$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || true)"
  suite_version="a source tree${rev:+ at commit $rev}"
  mod="$bin/suite-src"
  rm -rf "$mod" && mkdir -p "$mod"
  cp "$here/conformance_test.go" "$mod/"
  cat >"$mod/go.mod" <<EOF
module github.com/gateway-reconcile/e2e/conformance/suite-src

go 1.26.0

require (
	github.com/gateway-reconcile/e2e/conformance v0.0.0-00010101000000-000000000000
	sigs.k8s.io/gateway-api v0.0.0-00010101000000-000000000000
	sigs.k8s.io/gateway-api/conformance v0.0.0-00010101000000-000000000000
)

replace github.com/gateway-reconcile/e2e/conformance => $here

// The harness's own replace directive does not apply here: only the main module's do.
replace github.com/gateway-reconcile/e2e/controlplane/pki => $here/../controlplane/pki

replace sigs.k8s.io/gateway-api => $src

replace sigs.k8s.io/gateway-api/conformance => $src/conformance
EOF
  (cd "$mod" && go mod tidy && go vet . && go test -c -o "$bin/suite-src.test" .)
  test_bin="$bin/suite-src.test"
  tag="-src"
  suite_crds="$src/config/crd/standard/gateway.networking.k8s.io_gatewayclasses.yaml $src/config/crd/standard/gateway.networking.k8s.io_gateways.yaml"
fi

for c in "${controllers[@]}"; do
  case "$c" in
    ours)
      if [[ -z "${CONFORMANCE_BIN:-}" ]]; then
        (cd "$root" && cargo build -p gateway-reconcile-kube --bin gateway-reconcile-controller)
      fi
      ;;
    meridio-2)
      if [[ ! -f "$meridio_src/cmd/controller-manager/main.go" ]]; then
        echo "conformance: Meridio-2's source is not at $meridio_src (set MERIDIO2_SRC)" >&2
        exit 1
      fi
      copy="$bin/meridio-2-src"
      rm -rf "$copy" && mkdir -p "$copy" && cp -a "$meridio_src/." "$copy/" && chmod -R u+w "$copy"
      echo "conformance: building Meridio-2's controller-manager from a copy of $meridio_src" >&2
      (cd "$copy" && GOFLAGS=-mod=mod go build -o "$bin/meridio-2-controller-manager" ./cmd/controller-manager)
      mkdir -p "$bin/meridio-2-templates"
      cp "$copy/config/templates/lb-deployment.yaml" "$bin/meridio-2-templates/"
      ;;
    *)
      echo "conformance: unknown controller $c (ours or meridio-2)" >&2
      exit 2
      ;;
  esac
done

rc=0
# Named tests (CONFORMANCE_RUN_TESTS) may be any of the suite's, e.g. one that applies an
# HTTPRoute or a ReferenceGrant: such a run installs every CRD of the release's standard
# channel (created, or replacing the control plane's), a default run only the two above.
if [[ -n "${CONFORMANCE_RUN_TESTS:-}" ]]; then
  tag="$tag-selected"
  crd_dir="$(dirname "${suite_crds%% *}")"
  for f in "$crd_dir"/gateway.networking.k8s.io_*.yaml; do
    case "$f" in
      */gateway.networking.k8s.io_gatewayclasses.yaml | */gateway.networking.k8s.io_gateways.yaml | *vap*) ;;
      *) suite_crds="$suite_crds $f" ;;
    esac
  done
fi
for c in "${controllers[@]}"; do
  name="$c$tag"
  case "$c" in
    ours)
      ctl="${CONFORMANCE_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/gateway-reconcile-controller}"
      report="$out/$name-report.yaml"
      crds="${E2E_CRDS:-}"
      ;;
    meridio-2)
      ctl="$bin/meridio-2-controller-manager"
      report=""
      # Its manager also runs the DistributionGroup and EndpointNetworkConfiguration
      # controllers, which need their CRDs: all of its config/crd/bases.
      crds="$(ls "$bin"/meridio-2-src/config/crd/bases/*.yaml | tr '\n' ' ')"
      ;;
  esac
  echo "conformance: the suite $suite_version against $c${CONFORMANCE_RUN_TESTS:+ (only: $CONFORMANCE_RUN_TESTS)}" >&2
  started=$SECONDS
  set +e
  CONFORMANCE_CONTROLLER="$c" CONFORMANCE_CONTROLLER_BIN="$ctl" \
    CONFORMANCE_CLUSTERROLE="$root/gateway-reconcile-kube/deploy/clusterrole.yaml" \
    CONFORMANCE_TEMPLATES="$bin/meridio-2-templates" CONFORMANCE_CRDS="$suite_crds" \
    CONFORMANCE_REPORT="$report" CONFORMANCE_TABLE="$out/$name-tests.md" \
    CONFORMANCE_SUITE_VERSION="$suite_version" CONFORMANCE_LOG="$out/$name-controller.log" \
    E2E_CRDS="$crds" E2E_FULL=1 "$here/../controlplane.sh" run -- sh -c '
      [ -z "$CONFORMANCE_MARKERS" ] || echo "$E2E_DIR $E2E_SERVER" >>"$CONFORMANCE_MARKERS"
      exec "$0" -test.v -test.count=1 -test.timeout "$1" -test.run "^TestConformance\$"' \
    "$test_bin" "${CONFORMANCE_TIMEOUT:-20m}" 2>&1 | tee "$out/$name.log"
  r="${PIPESTATUS[0]}"
  set -e
  echo "conformance: $c: exit status $r after $((SECONDS - started)) s (output in $out/$name.log)" >&2
  [[ "$r" != 125 ]] || exit 125
  [[ "$r" == 0 ]] || rc=1
done
exit "$rc"
