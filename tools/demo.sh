#!/bin/bash
# The demo: installs what it needs on Debian 12, builds rcomp, starts a
# headless sway as the local desktop, runs foot in rcomp-run and shows it
# with rcomp-view, types into it, and saves a screenshot of the local window;
# then the same session in chromium, and a screenshot of the page.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	# The headless desktop runs sway as user nobody, which takes root.
	exec sudo "$0" "$@"
fi
tools/deps.sh
# The page's screenshot is taken as the tests drive chromium: puppeteer-core,
# from npm's registry, once.
if [ ! -d tests/web/node_modules/puppeteer-core ]; then
	(cd tests/web && npm ci --no-audit --no-fund --loglevel=error)
fi
if [ ! -d build ]; then
	meson setup build >/dev/null
fi
ninja -C build >/dev/null
exec python3 tools/demo.py "$@"
