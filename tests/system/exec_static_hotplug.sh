#!/usr/bin/env bash
# A namespace attached while a static program runs under `ucmd exec` (by
# nvme-cli under another exec of the same ucmdd) shows at once in that
# program's /dev and /sys, as in a dynamic one's: Debian's static busybox
# lists and ls -l's /dev/nvme0n2 and /dev/ng0n2 with their kinds and
# numbers, reads /sys/block/nvme0n2/size and finds it in the controller's
# directory, and a static child it starts (a process served of its own)
# opens both (tests/exec/raw_stat.c fstat: the tree's node).
set -euo pipefail
# shellcheck source=tests/system/lib/daemon.sh
. "$(dirname "$0")/lib/daemon.sh"
need_tools cc busybox nvme python3
cc -O2 -static -o "$T/raw_stat_s" "$SRC/tests/exec/raw_stat.c" || fail "cc -static raw_stat"
daemon_start --ctrl "$T/ctrl"
ex() { (cd "$T" && timeout -k 5 120 "$UCMD" exec --daemon "$SOCK" -- "$@"); }
CNTLID=$(ex nvme id-ctrl /dev/nvme0 -o json |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["cntlid"])')

step "a static program waits; nvme-cli attaches a namespace meanwhile; the program sees it"
# the program starts with one namespace: its list, then (released by the file) its looks again
ex busybox sh -c "ls /dev | grep -E '^(nvme|ng)'; echo --;
	while [ ! -e '$T/go' ]; do sleep 0.2; done;
	ls /dev | grep -E '^(nvme|ng)'; echo --; ls -l /dev/nvme0n2 /dev/ng0n2;
	cat /sys/block/nvme0n2/size; ls /sys/class/nvme/nvme0 | grep -E '^n';
	'$T/raw_stat_s' fstat /dev/nvme0n2; '$T/raw_stat_s' fstat /dev/ng0n2" >"$T/static.txt" 2>&1 &
prog=$!
for _ in $(seq 100); do
	[ -s "$T/static.txt" ] && break
	sleep 0.1
done
ex sh -c "nvme create-ns /dev/nvme0 --nsze=4096 --ncap=4096 --flbas=0 &&
	nvme attach-ns /dev/nvme0 -n 2 -c $CNTLID" >"$T/ns.txt" 2>&1 || fail "create/attach: $(cat "$T/ns.txt")"
touch "$T/go"
wait "$prog" || fail "the static program: $(cat "$T/static.txt")"
out=$(cat "$T/static.txt")
[ "$(sed -n '1,/^--$/p' <<<"$out")" = "ng0n1
nvme0
nvme0n1
--" ] || fail "before the attach: $out"
[ "$(sed -n '/^--$/,/^--$/p' <<<"$out" | sed '1d;$d')" = "ng0n1
ng0n2
nvme0
nvme0n1
nvme0n2" ] || fail "/dev after the attach: $out"
grep -qE '^brw-rw---- +1 root +(disk|6) +259, +1 .* /dev/nvme0n2$' <<<"$out" || fail "ls -l nvme0n2: $out"
grep -qE '^crw------- +1 root +root +241, +1 .* /dev/ng0n2$' <<<"$out" || fail "ls -l ng0n2: $out"
grep -qx 4096 <<<"$out" || fail "size of nvme0n2 (4096 512-byte sectors): $out"
grep -qx nvme0n2 <<<"$out" && grep -qx ng0n2 <<<"$out" || fail "the controller's directory: $out"
grep -q "^type=b mode=0660 rdev=259:1 size=0 nlink=1 " <<<"$out" || fail "fstat nvme0n2: $out"
grep -q "^type=c mode=0600 rdev=241:1 size=0 nlink=1 " <<<"$out" || fail "fstat ng0n2: $out"
echo "exec_static_hotplug: ok"
