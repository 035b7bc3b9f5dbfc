#!/usr/bin/env bash
# Every test ucmd has, in the builds that matter, ending with one summary
# line "N passed, N failed". Exits non-zero if anything failed.
#   build       unit tests, plain
#   build-asan  unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   build-tsan  threaded tests under ThreadSanitizer
#   build-fuzz  every libFuzzer target for FUZZ_SECONDS from its corpus
#   system      tests/system/*.sh against the built tools
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
failures=()
details=()	# a line or two per failure, printed again last
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

count() {	# name, meson-test output file
	local ok fail to skip
	ok=$(grep -E '^Ok:' "$2" | awk '{print $2}')
	fail=$(grep -E '^Fail:' "$2" | awk '{print $2}')
	to=$(grep -E '^Timeout:' "$2" | awk '{print $2}')
	skip=$(grep -E '^Skipped:' "$2" | awk '{print $2}')
	ok=${ok:-0}; fail=${fail:-0}; to=${to:-0}; skip=${skip:-0}
	# a skipped test proves nothing: it counts against the run
	to=$((to + skip))
	passed=$((passed + ok))
	failed=$((failed + fail + to))
	if [ "$((fail + to))" -ne 0 ] || [ "$ok" -eq 0 ]; then
		failures+=("$1")
		[ "$ok" -eq 0 ] && [ "$((fail + to))" -eq 0 ] && failed=$((failed + 1))
	fi
	echo "== $1: $ok passed, $((fail + to)) failed"
}

suite() {	# build-dir, meson options, suite, label
	local dir=$1 opts=$2 suite=$3 label=$4 log
	log=$(mktemp)
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		meson setup "$dir" $opts >"$log" 2>&1 || { tail -20 "$log"; echo "meson setup $dir failed"; failed=$((failed + 1)); failures+=("$label setup"); return; }
	fi
	if ! ninja -C "$dir" >"$log" 2>&1; then
		tail -40 "$log"
		failed=$((failed + 1)); failures+=("$label build")
		return
	fi
	meson test -C "$dir" --suite "$suite" --print-errorlogs --num-processes 2 >"$log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$log"
	grep -qE '^(Fail|Timeout|Skipped): *[1-9]' "$log" && sed -n '/Listing/,$p;/stdout:/,/^$/p' "$log" | tail -80
	count "$label" "$log"
	rm -f "$log"
}

suite build "" unit "unit"
suite build-asan "-Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false" unit "unit (asan+ubsan)"
suite build-tsan "-Db_sanitize=thread -Db_lundef=false -Db_lto=false" threaded "threaded (tsan)"

# Fuzz targets: a short, bounded run of each from its committed corpus.
if [ -x scripts/run-fuzz.sh ] || [ -f scripts/run-fuzz.sh ]; then
	flog=$(mktemp)
	FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/run-fuzz.sh >"$flog" 2>&1
	frc=$?
	grep -E '^fuzz ' "$flog"
	fok=$(grep -cE '^fuzz .*: ok' "$flog")
	ffail=$(grep -cE '^fuzz .*: FAILED' "$flog")
	if [ "$frc" -ne 0 ] && [ "$ffail" -eq 0 ]; then
		tail -30 "$flog"; ffail=1
	fi
	passed=$((passed + fok)); failed=$((failed + ffail))
	if [ "$ffail" -ne 0 ]; then
		failures+=("fuzz")
		# again at the very end, where a log cut to its tail still shows it
		details+=("$(grep -E '^fuzz .*FAILED|^fuzz: |SUMMARY|ERROR: |deadly signal|invariant|timeout|out-of-memory' "$flog" | head -20)")
	fi
	echo "== fuzz: $fok passed, $ffail failed"
	rm -f "$flog"
fi

# System tests: the real tools, end to end.
for t in tests/system/*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if UCMD_BUILD=build bash "$t" >"/tmp/ucmd-sys-$name.log" 2>&1; then
		echo "system $name: ok"; passed=$((passed + 1))
	else
		echo "system $name: FAILED"; tail -40 "/tmp/ucmd-sys-$name.log"
		failed=$((failed + 1)); failures+=("system $name")
		details+=("system $name: $(grep -E 'FAIL' "/tmp/ucmd-sys-$name.log" | head -5)")
	fi
done

for d in "${details[@]}"; do echo "$d"; done
[ ${#failures[@]} -eq 0 ] || echo "failing: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
