#!/usr/bin/env bash
# ucmdd's NVMe/TCP ports keep their ANA states across a restart: set with
# `ucmd ana-state --port`, they are in ucmdd-ports.json in the first --ctrl
# directory and come back at the next start (ports known by number, so
# new addresses do not matter), as the state hosts read in the ANA log.
# A file that is not ucmdd's (a bad state, another user's write bit) stops
# the start, saying where; without a --ctrl directory nothing is kept.
# Needs root (lib/daemon.sh).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing"
CTRL=$T/ctrl
KEEP=$CTRL/ucmdd-ports.json
printf '[policy]\ndefault = allow\naudit = no\n' > "$T/policy.ini"

# ucmdd on CTRL with two fresh loopback ports P1 and P2 (extra args first)
start_two() {
	P1=$(free_port) P2=$(free_port)
	[ "$P1" != "$P2" ] || P2=$(free_port)
	daemon_start "$@" --policy "$T/policy.ini" --nvme-tcp "127.0.0.1:$P1" \
		--nvme-tcp "127.0.0.1:$P2"
	for _ in $(seq 100); do grep -q "NVMe/TCP port 2 at 127.0.0.1:$P2" "$DLOG" && break; sleep 0.1; done
	grep -q "NVMe/TCP port 2 at 127.0.0.1:$P2" "$DLOG" || fail "ucmdd did not start its second port"
}
state_of() { "$UCMD" --daemon "$SOCK" ana-state --port "$1"; }

step "a first run: port 1 non-optimized, port 2 inaccessible"
start_two --ctrl "$CTRL"
[ ! -e "$KEEP" ] || fail "$KEEP before any change"
ana 1 non-optimized
ana 2 inaccessible
python3 - "$KEEP" <<'PY' || { cat "$KEEP"; fail "ucmdd-ports.json"; }
import json, sys
k = json.load(open(sys.argv[1]))
assert k == {"version": 1, "ports": [{"port": 1, "ana_states": [2]},
                                     {"port": 2, "ana_states": [3]}]}, k
PY
[ "$(stat -c %a "$KEEP")" = 600 ] || fail "$KEEP: mode $(stat -c %a "$KEEP")"
daemon_stop

step "the next run, on other addresses: the same states, in the hosts' ANA logs"
start_two --ctrl "$CTRL"
[ "$(state_of 1)" = "port 1 group 1: non-optimized" ] || fail "port 1: $(state_of 1)"
[ "$(state_of 2)" = "port 2 group 1: inaccessible" ] || fail "port 2: $(state_of 2)"
NQN=$("$UCMD" --daemon "$SOCK" id-ctrl | sed -n 's/^subnqn *: //p')
"$UCMD" --ctrl "nvme-tcp://127.0.0.1:$P2/$NQN" ana-log > "$T/ana2.txt" || fail "ana-log through port 2"
grep -q "^state	:	inaccessible$" "$T/ana2.txt" || { cat "$T/ana2.txt"; fail "port 2's ANA log"; }
"$UCMD" --ctrl "nvme-tcp://127.0.0.1:$P1/$NQN" ana-log > "$T/ana1.txt" || fail "ana-log through port 1"
grep -q "^state	:	non-optimized$" "$T/ana1.txt" || { cat "$T/ana1.txt"; fail "port 1's ANA log"; }
# back to optimized: kept too
ana 2 optimized
daemon_stop
start_two --ctrl "$CTRL"
[ "$(state_of 2)" = "port 2 group 1: optimized" ] || fail "port 2 after optimized: $(state_of 2)"
daemon_stop

step "a file that is not ucmdd's stops the start, saying where"
bad_start() {	# why
	local rc=0
	: > "$T/bad.log"
	timeout 60 "$UCMDD" --socket "$T/bad.sock" --foreground --ctrl "$CTRL" \
		--policy "$T/policy.ini" --nvme-tcp "127.0.0.1:$(free_port)" > "$T/bad.log" 2>&1 || rc=$?
	[ "$rc" = 1 ] && grep -qF "$1" "$T/bad.log" ||
		{ cat "$T/bad.log"; fail "ucmdd with a bad $KEEP: status $rc, want 1 and '$1'"; }
}
printf '{"version":1,"ports":[{"port":1,"ana_states":[9]}]}' > "$KEEP"
bad_start "ucmdd-ports.json: ports[0].ana_states[0]: no ANA state"
printf '{"version":1,"ports":[{"port":1,"ana_states":[3]}]}' > "$KEEP"
chmod 0622 "$KEEP"
bad_start "writable by no one else"
rm -f "$KEEP"

step "without a --ctrl directory nothing is kept"
start_two --ram 16M
ana 2 inaccessible
daemon_stop
[ ! -e "$KEEP" ] || fail "a --ram daemon wrote $KEEP"
start_two --ram 16M
[ "$(state_of 2)" = "port 2 group 1: optimized" ] || fail "--ram port 2: $(state_of 2)"
daemon_stop
echo "PASS"
