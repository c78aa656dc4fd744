#!/usr/bin/env bash
# The controller's image, built here from the shipped Dockerfile
# (gateway-reconcile-kube/Dockerfile) by buildah, without a registry: the Dockerfile's two
# base images are build arguments whose defaults are the public images; here they are local
# images made from Debian's packages and the Rust toolchain this machine builds with.
#
#   e2e/image.sh build      build the image (skipped when its inputs are unchanged) and
#                           write it as an OCI archive to controlplane/bin/images/controller.tar,
#                           which the real node (E2E_NODE=real) imports
#   e2e/image.sh measure    print the image's size, user, entrypoint, and the binary's
#                           start-up time (to the end of `--help`, 5 runs)
#
# The local base images (built once, kept in buildah's storage):
#   localhost/gateway-reconcile-e2e/rust:bookworm  Debian 12 (debootstrap, minbase) with gcc
#       and libc6-dev, and the Rust toolchain of this machine's `rustc` copied in (no rustup):
#       the stand-in for docker.io/library/rust:1.95-bookworm;
#   localhost/gateway-reconcile-e2e/cc:nonroot  the files of Debian 12's libc6 and libgcc-s1,
#       the CA bundle, a passwd and group with user 65532 "nonroot", /tmp: the stand-in for
#       gcr.io/distroless/cc-debian12:nonroot (which is built from the same packages).
# Needs root, Debian's buildah, runc and debootstrap (installed when missing) and the Debian
# mirror; cargo reaches crates.io from the build (host network, the host's CA bundle).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="$here/controlplane/bin"
# The name the chart's default values give the image (repository `gateway-reconcile-controller`,
# tag the chart's appVersion), as containerd names it.
version="$(awk -F'"' '/^appVersion:/ { print $2 }' "$root/gateway-reconcile-kube/charts/gateway-reconcile-controller/Chart.yaml")"
image="docker.io/library/gateway-reconcile-controller:$version"
builder="localhost/gateway-reconcile-e2e/rust:bookworm"
runtime="localhost/gateway-reconcile-e2e/cc:nonroot"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

die() {
  echo "image.sh: $*" >&2
  exit 125
}

