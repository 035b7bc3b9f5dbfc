#!/usr/bin/env bash
# ucmdd under AddressSanitizer + UBSan against the bounded random client
# fuzzer (daemon_client garbage): random SQEs, SQ array entries, tails,
# flags and any byte of the shared rings, and random or mutated protocol
# messages with wrong descriptors attached, from an unprivileged user,
# SEEDS seeds of ITERS iterations each (the same seed replays the same
# input). After every seed the daemon is alive and another client's
# write/flush/read/verify works; at the end SIGTERM exits 0 -- with
# detect_leaks=1 a leak makes that exit non-zero -- and ASan reported
# nothing.
#
# The daemon is build-asan's (UCMD_ASAN_BUILD), the build make check already
# makes for the unit tests; configured and built here if it is missing.
source "$(dirname "$0")/lib/daemon.sh"

SEEDS=${SEEDS:-6}
ITERS=${ITERS:-200}
AB=${UCMD_ASAN_BUILD:-build-asan}
if [ ! -f "$AB/build.ninja" ]; then
	meson setup "$AB" -Db_sanitize=address,undefined -Db_lundef=false -Db_lto=false >/dev/null
fi
ASAN_UCMDD=$(find_exe "$AB" ucmdd)
[ -n "$ASAN_UCMDD" ] || fail "no ucmdd target in $AB"
ninja -C "$AB" "$(realpath --relative-to="$AB" "$ASAN_UCMDD")" >/dev/null || fail "building $ASAN_UCMDD"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:log_path=$T/asan"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$T/ubsan"
UCMDD_BIN=$ASAN_UCMDD daemon_start --ctrl "$T/ctrl" --audit "$T/audit.jsonl" "${ANY_USER[@]}"
G=64031
OK=64032
export CLIENT_TIMEOUT=600

for s in $(seq "$SEEDS"); do
	step "seed $s: $ITERS iterations"
	client "$G" garbage --seed "$s" --iters "$ITERS" --stall-ms 2000 \
		>"$T/g.out" 2>&1 || { cat "$T/g.out"; fail "garbage seed $s (replay: daemon_client garbage --seed $s --iters $ITERS)"; }
	cat "$T/g.out"
	daemon_alive
	client "$OK" rw --slba $((s * 1024)) --nlb 8 --count 16 --seed "$s" >/dev/null ||
		fail "a well-behaved client after garbage seed $s"
done

step "SIGTERM: exit 0 with no leak, no sanitizer report"
daemon_stop
if ls "$T"/asan* "$T"/ubsan* >/dev/null 2>&1; then
	cat "$T"/asan* "$T"/ubsan* 2>/dev/null | head -60
	fail "sanitizer report from ucmdd"
fi
echo "daemon_garbage: $SEEDS seeds x $ITERS iterations, ucmdd (ASan) unharmed"
