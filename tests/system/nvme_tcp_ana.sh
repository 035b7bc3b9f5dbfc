#!/usr/bin/env bash
# Multipath on ucmdd's NVMe/TCP target, on loopback: two --nvme-tcp
# listeners are two ports of one subsystem.
#  - each port's controllers have their own controller IDs, and Identify
#    says multi-port, multi-controller, ANA (CMIC), a shared namespace
#    (NMIC) in ANA group 1, ANACAP/ANATT/ANAGRPMAX/NANAGRPID;
#  - `ucmd ana-state` shows and sets a port's state; bad ports, groups and
#    state names get their own errors; only ucmdd's user and root may set;
#  - I/O through a port whose state is inaccessible, persistent loss or
#    change gets the matching Asymmetric Access status, the other port
#    serves the same data, and back to optimized the port works again;
#  - on the wire (tests/system/nvme_tcp_ana.py): the ANA log page per
#    port, RGO, the ANA Change notice, a queue for another port's
#    controller refused.
# Needs root (a second user asks and is refused).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
need_tools setpriv
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing"
daemon_start_two_ports --socket-mode 0666
U1=nvme-tcp://127.0.0.1:$P1/$NQN U2=nvme-tcp://127.0.0.1:$P2/$NQN

echo "--- bad listener lists"
rc=0 P3=$(free_port)
"$UCMDD" --ram 16M --socket "$T/bad.sock" --foreground --nvme-tcp "127.0.0.1:$P3" \
	--nvme-tcp "127.0.0.1:$P3" > "$T/dup.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "127.0.0.1:$P3: Address already in use" "$T/dup.out" ||
	{ cat "$T/dup.out"; fail "the same listener twice: status $rc"; }
many=()
for i in $(seq 17); do many+=(--nvme-tcp "127.0.0.1:$((20000 + i))"); done
rc=0
"$UCMDD" --ram 16M --socket "$T/bad.sock" --foreground "${many[@]}" > "$T/many.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "at most 16 --nvme-tcp listeners" "$T/many.out" ||
	{ cat "$T/many.out"; fail "17 listeners: status $rc"; }
echo "ok: a listener given twice, and a 17th, refused"

echo "--- Identify through each port"
field() { sed -n "s/^$1 *: //p" "$2"; }
"$UCMD" --ctrl "$U1" id-ctrl > "$T/id1" || fail "id-ctrl through port 1"
"$UCMD" --ctrl "$U2" id-ctrl > "$T/id2" || fail "id-ctrl through port 2"
for f in cmic:0xb anacap:31 anatt:10 anagrpmax:1 nanagrpid:1; do
	for i in 1 2; do
		[ "$(field "${f%%:*}" "$T/id$i")" = "${f#*:}" ] ||
			fail "port $i: ${f%%:*} is '$(field "${f%%:*}" "$T/id$i")', want ${f#*:}"
	done
done
oaes=$(field oaes "$T/id1")
(( oaes & 0x800 )) || fail "OAES $oaes: no ANA Change notices"
[ "$(field cntlid "$T/id1")" != "$(field cntlid "$T/id2")" ] ||
	fail "both ports' controllers are $(field cntlid "$T/id1"): one subsystem, one CNTLID twice"
[ "$(field subnqn "$T/id1")" = "$(field subnqn "$T/id2")" ] || fail "two subsystem NQNs"
"$UCMD" --ctrl "$U2" id-ns -n 1 > "$T/ns2" || fail "id-ns through port 2"
[ "$(sed -n 's/^nmic *: //p' "$T/ns2")" = 0x1 ] || fail "NMIC: not a shared namespace"
[ "$(sed -n 's/^anagrpid *: //p' "$T/ns2")" = 1 ] || fail "ANAGRPID is not 1"
echo "ok: CMIC 0xb, ANACAP, ANATT, group counts, OAES ANA, distinct CNTLIDs, NMIC, ANAGRPID"

echo "--- ana-state"
[ "$("$UCMD" --daemon "$SOCK" ana-state --port 2)" = "port 2 group 1: optimized" ] ||
	fail "ana-state: port 2 does not start optimized"
bad() {	# rc message args...
	local want=$1 msg=$2 rc=0; shift 2
	"$UCMD" --daemon "$SOCK" ana-state "$@" > "$T/bad.out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] && grep -q -- "$msg" "$T/bad.out" ||
		{ cat "$T/bad.out"; fail "ana-state $*: status $rc, want $want and '$msg'"; }
}
bad 1 "no such --nvme-tcp listener" --port 3
bad 1 "no such ANA group" --port 1 --group 2
bad 2 "one of optimized, non-optimized" --port 1 --state degraded
bad 2 "name one port: an NVMe/TCP listener" --state inaccessible
rc=0
as_nobody "$(shared "$UCMD")" --daemon "$SOCK" ana-state --port 1 --state inaccessible \
	> "$T/nobody.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "only ucmdd's user and root" "$T/nobody.out" ||
	{ cat "$T/nobody.out"; fail "another user set a port's ANA state (status $rc)"; }
