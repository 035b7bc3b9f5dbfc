#!/usr/bin/env bash
# ucmd list-subsys on ucmd's own NVMe/TCP host with two paths to ucmdd's
# target (two --nvme-tcp ports of one subsystem), as nvme-cli shows a
# native-multipath nvme-tcp subsystem on Linux: one path per URL, nvme0 and
# nvme1, transport tcp, Linux's sysfs address of an nvme-tcp controller
# (traddr=...,trsvcid=...,src_addr=...), state live, and with a namespace
# named each path's ANA state, which follows ucmd ana-state; the host NQN
# and ID the paths connected as (libnvme groups fabrics controllers by
# them); a path not
# connected is "connecting", without src_addr (Linux's while reconnecting).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing"
daemon_start_two_ports
U1=nvme-tcp://127.0.0.1:$P1/$NQN U2=nvme-tcp://127.0.0.1:$P2/$NQN
A1="traddr=127.0.0.1,trsvcid=$P1,src_addr=127.0.0.1"
A2="traddr=127.0.0.1,trsvcid=$P2,src_addr=127.0.0.1"

echo "--- list-subsys (text) with the namespace: both paths, optimized"
"$UCMD" --ctrl "$U1,$U2" list-subsys /dev/nvme0n1 > "$T/ls.txt" 2>&1 ||
	{ cat "$T/ls.txt"; fail "list-subsys /dev/nvme0n1"; }
printf 'nvme-subsys0 - NQN=%s\n\\\n +- nvme0 tcp %s live optimized\n +- nvme1 tcp %s live optimized\n' \
	"$NQN" "$A1" "$A2" > "$T/want.txt"
diff -u "$T/want.txt" "$T/ls.txt" || fail "list-subsys: not nvme-cli's two nvme-tcp paths"
echo "ok: two tcp paths, their addresses and ports, live, optimized"

echo "--- list-subsys -o json after port 2 turns inaccessible"
ana 2 inaccessible
# the host is the one the paths connected as (HostNQN, HostID: ucmdd's log says which)
HNQN=nqn.2014-08.org.nvmexpress:uuid:$(python3 -c 'import uuid; print(uuid.uuid4())')
"$UCMD" --hostnqn "$HNQN" --ctrl "$U1,$U2" list-subsys -o json /dev/nvme0n1 > "$T/ls.json" 2>&1 ||
	{ cat "$T/ls.json"; fail "list-subsys -o json /dev/nvme0n1"; }
HID=$(sed -n "s/.*$HNQN (host ID \([0-9a-f-]*\)).*/\1/p" "$DLOG" | head -1)
[ -n "$HID" ] || fail "ucmdd logged no connection of $HNQN"
python3 - "$T/ls.json" "$NQN" "$A1" "$A2" "$HNQN" "$HID" <<'PY' ||
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc[0]["HostNQN"] == sys.argv[5] and doc[0]["HostID"] == sys.argv[6], doc[0]
subs = doc[0]["Subsystems"]
assert len(subs) == 1 and subs[0]["Name"] == "nvme-subsys0" and subs[0]["NQN"] == sys.argv[2], subs
want = [
    {"Name": "nvme0", "Transport": "tcp", "Address": sys.argv[3], "State": "live",
     "ANAState": "optimized"},
    {"Name": "nvme1", "Transport": "tcp", "Address": sys.argv[4], "State": "live",
     "ANAState": "inaccessible"},
]
assert subs[0]["Paths"] == want, subs[0]["Paths"]
PY
	{ cat "$T/ls.json"; fail "list-subsys -o json"; }
echo "ok: port 2's path inaccessible, port 1's optimized"

echo "--- without a namespace: the paths without their ANA state"
"$UCMD" --ctrl "$U1,$U2" list-subsys > "$T/ls2.txt" 2>&1 || { cat "$T/ls2.txt"; fail "list-subsys"; }
grep -qx " +- nvme1 tcp $A2 live " "$T/ls2.txt" || { cat "$T/ls2.txt"; fail "list-subsys: no path 2"; }
ana 2 optimized
# one URL: its controller, over tcp too
"$UCMD" --ctrl "$U2" list-subsys > "$T/ls1.txt" 2>&1 || { cat "$T/ls1.txt"; fail "list-subsys, one URL"; }
grep -qx " +- nvme0 tcp $A2 live" "$T/ls1.txt" || { cat "$T/ls1.txt"; fail "list-subsys, one URL: not tcp"; }

echo "--- a path that is not connected: connecting, no src_addr"
P3=$(free_port)
"$UCMD" --ctrl "$U1,nvme-tcp://127.0.0.1:$P3/$NQN" list-subsys /dev/nvme0n1 > "$T/ls3.txt" 2>&1 ||
	{ cat "$T/ls3.txt"; fail "list-subsys with an unreachable path"; }
grep -qx " +- nvme0 tcp $A1 live optimized" "$T/ls3.txt" &&
	grep -qx " +- nvme1 tcp traddr=127.0.0.1,trsvcid=$P3 connecting " "$T/ls3.txt" ||
	{ cat "$T/ls3.txt"; fail "list-subsys: the unreachable path is not shown connecting"; }
# never connected, it is no path of the namespace: no ANA state (not "invalid")
"$UCMD" --ctrl "$U1,nvme-tcp://127.0.0.1:$P3/$NQN" list-subsys -o json /dev/nvme0n1 > "$T/ls3.json" 2>&1 ||
	{ cat "$T/ls3.json"; fail "list-subsys -o json with an unreachable path"; }
python3 - "$T/ls3.json" <<'PY' || { cat "$T/ls3.json"; fail "list-subsys -o json: the unreachable path"; }
import json, sys
p = json.load(open(sys.argv[1]))[0]["Subsystems"][0]["Paths"]
assert [(x["Name"], x["State"], x.get("ANAState")) for x in p] == \
    [("nvme0", "live", "optimized"), ("nvme1", "connecting", None)], p
PY
echo "ok: the unreachable path connecting, without an ANA state"
daemon_stop
echo "PASS"
