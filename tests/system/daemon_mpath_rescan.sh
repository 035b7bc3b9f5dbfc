#!/usr/bin/env bash
# ucmdd serving a directory of two controllers (one head over them, as
# Linux's native multipath): a namespace a client creates and attaches to
# both gets its head (ng0n2, nvme0n2) in the running daemon, as Linux's
# nvme_scan_work makes it on the Namespace Attribute notice: written and
# read back through the daemon without a restart; one attached to the
# second controller alone gets one too (a device of the daemon).
# Needs root (lib/daemon.sh).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
CTRL=$T/ctrl
printf '[policy]\ndefault = allow\naudit = no\n' > "$T/policy.ini"
D() { timeout 60 "$UCMD" --daemon "$SOCK" "$@"; }

step "ucmdd on a directory of two controllers"
"$UCMD" --ctrl "$CTRL" create-ctrl --controllers 2 --nsze=4096 > /dev/null || fail "create-ctrl"
daemon_start --ctrl "$CTRL" --policy "$T/policy.ini"
D -n 2 id-ns > "$T/none.out" 2>&1 && { cat "$T/none.out"; fail "a namespace 2 before it was made"; }

step "namespaces 2 (both controllers) and 3 (controller 2) made through the daemon"
D create-ns --nsze=1024 > "$T/mk.out" && grep -q "created nsid:2" "$T/mk.out" || fail "create-ns 2"
D create-ns --nsze=512 > "$T/mk.out" && grep -q "created nsid:3" "$T/mk.out" || fail "create-ns 3"
D attach-ns -n 2 -c 1,2 > /dev/null || fail "attach-ns 2"
D attach-ns -n 3 -c 2 > /dev/null || fail "attach-ns 3"

step "their heads, without a restart: data written and read back"
head -c 8192 /dev/urandom > "$T/pat"
ok=
for _ in $(seq 50); do
	D -n 2 write -s 0 -c 15 -z 8192 -d "$T/pat" > "$T/w.out" 2>&1 && { ok=1; break; }
	sleep 0.1
done
[ -n "$ok" ] || { cat "$T/w.out"; fail "no head of namespace 2 5 s after its attach"; }
D -n 2 read -s 0 -c 15 -z 8192 -d "$T/back" > /dev/null || fail "read namespace 2"
cmp "$T/pat" "$T/back" || fail "namespace 2: the data differ"
# namespace 3 is not controller 1's (the CLI asks it): its head is among the daemon's devices
timeout 60 "$UCMD" exec --daemon "$SOCK" -- ls /dev > "$T/dev.out" 2>&1 || { cat "$T/dev.out"; fail "exec ls /dev"; }
grep -qx ng0n3 "$T/dev.out" && grep -qx nvme0n3 "$T/dev.out" && grep -qx nvme0n2 "$T/dev.out" ||
	{ cat "$T/dev.out"; fail "the heads of namespaces 2 and 3 are not the daemon's devices"; }
daemon_alive
daemon_stop
echo "PASS"
