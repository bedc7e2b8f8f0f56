#!/usr/bin/env bash
# Makes Debian's redis-server available (the shared rate-limit store's tests start a real one) and
# prints its path on the last line of stdout (scripts/debian-tool.sh). The package starts a system
# service where an init system runs; the tests start their own.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/debian-tool.sh" redis-server
