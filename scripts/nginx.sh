#!/usr/bin/env bash
# Makes Debian's nginx available (the reverse-proxy recipe's test starts a real one in front of the
# gateway) and prints its path on the last line of stdout (scripts/debian-tool.sh).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/debian-tool.sh" nginx
