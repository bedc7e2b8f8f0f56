#!/usr/bin/env bash
# Builds the Dagu pinned in scripts/dagu-version.json into a cache folder and prints the binary's path on
# the last line of its output. Reuses the cached binary when it is already there, so repeated runs cost
# nothing. `go install module@version` cannot be used here: it reads the module's version list (for
# deprecation notices) and the proxy refuses part of that list, so the build goes through a throwaway module.
#
#   DAGU_CACHE_DIR   cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway)
#   GO               the go binary to use (default: `go` on PATH, else /usr/local/go/bin/go)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
pin="$here/dagu-version.json"

# Reads one string field of the flat pin file without needing jq or node.
field() {
  local value
  value="$(sed -n "s/^[[:space:]]*\"$1\"[[:space:]]*:[[:space:]]*\"\([^\"]*\)\".*/\1/p" "$pin" | head -n 1)"
  if [ -z "$value" ]; then
    echo "build-dagu: field \"$1\" missing in $pin" >&2
    exit 1
  fi
  printf '%s' "$value"
}

module="$(field module)"
version="$(field version)"
package="$(field package)"
go_directive="$(field goDirective)"

if [ -z "${HOME:-}" ]; then
  HOME="$(cd ~ 2>/dev/null && pwd || echo /tmp)"
  export HOME
fi
cache_root="${DAGU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway}"
target_dir="$cache_root/dagu-$version"
binary="$target_dir/dagu"

if [ -x "$binary" ]; then
  echo "$binary"
  exit 0
fi

go_bin="${GO:-}"
if [ -z "$go_bin" ]; then
  if command -v go >/dev/null 2>&1; then
    go_bin="$(command -v go)"
  else
    for candidate in /usr/local/go/bin/go /usr/lib/go/bin/go "$HOME/go/bin/go" "$HOME/sdk/go/bin/go"; do
      if [ -x "$candidate" ]; then
        go_bin="$candidate"
        break
      fi
    done
  fi
fi
if [ -n "${GO:-}" ] && [ ! -x "$go_bin" ]; then
  echo "build-dagu: cannot build Dagu $version: GO=$GO is not an executable Go toolchain" >&2
  exit 1
fi
if [ -z "$go_bin" ]; then
  echo "build-dagu: cannot build Dagu $version: no Go toolchain found (looked on PATH and in /usr/local/go/bin); install Go or set GO=/path/to/go" >&2
  exit 1
fi

echo "build-dagu: building $module@$version with $("$go_bin" version) (first run only; takes a few minutes)" >&2
mkdir -p "$target_dir"
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

# Move into place atomically so a concurrent run never sees a half-written binary.
tmp_binary="$(mktemp "$target_dir/.dagu.XXXXXX")"
cp "$work/dagu" "$tmp_binary"
chmod 755 "$tmp_binary"
mv -f "$tmp_binary" "$binary"
echo "$binary"
