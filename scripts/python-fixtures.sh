#!/usr/bin/env bash
# Prepares a Python from PyPI in a virtual environment inside the project's cache, and prints its
# interpreter's path on the last line. Reuses the environment when it is already there. Exits non-zero
# with the reason otherwise.
#
#   usage: python-fixtures.sh [workbook|mcp-client]        default: workbook
#
#   workbook     openpyxl and msoffcrypto-tool: they write the cross-check workbook fixtures
#   mcp-client   the Python MCP SDK (`mcp`, with its OAuth client): test/support/python/oauth_read.py
set -euo pipefail

cache_root="${DAGU_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/dagu-mcp-gateway}"
set_name="${1:-workbook}"
case "$set_name" in
  workbook)
    venv="$cache_root/python-fixtures"
    requirements=(openpyxl==3.1.5 msoffcrypto-tool==6.1.0)
    probe='import openpyxl, msoffcrypto'
    ;;
  mcp-client)
    # The pin is part of the folder name: a new pin gets a fresh environment.
    venv="$cache_root/python-mcp-client-2.3.0"
    requirements=(mcp==2.3.0)
    probe='import mcp.client.auth, mcp.client.streamable_http, httpx2'
    ;;
  *)
    echo "python-fixtures: unknown set \"$set_name\" (workbook or mcp-client)" >&2
    exit 2
    ;;
esac
python="$venv/bin/python"

if [ -x "$python" ] && "$python" -c "$probe" 2>/dev/null; then
  echo "$python"
  exit 0
fi

# Debian's python3 comes without venv/ensurepip (package python3-venv): install it when we may.
apt_install() {
  command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ] || return 1
  echo "python-fixtures: installing $* with apt-get" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; }
}
if ! command -v python3 >/dev/null 2>&1; then
  apt_install python3 python3-venv || { echo "python-fixtures: python3 not found (install python3 and python3-venv)" >&2; exit 1; }
fi
host_python="$(command -v python3)"
if ! "$host_python" -c 'import venv, ensurepip' 2>/dev/null; then
  apt_install python3-venv || { echo "python-fixtures: $host_python has no venv/ensurepip (install python3-venv)" >&2; exit 1; }
fi
mkdir -p "$cache_root"
rm -rf "$venv"
"$host_python" -m venv "$venv" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check "${requirements[@]}" >&2
"$python" -c "$probe" >&2
echo "$python"
