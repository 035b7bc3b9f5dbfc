#!/usr/bin/env bash
# ucmd's tests in three tiers, ending with one summary line
# "N passed, N failed, N skipped". Exits non-zero if anything failed, or if
# anything was skipped where skips are not allowed (docs/testing.md).
#
#   scripts/check.sh [all|quick|unit|system]  (make check, check-quick, check-unit)
#
#   unit   build        unit tests, plain (meson suite unit): seconds
#   quick  unit, then
#          build-asan   unit tests under AddressSanitizer + UndefinedBehaviorSanitizer
#          system       tests/system/*.sh that boot no QEMU guest
#   all    quick, then
#          build-tsan   threaded tests under ThreadSanitizer
#          build-fuzz   every libFuzzer target for FUZZ_SECONDS from its corpus
#          system       the QEMU tests too (those naming tests/system/qemu/run.sh)
#   system the system tests of `all` alone, over the trees as they are
#
# A skip (exit 77 from a system test, SKIP from meson) is counted apart and
# listed. `all` (and `system`) fail on any: the machine `make check` is for (root, with
# what scripts/deps.sh installs) runs every test, so a skip there is a test
# that did not run. unit and quick, the inner loop, report skips and pass.
#   UCMD_CHECK_ALLOW_SKIP=0|1   override that
#   UCMD_CHECK_LOGS             where the system tests' logs go (build/check-logs)
#   UCMD_CHECK_ONLY=REGEX       only the system tests whose name matches (a
#                               run with it is not `make check`)
#   UCMD_CHECK_JOBS=N           system tests run at once (default 2; how
#                               they share the machine: test_class below)
#   UCMD_CHECK_SYSTEM=DIR       where the system tests are (tests/system;
#                               tests/unit/check_sched.sh gives its own)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

tier=${1:-all}
case $tier in
all | system) allow_skip=${UCMD_CHECK_ALLOW_SKIP:-0} ;;
quick | unit) allow_skip=${UCMD_CHECK_ALLOW_SKIP:-1} ;;
*) echo "usage: $0 [all|quick|unit|system]" >&2; exit 2 ;;
esac

passed=0
failed=0
skipped=0
failures=()
skips=()
details=()	# a line or two per failure, printed again last
tier_time=()	# "label N s" of each tier, printed last
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

# The files ninja builds for the tests of SUITE in build-dir and nothing
# else (each test's executable, the programs its arguments name, and so
# what they link), from meson's account of the tests.
suite_targets() {	# build-dir suite
	python3 - "$1" "$2" <<'PY'
import json, os, subprocess, sys
d, suite = sys.argv[1], sys.argv[2]
def intro(what):
    return json.loads(subprocess.run(["meson", "introspect", d, what], check=True,
                                     capture_output=True, text=True).stdout)
files = {t["id"]: t["filename"] for t in intro("--targets")}
top = os.path.realpath(d)
want = set()
for t in intro("--tests"):
    if suite in (s.split(":")[-1] for s in t["suite"]):
        for i in t["depends"]:
            want.update(files[i])
print("\n".join(os.path.relpath(f, top) for f in sorted(want)))
PY
}

