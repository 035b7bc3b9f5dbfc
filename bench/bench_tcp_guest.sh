#!/usr/bin/env bash
# bench_tcp_guest: in one QEMU guest boot (TCG, 2 vCPUs, Debian's cloud
# kernel: tests/system/qemu/run.sh), 4 KiB random reads at QD32 against one
# `ucmdd --ram 128M --nvme-tcp` target on the guest's loopback, through
# Linux's own nvme-tcp host (fio, io_uring on /dev/nvmeXnY and io_uring_cmd
# on /dev/ngXnY) and through ucmd's NVMe/TCP host transport (`ucmd --ctrl
# nvme-tcp://... bench`, fio's default job: one SQE per submit), ROUNDS
# rounds alternating (bench/tcp_guest.sh is the guest's half). Prints each
# run, the best of each case and ucmd's host over the better of Linux's
# two (docs/performance.md "NVMe/TCP in the QEMU guest"; target: at least
# 1x). A benchmark: it asserts nothing about the figures.
#
# The guest gets ucmd and ucmdd as the system tests give them (run.sh --dyn:
# each binary with its shared libraries and the loader).
#
#   UCMD_BUILD  build directory (default build)
#   RUNTIME     seconds per run (10)      ROUNDS  rounds (2)
#   UCMD_QEMU_OUT  where the guest's files go (default: a new /var/tmp dir)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${UCMD_BUILD:-build}
RUNTIME=${RUNTIME:-10}
ROUNDS=${ROUNDS:-2}
out=${UCMD_QEMU_OUT:-$(mktemp -d /var/tmp/ucmd-bench-tcp-guest.XXXXXX)}
command -v nvme >/dev/null && command -v fio >/dev/null ||
	{ echo "bench_tcp_guest: nvme-cli and fio are needed (scripts/deps.sh)" >&2; exit 2; }
[ -f "$B/build.ninja" ] || meson setup "$B" >/dev/null
ninja -C "$B" src/server/ucmdd tools/ucmd >/dev/null
# each run, plus the boot and the fill, well within the guest's run bound
export UCMD_QEMU_RUN_TIMEOUT=$((240 + ROUNDS * 3 * (RUNTIME + 15)))
grc=0
bash tests/system/qemu/run.sh --out "$out" --script bench/tcp_guest.sh \
	--mod nvme-tcp --dyn "$B/src/server/ucmdd" --dyn "$B/tools/ucmd" \
	--dyn "$(command -v nvme)" --fio --append "ucmd_runtime=$RUNTIME ucmd_rounds=$ROUNDS" >"$out/run.log" 2>&1 ||
	grc=$?
[ -f "$out/guest.log" ] && grep -E '^guest:|^(linux-|ucmd-)' "$out/guest.log" || true
if [ "$grc" -ne 0 ] || [ ! -s "$out/perf.txt" ]; then
	tail -20 "$out/run.log"
	echo "bench_tcp_guest: the guest run failed (status $grc; $out)" >&2
	exit 1
fi
awk -v rt="$RUNTIME" '
	{ if ($3 > best[$1]) best[$1] = $3; runs[$1] = runs[$1] " " int($3) }
	END {
		printf "\n4 KiB randread QD32, %s s per run, guest loopback, TCG (best of the runs)\n", rt
		for (k in runs) printf "%-10s %10d IOPS   runs:%s\n", k, best[k], runs[k]
		linux = best["linux-blk"] > best["linux-ng"] ? best["linux-blk"] : best["linux-ng"]
		if (linux > 0)
			printf "ucmd host / Linux host (the better of io_uring and io_uring_cmd): %.2fx (target 1x)\n",
			       best["ucmd-host"] / linux
	}' "$out/perf.txt"
