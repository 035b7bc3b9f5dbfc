#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Build the libFuzzer targets (clang, libFuzzer + ASan + UBSan) in build-fuzz
# and run each fuzz_* for a bounded time from a copy of its committed corpus
# (tests/fuzz/corpus/<name without fuzz_>/). Exits non-zero if any target
# crashes, leaks, trips UBSan or times out.
#
#   FUZZ_SECONDS  seconds per target (default 30)
#   FUZZ_JOBS     targets run at once (default: the number of CPUs)
#   FUZZ_BUILD    build directory (default build-fuzz)
set -u

cd "$(dirname "$0")/.." || exit 2
BUILD=${FUZZ_BUILD:-build-fuzz}
SECS=${FUZZ_SECONDS:-30}
JOBS=${FUZZ_JOBS:-$(nproc)}
[ "$JOBS" -ge 1 ] 2>/dev/null || JOBS=1

if [ ! -f "$BUILD/build.ninja" ]; then
	# fuzzer-no-link instruments the engine's libraries for coverage (only
	# the targets link libFuzzer's main); UBSan must abort to count as a
	# crash; b_lundef=false because sanitizer runtimes resolve at link time.
	# core.h embeds structs ending in a flexible array (struct io_uring_cqe,
	# the uapi's own layout) in other structs: a GNU extension gcc accepts
	# silently and clang warns about, and warnings are errors.
	CLANG_WNO=-Wno-gnu-variable-sized-type-not-at-end
	CC=clang meson setup "$BUILD" -Dfuzz=true -Db_lundef=false -Db_lto=false \
		-Db_sanitize=address,undefined \
		-Dc_args="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined $CLANG_WNO" \
		-Dc_link_args="-fsanitize=fuzzer-no-link" >"$BUILD.setup.log" 2>&1 || {
		cat "$BUILD.setup.log"
		echo "fuzz: meson setup failed"
		exit 2
	}
	rm -f "$BUILD.setup.log"
fi

# Regenerate first if meson.build changed since the last run: introspect
# reads the build directory as it is, and would name removed targets.
ninja -C "$BUILD" build.ninja >"$BUILD/fuzz-regen.log" 2>&1 || {
	cat "$BUILD/fuzz-regen.log"
	echo "fuzz: meson regenerate failed"
	exit 2
}

# Every fuzz_* executable meson knows of, as "name path" lines.
targets=$(meson introspect "$BUILD" --targets | python3 -c '
import json, os, sys
for t in json.load(sys.stdin):
    if t["type"] == "executable" and t["name"].startswith("fuzz_"):
        print(t["name"], os.path.relpath(t["filename"][0], sys.argv[1]))
' "$(cd "$BUILD" && pwd)") || { echo "fuzz: meson introspect failed"; exit 2; }
if [ -z "$targets" ]; then
	echo "fuzz: no fuzz_* targets in $BUILD"
	exit 2
fi

# Build only the fuzz targets: the rest of the tree is not ours to break on.
# shellcheck disable=SC2046
ninja -C "$BUILD" $(echo "$targets" | awk '{print $2}') >"$BUILD/fuzz-build.log" 2>&1 || {
	cat "$BUILD/fuzz-build.log"
	echo "fuzz: build failed"
	exit 2
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$BUILD/artifacts"

# One target: its report goes to $work/NAME.out, its status to $work/NAME.rc.
fuzz_one() {	# name path
	seeds="tests/fuzz/corpus/${1#fuzz_}"
	corpus="$work/$1"
	mkdir -p "$corpus"
	# A copy: new inputs found in this run must not land in the tree.
	[ -d "$seeds" ] && cp -r "$seeds"/. "$corpus"/
	log="$BUILD/artifacts/$1.log"
	if "$BUILD/$2" -max_total_time="$SECS" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$BUILD/artifacts/$1-" "$corpus" </dev/null >"$log" 2>&1; then
		runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
		echo "fuzz $1: ok (${runs:-?} runs)" >"$work/$1.out"
		echo 0 >"$work/$1.rc"
	else
		{ tail -n 40 "$log"; echo "fuzz $1: FAILED (log: $log)"; } >"$work/$1.out"
		echo 1 >"$work/$1.rc"
	fi
}

# JOBS targets at a time, each for SECS: every target fuzzes as long as it
# did one after the other, in 1/JOBS of the time. All of them stop at SECS,
# so batches of JOBS lose little waiting for the slowest of a batch.
# Here-documents, not pipes: the loops must run in this shell to wait.
n=0
while read -r name path; do
	fuzz_one "$name" "$path" &
	n=$((n + 1))
	[ $((n % JOBS)) -eq 0 ] && wait
done <<EOF
$targets
EOF
wait

status=0
while read -r name path; do
	if [ -f "$work/$name.out" ]; then cat "$work/$name.out"; else echo "fuzz $name: FAILED (no result)"; fi
	[ "$(cat "$work/$name.rc" 2>/dev/null)" = 0 ] || status=1
done <<EOF
$targets
EOF
exit $status
