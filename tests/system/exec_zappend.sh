#!/usr/bin/env bash
# Zone Append through liburing, under `ucmd exec`: tests/exec/uring_zappend.c
# (Debian's liburing and libc alone, no ucmd) sends eight appends at once to
# a zone's start on /dev/ng0n1 and learns each record's LBA from the big CQE,
# reads each back there, checks the write pointer, and the statuses of an
# append off a zone start and of one to a full zone. Once on a zoned
# namespace with power-of-two zones, once with 1.5 MiB zones, which Linux
# gives no block device: the generic device is the only way in.
source "$(dirname "$0")/lib/common.sh"
PROG="$(pwd)/$B/tests/exec/uring_zappend"
[ -x "$PROG" ] || fail "no $PROG"
if grep -q ucmd <<<"$(ldd "$PROG")"; then fail "uring_zappend links ucmd"; fi
grep -q 'liburing.so.2' <<<"$(ldd "$PROG")" || fail "uring_zappend does not use the system liburing"

for geo in "1M 768K yes" "1536K 1536K no"; do
	read -r zsize zcap blk <<<"$geo"
	ctrl="$T/ctrl-$zsize"
	step "zones of $zsize ($zcap writable): uring_zappend on /dev/ng0n1"
	"$UCMD" --ctrl "$ctrl" create-ctrl --zns --nsze=65536 --zone-size="$zsize" \
		--zone-cap="$zcap" >/dev/null || fail "create-ctrl --zns --zone-size=$zsize"
	timeout 120 "$UCMD" exec --ctrl "$ctrl" -- sh -c \
		'"$1" /dev/ng0n1 && if [ -e /dev/nvme0n1 ]; then echo "block device: yes"; else echo "block device: no"; fi' \
		sh "$PROG" >"$T/out" 2>"$T/err" || fail "uring_zappend: $(cat "$T/out" "$T/err")"
	cat "$T/out"
	[ "$(grep -c ': ok$' "$T/out")" -eq 6 ] || fail "not every case passed"
	grep -qx "block device: $blk" "$T/out" || fail "zones of $zsize: want block device $blk"
done
echo "exec_zappend: zone append through liburing's big CQE, with and without a block device"
