#!/usr/bin/env bash
# liburing's own link-cp example (Debian's liburing-dev ships its source),
# built against the system liburing and run unchanged under `ucmd exec`:
# it copies one block device to another with linked Read -> Write pairs on
# one buffer each, so every write must carry what its read brought. The
# copy is then read outside exec, with ucmd's own CLI, and compared.
source "$(dirname "$0")/lib/common.sh"
need_tools cc cmp dd
src=/usr/share/doc/liburing-dev/examples/link-cp.c
[ -r "$src" ] || fail "no $src (liburing-dev)"
ctrl=$T/ctrl
cc -O2 -o "$T/link-cp" "$src" -luring || fail "link-cp does not build"
if grep -q ucmd <<<"$(ldd "$T/link-cp")"; then fail "link-cp links ucmd"; fi

step "a controller with two namespaces of 1 MiB beside namespace 1"
"$UCMD" --ctrl "$ctrl" create-ctrl --nsze=2048 >/dev/null
for n in 2 3; do
	"$UCMD" --ctrl "$ctrl" create-ns --nsze 2048 --ncap 2048 >/dev/null
	"$UCMD" --ctrl "$ctrl" attach-ns -n "$n" >/dev/null
done
head -c 1048576 /dev/urandom >"$T/src.bin"

step "under exec: dd fills nvme0n2, link-cp copies it to nvme0n3"
(cd "$T" && timeout 120 "$UCMD" exec --ctrl "$ctrl" -- sh -c \
	'dd if=src.bin of=/dev/nvme0n2 bs=64k oflag=direct status=none && ./link-cp /dev/nvme0n2 /dev/nvme0n3') ||
	fail "link-cp under exec"

step "namespace 3 holds the copy (read by ucmd's CLI, outside exec)"
timeout 60 "$UCMD" --ctrl "$ctrl" read -n 3 -s 0 -c 2047 -z 1048576 -d "$T/out.bin" >/dev/null
cmp "$T/src.bin" "$T/out.bin" || fail "namespace 3 is not a copy of namespace 2"
echo "exec_link_cp: ok"
