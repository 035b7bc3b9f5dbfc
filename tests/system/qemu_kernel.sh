#!/usr/bin/env bash
# ucmd against the real thing: boots a Debian cloud kernel under QEMU (TCG)
# with QEMU's NVMe device and, in the guest, runs the kernel backend's smoke
# test, the differential sequence, the ucmd CLI (once it has the kernel
# backend) and Debian's fio (ioengine=io_uring_cmd, write then verify a
# pattern). On the
# host, the same sequence runs on ucmd's emulated controller; every
# difference must be listed in docs/compat.md. The zoned and protection
# information sequences run on a third controller (run.sh --zp) and, on the
# host, on a controller the CLI makes as a user would (create-ctrl --zns,
# create-ns, format --pi). Needs root (apt, QEMU) and
# Debian's package mirror on the first run; see tests/system/qemu/run.sh.
source "$(dirname "$0")/lib/common.sh"
Q=$B/tests/system/qemu
out=${UCMD_QEMU_OUT:-$(mktemp -d /var/tmp/ucmd-qemu-out.XXXXXX)}

[ "$(id -u)" -eq 0 ] || command -v qemu-system-x86_64 >/dev/null ||
	fail "not root and no qemu-system-x86_64: cannot install the harness's packages"
[ -f "$B/build.ninja" ] || meson setup "$B"
echo "--- building the guest programs (static) and the emulated side in $B"
ninja -C "$B" tests/system/qemu/kernel_smoke tests/system/qemu/difftest_guest \
	tests/system/qemu/difftest tools/ucmd >/dev/null ||
	fail "build failed (kernel_smoke, difftest_guest, difftest and ucmd are needed)"

bins=(--bin "$Q/kernel_smoke" --bin "$Q/difftest_guest" --bin tests/system/qemu/mp_names.sh)
# the CLI goes in (dynamic, with its libraries) once it has the kernel backend
if grep -qs ucmd_kernel_nvme_open tools/ucmd/*.c; then
	bins+=(--dyn "$B/tools/ucmd")
fi

echo "--- guest (results in $out)"
grc=0
bash tests/system/qemu/run.sh --out "$out" --script tests/system/qemu/guest.sh "${bins[@]}" --fio --zp --mp || grc=$?
[ -f "$out/guest.log" ] && sed 's/^/guest| /' "$out/guest.log" | grep -E 'GUEST-PART|^guest\| guest:|FAIL' || true
[ "$grc" -eq 125 ] && fail "the guest did not run (see above)"

echo "--- the same sequence on ucmd's emulated controller"
"$Q/difftest" --emulated > "$out/emulated.out" || fail "difftest --emulated failed"
# the zoned + PI controller of run.sh --zp, as its CLI makes it (tests/system/qemu/difftest.h)
zp=$T/zp
"$UCMD" --ctrl "$zp" create-ctrl --zns --nsze=32768 --lbaf=0 --zone-size=1M --zone-cap=768K \
	--max-open=2 --max-active=3 --zasl=5 >/dev/null || fail "create-ctrl --zns failed"
# nsid lbaf (ucmd's table) extended pi pil: the formats QEMU's nvme-ns ms/mset/pi/pil/pif give
for f in "2 1 0 1 0" "3 6 1 2 0" "4 1 1 3 0" "5 10 0 1 0" "6 2 0 1 1"; do
	read -r id lbaf ext pi pil <<<"$f"
	"$UCMD" --ctrl "$zp" create-ns --nsze=256 --flbas=$((lbaf | ext << 4)) >/dev/null &&
	"$UCMD" --ctrl "$zp" attach-ns -n "$id" >/dev/null &&
	"$UCMD" --ctrl "$zp" format -n "$id" --lbaf="$lbaf" --ms="$ext" --pi="$pi" --pil="$pil" \
		--force >/dev/null || fail "namespace $id (format $f) failed"
done
"$Q/difftest" --emulated-zp "$zp" >> "$out/emulated.out" || fail "difftest --emulated-zp failed"
# the multipath subsystem of run.sh --mp: two controllers sharing namespace 1,
# under ucmd's multipath host (ucmd exec for the names it shows)
mp=$T/mp
"$UCMD" --ctrl "$mp" create-ctrl --controllers 2 --nsze=32768 >/dev/null ||
	fail "create-ctrl --controllers 2 failed"
timeout 120 "$UCMD" exec --ctrl "$mp" -- sh tests/system/qemu/mp_names.sh 0 0 1 >> "$out/emulated.out" ||
	fail "the multipath names under ucmd exec"
"$Q/difftest" --emulated-mp "$mp" >> "$out/emulated.out" || fail "difftest --emulated-mp failed"
echo "--- comparison (docs/compat.md explains the known differences)"
crc=0
python3 tests/system/qemu/compare.py "$out/kernel.out" "$out/emulated.out" docs/compat.md |
	grep -v '^known ' || true
python3 tests/system/qemu/compare.py "$out/kernel.out" "$out/emulated.out" docs/compat.md \
	>/dev/null || crc=$?

[ "$grc" -eq 0 ] || fail "guest tests failed (status $grc; $out/guest.log)"
[ "$crc" -eq 0 ] || fail "unexplained differences between Linux+QEMU and ucmd"
echo "qemu_kernel: all checks passed"
