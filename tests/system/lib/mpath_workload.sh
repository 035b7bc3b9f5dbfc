# shellcheck shell=bash
# tests/system/qemu/mpath_workload run in the background by the multipath
# tests (nvme_tcp_mpath_*.sh, after lib/daemon.sh): its pid in WPID, its
# output in OUT ("acked" lines, 50 acknowledged writes each, and at the end
# "verified ...").

# the workload, built here: W
ninja -C "$B" tests/system/qemu/mpath_workload >/dev/null || fail "build mpath_workload"
W=$SRC/$B/tests/system/qemu/mpath_workload

# The "acked" lines so far.
acks() { grep -c '^acked' "$OUT" || true; }

# N more "acked" lines within SECONDS (default 30), or the test fails, saying WHAT.
wait_acks() {	# n [seconds [what]]
	local want=$(($(acks) + $1)) tries=$((${2:-30} * 10))
	for _ in $(seq "$tries"); do
		[ "$(acks)" -ge "$want" ] && return 0
		kill -0 "$WPID" 2>/dev/null || { cat "$OUT"; fail "mpath_workload ended"; }
		sleep 0.1
	done
	cat "$OUT"; fail "no progress of the writes${3:+: $3}"
}

# The workload whose directory is DIR told to stop (DIR/stop) and waited
# for: it must exit 0 (else the test fails, naming it WHAT). Its output but
# the "acked" lines is printed, its "verified" line left in line.
workload_end() {	# dir what
	local rc=0
	touch "$1/stop"
	wait "$WPID" || rc=$?
	grep -v '^acked' "$OUT"
	[ "$rc" = 0 ] || fail "$2: status $rc"
	line=$(grep '^verified' "$OUT")
}
