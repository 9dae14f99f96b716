#!/bin/bash
# Builds the libFuzzer harnesses with clang, ASan and UBSan, and runs each
# for SECONDS (default 60) on the corpus in tests/fuzz/corpus. A crash
# fails the run and leaves its input in build-fuzz/artifacts/; so does an
# input that makes a harness use more than FUZZ_RSS_MB (default 512) MiB.
#
#   tools/fuzz.sh [SECONDS] [HARNESS...]      harnesses: wire frame video lanes door names upgrade
#
# For a long campaign, give hours and keep the corpus it grows:
#   FUZZ_KEEP_CORPUS=1 tools/fuzz.sh 14400 frame
set -uo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
	harnesses=(wire frame video lanes door names upgrade)
fi

if [ ! -d build-fuzz ]; then
	CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debugoptimized >/dev/null || exit 1
fi
ninja -C build-fuzz >/dev/null || exit 1

# Seeds are regenerated from the code (so they follow the wire format) and
# joined with the kept corpus; the run's discoveries stay in a scratch copy.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build-fuzz/tests/fuzz/fuzz-seeds "$work/seeds"
mkdir -p build-fuzz/artifacts
# ASan's quarantine of freed memory (256 MiB by default) counts towards the
# RSS limit; a smaller one leaves the limit to what the code under test holds.
export ASAN_OPTIONS=quarantine_size_mb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}
failed=0
for h in "${harnesses[@]}"; do
	bin=build-fuzz/tests/fuzz/fuzz-$h
	if [ ! -x "$bin" ]; then
		echo "fuzz-$h: not built (video or UDP disabled?)"
		continue
	fi
	corpus=$work/corpus-$h
	mkdir -p "$corpus"
	cp -r tests/fuzz/corpus/"$h"/. "$corpus"/ 2>/dev/null
	cp -r "$work/seeds/$h"/. "$corpus"/ 2>/dev/null
	echo "== fuzz-$h for $seconds s"
	if "$bin" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=${FUZZ_RSS_MB:-512} \
		-artifact_prefix=build-fuzz/artifacts/"$h"- -print_final_stats=1 "$corpus" \
		>"$work/$h.log" 2>&1; then
		grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work/$h.log" |
			tr '\n' ' '
		echo "cov: $(grep -oE 'cov: [0-9]+' "$work/$h.log" | tail -1)"
	else
		echo "fuzz-$h FOUND A CRASH:"
		if grep -qE "ERROR|SUMMARY|runtime error" "$work/$h.log"; then
			grep -E "ERROR|SUMMARY|runtime error|#[0-9]+ 0x|Test unit written" \
				"$work/$h.log" | head -40
		else
			# Neither a sanitizer nor libFuzzer named it (a signal, a
			# timeout, a leak): the log's end says what happened.
			tail -40 "$work/$h.log"
		fi
		failed=1
	fi
	if [ "${FUZZ_KEEP_CORPUS:-0}" = 1 ]; then
		mkdir -p tests/fuzz/corpus/"$h"
		"$bin" -merge=1 tests/fuzz/corpus/"$h" "$corpus" >/dev/null 2>&1
	fi
done
exit $failed
