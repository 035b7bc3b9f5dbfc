#!/usr/bin/env bash
# ucmd show-topology against Debian's nvme-cli show-topology under
# `ucmd exec`, byte for byte, text and JSON, both rankings: a directory of
# two controllers (one port non-optimized, the other inaccessible, a
# namespace attached to one controller alone), in this process and through
# ucmdd; a directory of one controller (no multipath head: the layout of a
# controller's own namespaces). Then ucmd's own NVMe/TCP host with two
# nvme-tcp:// paths to ucmdd's two ports: the tree nvme-cli prints of
# Linux's nvme-tcp multipath (transport tcp, Linux's sysfs address, live,
# each path's ANA state following ucmd ana-state), a path that never
# connected a controller of no namespace (no ANA state). Bad input: an unknown ranking, a lone
# unreachable URL, a device argument: a message and a non-zero exit.
# Needs root (lib/daemon.sh).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
need_tools nvme timeout cmp python3
CTRL=$T/ctrl
C() { timeout 120 "$UCMD" --ctrl "$CTRL" "$@"; }

# ucmd show-topology (session options $1) and nvme-cli's under exec, the same bytes
same_topology() {	# "session options" [what]
	local -a s
	read -ra s <<<"$1"
	for args in "" "-r ctrl" "-o json" "-o json -r ctrl" "--ranking=namespace -o binary"; do
		# shellcheck disable=SC2086
		timeout 120 "$UCMD" exec "${s[@]}" -- nvme show-topology $args > "$T/tn" 2>&1 ||
			{ cat "$T/tn"; fail "nvme show-topology $args ($2)"; }
		# shellcheck disable=SC2086
		timeout 120 "$UCMD" "${s[@]}" show-topology $args > "$T/tu" 2>&1 ||
			{ cat "$T/tu"; fail "ucmd show-topology $args ($2)"; }
		cmp -s "$T/tn" "$T/tu" ||
			{ diff "$T/tn" "$T/tu"; fail "show-topology $args ($2): ucmd differs from nvme-cli"; }
	done
}

step "a directory of two controllers: namespace 2 on both, 3 on nvme0 alone"
C create-ctrl --controllers 2 --nsze=4096 > /dev/null || fail "create-ctrl --controllers 2"
NQN=$(C id-ctrl | sed -n 's/^subnqn *: //p')
[ -n "$NQN" ] || fail "no subsystem NQN"
C create-ns --nsze=1024 > /dev/null && C attach-ns -n 2 -c 1,2 > /dev/null || fail "namespace 2"
C create-ns --nsze=512 > /dev/null && C attach-ns -n 3 -c 1 > /dev/null || fail "namespace 3"
C ana-state --controller nvme0 --state non-optimized > /dev/null || fail "nvme0 non-optimized"
C ana-state --controller nvme1 --state inaccessible > /dev/null || fail "nvme1 inaccessible"

step "show-topology --ctrl DIR: nvme-cli's under exec, text and JSON, both rankings"
same_topology "--ctrl $CTRL" "directory"
C show-topology > "$T/t.txt" || fail "show-topology"
a0=$(grep -o 'nvme0 pcie [0-9a-f:.]*' "$T/t.txt" | head -1 | cut -d' ' -f3)
a1=$(grep -o 'nvme1 pcie [0-9a-f:.]*' "$T/t.txt" | head -1 | cut -d' ' -f3)
[ -n "$a0" ] && [ -n "$a1" ] || { cat "$T/t.txt"; fail "no PCI address"; }
{
	printf 'nvme-subsys0 - NQN=%s\n\\\n' "$NQN"
	printf ' +- ns 3\n \\\n  +- nvme0 pcie %s live non-optimized\n' "$a0"
	for n in 2 1; do
		printf ' +- ns %s\n \\\n  +- nvme0 pcie %s live non-optimized\n' "$n" "$a0"
		printf '  +- nvme1 pcie %s live inaccessible\n' "$a1"
	done
} > "$T/want.txt"
diff -u "$T/want.txt" "$T/t.txt" || fail "show-topology: not the expected tree"
C show-topology -r ctrl > "$T/t.txt" || fail "show-topology -r ctrl"
{
	printf 'nvme-subsys0 - NQN=%s\n\\\n' "$NQN"
	printf ' +- nvme1 pcie %s\n \\\n  +- ns 2 live inaccessible\n  +- ns 1 live inaccessible\n' "$a1"
	printf ' +- nvme0 pcie %s\n \\\n' "$a0"
	printf '  +- ns %s live non-optimized\n' 3 2 1
} > "$T/want.txt"
diff -u "$T/want.txt" "$T/t.txt" || fail "show-topology -r ctrl: not the expected tree"

