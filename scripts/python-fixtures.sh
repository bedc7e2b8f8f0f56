#!/usr/bin/env bash
# Prepares the Python used to write cross-check workbook fixtures (openpyxl, msoffcrypto-tool from
# PyPI) in a virtual environment inside the project's cache, and prints its interpreter's path on the
# last line. Reuses the environment when it is already there. Exits non-zero with the reason otherwise.
set -euo pipefail

cache_root="${DAGU_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/dagu-mcp-gateway}"
venv="$cache_root/python-fixtures"
python="$venv/bin/python"
requirements=(openpyxl==3.1.5 msoffcrypto-tool==6.1.0)

if [ -x "$python" ] && "$python" -c 'import openpyxl, msoffcrypto' 2>/dev/null; then
  echo "$python"
  exit 0
fi

host_python="$(command -v python3 || true)"
[ -n "$host_python" ] || { echo "python-fixtures: python3 not found" >&2; exit 1; }
mkdir -p "$cache_root"
rm -rf "$venv"
"$host_python" -m venv "$venv" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check "${requirements[@]}" >&2
"$python" -c 'import openpyxl, msoffcrypto' >&2
echo "$python"
