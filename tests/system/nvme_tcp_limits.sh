#!/usr/bin/env bash
# What one user may hold of ucmdd's NVMe/TCP target, and who a peer is
# (tests/system/nvme_tcp_limits.py does the talking), on loopback, no QEMU.
# ucmdd runs with every limit shortened or made small through --nvme-tcp's
# ,KEY=VALUE settings:
#  - a connection without ICReq, or without Connect, is closed after its
#    deadline; an association with KATO 0 that goes silent ends (kato0);
#  - nobody holds conns_per_peer connections, the next is refused, root
#    still connects and works; the same for assocs_per_peer and max_assocs
#    associations, refused with Controller Busy; two users together reach
#    max_conns, root still gets in;
#  - a peer that reads its data a little at a time is closed once one send
#    has taken send_timeout in all;
#  - a connection whose socket is in flight in an SCM_RIGHTS message when
#    ucmdd accepts it (ucmdd held stopped meanwhile: deterministic) does not
#    escape the rule that denies nobody's writes: it is refused; so is one
#    that its process closed before the accept, what it sent still queued.
# Needs root (to run parts as nobody and daemon, and to stop ucmdd).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
need_tools setpriv
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing"
HP='' HP2='' HP3=''
# the parts still holding connections end on their done file; daemon.sh's
# clean-up kills ucmdd (stopped or not), common.sh's every part left
release_parts() {
	local d
	for d in "$T"/*/; do [ -d "$d" ] && touch "$d/done"; done
	return 0
}
at_exit release_parts
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-0000-4000-8000-0000c0ffee01
cat > "$T/policy.ini" <<EOF
[policy]
inherit = default
[rule tcp-local-nobody]
uid = nobody
verb = write, write-zeroes
action = deny
[rule tcp-test-host]
hostnqn = $HOSTNQN
action = allow
EOF
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
LIM="icreq_timeout=1,connect_timeout=2,kato0=1,send_timeout=2,max_conns=8,conns_per_peer=4,max_assocs=6,assocs_per_peer=2"
daemon_start --ram 64M --policy "$T/policy.ini" --nvme-tcp "127.0.0.1:$PORT,$LIM"
for _ in $(seq 100); do grep -q "NVMe/TCP at" "$DLOG" 2>/dev/null && break; sleep 0.1; done
grep -q "NVMe/TCP at" "$DLOG" || fail "ucmdd did not start its target"
NQN=$("$UCMD" --daemon "$SOCK" id-ctrl | sed -n 's/^subnqn *: //p')
[ -n "$NQN" ] || fail "no subsystem NQN"
P=tests/system/nvme_tcp_limits.py
shared tests/system/lib/nvme_tcp_wire.py >/dev/null	# what $P imports, beside its copy
as() {	# nobody|daemon|UID PART ARGS...: the part as that user (gid = uid)
	local u=65534
	[ "$1" = daemon ] && u=$(id -u daemon)
	[[ "$1" =~ ^[0-9]+$ ]] && u=$1
	shift
	as_user "$u" /usr/bin/python3 "$(shared "$P")" "$@"
}

echo "--- settings"
for bad in bogus=1 max_conns=0 max_conns=257 icreq_timeout=x icreq_timeout= kato0=3601 "" ; do
	rc=0
	"$UCMDD" --ram 64M --socket "$T/bad.sock" --nvme-tcp "127.0.0.1:1,$bad" \
		--foreground > "$T/bad.out" 2>&1 || rc=$?
	[ "$rc" = 2 ] && grep -q "KEY=VALUE settings" "$T/bad.out" ||
		{ cat "$T/bad.out"; fail "--nvme-tcp ...,$bad: status $rc, want 2 and the reason"; }
done
help=$("$UCMDD" --help) || fail "ucmdd --help failed"
grep -q "conns_per_peer=130" <<<"$help" || fail "--help does not list the limits"
echo "ok: bad settings refused, the limits in --help"

echo "--- deadlines"
as nobody idle "$PORT" 4000 || fail "ICReq deadline"
grep -q "no ICReq within 1000 ms: closed" "$DLOG" || fail "no log of the ICReq deadline"
as nobody noconnect "$PORT" 5000 || fail "Connect deadline"
grep -q "no Connect within 2000 ms: closed" "$DLOG" || fail "no log of the Connect deadline"
as nobody kato0 "$PORT" "$NQN" 6000 || fail "KATO 0"

echo "--- quotas"
held() {	# DIR: wait until the part holding its connections says so
	for _ in $(seq 300); do [ -f "$1/held" ] && return 0; kill -0 "$HP" 2>/dev/null || return 1; sleep 0.1; done
	return 1
}
mkdir -m 777 "$T/c1"
as nobody conns "$PORT" "$NQN" 4 "$T/c1" & HP=$!
held "$T/c1" || fail "nobody's connections"
grep -q "(uid 65534): conns_per_peer reached" "$DLOG" || fail "no log of conns_per_peer"
/usr/bin/python3 "$P" one "$PORT" "$NQN" || fail "root while nobody holds conns_per_peer connections"
mkdir -m 777 "$T/c2"
as daemon conns "$PORT" "$NQN" 4 "$T/c2" > "$T/c2.out" 2>&1 & HP2=$!
# daemon's fifth connection is refused by max_conns (8 with nobody's 4) or its own quota
for _ in $(seq 300); do [ -f "$T/c2/held" ] && break; sleep 0.1; done
[ -f "$T/c2/held" ] || { cat "$T/c2.out"; fail "daemon's connections"; }
cat "$T/c2.out"
/usr/bin/python3 "$P" one "$PORT" "$NQN" || fail "root while max_conns are held"
# a third user, who holds nothing, meets max_conns (nobody's 4 and daemon's 4)
if as 4242 one "$PORT" "$NQN" > "$T/4242.out" 2>&1; then fail "uid 4242 got a connection past max_conns"; fi
grep -q "(uid 4242): max_conns reached" "$DLOG" || fail "no log of max_conns"
as nobody one "$PORT" "$NQN" > "$T/nobody-one.out" 2>&1 && fail "nobody got a connection past its conns_per_peer"
touch "$T/c1/done" "$T/c2/done"
wait "$HP" || fail "nobody's conns part"
wait "$HP2" || fail "daemon's conns part"
HP='' HP2=''
echo "ok: conns_per_peer and max_conns reached, root still connects and reads"

mkdir -m 777 "$T/a1"
as nobody assocs "$PORT" "$NQN" 2 "$T/a1" & HP=$!
held "$T/a1" || fail "nobody's associations"
grep -q "(uid 65534): no association: assocs_per_peer reached" "$DLOG" ||
	fail "no log of assocs_per_peer"
/usr/bin/python3 "$P" one "$PORT" "$NQN" || fail "root while nobody holds assocs_per_peer associations"
# two more users hold theirs: max_assocs (6) reached, a fourth user refused, root not
mkdir -m 777 "$T/a2" "$T/a3"
as daemon assocs "$PORT" "$NQN" 2 "$T/a2" > "$T/a2.out" 2>&1 & HP2=$!
for _ in $(seq 300); do [ -f "$T/a2/held" ] && break; sleep 0.1; done
as 4242 assocs "$PORT" "$NQN" 2 "$T/a3" > "$T/a3.out" 2>&1 & HP3=$!
for _ in $(seq 300); do [ -f "$T/a3/held" ] && break; sleep 0.1; done
[ -f "$T/a2/held" ] && [ -f "$T/a3/held" ] || { cat "$T/a2.out" "$T/a3.out"; fail "more associations"; }
if as 4243 one "$PORT" "$NQN" > "$T/4243.out" 2>&1; then fail "uid 4243 got an association past max_assocs"; fi
grep -q "(uid 4243): no association: max_assocs reached" "$DLOG" || fail "no log of max_assocs"
/usr/bin/python3 "$P" one "$PORT" "$NQN" || fail "root while max_assocs are held"
touch "$T/a1/done" "$T/a2/done" "$T/a3/done"
wait "$HP" || fail "nobody's assocs part"
wait "$HP2" || fail "daemon's assocs part"
wait "$HP3" || fail "uid 4242's assocs part"
HP='' HP2='' HP3=''
echo "ok: assocs_per_peer and max_assocs reached, root still gets an association"

echo "--- send deadline"
as nobody trickle "$PORT" "$NQN" 6000 || fail "a slow reader"
grep -q "took not what was sent in 2000 ms: closed" "$DLOG" || fail "no log of the send deadline"

echo "--- a socket in flight at the accept"
mkdir -m 777 "$T/f"
as nobody inflight "$PORT" "$NQN" "$T/f" > "$T/inflight.out" 2>&1 & HP=$!
for _ in $(seq 300); do [ -f "$T/f/stop-me" ] && break; sleep 0.1; done
[ -f "$T/f/stop-me" ] || { cat "$T/inflight.out"; fail "the in-flight part did not start"; }
kill -STOP "$DPID"
touch "$T/f/stopped"
for _ in $(seq 300); do [ -f "$T/f/inflight" ] && break; sleep 0.1; done
kill -CONT "$DPID"
[ -f "$T/f/inflight" ] || { cat "$T/inflight.out"; fail "the socket never went in flight"; }
wait "$HP" || { cat "$T/inflight.out"; fail "the in-flight part"; }
HP=
cat "$T/inflight.out"
grep -q "^refused" "$T/inflight.out" || fail "a connection whose socket was in flight was not refused"
grep -q "refused 127.0.0.1: its socket (made by uid 65534) is held by no process" "$DLOG" ||
	fail "no log of the refusal"
"$UCMD" --daemon "$SOCK" read -s 30 -c 0 -z 4096 -d "$T/lba30" >/dev/null || fail "read back"
if grep -q "ucmd-inflight-write" "$T/lba30"; then fail "nobody's write went through"; fi
echo "ok: a socket in flight at the accept is refused; nobody's write did not happen"
mkdir -m 777 "$T/g"
as nobody closed "$PORT" "$T/g" > "$T/closed.out" 2>&1 & HP=$!
for _ in $(seq 300); do [ -f "$T/g/stop-me" ] && break; sleep 0.1; done
kill -STOP "$DPID"
touch "$T/g/stopped"
for _ in $(seq 300); do [ -f "$T/g/inflight" ] && break; sleep 0.1; done
kill -CONT "$DPID"
wait "$HP" || { cat "$T/closed.out"; fail "the closed-socket part"; }
HP=
# (the maker's uid may be gone by then: a closed socket in FIN_WAIT2 is a
# kernel minisock that inet_diag reports as uid 0, inode 0)
for _ in $(seq 100); do
	[ "$(grep -c "refused 127.0.0.1: its socket (made by uid" "$DLOG")" -ge 2 ] && break
	sleep 0.1
done
[ "$(grep -c "refused 127.0.0.1: its socket (made by uid" "$DLOG")" -ge 2 ] ||
	fail "a socket its process closed before the accept was not refused"
echo "ok: a socket its process closed before the accept (no file holds it) is refused"
echo "nvme_tcp_limits: all checks passed"
