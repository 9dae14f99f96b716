#!/bin/bash
# Sets up a Debian 12 machine and runs the whole test suite: the unit tests
# (meson) and the integration tests (pytest) in a normal build, again in an
# ASan+UBSan build, a bounded libFuzzer pass over each decoder, and a
# clang-format check. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	# The integration tests run sway as user nobody, which takes root.
	exec sudo "$0" "$@"
fi

tools/deps.sh || { echo "dependency install failed"; echo "0 passed, 1 failed"; exit 1; }
# The browser tests' driver, puppeteer-core, at the version the lock file
# names (npm's registry, once; nothing is fetched while the tests run).
(cd tests/web && npm ci --no-audit --no-fund --loglevel=error) ||
	{ echo "npm ci in tests/web failed"; echo "0 passed, 1 failed"; exit 1; }

# pytest comes from Debian's python3-pytest: prefer the python3 that has it.
PYTHON=python3
if ! $PYTHON -c "import pytest, pytest_timeout, xdist" 2>/dev/null; then
	PYTHON=/usr/bin/python3
fi

status=0
logs=()
# Steps that are not meson tests (builds, the format check) count too.
steps_passed=0
steps_failed=0
step() {
	if [ "$1" = ok ]; then
		steps_passed=$((steps_passed + 1))
	else
		steps_failed=$((steps_failed + 1))
		status=1
	fi
}
build() {
	local dir=$1
	shift
	if [ -d "$dir" ]; then
		meson setup --reconfigure "$dir" "$@" >"$dir.setup.log" 2>&1
	else
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1
	fi || { cat "$dir.setup.log"; return 1; }
	ninja -C "$dir" || return 1
}

run_suite() {
	local dir=$1
	echo "== unit tests in $dir"
	meson test -C "$dir" --print-errorlogs --num-processes 2 || status=1
	logs+=("$dir/meson-logs/testlog.json")
	echo "== integration tests in $dir"
	# Three at once: most of a test is waiting on its desktop and apps, so
	# three share two cores well (a third of the time of one at a time).
	RCOMP_BUILD=$PWD/$dir $PYTHON -m pytest tests -q -n "${PYTEST_WORKERS:-3}" \
		-m "not quiet" --junitxml="$dir/pytest.xml" || status=1
	logs+=("$dir/pytest.xml")
	# The tests that count glitches in sound, on an otherwise idle machine:
	# beside two others (chromium, x264, llvmpipe) on two cores, the local
	# sink itself stutters, and that is not what they measure; and the
	# browsers' door's floods, whose load would fail others' timing.
	echo "== integration tests in $dir, one at a time"
	RCOMP_BUILD=$PWD/$dir $PYTHON -m pytest tests -q -p no:xdist -m quiet \
		--junitxml="$dir/pytest-quiet.xml" || status=1
	logs+=("$dir/pytest-quiet.xml")
}

if build build; then
	step ok
	run_suite build
else
	echo "build failed"
	step failed
fi

# Sanitizers: leaks in our code fail the tests; the system libraries' own
# one-time allocations are not ours to fix.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=86
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
if build build-asan -Dbuildtype=debug -Db_sanitize=address,undefined -Db_lundef=false; then
	step ok
	run_suite build-asan
else
	echo "sanitizer build failed"
	step failed
fi

# A bounded fuzz pass over each decoder (tools/fuzz.sh runs longer ones).
for h in wire frame video lanes door names upgrade; do
	if tools/fuzz.sh "${FUZZ_SECONDS:-30}" "$h"; then
		step ok
	else
		step failed
	fi
done

echo "== clang-format"
format_log=$(mktemp)
if git ls-files '*.c' '*.h' | xargs clang-format --dry-run --Werror >"$format_log" 2>&1; then
	step ok
else
	head -40 "$format_log"
	step failed
fi
rm -f "$format_log"

python3 tools/summarize.py "$steps_passed" "$steps_failed" "${logs[@]}" || status=1
exit $status