[ "$(as_nobody "$(shared "$UCMD")" --daemon "$SOCK" ana-state --port 1)" = \
	"port 1 group 1: optimized" ] || fail "another user cannot ask the state"
echo "ok: bad port, group, state refused; another user may ask, not set"

echo "--- I/O per state"
head -c 8192 /dev/urandom > "$T/pat"
for s in inaccessible:0x302 persistent-loss:0x301 change:0x303; do
	"$UCMD" --daemon "$SOCK" ana-state --port 2 --state "${s%%:*}" >/dev/null ||
		fail "ana-state --state ${s%%:*}"
	rc=0
	"$UCMD" --ctrl "$U2" write -s 8 -c 1 -z 8192 -d "$T/pat" > "$T/w.out" 2>&1 || rc=$?
	[ "$rc" != 0 ] && grep -q "(${s#*:})" "$T/w.out" ||
		{ cat "$T/w.out"; fail "write through a ${s%%:*} port: status $rc, want ${s#*:}"; }
	"$UCMD" --ctrl "$U1" write -s 8 -c 1 -z 8192 -d "$T/pat" >/dev/null ||
		fail "write through port 1 while port 2 is ${s%%:*}"
done
"$UCMD" --daemon "$SOCK" ana-state --port 2 --state non-optimized >/dev/null
"$UCMD" --ctrl "$U2" read -s 8 -c 1 -z 8192 -d "$T/back" >/dev/null ||
	fail "read through port 2, non-optimized"
cmp "$T/pat" "$T/back" || fail "port 2 reads other data than port 1 wrote"
"$UCMD" --daemon "$SOCK" ana-state --port 2 --state optimized >/dev/null
grep -q "port 2 (127.0.0.1:$P2): ANA group 1 non-optimized" "$DLOG" || fail "no log of the change"
echo "ok: Asymmetric Access Inaccessible, Persistent Loss, Transition; the other port serves; back"

echo "--- ana-log"
"$UCMD" --daemon "$SOCK" ana-state --port 2 --state inaccessible >/dev/null
"$UCMD" --ctrl "$U1" ana-log -o json > "$T/ana1.json" || fail "ana-log through port 1"
"$UCMD" --ctrl "$U2" ana-log -o json > "$T/ana2.json" || fail "ana-log through port 2"
"$UCMD" --ctrl "$U2" ana-log --groups -o json > "$T/ana2g.json" || fail "ana-log --groups"
python3 - "$T/ana1.json" "$T/ana2.json" "$T/ana2g.json" <<'EOP' || fail "ana-log's JSON"
import json, sys
a1, a2, g2 = (json.load(open(p)) for p in sys.argv[1:])
def desc(chg, state, nsids):
    return [{"grpid": 1, "nnsids": len(nsids), "chgcnt": chg, "state": state,
             "NSIDS": [{"nsid": n} for n in nsids]}]
assert a2["Asymmetric Namespace Access Log for NVMe device"] == "nvme0", a2
assert a2["ngrps"] == 1 and a2["ANA DESC LIST "] == desc(a2["chgcnt"], "inaccessible", [1]), a2
# each port counts its own changes: port 1's never changed
assert a2["chgcnt"] > 0 and a1["chgcnt"] == 0, (a1, a2)
assert a1["ANA DESC LIST "] == desc(0, "optimized", [1]), a1
assert g2["ANA DESC LIST "] == desc(a2["chgcnt"], "inaccessible", []), g2
EOP
"$UCMD" --ctrl "$U2" ana-log > "$T/ana2.txt"
grep -q "^state	:	inaccessible$" "$T/ana2.txt" && grep -q "^	nsid	:	1$" "$T/ana2.txt" ||
	{ cat "$T/ana2.txt"; fail "ana-log's normal output"; }
rc=0
"$UCMD" --daemon "$SOCK" ana-log > "$T/noana.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "does not report ANA" "$T/noana.out" ||
	{ cat "$T/noana.out"; fail "ana-log of a controller without ANA: status $rc"; }
"$UCMD" --daemon "$SOCK" ana-state --port 2 --state optimized >/dev/null
echo "ok: ana-log per port (json, normal, --groups); a controller without ANA says so"

echo "--- on the wire"
/usr/bin/python3 tests/system/nvme_tcp_ana.py aen "$P1" "$P2" "$NQN" "$UCMD" "$SOCK" ||
	fail "ANA on the wire"
echo "PASS: nvme_tcp_ana"
