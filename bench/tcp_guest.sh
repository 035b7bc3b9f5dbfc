#!/bin/sh
# The guest half of bench/bench_tcp_guest.sh, run by /init as /test.sh
# (busybox sh; tests/system/qemu/run.sh): one ucmdd target on the guest's
# loopback (`ucmdd --ram 128M --nvme-tcp 127.0.0.1:4420`), and in turn,
# ROUNDS times, the same 4 KiB random read job at QD32 through
#   linux-blk  Linux's nvme-tcp host, fio --ioengine=io_uring --direct=1 on
#              /dev/nvmeXnY
#   linux-ng   Linux's nvme-tcp host, fio --ioengine=io_uring_cmd on /dev/ngXnY
#   ucmd-host  ucmd's NVMe/TCP host transport in the ucmd CLI, `ucmd --ctrl
#              nvme-tcp://127.0.0.1:4420/NQN bench` (one SQE per submit, one
#              CQE per wait: fio's default job), the kernel host disconnected
# One line "CASE ROUND IOPS" per run into $UCMD_GUEST_RESULTS/perf.txt.
# Measures; judges nothing. RUNTIME (seconds) and ROUNDS come from the
# kernel command line's ucmd_runtime= and ucmd_rounds= (run.sh --append).
R=${UCMD_GUEST_RESULTS:-/tmp}
RUNTIME=$(sed -n 's/.*ucmd_runtime=\([0-9]*\).*/\1/p' /proc/cmdline)
ROUNDS=$(sed -n 's/.*ucmd_rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
RUNTIME=${RUNTIME:-10}
ROUNDS=${ROUNDS:-2}
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-0000-4000-8000-0000c0ffee01
H="--hostnqn=$HOSTNQN --hostid=5d0a1f3e-0000-4000-8000-0000c0ffee01"
ADDR="-t tcp -a 127.0.0.1 -s 4420"

wait_for() {	# a condition the kernel reaches asynchronously, within 60 s
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		sleep 0.2
	done
}

ip link set lo up
[ -c /dev/nvme-fabrics ] || { echo "no /dev/nvme-fabrics: modules not loaded"; exit 100; }
# Linux's host is a kernel socket: a remote identity, allowed by its host NQN
cat > /tmp/policy.ini <<EOF
[policy]
inherit = default
[rule bench-host]
hostnqn = $HOSTNQN
action = allow
EOF
ucmdd --ram 128M --socket /tmp/ucmdd.sock --nvme-tcp 127.0.0.1:4420 --policy /tmp/policy.ini ||
	{ echo "ucmdd did not start"; exit 1; }
nvme discover $ADDR $H > /tmp/discover.txt 2>&1 || { cat /tmp/discover.txt; exit 1; }
SUBNQN=$(sed -n 's/^subnqn: *//p' /tmp/discover.txt | head -1)
echo "guest: target $SUBNQN, $ROUNDS rounds of $RUNTIME s, $(nproc) CPUs"

tcp_ctrl() {
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = tcp ] && [ "$(cat "$c/subsysnqn")" = "$SUBNQN" ] &&
			{ basename "$c"; return; }
	done
}
connect() {
	nvme connect $ADDR -n "$SUBNQN" $H || return 1
	wait_for '[ -n "$(tcp_ctrl)" ]' || return 1
	CTRL=$(tcp_ctrl)
	DEV=/dev/${CTRL}n1
	NG=/dev/ng${CTRL#nvme}n1
	wait_for '[ -b $DEV ] && [ -c $NG ]'
}
disconnect() {
	nvme disconnect -n "$SUBNQN" >/dev/null || return 1
	wait_for '[ -z "$(tcp_ctrl)" ]'
}
# fio's job, the same for both devices: terse v3, field 8 is the read IOPS
fio_iops() {	# case round device engine...
	name=$1 round=$2 dev=$3
	shift 3
	fio --name="$name" --filename="$dev" "$@" --rw=randread --bs=4k --iodepth=32 --size=128m \
		--time_based --runtime="$RUNTIME" --output-format=terse > "/tmp/$name.txt" 2>&1 ||
		{ cat "/tmp/$name.txt"; return 1; }
	echo "$name $round $(cut -d';' -f8 "/tmp/$name.txt")" | tee -a "$R/perf.txt"
}
ucmd_iops() {	# round
	ucmd --ctrl "nvme-tcp://127.0.0.1:4420/$SUBNQN" --hostnqn "$HOSTNQN" bench --rw randread \
		--bs 4k --iodepth 32 --size 128m --runtime "${RUNTIME}s" --target session --no-progress \
		--output-format json > /tmp/ucmd-host.txt 2>&1 || { cat /tmp/ucmd-host.txt; return 1; }
	echo "ucmd-host $1 $(sed -n 's/^  "iops": *\([0-9.]*\).*/\1/p' /tmp/ucmd-host.txt | tail -1)" |
		tee -a "$R/perf.txt"
}

failed=0
# every block written once, so that reads copy data (not the RAM store's holes)
connect && fio --name=fill --filename="$DEV" --ioengine=io_uring --direct=1 --rw=write --bs=1m \
	--size=128m --output-format=terse > /tmp/fill.txt 2>&1 || { cat /tmp/fill.txt; exit 1; }
disconnect || exit 1
r=1
while [ $r -le "$ROUNDS" ]; do
	if connect && fio_iops linux-blk $r "$DEV" --ioengine=io_uring --direct=1 &&
	   fio_iops linux-ng $r "$NG" --ioengine=io_uring_cmd --cmd_type=nvme && disconnect &&
	   ucmd_iops $r; then
		:
	else
		failed=$((failed + 1))
		disconnect 2>/dev/null
	fi
	r=$((r + 1))
done
echo "guest: $failed rounds failed"
exit "$failed"
