#!/usr/bin/env bash
# ucmd's NVMe/TCP host against a hostile target (tests/system/nvme_tcp_hostile.py),
# on loopback, no QEMU: a target that never answers ICReq, never answers
# Connect, answers nothing after Connect, answers with the wrong command
# IDs, or asks with an R2T for a read's buffer. With the deadlines shortened
# in the URL (icresp_timeout=1, admin_timeout=2) `ucmd --ctrl nvme-tcp://...
# id-ctrl` must fail with a message that says what happened, well within
# the bound below, and never send a read's buffer to the target.
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_tools python3 timeout

[ -f "$B/build.ninja" ] || meson setup "$B" >/dev/null
ninja -C "$B" tools/ucmd >/dev/null || fail "build failed"
# the target in flight at a failure: common.sh's clean-up kills it
TPID=
NQN=nqn.2026-12.io.ucmd:hostile

run_mode() {	# MODE EXPECTED-MESSAGE-REGEX
	local mode=$1 want=$2 port rc=0 t0 t1
	rm -f "$T/port"
	python3 tests/system/nvme_tcp_hostile.py "$mode" "$T/port" > "$T/$mode.target" 2>&1 &
	TPID=$!
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
	[ -s "$T/port" ] || fail "$mode: the hostile target did not start"
	port=$(cat "$T/port")
	t0=$(date +%s%N)
	# 20 s bounds a hang (the defaults would be 10 and 60 s); rc 124 is the bound
	timeout 20 "$UCMD" --ctrl "nvme-tcp://127.0.0.1:$port/$NQN?icresp_timeout=1&admin_timeout=2&ctrl_loss_tmo=0" \
		id-ctrl > "$T/$mode.out" 2>&1 || rc=$?
	t1=$(date +%s%N)
	kill "$TPID" 2>/dev/null; wait "$TPID" 2>/dev/null || true; TPID=
	[ "$rc" -ne 124 ] || { cat "$T/$mode.target"; fail "$mode: ucmd hung (killed after 20 s)"; }
	[ "$rc" -ne 0 ] || fail "$mode: id-ctrl succeeded against a hostile target"
	grep -Eq "$want" "$T/$mode.out" ||
		{ cat "$T/$mode.out"; fail "$mode: the error does not say /$want/"; }
	if grep -q '^h2cdata' "$T/$mode.target"; then
		fail "$mode: the host sent data to the target: $(grep '^h2cdata' "$T/$mode.target")"
	fi
	echo "ok: $mode: failed in $(( (t1 - t0) / 1000000 )) ms: $(head -1 "$T/$mode.out")"
}

run_mode silent 'no ICResp from 127\.0\.0\.1:[0-9]+ within 1000 ms'
run_mode silent-connect 'no answer to Connect \(queue 0\) .* within 2000 ms'
run_mode silent-admin 'not answered within 2000 ms'
run_mode wrong-cid 'not answered within 2000 ms'
run_mode r2t-read 'sent R2T for command .* whose data goes the other way'
grep -q '^r2t for the read' "$T/r2t-read.target" || fail "r2t-read: the target never sent its R2T"

# the deadlines are URL options with their bounds
for bad in "icresp_timeout=0" "admin_timeout=x" "io_timeout=86401"; do
	if "$UCMD" --ctrl "nvme-tcp://127.0.0.1:1/$NQN?$bad" id-ctrl > "$T/bad.out" 2>&1; then
		fail "?$bad accepted"
	fi
	grep -q "1..86400 seconds" "$T/bad.out" || { cat "$T/bad.out"; fail "?$bad: no reason given"; }
done
help=$("$UCMD" --help) || fail "ucmd --help failed"
grep -q "icresp_timeout=S&admin_timeout=S&io_timeout=S" <<<"$help" ||
	fail "ucmd --help does not name the deadlines"
echo "ok: the deadline options are checked and documented in --help"
echo "nvme_tcp_hostile: all checks passed"