install_tools() {
  local missing=() p
  for p in buildah debootstrap; do
    command -v "$p" >/dev/null || missing+=("$p")
  done
  # buildah runs each RUN step with an OCI runtime, which Debian's package only recommends
  # (crun | runc): without one, a fresh machine fails the first RUN with "exec: no command".
  command -v runc >/dev/null || command -v crun >/dev/null || missing+=(runc)
  ((${#missing[@]} == 0)) && return 0
  echo "image.sh: installing ${missing[*]} (Debian's packages)" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
    >/dev/null || die "cannot install ${missing[*]}"
}

exists() { buildah inspect --type image "$1" >/dev/null 2>&1; }

# The toolchain directory of the `rustc` that builds this repository (its sysroot).
toolchain() { rustc --print sysroot; }

build_builder() {
  local stamp
  stamp="$(rustc --version)"
  if exists "$builder" && [[ "$(buildah inspect --type image --format '{{index .ImageAnnotations "org.gateway-reconcile.rustc"}}' "$builder")" == "$stamp" ]]; then
    return 0
  fi
  echo "image.sh: building the builder image ($stamp on Debian 12)" >&2
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "$work"; trap - RETURN' RETURN
  debootstrap --variant=minbase --include=gcc,libc6-dev,ca-certificates bookworm "$work/root" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { tail -n 20 "$work/debootstrap.log" >&2; die "debootstrap failed"; }
  rm -rf "$work/root/var/cache/apt/archives"/*.deb "$work/root/var/lib/apt/lists"/*
  # The toolchain without its documentation (share/: most of its size).
  mkdir -p "$work/root/usr/local/rust"
  local d
  for d in bin lib libexec etc; do
    [[ ! -e "$(toolchain)/$d" ]] || cp -a "$(toolchain)/$d" "$work/root/usr/local/rust/"
  done
  local c
  c="$(buildah from scratch)"
  buildah copy -q "$c" "$work/root" / >/dev/null
  buildah config --env PATH=/usr/local/rust/bin:/usr/local/cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env CARGO_HOME=/usr/local/cargo --annotation "org.gateway-reconcile.rustc=$stamp" "$c"
  buildah commit -q --rm "$c" "$builder" >/dev/null
}

build_runtime() {
  exists "$runtime" && return 0
  echo "image.sh: building the runtime base image (Debian 12's libc6, libgcc-s1)" >&2
  local work deb
  work="$(mktemp -d)"
  trap 'rm -rf "$work"; trap - RETURN' RETURN
  mkdir -p "$work/debs" "$work/root/etc/ssl/certs" "$work/root/tmp" "$work/root/home/nonroot"
  (cd "$work/debs" && apt-get -q -o APT::Sandbox::User=root download libc6 libgcc-s1 >/dev/null) || die "cannot download libc6, libgcc-s1"
  for deb in "$work"/debs/*.deb; do dpkg-deb -x "$deb" "$work/root"; done
  rm -rf "$work/root/usr/share/doc" "$work/root/usr/share/lintian" "$work/root/usr/share/locale"
  [[ -f /etc/ssl/certs/ca-certificates.crt ]] || die "no CA bundle at /etc/ssl/certs/ca-certificates.crt (Debian's ca-certificates)"
  cp /etc/ssl/certs/ca-certificates.crt "$work/root/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$work/root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\n' >"$work/root/etc/group"
  chmod 1777 "$work/root/tmp"
  chown 65532:65532 "$work/root/home/nonroot"
  local c
  c="$(buildah from scratch)"
  buildah copy -q "$c" "$work/root" / >/dev/null
  buildah config --user 65532:65532 --workingdir /home/nonroot "$c"
  buildah commit -q --rm "$c" "$runtime" >/dev/null
}

stamp() {
  { rustc --version
    buildah inspect --type image --format '{{.FromImageID}}' "$builder"
    buildah inspect --type image --format '{{.FromImageID}}' "$runtime"
    git -C "$root" ls-files -s -- Cargo.toml Cargo.lock src gateway-reconcile-kube
    git -C "$root" diff -- Cargo.toml Cargo.lock src gateway-reconcile-kube; } | sha256sum | cut -d' ' -f1
}

build() {
  install_tools
  build_builder
  build_runtime
  local s
  s="$(stamp)"
  if [[ -f "$bin/images/controller.tar" && "$(cat "$bin/.stamp-image" 2>/dev/null)" == "$s" ]]; then
    return 0
  fi
  echo "image.sh: building $image from gateway-reconcile-kube/Dockerfile" >&2
  rm -f "$bin/.stamp-image"
  mkdir -p "$bin/images"
  # The build's RUN steps see this host's CA bundle (not copied into the image): cargo
  # reaches crates.io through whatever proxy the host trusts.
  (cd "$root" && buildah build -q --layers --network host \
      -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
      --ignorefile gateway-reconcile-kube/Dockerfile.dockerignore \
      --build-arg "BUILDER_IMAGE=$builder" --build-arg "RUNTIME_IMAGE=$runtime" \
      -f gateway-reconcile-kube/Dockerfile -t "$image" .) >/dev/null || die "buildah build failed"
  rm -f "$bin/images/controller.tar"
  buildah push -q "$image" "oci-archive:$bin/images/controller.tar:$image" >/dev/null || die "cannot write the OCI archive"
  echo "$s" >"$bin/.stamp-image"
}

measure() {
  exists "$image" || die "no image $image: run $0 build first"
  local size user entry c i t0 t1 runs=()
  size="$(buildah inspect --type image --format '{{.Size}}' "$image" 2>/dev/null || true)"
  [[ -n "$size" ]] || size="$(stat -c %s "$bin/images/controller.tar")"
  user="$(buildah inspect --type image --format '{{.OCIv1.Config.User}}' "$image")"
  entry="$(buildah inspect --type image --format '{{.OCIv1.Config.Entrypoint}}' "$image")"
  echo "image $image"
  echo "archive $(stat -c %s "$bin/images/controller.tar") bytes"
  echo "user $user"
  echo "entrypoint $entry"
  # The binary's own start: run from the image's root filesystem, mounted, on this host.
  c="$(buildah from -q "$image")"
  local mnt
  mnt="$(buildah mount "$c")"
  for i in 1 2 3 4 5; do
    t0="$(date +%s%N)"
    "$mnt/usr/local/bin/gateway-reconcile-controller" --help >/dev/null
    t1="$(date +%s%N)"
    runs+=("$(((t1 - t0) / 1000000))")
  done
  echo "binary $(stat -c %s "$mnt/usr/local/bin/gateway-reconcile-controller") bytes"
  buildah umount "$c" >/dev/null
  buildah rm "$c" >/dev/null
  echo "start to exit of --help, ms: ${runs[*]}"
}

case "${1:-}" in
  build) build ;;
  measure) measure ;;
  *)
    echo "usage: $0 build | measure" >&2
    exit 2
    ;;
esac
