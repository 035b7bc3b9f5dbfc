#!/usr/bin/env bash
# fio's io_uring engine with vectored commands (IORING_OP_WRITEV/READV,
# --nonvectored=0) on ucmd's block device under `ucmd exec`: the preload's
# ring copies each WRITEV's iovec array and segments into the ring's write
# area as fio submits it (docs/daemon.md, "The bounce area"), and ucmdd
# takes them from there. fio writes with verify=crc32c and checks every
# block it wrote, then a verify-only pass reads them all back; a pattern
# written the same way is read back with ucmd's own CLI through the daemon.
set -euo pipefail
# shellcheck source=tests/system/lib/daemon.sh
. "$(dirname "$0")/lib/daemon.sh"

command -v fio >/dev/null || fail "fio is missing (scripts/deps.sh installs it)"

# nvme0: RAM, 4 KiB LBAs
daemon_start --ram 64M
DEV=/dev/nvme0n1

px() {
	(cd "$T" && timeout -k 5 300 "$UCMD" exec --daemon "$SOCK" -- "$@")
}

common=(--name=wv --filename="$DEV" --ioengine=io_uring --nonvectored=0 --direct=1
	--size=8M --offset=1M --iodepth=8 --verify_fatal=1)

step "fio WRITEV, 4 KiB and 12 KiB blocks, QD8, verify=crc32c"
px fio "${common[@]}" --rw=randwrite --bsrange=4k-12k --verify=crc32c --do_verify=1 \
	>"$T/fio1.txt" 2>&1 || { cat "$T/fio1.txt"; fail "fio writev + verify"; }
grep -q "err= 0" "$T/fio1.txt" || { cat "$T/fio1.txt"; fail "fio reported an error"; }

step "a verify-only pass reads them all back (READV)"
px fio "${common[@]}" --rw=randwrite --bsrange=4k-12k --verify=crc32c --verify_only=1 \
	>"$T/fio2.txt" 2>&1 || { cat "$T/fio2.txt"; fail "fio verify_only"; }

step "a pattern written with WRITEV is what ucmd's CLI reads from the namespace"
px fio --name=pat --filename="$DEV" --ioengine=io_uring --nonvectored=0 --direct=1 \
	--rw=write --bs=8k --size=64k --offset=16M --iodepth=4 --buffer_pattern=0x5a17c0de \
	>"$T/fio3.txt" 2>&1 || { cat "$T/fio3.txt"; fail "fio pattern write"; }
timeout 60 "$UCMD" --daemon "$SOCK" read -s $((16 * 1024 * 1024 / 4096)) -c 15 -z 65536 \
	>"$T/ns.raw" || fail "ucmd read"
python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("5a17c0de") * 16384)' >"$T/want.raw"
cmp "$T/ns.raw" "$T/want.raw" || fail "the namespace does not hold fio's pattern"

daemon_alive
daemon_stop
echo "PASS"
