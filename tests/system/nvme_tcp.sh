#!/usr/bin/env bash
# ucmdd's NVMe/TCP target (docs/daemon.md). On the host: `ucmdd --help` names
# --nvme-tcp, and tests/system/nvme_tcp_pdu.py speaks the protocol byte by
# byte (discovery, in-capsule/R2T/C2HData transfers with digests, malformed
# PDUs answered by a TermReq without harm to other connections). In a QEMU
# guest (tests/system/qemu/run.sh, Debian's cloud kernel with nvme-fabrics
# and nvme-tcp loaded from the same package): Linux's nvme-tcp host
# connects to ucmdd on the guest's loopback, and nvme-cli, fio, mke2fs and
# e2fsck work on the devices it makes (tests/system/qemu/nvme_tcp_guest.sh).
source "$(dirname "$0")/lib/common.sh"
need_root "runs a part as nobody, and QEMU"
on_fail() { [ -f "$T/ucmdd.log" ] && tail -20 "$T/ucmdd.log"; }
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-0000-4000-8000-0000c0ffee01

[ -f "$B/build.ninja" ] || meson setup "$B" >/dev/null
ninja -C "$B" src/server/ucmdd tools/ucmd >/dev/null || fail "build failed"
need_tools nvme fio mke2fs e2fsck python3

step "ucmdd --help documents --nvme-tcp; a bad address is refused"
o=$("$UCMDD" --help) && grep -q -- '--nvme-tcp ADDR\[:PORT\]' <<<"$o" || fail "--help has no --nvme-tcp"
set +e
"$UCMDD" --ram 64M --socket "$T/none.sock" --nvme-tcp nowhere:99999 --foreground 2>"$T/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'ADDR\[:PORT\] expected' "$T/err" || fail "bad --nvme-tcp: status $rc"

step "the protocol byte by byte against ucmdd on the host's loopback"
DPID=
stop_daemon() { [ -z "$DPID" ] || kill "$DPID" 2>/dev/null || true; }
at_exit stop_daemon
cat > "$T/policy.ini" <<EOF
[policy]
inherit = default
[rule tcp-local-nobody]
uid = nobody
verb = write, write-zeroes
action = deny
[rule tcp-readonly-hostid]
hostid = 5d0a1f3e-0000-4000-8000-00000000dead
verb = write, write-zeroes
action = deny
[rule tcp-test-host]
hostnqn = $HOSTNQN
action = allow
EOF
# a free port: the kernel picks one, we release it for ucmdd
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# detached: ucmdd returns once it listens (its pid from the socket's owner)
# two controllers: both report the serial UCMD0001, and so one subsystem NQN
"$UCMDD" --ram 64M --ram 32M --socket "$T/ucmdd.sock" --nvme-tcp "127.0.0.1:$PORT" \
	--policy "$T/policy.ini" --audit "$T/audit.log" || fail "ucmdd did not start"
DPID=$(pgrep -f -- "--socket $T/ucmdd.sock" | head -1)
python3 tests/system/nvme_tcp_pdu.py "$PORT" "$HOSTNQN" "$T/audit.log" || fail "nvme_tcp_pdu.py"

step "a local peer is judged by its process's uid: nvme_tcp_pdu.py as nobody"
need_tools setpriv
# Debian's interpreter: one under root's home (pyenv) is not nobody's to run
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing"
as_nobody /usr/bin/python3 "$(shared tests/system/nvme_tcp_pdu.py)" \
	"$PORT" "$HOSTNQN" "$T/audit.log" local-user || fail "nvme_tcp_pdu.py as nobody"
grep -q '"uid":65534' <<<"$(grep '"decision":"deny"' "$T/audit.log" | grep '"verb":"write"')" ||
	fail "no audit record of nobody's denied write"
kill "$DPID"
DPID=

