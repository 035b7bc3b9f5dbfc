# shellcheck shell=bash
# Shared by the tests that need a root ucmdd (daemon_*.sh, exec_fio_blk.sh):
# sourced instead of lib/common.sh, which it sources first (its T, fail,
# as_user, shared...). They run as root: a root ucmdd owning its controller
# directories, and clients as unprivileged users through setpriv with
# numeric ids that need no passwd entry; without root they skip.
#
#   UCMD_BUILD       the build whose ucmdd and daemon_client are used (build)
#   UCMD_ASAN_BUILD  the AddressSanitizer build (build-asan; configured and
#                    built here when missing, with scripts/check.sh's options)
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
need_root "the daemon tests run a root ucmdd and clients as other users (setpriv)"

# The executable meson built for target NAME in build BUILD (absolute path).
find_exe() {	# build name
	meson introspect "$1" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["type"] == "executable" and t["name"] == sys.argv[1]:
        print(t["filename"][0]); break
' "$2"
}

CLIENT=$SRC/$B/tests/daemon/daemon_client
[ -x "$UCMDD" ] || fail "no ucmdd in $B"
[ -x "$CLIENT" ] || fail "no daemon_client in $B"
# the clients run as other users: copies they can reach, made once here
# (the tests start them in parallel)
CLIENT=$(shared "$CLIENT")

# The socket lives in $T (0755: everyone may enter); clean-up of every
# daemon and client this test started.
SOCK=$T/ucmdd.sock
DPID=
DLOG=$T/ucmdd.log
STARTED_PIDS=()
daemon_cleanup() {
	for p in "${STARTED_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null || true
}
at_exit daemon_cleanup
on_fail() { daemon_log_tail; }

daemon_log_tail() { [ -f "$DLOG" ] && { echo "--- ucmdd log (last lines)"; tail -30 "$DLOG"; } || true; }

# The client as uid, bounded: a hang is a failure, never a stuck run.
client() {	# uid subcommand args...
	local u=$1; shift
	timeout -k 5 "${CLIENT_TIMEOUT:-120}" setpriv --reuid "$u" --regid "$u" --clear-groups \
		--inh-caps=-all -- "$CLIENT" "$@" --daemon "$SOCK"
}

# Clients of other uids reach the socket only when the test opens it to them:
# ucmdd's socket is 0600 by default (docs/security.md). A world-connectable
# socket needs a policy; ANY_USER opens it under Linux's default rules
# written out as one, for tests that judge nothing else. A test with a
# policy of its own passes --socket-mode 0666 next to its --policy.
printf '[policy]\ninherit = default\n' >"$T/default-policy.ini"
ANY_USER=(--socket-mode 0666 --policy "$T/default-policy.ini")

# Start ucmdd in the foreground, in the background of this shell; wait for
# its socket. Extra arguments go to ucmdd (--ctrl, --policy, --audit).
# UCMDD_BIN overrides the binary (the ASan one).
daemon_start() {
	local bin=${UCMDD_BIN:-$UCMDD}
	rm -f "$SOCK"
	"$bin" --socket "$SOCK" --foreground "$@" >>"$DLOG" 2>&1 &
	DPID=$!
	for _ in $(seq 600); do
		[ -S "$SOCK" ] && break
		kill -0 "$DPID" 2>/dev/null || { wait "$DPID" || true; fail "ucmdd exited at start"; }
		sleep 0.1
	done
	[ -S "$SOCK" ] || fail "ucmdd made no socket at $SOCK"
}

# SIGTERM, and ucmdd must be gone within SECONDS (default 60); its exit
# status in DRC.
daemon_term() {	# [seconds]
	local secs=${1:-60}
	kill -TERM "$DPID"
	for _ in $(seq $((secs * 10))); do
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$DPID" 2>/dev/null && fail "ucmdd still running $secs s after SIGTERM"
	DRC=0
	wait "$DPID" || DRC=$?
	DPID=
}

# SIGTERM, and the exit status must be 0 (bounded wait).
daemon_stop() {
	daemon_term "$@"
	[ "$DRC" = 0 ] || fail "ucmdd exited $DRC after SIGTERM"
}

daemon_alive() { kill -0 "$DPID" 2>/dev/null || fail "ucmdd (pid $DPID) is gone"; }

# The daemon's resources, from /proc.
proc_fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l; }
proc_status() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }	# pid field
proc_maps() { wc -l < "/proc/$1/maps"; }

# Audit records (JSON lines) matching a Python condition on r, counted.
audit_count() {	# file condition
	python3 - "$1" "$2" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    if line.strip():
        r = json.loads(line)
        if eval(sys.argv[2]):
            n += 1
print(n)
PY
}

# A loopback TCP port nobody listens on now (ucmdd binds it a moment later).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# ucmdd with a 64 MiB RAM controller, every command allowed (no audit),
# exported over NVMe/TCP at two loopback ports of one subsystem (the
# multipath tests); extra arguments go to ucmdd. Sets P1 and P2, the ports,
# and NQN, the subsystem's NQN.
daemon_start_two_ports() {
	P1=$(free_port) P2=$(free_port)
	[ "$P1" != "$P2" ] || P2=$(free_port)
	printf '[policy]\ndefault = allow\naudit = no\n' >"$T/policy.ini"
	daemon_start --ram 64M --policy "$T/policy.ini" "$@" \
		--nvme-tcp "127.0.0.1:$P1" --nvme-tcp "127.0.0.1:$P2"
	for _ in $(seq 100); do grep -q "NVMe/TCP port 2 at" "$DLOG" 2>/dev/null && break; sleep 0.1; done
	grep -q "NVMe/TCP port 2 at 127.0.0.1:$P2" "$DLOG" || fail "ucmdd did not start its second port"
	NQN=$("$UCMD" --daemon "$SOCK" id-ctrl | sed -n 's/^subnqn *: //p')
	[ -n "$NQN" ] || fail "no subsystem NQN"
}

# Port PORT's ANA state set to STATE (ucmd ana-state), or the test fails.
ana() {	# port state
	"$UCMD" --daemon "$SOCK" ana-state --port "$1" --state "$2" >/dev/null ||
		fail "ana-state --port $1 --state $2"
}
