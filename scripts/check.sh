#!/usr/bin/env bash
# ucmd's tests in three tiers, ending with one summary line
# "N passed, N failed, N skipped". Exits non-zero if anything failed, or if
# anything was skipped where skips are not allowed (docs/testing.md).
#
#   scripts/check.sh [all|quick|unit]      (make check, check-quick, check-unit)
#
#   unit   build        unit tests, plain (meson suite unit): seconds
#   quick  unit, then
#          build-asan   unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
#          system       tests/system/*.sh that boot no QEMU guest
#   all    quick, then
#          build-tsan   threaded tests under ThreadSanitizer
#          build-fuzz   every libFuzzer target for FUZZ_SECONDS from its corpus
#          system       the QEMU tests too (those naming tests/system/qemu/run.sh)
#
# A skip (exit 77 from a system test, SKIP from meson) is counted apart and
# listed. `all` fails on any: the machine `make check` is for (root, with
# what scripts/deps.sh installs) runs every test, so a skip there is a test
# that did not run. unit and quick, the inner loop, report skips and pass.
#   UCMD_CHECK_ALLOW_SKIP=0|1   override that
#   UCMD_CHECK_LOGS             where the system tests' logs go (build/check-logs)
#   UCMD_CHECK_ONLY=REGEX       only the system tests whose name matches (a
#                               run with it is not `make check`)
#   UCMD_CHECK_JOBS=2           the QEMU tests in a lane of their own, beside
#                               the other system tests (default 1)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

tier=${1:-all}
case $tier in
all) allow_skip=${UCMD_CHECK_ALLOW_SKIP:-0} ;;
quick | unit) allow_skip=${UCMD_CHECK_ALLOW_SKIP:-1} ;;
*) echo "usage: $0 [all|quick|unit]" >&2; exit 2 ;;
esac

passed=0
failed=0
skipped=0
failures=()
skips=()
details=()	# a line or two per failure, printed again last
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1

count() {	# name, meson-test output file
	local ok fail to skip
	ok=$(grep -E '^Ok:' "$2" | awk '{print $2}')
	fail=$(grep -E '^(Fail|Unexpected Pass):' "$2" | awk '{s += $NF} END {print s + 0}')
	to=$(grep -E '^Timeout:' "$2" | awk '{print $2}')
	skip=$(grep -E '^Skipped:' "$2" | awk '{print $2}')
	ok=${ok:-0}; fail=${fail:-0}; to=${to:-0}; skip=${skip:-0}
	passed=$((passed + ok))
	failed=$((failed + fail + to))
	skipped=$((skipped + skip))
	[ "$skip" -eq 0 ] || skips+=("$1: $(grep -E '^ *[0-9]+/[0-9]+ .* SKIP ' "$2" | awk '{print $4}' | tr '\n' ' ')")
	if [ "$((fail + to))" -ne 0 ] || [ "$ok" -eq 0 ]; then
		failures+=("$1")
		# a suite that ran nothing proves nothing
		[ "$ok" -eq 0 ] && [ "$((fail + to))" -eq 0 ] && failed=$((failed + 1))
	fi
	echo "== $1: $ok passed, $((fail + to)) failed, $skip skipped"
}

suite() {	# build-dir, meson options, suite, label
	local dir=$1 opts=$2 suite=$3 label=$4 log
	log=$(mktemp)
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		meson setup "$dir" $opts >"$log" 2>&1 || { tail -20 "$log"; echo "meson setup $dir failed"; failed=$((failed + 1)); failures+=("$label setup"); return; }
	else
		# `make run` may have configured it with only what it runs
		bash scripts/full_config.sh "$dir" >"$log" 2>&1 || { tail -20 "$log"; echo "meson configure $dir failed"; failed=$((failed + 1)); failures+=("$label configure"); return; }
	fi
	if ! ninja -C "$dir" >"$log" 2>&1; then
		tail -40 "$log"
		failed=$((failed + 1)); failures+=("$label build")
		return
	fi
	meson test -C "$dir" --suite "$suite" --print-errorlogs --num-processes "$(nproc)" >"$log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$log"
	grep -qE '^(Fail|Timeout): *[1-9]' "$log" && sed -n '/Listing/,$p;/stdout:/,/^$/p' "$log" | tail -80
	count "$label" "$log"
	rm -f "$log"
}

