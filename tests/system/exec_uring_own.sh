#!/usr/bin/env bash
# One io_uring ring on a ucmd device and on the program's own descriptors
# (tests/exec/uring_own.c): under `ucmd exec` the ring is the daemon's,
# and an SQE naming a regular file, a pipe, a socket, a registered own
# file runs on a kernel ring of the preload's, its CQE posted into the
# program's ring (src/preload/uring_own.c); before, each completed with
# EBADF. A chain linking the device and an own file is refused whole
# (-EINVAL, -ECANCELED: docs/compat.md). The namespace then holds what the
# ring's device writes wrote.
source "$(dirname "$0")/lib/common.sh"
need_tools od cc
PROG="$(pwd)/$B/tests/exec/uring_own"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
mkdir "$T/dir"

cat >"$T/want" <<'W'
mixed_dev_write ok
mixed_file_write ok
mixed_pipe_write ok
mixed_sock_send ok
mixed_nop ok
mixed_dev_read ok
mixed_file_read ok
mixed_pipe_read ok
mixed_sock_recv ok
waiting_recv ok
own_chain ok
mixed_chain ok
mixed_chain_not_run ok
register_files ok
register_buffers ok
fixed_dev_write ok
fixed_file_write_fixed ok
fixed_pipe_write ok
fixed_dev_data ok
fixed_file_read_fixed ok
fixed_pipe_data ok
openat ok
statx ok
poll_add ok
opened_write ok
close ok
openat_dev ok
opened_dev_write ok
close_dev ok
all ok
W
step "device, file, pipe, socket, chains, fixed files and buffers on one ring"
out=$(ex "$PROG" /dev/nvme0n1 "$T/dir" 2>&1) || fail "uring_own: exit $?: $out"
echo "$out"
diff "$T/want" <(echo "$out") || fail "uring_own's checks"

step "the files hold what the ring wrote"
[ "$(head -c 9 "$T/dir/own.dat")" = "file-data" ] || fail "own.dat: $(head -c 9 "$T/dir/own.dat" | od -c)"
[ "$(cat "$T/dir/opened.dat")" = "opened" ] || fail "opened.dat"

step "the namespace holds the device writes, not the refused chain's"
blk() {	# LBA-in-4k: the first byte, in hex
	ex dd if=/dev/nvme0n1 bs=4096 skip="$1" count=1 iflag=direct status=none | head -c 1 |
		od -An -tx1 | tr -d ' \n'
}
[ "$(blk 100)" = d1 ] || fail "block 100: $(blk 100)"
[ "$(blk 101)" != e2 ] || fail "block 101 has the refused chain's write"
[ "$(blk 102)" = f3 ] || fail "block 102: $(blk 102)"
[ "$(blk 103)" = a7 ] || fail "block 103 (through the ring's OPENAT): $(blk 103)"

# IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN (the completions the preload
# posts are task work the waiter runs), then COOP_TASKRUN, then COOP_TASKRUN |
# TASKRUN_FLAG (refused with EINVAL before: Linux takes it), then
# IORING_SETUP_NO_SQARRAY alone and with the first (its own descriptors
# were EBADF before: the daemon took its one SQ without the preload's look)
for flags in 0x3000 0x100 0x300 0x10000 0x13000; do
	step "the same on a ring set up with $flags"
	rm -rf "$T/dir" && mkdir "$T/dir"
	out=$(ex "$PROG" /dev/nvme0n1 "$T/dir" $flags 2>&1) || fail "uring_own $flags: exit $?: $out"
	diff "$T/want" <(echo "$out") || fail "uring_own's checks with $flags"
done

# a static program's ring (ucmd-supervise): the device's requests served,
# its own descriptors' answered as documented (docs/compat.md says why the
# supervisor cannot run them): EBADF from the daemon, EOPNOTSUPP for the
# opcodes the daemon does not serve at all (SEND, RECV, OPENAT...)
cc -D_GNU_SOURCE -O2 -static -o "$T/uring_own.static" "$SRC/tests/exec/uring_own.c" -luring ||
	fail "cc -static uring_own"
grep -q 'statically linked' <<<"$(file "$T/uring_own.static")" || fail "uring_own.static is not static"
{
	step "a static program's ring: devices served, own descriptors EBADF (or EOPNOTSUPP)"
	rm -rf "$T/dir" && mkdir "$T/dir"
	out=$(ex "$T/uring_own.static" /dev/nvme0n1 "$T/dir" 2>&1) && fail "static uring_own passed: $out"
	for line in "mixed_dev_write ok" "mixed_dev_read ok" "mixed_file_write: res -9 want 9" \
		"mixed_pipe_write: res -9 want 9" "mixed_sock_send: res -95 want 9" \
		"register_files: ret -9 0" "openat: res -95 0"; do
		grep -qxF "$line" <<<"$out" || fail "static uring_own: no '$line' in: $out"
	done
}
echo "exec_uring_own: ok"
