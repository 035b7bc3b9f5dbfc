#!/usr/bin/env bash
# A statically linked program's children do I/O on ucmd's devices under
# `ucmd exec` as on Linux (ucmd-supervise serves each descendant as a
# process of its own; tests/exec/static_forkio.c, linked with Debian's
# liburing.a):
#
# - io: a forked child preads and pwrites through the descriptor it
#   inherited, opens the namespace anew, makes a ring of its own and writes
#   through the inherited descriptor on it; its write() moves the position
#   it shares with the parent (the parent sees it); the parent's ring is
#   EEXIST for it and keeps serving the parent; a grandchild does the same;
#   the child execs a static program (itself) that writes through the
#   descriptor it kept, and so does one the parent posix_spawn()s; the
#   program's own exec of a static image is served there too; threads of
#   the parent and of the child are served as their process; a vfork
#   child's pread (the parent's memory) is EBADF. Every block written is
#   read back with dd under `ucmd exec` and compared (cmp) with what was
#   written.
# - late: a child and an orphan (its parent gone) that made no call yet use
#   the descriptor after the parent closed it (the description lives while
#   a process holds it).
# - sqpoll: a forked child queues a write on the SQPOLL ring it inherited
#   and waits for it with io_uring_enter: served on the parent's ring, whose
#   poller runs the requests in the parent's memory as Linux's does; its
#   io_uring_register there is EEXIST; the parent's ring goes on. A
#   grandchild's enter on an SQPOLL ring whose maker exited is EOWNERDEAD.
# - kill: children killed (SIGKILL) in the middle of their I/O leave the
#   parent served and the supervisor with no more descriptors than before.
source "$(dirname "$0")/lib/common.sh"
need_tools cc python3 dd cmp
[ -f /usr/lib/x86_64-linux-gnu/liburing.a ] || fail "no liburing.a (liburing-dev, scripts/deps.sh)"
P=$T/static_forkio
cc -O2 -static -o "$P" "$SRC/tests/exec/static_forkio.c" -luring || fail "cc -static"
grep -q 'statically linked' <<<"$(file "$P")" || fail "not static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
LBS=$(timeout 60 "$UCMD" --ctrl "$CTRL" --output-format json id-ns | python3 -c '
import json, sys
ns = json.load(sys.stdin)
print(1 << ns["lbafs"][ns["flbas"] & 0xf]["ds"])')

# every line the program printed says ok
all_ok() {	# what output
	local bad
	bad=$(grep -v ' ok$' <<<"$2" || true)
	[ -z "$bad" ] || fail "$1: $bad"
}

# block $1 of the namespace, read with dd under exec, is what static_forkio
# writes there with seed $2 (cmp)
blocks_hold() {	# block seed
	python3 -c '
import sys
k, seed, lbs = map(int, sys.argv[1:4])
sys.stdout.buffer.write(bytes((seed * 131 + k * 7 + i) & 0xff for i in range(lbs)))' \
		"$1" "$2" "$LBS" >"$T/want.$1"
	timeout 60 "$UCMD" exec --ctrl "$CTRL" -- dd if=/dev/nvme0n1 of="$T/got.$1" bs="$LBS" \
		skip="$1" count=1 status=none || fail "dd block $1"
	cmp "$T/want.$1" "$T/got.$1" || fail "block $1 is not what was written (seed $2)"
}

step "a child, a grandchild and an exec'd image do I/O beside the parent"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$P" io /dev/nvme0n1 "$LBS" "$P" 2>&1)
rc=$?
set -e
[ "$rc" = 0 ] || fail "static_forkio io: status $rc: $out"
all_ok "static_forkio io" "$out"
for want in "child pread inherited ok" "child inherited ring EEXIST ok" \
	"child ring write inherited fd ok" "parent position moved by the child ok" \
	"grandchild pwrite inherited ok" "grandchild ring read ok" "exec'd pwrite kept fd ok" \
	"exec'd pread new fd ok" "parent ring after the fork ok" "spawned image's pwrite ok" \
	"child's thread pwrite and pread ok" "vfork child pread EBADF ok"; do
	grep -qx "$want" <<<"$out" || fail "no '$want': $out"
done

step "what each process wrote is on the namespace (dd under exec, cmp)"
# block:seed: parent 0:1 33:8, child 8:2 16:3 24:4 32:5, grandchild 40:6, exec'd 48:7,
# posix_spawn'd 64:11, the child's thread 80:14, the parent's thread 81:15
for bs in 0:1 8:2 16:3 24:4 32:5 33:8 40:6 48:7 64:11 80:14 81:15; do
	blocks_hold "${bs%:*}" "${bs#*:}"
done

step "the program itself execs a static image: served there, the descriptor it kept too"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$P" selfexec /dev/nvme0n1 "$LBS" "$P" 2>&1)
rc=$?
set -e
[ "$rc" = 0 ] || fail "static_forkio selfexec: status $rc: $out"
all_ok "static_forkio selfexec" "$out"
grep -qx "exec'd pwrite kept fd ok" <<<"$out" || fail "selfexec: $out"
for bs in 72:12 73:13; do
	blocks_hold "${bs%:*}" "${bs#*:}"
done

step "the parent closes first: a child and an orphan that made no call yet still use the descriptor"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$P" late /dev/nvme0n1 "$LBS" 2>&1)
rc=$?
set -e
[ "$rc" = 0 ] || fail "static_forkio late: status $rc: $out"
all_ok "static_forkio late" "$out"
for want in "late child pwrite ok" "orphan pread and pwrite ok"; do
	grep -qx "$want" <<<"$out" || fail "late: no '$want': $out"
done
for bs in 89:17 90:18; do
	blocks_hold "${bs%:*}" "${bs#*:}"
done

step "sqpoll: a child's enter on the SQPOLL ring it inherited"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$P" sqpoll /dev/nvme0n1 "$LBS" 2>&1)
rc=$?
set -e
[ "$rc" = 0 ] || fail "static_forkio sqpoll: status $rc: $out"
all_ok "static_forkio sqpoll" "$out"
for want in "child enter on the inherited SQPOLL ring ok" \
	"child write on the inherited SQPOLL ring ok" \
	"child register on the inherited SQPOLL ring EEXIST ok" \
	"parent SQPOLL ring reads the child's block ok" \
	"grandchild enter on the SQPOLL ring of a maker gone EOWNERDEAD ok"; do
	grep -qx "$want" <<<"$out" || fail "sqpoll: no '$want': $out"
done
for bs in 96:19 97:20; do
	blocks_hold "${bs%:*}" "${bs#*:}"
done

step "children killed in the middle of their I/O: the parent is served, nothing left behind"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$P" kill /dev/nvme0n1 "$LBS" 2>&1)
rc=$?
set -e
[ "$rc" = 0 ] || fail "static_forkio kill: status $rc: $out"
all_ok "static_forkio kill" "$out"
grep -qx "supervisor released the children ok" <<<"$out" || fail "kill: $out"
echo "exec_static_forkio: ok"
