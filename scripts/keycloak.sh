#!/usr/bin/env bash
# Installs Keycloak, the identity provider of the Keycloak end-to-end test and of docs/oauth-keycloak.md,
# from Maven Central (org.keycloak:keycloak-quarkus-dist, fetched with Maven) into the project's cache
# folder, and prints the path of its bin/kc.sh on the last line of stdout (progress goes to stderr).
# Idempotent: an installed version costs nothing. Needs Java 17 or later (Debian's openjdk-17-jre-headless)
# and Maven (Debian's maven), installed with apt-get when missing and run as root
# (scripts/debian-tool.sh); otherwise exits non-zero saying what to install.
#
#   DAGU_CACHE_DIR  cache root (default: ${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway)
#
# 26.7.3 is the newest 26.x tried here, and runs on Java 17 (`kc.sh --version` names the JVM).
set -euo pipefail

KEYCLOAK_VERSION=26.7.3
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ -z "${HOME:-}" ]; then
  HOME="$(cd ~ 2>/dev/null && pwd || echo /tmp)"
  export HOME
fi
cache_root="${DAGU_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dagu-mcp-gateway}"
target="$cache_root/keycloak-$KEYCLOAK_VERSION"

if [ ! -f "$target/.installed" ]; then
  # The last line of debian-tool.sh's output is the command's path.
  java="$(bash "$here/debian-tool.sh" java openjdk-17-jre-headless | tail -n 1)"
  mvn="$(bash "$here/debian-tool.sh" mvn maven | tail -n 1)"
  echo "keycloak: fetching org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION from Maven Central (once; about 175 MB)" >&2
  mkdir -p "$cache_root"
  work="$(mktemp -d "$cache_root/.keycloak-install.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  "$mvn" -q -B dependency:copy \
    "-Dartifact=org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:tar.gz" \
    "-DoutputDirectory=$work" >&2 || {
    echo "keycloak: Maven could not fetch org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION (see above)" >&2
    exit 1
  }
  tar -xzf "$work/keycloak-quarkus-dist-$KEYCLOAK_VERSION.tar.gz" -C "$work"
  rm -f "$work/keycloak-quarkus-dist-$KEYCLOAK_VERSION.tar.gz"
  JAVA_HOME="$(dirname "$(dirname "$(readlink -f "$java")")")" \
    "$work/keycloak-$KEYCLOAK_VERSION/bin/kc.sh" --version >&2 || {
    echo "keycloak: Keycloak $KEYCLOAK_VERSION does not run on $("$java" -version 2>&1 | head -n 1)" >&2
    exit 1
  }
  touch "$work/keycloak-$KEYCLOAK_VERSION/.installed"
  # Moved into place whole: a concurrent or interrupted run never sees a half-unpacked Keycloak.
  rm -rf "$target"
  mv "$work/keycloak-$KEYCLOAK_VERSION" "$target"
fi
echo "$target/bin/kc.sh"
