#!/usr/bin/env bash
# Host-built protection information through liburing, under `ucmd exec`:
# tests/exec/uring_pi.c (Debian's liburing and libc alone, no ucmd) computes
# each block's tuple itself, writes it with NVME_URING_CMD_IO in a separate
# metadata buffer, reads it back with every PRCHK bit, and expects End-to-end
# Guard/Application Tag/Reference Tag Check Error (82h/83h/84h) in the CQE
# for a corrupted tag, on a write and on a read. Once with the 16b guard
# (LBA format 1, 512 + 8), once with the 64b guard (LBA format 8, 512 + 16),
# both formatted by Debian's nvme-cli with PI type 1.
source "$(dirname "$0")/lib/common.sh"
need_tools nvme
PROG="$(pwd)/$B/tests/exec/uring_pi"
dir=$T
ctrl="$dir/ctrl"
[ -x "$PROG" ] || fail "no $PROG"
if grep -q ucmd <<<"$(ldd "$PROG")"; then fail "uring_pi links ucmd"; fi
grep -q 'liburing.so.2' <<<"$(ldd "$PROG")" || fail "uring_pi does not use the system liburing"
X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@"; }

"$UCMD" --ctrl "$ctrl" create-ctrl --nsze=4096 >/dev/null || fail "ucmd create-ctrl $ctrl"
for f in "1 16b" "8 64b"; do
	read -r lbaf guard <<<"$f"
	step "LBA format $lbaf, PI type 1, $guard guard: uring_pi"
	X nvme format /dev/nvme0 -n 1 --lbaf="$lbaf" --pi=1 --force >/dev/null 2>"$dir/err" \
		|| fail "nvme format --lbaf=$lbaf --pi=1: $(cat "$dir/err")"
	X "$PROG" /dev/ng0n1 /dev/nvme0 >"$dir/out" 2>"$dir/err" || fail "uring_pi: $(cat "$dir/out" "$dir/err")"
	cat "$dir/out"
	grep -q "$guard guard" "$dir/out" || fail "uring_pi saw another format: $(head -1 "$dir/out")"
	[ "$(grep -c ': ok$' "$dir/out")" -eq 7 ] || fail "not every case passed"
done
echo "exec_uring_pi: host-built PI through liburing, 16b and 64b guard, as expected"
