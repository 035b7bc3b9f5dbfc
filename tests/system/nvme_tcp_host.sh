#!/usr/bin/env bash
# ucmd's NVMe/TCP host transport against Linux's own target: boots the
# Debian cloud kernel under QEMU (tests/system/qemu/run.sh), loads nvmet-tcp
# from the same kernel package, exports a file-backed namespace on the
# guest's loopback through configfs, and runs ucmd's CLI with --ctrl
# nvme-tcp://127.0.0.1:4420/NQN against it (tests/system/qemu/guest_tcp_host.sh).
# Needs root (apt, QEMU) and Debian's mirror on the first run.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${UCMD_BUILD:-build}
out=${UCMD_QEMU_OUT:-$(mktemp -d /var/tmp/ucmd-tcp-host.XXXXXX)}
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" -eq 0 ] || command -v qemu-system-x86_64 >/dev/null ||
	fail "not root and no qemu-system-x86_64: cannot install the harness's packages"
[ -f "$B/build.ninja" ] || meson setup "$B"
ninja -C "$B" tools/ucmd >/dev/null || fail "building tools/ucmd failed"

echo "--- guest (results in $out)"
grc=0
bash tests/system/qemu/run.sh --out "$out" --script tests/system/qemu/guest_tcp_host.sh \
	--dyn "$B/tools/ucmd" --module nvmet-tcp || grc=$?
[ -f "$out/guest.log" ] && sed 's/^/guest| /' "$out/guest.log"
[ "$grc" -eq 125 ] && fail "the guest did not run (see above)"
[ "$grc" -eq 0 ] || fail "guest tests failed (status $grc; $out/guest.log)"
grep -q "guest: all parts passed" "$out/guest.log" || fail "the guest did not finish its parts"
echo "nvme_tcp_host: all checks passed"
