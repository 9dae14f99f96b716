#!/bin/bash
# The demo: installs what it needs on Debian 12, builds rcomp, starts a
# headless sway as the local desktop, runs foot through rcomp-view --local,
# types into it, and saves a screenshot of the local window.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	# The headless desktop runs sway as user nobody, which takes root.
	exec sudo "$0" "$@"
fi
tools/deps.sh
if [ ! -d build ]; then
	meson setup build >/dev/null
fi
ninja -C build >/dev/null
exec python3 tools/demo.py "$@"