fuzz() {
	local flog frc fok ffail
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
		details+=("$(grep -E '^fuzz .*FAILED|^fuzz: |SUMMARY|ERROR: |deadly signal|runtime error|invariant|timeout|out-of-memory' "$flog" | head -20)")
	fi
	echo "== fuzz: $fok passed, $ffail failed"
	rm -f "$flog"
}

# A system test that boots a QEMU guest (minutes each): only in `all`.
boots_qemu() { grep -q 'tests/system/qemu/run\.sh' "$1"; }

LOGS=${UCMD_CHECK_LOGS:-build/check-logs}

# One system test; its status and seconds go to $LOGS/NAME.rc.
run_one() {	# path
	local name start rc
	name=$(basename "$1" .sh)
	start=$SECONDS
	UCMD_BUILD=build bash "$1" >"$LOGS/$name.log" 2>&1
	rc=$?
	echo "$rc $((SECONDS - start))" >"$LOGS/$name.rc"
}

# What run_one found, printed and counted.
report() {	# path
	local name rc secs
	name=$(basename "$1" .sh)
	read -r rc secs <"$LOGS/$name.rc" || { rc=1; secs='?'; }
	case $rc in
	0) echo "system $name: ok ($secs s)"; passed=$((passed + 1)) ;;
	77)
		echo "system $name: SKIPPED ($(grep -m1 '^SKIP: ' "$LOGS/$name.log" || echo "no reason given"))"
		skipped=$((skipped + 1)); skips+=("system $name")
		;;
	*)
		echo "system $name: FAILED ($secs s, log: $LOGS/$name.log)"
		tail -40 "$LOGS/$name.log"
		failed=$((failed + 1)); failures+=("system $name")
		details+=("system $name: $(grep -E 'FAIL' "$LOGS/$name.log" | head -5)")
		;;
	esac
}

# UCMD_CHECK_JOBS=2: the QEMU tests one after the other in a lane of their
# own, beside the others one after the other (a guest under TCG and a test
# waiting on its daemon share the CPUs well); never two guests at once, nor
# two of the others. Default 1: one test at a time.
system() {	# with_qemu (0|1)
	local t name all=() qemu=() rest=()
	mkdir -p "$LOGS"
	for t in tests/system/*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		[[ $name =~ ${UCMD_CHECK_ONLY:-.} ]] || continue
		if boots_qemu "$t"; then
			[ "$1" = 1 ] || continue
			qemu+=("$t")
		else
			rest+=("$t")
		fi
		all+=("$t")
		rm -f "$LOGS/$name.rc"
	done
	if [ "${UCMD_CHECK_JOBS:-1}" -ge 2 ] && [ ${#qemu[@]} -ne 0 ]; then
		echo "system: ${#qemu[@]} QEMU tests beside ${#rest[@]} others (UCMD_CHECK_JOBS)"
		{ for t in "${qemu[@]}"; do run_one "$t"; done; } &
		{ for t in "${rest[@]}"; do run_one "$t"; done; } &
		wait
		for t in "${all[@]}"; do report "$t"; done
	else
		for t in "${all[@]}"; do run_one "$t"; report "$t"; done
	fi
}

suite build "" unit "unit"
if [ "$tier" != unit ]; then
	suite build-asan "-Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false" unit "unit (asan+ubsan)"
fi
if [ "$tier" = all ]; then
	suite build-tsan "-Db_sanitize=thread -Db_lundef=false -Db_lto=false" threaded "threaded (tsan)"
	fuzz
fi
case $tier in
quick) system 0 ;;
all) system 1 ;;
esac

for d in "${details[@]}"; do echo "$d"; done
[ ${#failures[@]} -eq 0 ] || echo "failing: ${failures[*]}"
if [ ${#skips[@]} -ne 0 ]; then
	if [ "$allow_skip" = 1 ]; then
		echo "skipped (allowed in this tier): ${skips[*]}"
	else
		echo "skipped, so not run, and that fails \`make check\`: ${skips[*]}"
	fi
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && { [ "$skipped" -eq 0 ] || [ "$allow_skip" = 1 ]; }
