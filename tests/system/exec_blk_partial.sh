#!/usr/bin/env bash
# Block namespace calls that are not whole blocks, and the range ioctls,
# under `ucmd exec` for a dynamic program (the preload) and a static one
# (ucmd-supervise), both as Linux's buffered block device answers them
# (tests/exec/blk_partial.c says what it checks):
#
# - pread/pwrite/readv/writev/preadv2/pwritev2 at odd offsets and lengths
#   and from odd addresses are served by read-modify-write (the bytes
#   around them kept), the namespace read back with ucmd's CLI outside
#   exec holds exactly what the program expects;
# - with O_DIRECT the same are EINVAL, whole blocks served; a read-only fd
#   cannot write (EBADF); on /dev/ng0n1 read and write are EINVAL, but EBADF
#   first where the open's mode forbids them (vfs_read/vfs_write's order);
# - BLKZEROOUT and BLKDISCARD zero their range and refuse a read-only fd
#   (EBADF), an empty, unaligned or out-of-device range (EINVAL);
#   BLKSECDISCARD is EOPNOTSUPP;
# - the static and dynamic runs print the same lines; as root, so does the
#   program on a loop device of the same block size, where the kernel
#   itself answers.
source "$(dirname "$0")/lib/common.sh"
need_tools cc python3
dir=$T
cc -O2 -static -o "$dir/blk_partial.static" "$SRC/tests/exec/blk_partial.c" || fail "cc -static"
cc -O2 -o "$dir/blk_partial.dyn" "$SRC/tests/exec/blk_partial.c" || fail "cc"
grep -q 'statically linked' <<<"$(file "$dir/blk_partial.static")" || fail "not static"

CTRL=$dir/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
LBS=$(timeout 60 "$UCMD" --ctrl "$CTRL" --output-format json id-ns | python3 -c '
import json, sys
ns = json.load(sys.stdin)
print(1 << ns["lbafs"][ns["flbas"] & 0xf]["ds"])')

# the 32 KiB at byte offset $1 of namespace 1 are the file $2
ns_is() {	# byte-offset file
	timeout 60 "$UCMD" --ctrl "$CTRL" read -s "$(($1 / LBS))" -c "$((32768 / LBS - 1))" \
		-z 32768 -d "$dir/back.bin" >/dev/null || fail "ucmd read"
	cmp -n 32768 "$dir/back.bin" "$2"
}

for kind in dyn static; do
	off=$([ "$kind" = dyn ] && echo 1048576 || echo 2097152)
	step "$kind: partial blocks, O_DIRECT, the range ioctls on /dev/nvme0n1"
	out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$dir/blk_partial.$kind" /dev/nvme0n1 \
		"$off" 5 "$dir/want.$kind" /dev/ng0n1 2>&1) || fail "$kind: $out"
	printf '%s\n' "$out" >"$dir/out.$kind"
	grep -qx ok <<<"$out" || fail "$kind: $out"
	for line in "pwrite-odd 100" "pwritev-odd 5020" "write-odd 3" "readv-odd 5126" \
		"pread-all-odd-address 32768" "pread-across-end 10" "pwrite-across-end 10" \
		"pwrite-odd-at-end ENOSPC" "direct-pread-odd-offset EINVAL" \
		"direct-pread-odd-length EINVAL" "direct-pwrite-odd-address EINVAL" \
		"direct-pread 1" "ro-pwrite-odd EBADF" "zeroout-ro EBADF" "zeroout-empty EINVAL" \
		"zeroout-odd EINVAL" "zeroout-odd-length EINVAL" "zeroout-past-end EINVAL" \
		"zeroout 0" "discard-ro EBADF" "discard-empty EINVAL" "discard-odd EINVAL" \
		"discard-past-end EINVAL" "discard 0" "secdiscard-ro EBADF" \
		"secdiscard EOPNOTSUPP" "chr-ro-write EBADF" "chr-wo-read EBADF" "chr-read EINVAL" \
		"chr-pwrite EINVAL"; do
		grep -qx "$line" <<<"$out" || fail "$kind: no line '$line': $out"
	done
	ns_is "$off" "$dir/want.$kind" || fail "$kind: the namespace does not hold what was written"
done
diff "$dir/out.dyn" "$dir/out.static" >&2 || fail "the static program is answered otherwise"

if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null; then
	step "the same program on a loop device of $LBS-byte blocks: Linux's answers"
	truncate -s 8M "$dir/loop.img"
	if loopdev=$(losetup -f --show -b "$LBS" "$dir/loop.img" 2>/dev/null); then
		loop_detach() { losetup -d "$loopdev" 2>/dev/null || true; }
		at_exit loop_detach
		out=$("$dir/blk_partial.dyn" "$loopdev" 1048576 5 "$dir/want.loop" 2>&1) ||
			fail "loop: $out"
		printf '%s\n' "$out" >"$dir/out.loop"
		loop_detach
		# but for O_DIRECT from an odd address: NVMe's DMA alignment is a dword
		# (EINVAL), a loop device's write goes through
		diff <(grep -v '^direct-pwrite-odd-address ' "$dir/out.loop") \
			<(grep -v '^direct-pwrite-odd-address \|^chr-' "$dir/out.dyn") >&2 ||
			fail "ucmd exec answers otherwise than Linux"
	else
		echo "(no loop device here: compared with the expected lines only)"
	fi
else
	echo "(not root: compared with the expected lines only)"
fi
echo "exec_blk_partial: ok"