step "no usable path: ucmd still shows the namespace and why (nvme-cli drops its head)"
C ana-state --controller nvme0 --state inaccessible > /dev/null || fail "nvme0 inaccessible"
C show-topology -o json > "$T/t.json" || fail "show-topology -o json"
python3 - "$T/t.json" <<'PY' || { cat "$T/t.json"; fail "show-topology -o json, all inaccessible"; }
import json, sys
nss = json.load(open(sys.argv[1]))[0]["Subsystems"][0]["Namespaces"]
got = [(n["NSID"], [(p["Name"], p["ANAState"]) for p in n["Paths"]]) for n in nss]
want = [(3, [("nvme0", "inaccessible")])] + \
    [(n, [("nvme0", "inaccessible"), ("nvme1", "inaccessible")]) for n in (2, 1)]
assert got == want, got
PY
C ana-state --controller nvme0 --state optimized > /dev/null || fail "nvme0 optimized"

step "through ucmdd: nvme-cli's under exec --daemon"
printf '[policy]\ndefault = allow\naudit = no\n' > "$T/policy.ini"
daemon_start --ctrl "$CTRL" --policy "$T/policy.ini"
same_topology "--daemon $SOCK" "ucmdd"
timeout 60 "$UCMD" --daemon "$SOCK" show-topology > "$T/d.txt" || fail "show-topology --daemon"
grep -qx "  +- nvme0 pcie $a0 live optimized" "$T/d.txt" &&
	grep -qx "  +- nvme1 pcie $a1 live inaccessible" "$T/d.txt" || { cat "$T/d.txt"; fail "--daemon: the states"; }
daemon_stop

step "one controller: its own namespaces, no paths (nvme-cli's \"Controller\" layout)"
timeout 60 "$UCMD" --ctrl "$T/one" create-ctrl --nsze=4096 > /dev/null || fail "create-ctrl"
timeout 60 "$UCMD" --ctrl "$T/one" create-ns --nsze=256 > /dev/null &&
	timeout 60 "$UCMD" --ctrl "$T/one" attach-ns -n 2 -c 1 > /dev/null || fail "namespace 2"
same_topology "--ctrl $T/one" "one controller"
timeout 60 "$UCMD" --ctrl "$T/one" show-topology -o json > "$T/one.json" || fail "one: -o json"
python3 - "$T/one.json" <<'PY' || { cat "$T/one.json"; fail "one controller: JSON"; }
import json, sys
nss = json.load(open(sys.argv[1]))[0]["Subsystems"][0]["Namespaces"]
assert [(n["NSID"], [c["Name"] for c in n["Controller"]]) for n in nss] == \
    [(2, ["nvme0"]), (1, ["nvme0"])], nss
assert all("Paths" not in n for n in nss), nss
PY

step "bad input: an unknown ranking, no ranking, a device: refused before any session"
for bad in "-r bogus" "-r" "--ranking=Namespace" "/dev/nvme0n1"; do
	rc=0
	# shellcheck disable=SC2086
	C show-topology $bad > "$T/bad.out" 2>&1 || rc=$?
	[ "$rc" = 2 ] || { cat "$T/bad.out"; fail "show-topology $bad: exit $rc, not 2"; }
	grep -q "^ucmd show-topology: " "$T/bad.out" || { cat "$T/bad.out"; fail "show-topology $bad: no message"; }
done
grep -q "^ucmd show-topology: invalid value 'bogus' for --ranking (namespace or ctrl)$" \
	<<<"$(C show-topology -r bogus 2>&1)" || fail "-r bogus: not its message"

step "two nvme-tcp:// paths to ucmdd's two ports"
daemon_start_two_ports
U1=nvme-tcp://127.0.0.1:$P1/$NQN U2=nvme-tcp://127.0.0.1:$P2/$NQN
A1="traddr=127.0.0.1,trsvcid=$P1,src_addr=127.0.0.1"
A2="traddr=127.0.0.1,trsvcid=$P2,src_addr=127.0.0.1"
ana 2 non-optimized
timeout 60 "$UCMD" --ctrl "$U1,$U2" show-topology > "$T/tcp.txt" 2>&1 ||
	{ cat "$T/tcp.txt"; fail "show-topology over tcp"; }
printf 'nvme-subsys0 - NQN=%s\n\\\n +- ns 1\n \\\n  +- nvme0 tcp %s live optimized\n  +- nvme1 tcp %s live non-optimized\n' \
	"$NQN" "$A1" "$A2" > "$T/want.txt"
