#!/usr/bin/env bash
# Gets the Dagu pinned in scripts/dagu-version.json for one generation and prints the binary's path on
# the last line of stdout (progress goes to stderr). Idempotent: cached binaries are reused at once.
#
#   usage: build-dagu.sh [2|1]        default: the pin file's defaultGeneration
#
# Generation 2 (the system under test), the first source that applies:
#   1. DAGU_BIN, when set;
#   2. ../shared/dagu/build.sh beside the project folder (the unmodified source of the pinned tag and a
#      build script for machines whose module proxy does not serve Dagu 2.x; it caches on its own);
#   3. the binary a previous step 4 left in the cache;
#   4. `go install <package>@<version>` (a machine with Go and the internet).
# Generation 1: DAGU1_BIN when set, else built through a throwaway module and cached (`go install
# module@version` reads the module's version list, and the proxy here refuses part of that list).
#
#   DAGU_CACHE_DIR   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway)
#   GO               the go binary to use (default: `go` on PATH, else the usual install folders)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
pin="$here/dagu-version.json"

if [ -z "${HOME:-}" ]; then
  HOME="$(cd ~ 2>/dev/null && pwd || echo /tmp)"
  export HOME
fi

node_bin="$(command -v node || true)"
[ -n "$node_bin" ] || { echo "build-dagu: node is not on PATH (needed to read $pin)" >&2; exit 1; }

generation="${1:-$("$node_bin" -p "require(process.argv[1]).defaultGeneration" "$pin")}"
# Reads one string field of this generation's pin ("" when absent).
field() {
  "$node_bin" -p "(require(process.argv[1]).generations[process.argv[2]] ?? {})[process.argv[3]] ?? ''" \
    "$pin" "$generation" "$1"
}
module="$(field module)"
version="$(field version)"
package="$(field package)"
[ -n "$module" ] && [ -n "$version" ] && [ -n "$package" ] || {
  echo "build-dagu: no generation \"$generation\" in $pin (use 1 or 2)" >&2
  exit 1
}

cache_root="${DAGU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway}"
target_dir="$cache_root/dagu-$version"
binary="$target_dir/dagu"

# Fails unless the binary reports the pinned version (tests must not quietly run another release).
check_version() {
  local reported
  reported="$("$1" version 2>&1 | head -n 1 || true)"
  case "$reported" in
    *"${version#v}"*) ;;
    *) echo "build-dagu: $1 reports \"$reported\", expected Dagu $version" >&2; exit 1 ;;
  esac
}

find_go() {
  if [ -n "${GO:-}" ]; then
    [ -x "$GO" ] || { echo "build-dagu: GO=$GO is not an executable Go toolchain" >&2; exit 1; }
    printf '%s' "$GO"
    return
  fi
  if command -v go >/dev/null 2>&1; then command -v go; return; fi
  local candidate
  for candidate in /usr/local/go/bin/go /usr/lib/go/bin/go "$HOME/go/bin/go" "$HOME/sdk/go/bin/go"; do
    if [ -x "$candidate" ]; then printf '%s' "$candidate"; return; fi
  done
}

no_go() {
  echo "build-dagu: cannot get Dagu $version: no Go toolchain found; install Go (https://go.dev/dl/) or set DAGU_BIN=/path/to/dagu-$version" >&2
  exit 1
}

# Copies a built binary into the cache atomically, so a concurrent run never sees a half-written file.
install_binary() {
  local tmp_binary
  mkdir -p "$target_dir"
  tmp_binary="$(mktemp "$target_dir/.dagu.XXXXXX")"
  cp "$1" "$tmp_binary"
  chmod 755 "$tmp_binary"
  mv -f "$tmp_binary" "$binary"
}

# ---------------------------------------------------------------- generation 2
if [ "$generation" = 2 ]; then
  if [ -n "${DAGU_BIN:-}" ]; then
    [ -x "$DAGU_BIN" ] || { echo "build-dagu: DAGU_BIN=$DAGU_BIN is not an executable file" >&2; exit 1; }
    check_version "$DAGU_BIN"
    echo "$DAGU_BIN"
    exit 0
  fi

  shared_build="$root/../shared/dagu/build.sh"
  if [ -f "$shared_build" ]; then
    go_bin="$(find_go)"
    [ -n "$go_bin" ] || no_go
    built="$(GO="$go_bin" bash "$shared_build" ${DAGU_CACHE_DIR:+"$cache_root/dagu-$version-build"} | tail -n 1)" || {
      echo "build-dagu: ../shared/dagu/build.sh failed to build Dagu $version (see its output above)" >&2
      exit 1
    }
    check_version "$built"
    echo "$built"
    exit 0
  fi

  if [ -x "$binary" ]; then
    echo "$binary"
    exit 0
  fi
  go_bin="$(find_go)"
  [ -n "$go_bin" ] || no_go
  echo "build-dagu: go install $package@$version with $("$go_bin" version) (first run only; about 4 minutes)" >&2
  work="$(mktemp -d "${TMPDIR:-/tmp}/dagu-build.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  GOBIN="$work" "$go_bin" install -trimpath -ldflags "-X main.version=$version" "$package@$version" >&2 || {
    echo "build-dagu: go install $package@$version failed (see the Go output above); without the internet, set DAGU_BIN=/path/to/dagu-$version" >&2
    exit 1
  }
  install_binary "$work/cmd"
  check_version "$binary"
  echo "$binary"
  exit 0
fi

# ---------------------------------------------------------------- generation 1
if [ -n "${DAGU1_BIN:-}" ]; then
  [ -x "$DAGU1_BIN" ] || { echo "build-dagu: DAGU1_BIN=$DAGU1_BIN is not an executable file" >&2; exit 1; }
  check_version "$DAGU1_BIN"
  echo "$DAGU1_BIN"
  exit 0
fi
if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi
go_bin="$(find_go)"
[ -n "$go_bin" ] || no_go
go_directive="$(field goDirective)"
echo "build-dagu: building $module@$version with $("$go_bin" version) (first run only; about 2 minutes)" >&2
work="$(mktemp -d "${TMPDIR:-/tmp}/dagu-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
printf 'module daguinstall\n\ngo %s\n\nrequire %s %s\n' "$go_directive" "$module" "$version" >"$work/go.mod"
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=mod"
(
  cd "$work"
  "$go_bin" mod download "$module@$version"
  "$go_bin" get "$package@$version"
  "$go_bin" build -trimpath -ldflags "-X main.version=${version#v}" -o "$work/dagu" "$package"
) >&2 || {
  echo "build-dagu: building $module@$version failed (see the Go output above)" >&2
  exit 1
}
install_binary "$work/dagu"
echo "$binary"
