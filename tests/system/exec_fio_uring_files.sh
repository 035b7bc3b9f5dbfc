#!/usr/bin/env bash
# fio's io_uring engine under `ucmd exec` on regular files and on a ucmd
# device in one job (one ring): the ring is the daemon's, and the files'
# SQEs run on the preload's kernel ring (src/preload/uring_own.c); before,
# they completed with EBADF and fio failed. Each pass writes with
# verify=crc32c and reads back in a verify_only pass; one registers its
# files and buffers (--registerfiles --fixedbufs), so that a registered
# table mixes the device and a file and WRITE_FIXED/READ_FIXED name both.
source "$(dirname "$0")/lib/common.sh"
need_tools fio
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
X() { (cd "$T" && timeout -k 5 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"); }

fio_pass() {	# name files extra-args...: write+verify, then a verify_only pass
	local name=$1 files=$2
	shift 2
	X fio --name="$name" --ioengine=io_uring --filename="$files" --rw=randwrite --bs=4k \
		--size=2M --iodepth=16 --direct=1 --verify=crc32c --do_verify=1 \
		--verify_state_save=0 --randrepeat=1 "$@" >"$T/$name.out" 2>&1 ||
		{ cat "$T/$name.out"; fail "fio $name"; }
	grep -q "err= 0" "$T/$name.out" || { cat "$T/$name.out"; fail "fio $name: an error"; }
	X fio --name="$name" --ioengine=io_uring --filename="$files" --rw=randwrite --bs=4k \
		--size=2M --iodepth=16 --direct=1 --verify=crc32c --verify_only \
		--verify_state_save=0 --randrepeat=1 "$@" >"$T/$name.vo" 2>&1 ||
		{ cat "$T/$name.vo"; fail "fio $name verify_only"; }
	grep -q "err= 0" "$T/$name.vo" || { cat "$T/$name.vo"; fail "fio $name verify_only: an error"; }
}

step "io_uring on a regular file, verified"
fio_pass file "$T/a.dat"
[ "$(stat -c %s "$T/a.dat")" -eq $((2 * 1024 * 1024)) ] || fail "a.dat is not 2M"

step "one ring on the device and two files (O_DIRECT, buffered), verified"
fio_pass mixed "/dev/nvme0n1:$T/b.dat"
fio_pass buffered "$T/c.dat:$T/d.dat" --direct=0

step "registered files and buffers mixing the device and a file, verified"
fio_pass fixed "/dev/nvme0n1:$T/e.dat" --registerfiles=1 --fixedbufs=1
echo "exec_fio_uring_files: ok"
