#!/usr/bin/env bash
# bench_exec: fio's own figures for fio under `ucmd exec` (docs/performance.md), side
# by side in one run, for three fio configurations of the same 4 KiB random
# read job at queue depth 32:
#
#   kernel  fio --ioengine=io_uring on a file in tmpfs (/dev/shm), Linux's
#           io_uring on this machine
#   exec    fio --ioengine=io_uring_cmd --cmd_type=nvme on /dev/ng0n1 of a
#           ucmdd RAM namespace, through `ucmd exec --daemon`
#   native  `ucmd bench` with the same parameters: ucmd's own API in one
#           process on a RAM namespace, no daemon
#
# and prints exec/kernel and exec/native. The configurations: fio's
# defaults (one SQE per io_uring_enter), batches of 8 submitted and reaped
# (iodepth_batch_submit/iodepth_batch_complete_min), and fio's SQPOLL
# (sqthread_poll). Then the scaling row: the default job as two fio
# processes (--numjobs=2) on one ucmdd, their sum against the one job's
# figure, beside the kernel's same ratio (target: at least 1.6x on two
# cores: ucmdd must not serialise its clients). Not a test: it asserts
# nothing (docs/performance.md).
#
#   UCMD_BUILD  build directory (default build)   RUNTIME  seconds per run (5)
set -euo pipefail
B=${UCMD_BUILD:-build}
RUNTIME=${RUNTIME:-5}
UCMD="$(pwd)/$B/tools/ucmd"
UCMDD="$(pwd)/$B/src/server/ucmdd"
command -v fio >/dev/null || { echo "bench_exec: fio is not installed (scripts/deps.sh)"; exit 2; }
dir=$(mktemp -d /tmp/ucmd-bench-exec.XXXXXX)
shm=$(mktemp /dev/shm/ucmd-bench-exec.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir" "$shm"
}
trap cleanup EXIT

"$UCMDD" --ram 256M --socket "$dir/sock" --foreground 2>"$dir/ucmdd.log" &
pid=$!
for _ in $(seq 200); do [ -S "$dir/sock" ] && break; sleep 0.05; done
[ -S "$dir/sock" ] || { cat "$dir/ucmdd.log"; exit 1; }

JOB=(--name=bench --rw=randread --bs=4k --iodepth=32 --size=256M --time_based
     --runtime="$RUNTIME" --output-format=json)
# fio's JSON after whatever exec printed first; with --group_reporting
# the first job is the group's sum
iops() { python3 -c '
import json, sys
t = sys.stdin.read()
print(int(json.loads(t[t.index("{"):])["jobs"][0]["read"]["iops"]))'; }
native_iops() { python3 -c '
import json, sys
j = json.load(sys.stdin)
print(int(j["read"]["iops"]))'; }

# fio lays the tmpfs file out (writes it) once, so that reads hit real pages
fio --name=layout --filename="$shm" --size=256M --rw=write --bs=1M >/dev/null

printf '%-10s %12s %12s %12s %12s %12s\n' config kernel exec native exec/kernel exec/native
for cfg in default batch8 sqpoll; do
	case $cfg in
	default) fio_opt=(); bench_opt=() ;;
	batch8) fio_opt=(--iodepth_batch_submit=8 --iodepth_batch_complete_min=8)
		bench_opt=(--batch 8,8) ;;
	sqpoll) fio_opt=(--sqthread_poll); bench_opt=(--sqpoll) ;;
	esac
	k=$(fio "${JOB[@]}" --ioengine=io_uring "${fio_opt[@]}" --filename="$shm" | iops)
	e=$("$UCMD" exec --daemon "$dir/sock" -- fio "${JOB[@]}" --ioengine=io_uring_cmd \
		--cmd_type=nvme "${fio_opt[@]}" --filename=/dev/ng0n1 | iops)
	n=$("$UCMD" bench --target ram --rw randread --bs 4k --iodepth 32 --size 256m \
		--runtime "${RUNTIME}s" "${bench_opt[@]}" --no-progress --output-format json | native_iops)
	python3 -c 'import sys; c,k,e,n=sys.argv[1],*map(int,sys.argv[2:]); print("%-10s %12d %12d %12d %11.2fx %11.2fx" % (c,k,e,n,e/k,e/n))' \
		"$cfg" "$k" "$e" "$n"
done

# Two clients: fio forks one process per job; each opens its own ring on
# ucmdd. The kernel's own ratio on this machine shows what two cores allow.
k1=$(fio "${JOB[@]}" --ioengine=io_uring --filename="$shm" | iops)
k2=$(fio "${JOB[@]}" --ioengine=io_uring --numjobs=2 --group_reporting --filename="$shm" | iops)
e1=$("$UCMD" exec --daemon "$dir/sock" -- fio "${JOB[@]}" --ioengine=io_uring_cmd \
	--cmd_type=nvme --filename=/dev/ng0n1 | iops)
e2=$("$UCMD" exec --daemon "$dir/sock" -- fio "${JOB[@]}" --ioengine=io_uring_cmd \
	--cmd_type=nvme --numjobs=2 --group_reporting --filename=/dev/ng0n1 | iops)
echo
printf '%-10s %12s %12s %12s %12s %12s\n' scaling kernel-1 kernel-2 exec-1 exec-2 exec-2/exec-1
python3 -c 'import sys; k1,k2,e1,e2=map(int,sys.argv[1:]); print("%-10s %12d %12d %12d %12d %11.2fx   (kernel %.2fx; target 1.60x)" % ("2 jobs",k1,k2,e1,e2,e2/e1,k2/k1))' \
	"$k1" "$k2" "$e1" "$e2"
