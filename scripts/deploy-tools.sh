#!/usr/bin/env bash
# Installs the real tools the deployment tests use and prints the path of the one asked for on the last
# line of stdout (progress goes to stderr). Idempotent: a tool already there is used as it is.
#
#   scripts/deploy-tools.sh promtool|prometheus|docker-compose|helm|haproxy|jaeger|keycloak
#
# promtool, prometheus: Debian package `prometheus`; haproxy: Debian package `haproxy` (the fleet test's
# load balancer, run with deploy/haproxy/haproxy.cfg); docker-compose: Debian package `docker-compose`
# (validates a compose file without a Docker engine); helm and jaeger: built from the Go module proxy
# (helm.sh/helm/v3/cmd/helm@$HELM_VERSION, github.com/jaegertracing/jaeger/cmd/jaeger@$JAEGER_VERSION)
# into the project's cache folder; keycloak: scripts/keycloak.sh (Maven Central, into the cache folder).
#
#   DAGU_CACHE_DIR  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway), shared with Dagu
#   GO              the go binary to use (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

HELM_VERSION=v3.22.0
# Keep in step with the image pinned in docker-compose.yml (jaegertracing/jaeger).
JAEGER_VERSION=v1.75.0
tool="${1:-}"

if [ -z "${HOME:-}" ]; then
  HOME="$(cd ~ 2>/dev/null && pwd || echo /tmp)"
  export HOME
fi
PATH="$PATH:/usr/sbin:/usr/bin:/sbin:/bin"

# Installs Debian packages, running `apt-get update` only when the package index has no candidate.
apt_install() {
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "deploy-tools: $* not found: install it (Debian/Ubuntu: apt-get install $*)" >&2
    exit 1
  fi
  # (grep without -q: an early exit would fail the pipeline under pipefail and force an update.)
  if ! apt-cache policy "$@" 2>/dev/null | grep 'Candidate: [0-9]' >/dev/null; then
    echo "deploy-tools: apt-get update" >&2
    apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  fi
  echo "deploy-tools: apt-get install $*" >&2
  # The package may start a system service where an init system runs; the tests start their own.
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >&2
}

cache_root="${DAGU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway}"

find_go() {
  if [ -n "${GO:-}" ]; then
    [ -x "$GO" ] || { echo "deploy-tools: GO=$GO is not an executable Go toolchain" >&2; exit 1; }
    printf '%s' "$GO"
    return
  fi
  if command -v go >/dev/null 2>&1; then
    command -v go
    return
  fi
  for candidate in /usr/local/go/bin/go /usr/lib/go/bin/go "$HOME/go/bin/go" "$HOME/sdk/go/bin/go"; do
    if [ -x "$candidate" ]; then
      printf '%s' "$candidate"
      return
    fi
  done
  echo "deploy-tools: cannot build $tool: no Go toolchain found (looked on PATH and in /usr/local/go/bin); install Go or set GO=/path/to/go" >&2
  exit 1
}

# Prints the first executable file named $1 on PATH (bash's `command -v` also names a file it cannot run).
find_on_path() {
  local dir dirs
  IFS=: read -ra dirs <<<"$PATH"
  for dir in "${dirs[@]}"; do
    if [ -f "$dir/$1" ] && [ -x "$dir/$1" ]; then
      printf '%s\n' "$dir/$1"
      return 0
    fi
  done
  return 1
}

# Prints the path of a command, or fails naming it (an installed package whose binary is not on PATH).
on_path() {
  find_on_path "$1" || { echo "deploy-tools: $1 is not on PATH ($PATH) after installing $2" >&2; exit 1; }
}

case "$tool" in
  promtool | prometheus)
    find_on_path "$tool" >/dev/null || apt_install prometheus
    on_path "$tool" prometheus
    ;;
  haproxy)
    find_on_path haproxy >/dev/null || apt_install haproxy
    on_path haproxy haproxy
    ;;
  docker-compose)
    find_on_path docker-compose >/dev/null || apt_install docker-compose
    on_path docker-compose docker-compose
    ;;
  helm | jaeger)
    case "$tool" in
      helm) version=$HELM_VERSION module=helm.sh/helm/v3/cmd/helm ;;
      jaeger) version=$JAEGER_VERSION module=github.com/jaegertracing/jaeger/cmd/jaeger ;;
    esac
    target_dir="$cache_root/$tool-$version"
    binary="$target_dir/$tool"
    if [ ! -x "$binary" ]; then
      go_bin="$(find_go)"
      echo "deploy-tools: building $tool $version with $("$go_bin" version) (first run only; takes a few minutes)" >&2
      mkdir -p "$target_dir"
      work="$(mktemp -d "${TMPDIR:-/tmp}/$tool-build.XXXXXX")"
      trap 'rm -rf "$work"' EXIT
      if [ "$tool" = jaeger ]; then
        # `go install jaeger@version` refuses the module: its go.mod has a replace directive (sarama).
        # The same source, from the same module proxy, builds as the main module instead.
        source_dir="$(GOFLAGS=-mod=mod "$go_bin" mod download -json "${module%%/cmd/*}@$version" |
          sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
        [ -d "$source_dir" ] || { echo "deploy-tools: go mod download of jaeger $version failed" >&2; exit 1; }
        build() { (cd "$source_dir" && GOFLAGS=-mod=mod "$go_bin" build -trimpath -o "$work/$tool" ./cmd/jaeger); }
      else
        build() { GOBIN="$work" "$go_bin" install "$module@$version"; }
      fi
      build >&2 || {
        echo "deploy-tools: building $tool $version failed (see the Go output above)" >&2
        exit 1
      }
      # Move into place atomically so a concurrent run never sees a half-written binary.
      tmp_binary="$(mktemp "$target_dir/.$tool.XXXXXX")"
      cp "$work/$tool" "$tmp_binary"
      chmod 755 "$tmp_binary"
      mv -f "$tmp_binary" "$binary"
    fi
    echo "$binary"
    ;;
  keycloak)
    exec bash "$(dirname "${BASH_SOURCE[0]}")/keycloak.sh"
    ;;
  *)
    echo "usage: scripts/deploy-tools.sh promtool|prometheus|docker-compose|helm|haproxy|jaeger|keycloak" >&2
    exit 2
    ;;
esac