diff -u "$T/want.txt" "$T/tcp.txt" || fail "show-topology over tcp: not the expected tree"
timeout 60 "$UCMD" --ctrl "$U1,$U2" show-topology -r ctrl > "$T/tcp.txt" 2>&1 ||
	{ cat "$T/tcp.txt"; fail "show-topology -r ctrl over tcp"; }
printf 'nvme-subsys0 - NQN=%s\n\\\n +- nvme1 tcp %s\n \\\n  +- ns 1 live non-optimized\n +- nvme0 tcp %s\n \\\n  +- ns 1 live optimized\n' \
	"$NQN" "$A2" "$A1" > "$T/want.txt"
diff -u "$T/want.txt" "$T/tcp.txt" || fail "show-topology -r ctrl over tcp: not the expected tree"

step "port 2 inaccessible: its path's ANA state in the JSON"
ana 2 inaccessible
HNQN=nqn.2014-08.org.nvmexpress:uuid:$(python3 -c 'import uuid; print(uuid.uuid4())')
timeout 60 "$UCMD" --hostnqn "$HNQN" --ctrl "$U1,$U2" show-topology -o json > "$T/tcp.json" 2>&1 ||
	{ cat "$T/tcp.json"; fail "show-topology -o json over tcp"; }
python3 - "$T/tcp.json" "$NQN" "$A1" "$A2" "$HNQN" <<'PY' || { cat "$T/tcp.json"; fail "show-topology -o json over tcp"; }
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc[0]["HostNQN"] == sys.argv[5] and doc[0]["HostID"], doc[0]
subs = doc[0]["Subsystems"]
assert len(subs) == 1 and subs[0]["Name"] == "nvme-subsys0" and subs[0]["NQN"] == sys.argv[2], subs
want = [{"NSID": 1, "Paths": [
    {"Name": "nvme0", "Transport": "tcp", "Address": sys.argv[3], "State": "live",
     "ANAState": "optimized"},
    {"Name": "nvme1", "Transport": "tcp", "Address": sys.argv[4], "State": "live",
     "ANAState": "inaccessible"}]}]
assert subs[0]["Namespaces"] == want, subs[0]["Namespaces"]
PY
ana 2 optimized

step "one URL: its controller's own namespace; a path never connected: a controller without paths"
timeout 60 "$UCMD" --ctrl "$U2" show-topology > "$T/one.txt" 2>&1 || { cat "$T/one.txt"; fail "one URL"; }
printf 'nvme-subsys0 - NQN=%s\n\\\n +- ns 1\n \\\n  +- nvme0 tcp %s live\n' "$NQN" "$A2" > "$T/want.txt"
diff -u "$T/want.txt" "$T/one.txt" || fail "show-topology, one URL: not the expected tree"
P3=$(free_port)
timeout 60 "$UCMD" --ctrl "$U1,nvme-tcp://127.0.0.1:$P3/$NQN" show-topology > "$T/t3.txt" 2>&1 ||
	{ cat "$T/t3.txt"; fail "show-topology with an unreachable path"; }
# Linux makes a path of a namespace when it scans a live controller: one
# never connected (ucmd retries it) is a controller of no namespace
printf 'nvme-subsys0 - NQN=%s\n\\\n +- ns 1\n \\\n  +- nvme0 tcp %s live optimized\n' "$NQN" "$A1" \
	> "$T/want.txt"
diff -u "$T/want.txt" "$T/t3.txt" || fail "show-topology: a path never connected shown"
timeout 60 "$UCMD" --ctrl "$U1,nvme-tcp://127.0.0.1:$P3/$NQN" show-topology -r ctrl > "$T/t3.txt" 2>&1 ||
	{ cat "$T/t3.txt"; fail "show-topology -r ctrl with an unreachable path"; }
printf 'nvme-subsys0 - NQN=%s\n\\\n +- nvme1 tcp traddr=127.0.0.1,trsvcid=%s\n \\\n +- nvme0 tcp %s\n \\\n  +- ns 1 live optimized\n' \
	"$NQN" "$P3" "$A1" > "$T/want.txt"
diff -u "$T/want.txt" "$T/t3.txt" || fail "show-topology -r ctrl: the controller never connected"

step "bad input: a lone unreachable URL fails with the reason"
timeout 60 "$UCMD" --ctrl "nvme-tcp://127.0.0.1:$P3/$NQN" show-topology > "$T/bad.out" 2>&1 &&
	{ cat "$T/bad.out"; fail "show-topology on an unreachable URL succeeded"; }
grep -qi "refused\|connect" "$T/bad.out" || { cat "$T/bad.out"; fail "unreachable URL: no reason given"; }
daemon_stop
echo "PASS"