step "ucmd policy explain judges an NVMe/TCP host by its host NQN and host ID"
RO=5d0a1f3e-0000-4000-8000-00000000dead
ex() { "$UCMD" policy explain --policy "$T/policy.ini" --uid 4294967295 --gid 4294967295 "$@"; }
eo=$(ex --verb write --hostnqn "$HOSTNQN" --hostid "${RO^^}") && fail "explain: the read-only host ID may write"
grep -q "tcp-readonly-hostid" <<<"$eo" || fail "explain: not the hostid rule: $eo"
ex --verb read --hostnqn "$HOSTNQN" --hostid "$RO" >/dev/null || fail "explain: the read-only host ID may not read"
o=$(ex --verb format --hostnqn "$HOSTNQN" --hostid 00000000-0000-0000-0000-000000000001) && grep -q "tcp-test-host" <<<"$o" ||
	fail "explain: another host ID of the allowed NQN"
set +e
ex --verb read --hostid not-a-uuid 2>/dev/null; rc=$?
set -e
[ "$rc" = 2 ] || fail "explain: a bad host ID: status $rc, want 2"

step "Linux's nvme-tcp host against ucmdd in a QEMU guest"
# Debian's mke2fs and e2fsck under names busybox's applets do not take
cp "$(command -v mke2fs)" "$T/deb-mke2fs"
cp "$(command -v e2fsck)" "$T/deb-e2fsck"
out=${UCMD_QEMU_OUT:-$T/qemu}
grc=0
bash tests/system/qemu/run.sh --out "$out" --script tests/system/qemu/nvme_tcp_guest.sh \
	--mod nvme-tcp --mod nvmet-tcp --dyn "$UCMDD" --dyn "$UCMD" --dyn "$(command -v nvme)" \
	--dyn "$T/deb-mke2fs" --dyn "$T/deb-e2fsck" --fio || grc=$?
[ -f "$out/guest.log" ] && sed 's/^/guest| /' "$out/guest.log" | grep -E 'GUEST-PART|guest:|FAIL|ucmdd:' || true
[ "$grc" -eq 125 ] && fail "the guest did not run"
[ "$grc" -eq 0 ] || fail "guest parts failed (status $grc; $out/guest.log)"

step "id-ctrl and id-ns through NVMe/TCP agree with ucmd's own answers"
python3 - "$out" <<'EOF' || fail "identify data differ"
import json, sys
out = sys.argv[1]
def load(name):
    with open(f"{out}/{name}") as f:
        return json.load(f)
tc, uc = load("tcp-id-ctrl.json"), load("ucmd-id-ctrl.json")
tn, un = load("tcp-id-ns.json"), load("ucmd-id-ns.json")
bad = []
def norm(v):
    return v.strip() if isinstance(v, str) else v
# the fields a fabrics controller reports as the device does (those ucmd's
# id-ctrl prints); cntlid, mdts, sgls, kas, maxcmd, ioccsz, iorcsz, msdbd are
# the transport's (src/nvme/target/tcp_cmd.c)
for k in ("vid", "ssvid", "sn", "mn", "fr", "ver", "oacs", "oncs", "nn", "subnqn"):
    if k not in tc or k not in uc:
        bad.append(f"id-ctrl {k}: not in both")
    elif norm(tc[k]) != norm(uc[k]):
        bad.append(f"id-ctrl {k}: tcp {tc[k]!r} ucmd {uc[k]!r}")
for k in ("nsze", "ncap", "nuse", "flbas", "nlbaf", "lbafs"):
    if k not in tn or k not in un:
        bad.append(f"id-ns {k}: not in both")
    elif tn[k] != un[k]:
        bad.append(f"id-ns {k}: tcp {tn[k]!r} ucmd {un[k]!r}")
print("\n".join(bad) or "identify: the fabrics view agrees")
sys.exit(1 if bad else 0)
EOF
if [ -f "$out/perf.txt" ]; then
	awk '{v[$1] = $2} END {
		printf "performance (4K randread QD32, kernel host, guest loopback, TCG): ucmdd %d IOPS, nvmet-tcp %d IOPS, ratio %.2f\n",
			v["ucmdd"], v["nvmet"], v["nvmet"] ? v["ucmdd"] / v["nvmet"] : 0
		printf "performance (the same on ucmdd): ucmd'"'"'s host %d IOPS, Linux'"'"'s nvme-tcp host %d IOPS, ratio %.2f\n",
			v["ucmd-host"], v["ucmdd"], v["ucmdd"] ? v["ucmd-host"] / v["ucmdd"] : 0 }' "$out/perf.txt"
fi
echo "nvme_tcp: all checks passed"