# Build build-dir (all of it, or with "only" only what the suite's tests
# need), run the suite, count.
suite() {	# build-dir, meson options, suite, label [only]
	local dir=$1 opts=$2 suite=$3 label=$4 only=${5:-} log start=$SECONDS targets=()
	log=$(mktemp)
	if [ ! -f "$dir/build.ninja" ]; then
		# shellcheck disable=SC2086
		meson setup "$dir" $opts >"$log" 2>&1 || { tail -20 "$log"; echo "meson setup $dir failed"; failed=$((failed + 1)); failures+=("$label setup"); return; }
	else
		# `make run` may have configured it with only what it runs
		bash scripts/full_config.sh "$dir" >"$log" 2>&1 || { tail -20 "$log"; echo "meson configure $dir failed"; failed=$((failed + 1)); failures+=("$label configure"); return; }
	fi
	if [ "$only" = only ]; then
		# regenerated first when meson.build changed: introspect reads
		# the build directory as it is
		ninja -C "$dir" build.ninja >"$log" 2>&1 &&
			mapfile -t targets < <(suite_targets "$dir" "$suite" 2>>"$log") &&
			[ ${#targets[@]} -ne 0 ] || { tail -20 "$log"; echo "no targets for suite $suite in $dir"; failed=$((failed + 1)); failures+=("$label build"); return; }
	fi
	if ! ninja -C "$dir" "${targets[@]}" >"$log" 2>&1; then
		tail -40 "$log"
		failed=$((failed + 1)); failures+=("$label build")
		return
	fi
	# built just above: no second look at the whole tree
	meson test -C "$dir" --no-rebuild --suite "$suite" --print-errorlogs --num-processes "$(nproc)" >"$log" 2>&1
	grep -E '^ *[0-9]+/[0-9]+ ' "$log"
	grep -qE '^(Fail|Timeout): *[1-9]' "$log" && sed -n '/Listing/,$p;/stdout:/,/^$/p' "$log" | tail -80
	count "$label" "$log"
	rm -f "$log"
	tier_time+=("$label $((SECONDS - start)) s")
}

fuzz() {
	local flog frc fok ffail start=$SECONDS
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
	tier_time+=("fuzz $((SECONDS - start)) s")
}

# A system test that boots a QEMU guest (minutes each): only in `all`.
boots_qemu() { grep -q 'tests/system/qemu/run\.sh' "$1"; }

LOGS=${UCMD_CHECK_LOGS:-build/check-logs}
# install.sh's `make install` builds here, kept between runs: a new
# prefix rebuilds only what names it, not the whole LTO tree every time
export UCMD_INSTALL_BUILD=${UCMD_INSTALL_BUILD:-build-check-install}

# One system test; its status, seconds and CPU seconds go to $LOGS/NAME.rc.
run_one() {	# path
	local name start rc cpu
	name=$(basename "$1" .sh)
	start=$SECONDS
	UCMD_BUILD=build bash "$1" >"$LOGS/$name.log" 2>&1
	rc=$?
	# the CPU seconds it took (user + system, its processes that were
	# waited for): what tells a light test from a heavy one
	times >"$LOGS/$name.times"
	cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.0f", t }' "$LOGS/$name.times")
	rm -f "$LOGS/$name.times"
	echo "$rc $((SECONDS - start)) ${cpu:-?}" >"$LOGS/$name.rc"
}

# What run_one found, printed and counted.
report() {	# path
	local name rc secs
	name=$(basename "$1" .sh)
	read -r rc secs _ <"$LOGS/$name.rc" || { rc=1; secs='?'; }
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

# How a system test shares the machine with the others:
#   qemu    names tests/system/qemu/run.sh: boots a TCG guest that wants
#           both CPUs within run.sh's time limits. Never two at once, nor
#           beside a heavy test; beside light ones.
#   heavy   says "# check: heavy" in its header (install.sh builds a tree of
#           its own with every CPU): never beside a qemu or another heavy one.
#   serial  says "# check: serial": runs alone (none does today).
#   light   every other: beside anything but a serial test. A light test
#           keeps to its own T, ports and processes (docs/testing.md).
test_class() {	# path
	if boots_qemu "$1"; then echo qemu
	elif grep -q '^# check: serial' "$1"; then echo serial
	elif grep -q '^# check: heavy' "$1"; then echo heavy
	else echo light; fi
}

# The system tests, UCMD_CHECK_JOBS (default 2) at a time, within what
# their classes allow, the longest first (the previous run's seconds in
# $LOGS/NAME.rc; without them a guess by class), each into its own log.
# The results are printed once all have run, in name order.
system() {	# with_qemu (0|1)
	local t name cls secs pid i started start=$SECONDS
	local jobs=${UCMD_CHECK_JOBS:-2} running=0 qemu_on=0 heavy_on=0 serial_on=0
	local all=() queue=() keyed=()
	local -A class_of=() pid_test=()
	[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
	mkdir -p "$LOGS"
	for t in "${UCMD_CHECK_SYSTEM:-tests/system}"/*.sh; do
		[ -f "$t" ] || continue
		name=$(basename "$t" .sh)
		[[ $name =~ ${UCMD_CHECK_ONLY:-.} ]] || continue
		cls=$(test_class "$t")
		[ "$cls" = qemu ] && [ "$1" = 0 ] && continue
		secs=
		[ -f "$LOGS/$name.rc" ] && read -r _ secs _ <"$LOGS/$name.rc"
		if ! [[ $secs =~ ^[0-9]+$ ]]; then
			case $cls in qemu) secs=120 ;; heavy) secs=90 ;; *) secs=10 ;; esac
		fi
		class_of[$t]=$cls
		all+=("$t")
		keyed+=("$secs $t")
		rm -f "$LOGS/$name.rc"
	done
	mapfile -t queue < <(printf '%s\n' "${keyed[@]}" | sort -k1,1nr -k2,2 | cut -d' ' -f2-)
	echo "system: ${#all[@]} tests, $jobs at a time, the longest first (logs: $LOGS)"
	while [ ${#queue[@]} -ne 0 ] || [ "$running" -ne 0 ]; do
		started=1
		while [ "$started" = 1 ]; do
			started=0
			for i in "${!queue[@]}"; do
				[ "$running" -lt "$jobs" ] && [ "$serial_on" = 0 ] || break
				t=${queue[$i]}
				case ${class_of[$t]} in
				serial) [ "$running" = 0 ] || continue; serial_on=1 ;;
				qemu) [ "$qemu_on$heavy_on" = 00 ] || continue; qemu_on=1 ;;
				heavy) [ "$qemu_on$heavy_on" = 00 ] || continue; heavy_on=1 ;;
				esac
				run_one "$t" &
				pid_test[$!]=$t
				running=$((running + 1))
				unset 'queue[i]'
				started=1
				break	# from the head of the queue again
			done
		done
		[ "$running" -ne 0 ] || break
		pid=
		wait -n -p pid || [ -n "$pid" ] || { wait; running=0; break; }	# no job left to wait for
		[ -n "${pid_test[$pid]:-}" ] || continue
		case ${class_of[${pid_test[$pid]}]} in
		serial) serial_on=0 ;; qemu) qemu_on=0 ;; heavy) heavy_on=0 ;;
		esac
		unset 'pid_test[$pid]'
		running=$((running - 1))
	done
	for t in "${all[@]}"; do report "$t"; done
	tier_time+=("system $((SECONDS - start)) s")
}

[ "$tier" = system ] || suite build "" unit "unit"
if [ "$tier" = quick ] || [ "$tier" = all ]; then
	suite build-asan "-Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false" unit "unit (asan+ubsan)"
fi
if [ "$tier" = all ]; then
	# the threaded tests only: the rest of this tree never runs under TSan
	suite build-tsan "-Db_sanitize=thread -Db_lundef=false -Db_lto=false" threaded "threaded (tsan)" only
	fuzz
fi
case $tier in
quick) system 0 ;;
all | system) system 1 ;;
esac

for d in "${details[@]}"; do echo "$d"; done
t=$(printf '%s, ' "${tier_time[@]}")
echo "time: ${t}total $SECONDS s"
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
