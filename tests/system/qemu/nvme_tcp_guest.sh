# The guest half of tests/system/nvme_tcp.sh, run by /init as /test.sh
# (busybox sh): ucmdd exports a RAM controller over NVMe/TCP on the guest's
# loopback, and Linux's own nvme-tcp host driver (modules loaded by /init)
# connects to it; nvme-cli, fio, mke2fs and e2fsck are Debian's (the last two
# as deb-mke2fs and deb-e2fsck, apart from busybox's applets). Results
# go to $UCMD_GUEST_RESULTS; the exit status counts the parts that failed.
R=${UCMD_GUEST_RESULTS:-/tmp}
failed=0
part() { echo "=== $*"; }
ok() { echo "GUEST-PART $1 ok"; }
bad() { echo "GUEST-PART $1 FAILED"; failed=$((failed + 1)); }
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-0000-4000-8000-0000c0ffee01
HOSTID=5d0a1f3e-0000-4000-8000-0000c0ffee01
H="--hostnqn=$HOSTNQN --hostid=$HOSTID"
ADDR="-t tcp -a 127.0.0.1 -s 4420"

# Wait for a condition the kernel reaches asynchronously (namespace scan,
# device removal): readiness, bounded at 60 s, never a fixed sleep.
wait_for() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		sleep 0.2
	done
}

ip link set lo up
lsmod | grep -E 'nvme_tcp|nvme_fabrics'
[ -c /dev/nvme-fabrics ] || { echo "no /dev/nvme-fabrics: modules not loaded"; exit 100; }

part "ucmdd --nvme-tcp 127.0.0.1:4420"
# the test host may do everything; formatting is denied to show the policy
# and the audit see the host NQN
cat > /tmp/policy.ini <<EOF
[policy]
inherit = default
[rule tcp-no-format]
hostnqn = $HOSTNQN
verb = format
action = deny
[rule tcp-test-host]
hostnqn = nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-*
action = allow
EOF
syslogd -O /tmp/syslog
# detached: ucmdd returns once the controllers and the listener are up
if ucmdd --ram 128M --socket /tmp/ucmdd.sock --nvme-tcp 127.0.0.1:4420 \
	--policy /tmp/policy.ini --audit /tmp/audit.log; then ok ucmdd; else bad ucmdd; exit 1; fi

part "nvme discover"
if nvme discover $ADDR $H > "$R/discover.txt" 2>&1 && cat "$R/discover.txt" &&
   grep -q '^trtype: *tcp' "$R/discover.txt" && grep -q '^trsvcid: *4420' "$R/discover.txt" &&
   grep -q '^traddr: *127.0.0.1' "$R/discover.txt"; then
	ok discover
else
	cat "$R/discover.txt"; bad discover
fi
SUBNQN=$(sed -n 's/^subnqn: *//p' "$R/discover.txt" | head -1)
SUB1=$SUBNQN
echo "subnqn $SUBNQN"

tcp_ctrl() {	# the controller nvme-tcp made: its name, or nothing
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = tcp ] && [ "$(cat "$c/subsysnqn")" = "$SUBNQN" ] &&
			{ basename "$c"; return; }
	done
}
connect() {	# extra nvme connect options; sets CTRL DEV NG
	nvme connect $ADDR -n "$SUBNQN" $H "$@" || return 1
	wait_for '[ -n "$(tcp_ctrl)" ]' || return 1
	CTRL=$(tcp_ctrl)
	DEV=/dev/${CTRL}n1
	NG=/dev/ng${CTRL#nvme}n1
	wait_for '[ -b $DEV ] && [ -c $NG ]' || return 1
	echo "connected: $CTRL $DEV $NG"
}
disconnect() {
	nvme disconnect -n "$SUBNQN" || return 1
	wait_for '[ -z "$(tcp_ctrl)" ] && [ ! -e $DEV ]'
}

part "nvme connect"
if connect; then ok connect; else bad connect; cat /tmp/syslog; exit 1; fi
ls -l /dev/nvme* /dev/ng*
cat /sys/class/nvme/$CTRL/address /sys/class/nvme/$CTRL/state

part "id-ctrl / id-ns: the kernel's view through NVMe/TCP and ucmd's own"
nvme id-ctrl /dev/$CTRL -o json > "$R/tcp-id-ctrl.json" || bad id-ctrl
nvme id-ns $DEV -o json > "$R/tcp-id-ns.json" || bad id-ns
ucmd --daemon /tmp/ucmdd.sock --output-format json id-ctrl > "$R/ucmd-id-ctrl.json" || bad ucmd-id-ctrl
ucmd --daemon /tmp/ucmdd.sock --output-format json id-ns -n 1 > "$R/ucmd-id-ns.json" || bad ucmd-id-ns
echo "size $(cat /sys/block/${DEV#/dev/}/size) lba $(cat /sys/block/${DEV#/dev/}/queue/logical_block_size)"

part "fio ioengine=io_uring_cmd on $NG: write and verify"
common="--ioengine=io_uring_cmd --cmd_type=nvme --bs=4k --size=16m --iodepth=8 --verify=crc32c --output-format=terse"
# shellcheck disable=SC2086
if fio --name=cmdw --filename=$NG --rw=randwrite --offset=0 $common > "$R/fio-cmd.txt" 2>&1 &&
   fio --name=cmdv --filename=$NG --rw=randwrite --offset=0 $common --verify_only=1 >> "$R/fio-cmd.txt" 2>&1; then
	ok fio-cmd
else
	cat "$R/fio-cmd.txt"; bad fio-cmd
fi

part "fio ioengine=io_uring on $DEV: write and verify"
common="--ioengine=io_uring --direct=1 --bs=64k --size=16m --offset=32m --iodepth=4 --verify=md5 --output-format=terse"
# shellcheck disable=SC2086
if fio --name=blkw --filename=$DEV --rw=write $common > "$R/fio-blk.txt" 2>&1 &&
   fio --name=blkv --filename=$DEV --rw=write --verify_only=1 $common >> "$R/fio-blk.txt" 2>&1; then
	ok fio-blk
else
	cat "$R/fio-blk.txt"; bad fio-blk
fi

part "ext4: mkfs, files, sync, umount, fsck"
mkdir -p /mnt
if deb-mke2fs -q -F -t ext4 $DEV && mount -t ext4 $DEV /mnt &&
   head -c 3000000 /dev/urandom > /mnt/a && head -c 70000 /dev/urandom > /mnt/b &&
   mkdir /mnt/d && cp /mnt/b /mnt/d/c && (cd /mnt && md5sum a b d/c > /tmp/sums) && sync &&
   umount /mnt && deb-e2fsck -n -f $DEV; then
	ok ext4
else
	umount /mnt 2>/dev/null; bad ext4
fi

part "disconnect, reconnect: the files are intact"
if disconnect && connect && mount -t ext4 -o ro $DEV /mnt && (cd /mnt && md5sum -c /tmp/sums) &&
   umount /mnt; then
	ok reconnect
else
	umount /mnt 2>/dev/null; bad reconnect
fi

part "the policy: the host NQN is the identity; a format is denied and audited"
if ! nvme format /dev/$CTRL -n 1 -f > /tmp/fmt.txt 2>&1 && cat /tmp/fmt.txt &&
   grep -qi 'denied' /tmp/fmt.txt &&
   grep '"decision":"deny"' /tmp/audit.log | grep -q "\"hostnqn\":\"$HOSTNQN\""; then
	ok policy
else
	cat /tmp/fmt.txt /tmp/audit.log; bad policy
fi

# with SQ flow control disabled too (--disable-sqflow): ucmdd ends each
# successful read with a C2HData that has SUCCESS set and no CapsuleResp,
# which Linux's host completes after checking the data digest
part "header and data digests, no SQ flow control (nvme connect -g -G --disable-sqflow): the files, then fio"
common="--ioengine=io_uring_cmd --cmd_type=nvme --bs=4k --size=16m --offset=64m --iodepth=8 --verify=crc32c --output-format=terse"
# shellcheck disable=SC2086
if disconnect && connect -g -G --disable-sqflow && deb-e2fsck -n -f $DEV && mount -t ext4 -o ro $DEV /mnt &&
   (cd /mnt && md5sum -c /tmp/sums) && umount /mnt &&
   fio --name=dgw --filename=$NG --rw=write $common > "$R/fio-dg.txt" 2>&1 &&
   fio --name=dgv --filename=$NG --rw=write --verify_only=1 $common >> "$R/fio-dg.txt" 2>&1; then
	ok digests
else
	umount /mnt 2>/dev/null; cat "$R/fio-dg.txt"; bad digests
fi
disconnect || bad final-disconnect

part "ucmdd killed mid-I/O and restarted: the host reconnects, acknowledged writes intact"
# a second ucmdd whose controller lives in a directory (tmpfs), so a
# restart finds the data; every write it acknowledged was written through
# (RWF_DSYNC), whatever it was doing when killed
start2() {
	ucmdd --ctrl /tmp/ctrl2 --socket /tmp/ucmdd2.sock --nvme-tcp 127.0.0.1:4421 \
		--policy /tmp/policy.ini --audit /tmp/audit2.log
}
common="--ioengine=io_uring_cmd --cmd_type=nvme --bs=16k --iodepth=8 --verify=crc32c --output-format=terse"
if start2 && nvme discover -t tcp -a 127.0.0.1 -s 4421 $H > /tmp/disc2.txt &&
   SUB2=$(sed -n 's/^subnqn: *//p' /tmp/disc2.txt | head -1) &&
   nvme connect -t tcp -a 127.0.0.1 -s 4421 -n "$SUB2" $H --reconnect-delay=1 --ctrl-loss-tmo=120 &&
   SUBNQN=$SUB2 && wait_for '[ -n "$(tcp_ctrl)" ]' && CTRL=$(tcp_ctrl) && NG=/dev/ng${CTRL#nvme}n1 &&
   wait_for '[ -c $NG ]' &&
   fio --name=flushed --filename=$NG --rw=write --offset=0 --size=16m $common > "$R/fio-kill.txt" 2>&1; then
	# the next writes are in flight when ucmdd dies: they may fail or be
	# retried after the reconnect; only the acknowledged ones are checked
	fio --name=inflight --filename=$NG --rw=randwrite --offset=64m --size=256m \
		--ioengine=io_uring_cmd --cmd_type=nvme --bs=16k --iodepth=16 --time_based --runtime=8 \
		> /tmp/fio-inflight.txt 2>&1 &
	fpid=$!
	# its job has the device open: I/O is under way
	wait_for "ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -q '${NG#/dev/}\$'"
	for p in /proc/[0-9]*; do	# busybox has no pgrep
		tr '\0' ' ' 2>/dev/null < "$p/cmdline" | grep -q 'ucmdd2.sock' && kill -9 "${p#/proc/}"
	done
	# the host notices (the state leaves live) before anything can answer it
	wait_for "[ \"\$(cat /sys/class/nvme/$CTRL/state)\" != live ]" || bad kill-noticed
	echo "ucmdd killed; state $(cat /sys/class/nvme/$CTRL/state)"
	if start2 && wait_for "[ \"\$(cat /sys/class/nvme/$CTRL/state)\" = live ]"; then
		wait "$fpid"; echo "in-flight fio: status $?"
		echo "after restart: $CTRL $(cat /sys/class/nvme/$CTRL/state)"
		if fio --name=flushed --filename=$NG --rw=write --offset=0 --size=16m --verify_only=1 $common \
			>> "$R/fio-kill.txt" 2>&1; then
			ok kill-restart
		else
			cat "$R/fio-kill.txt"; bad kill-restart
		fi
	else
		wait "$fpid"
		cat /sys/class/nvme/$CTRL/state; bad kill-restart
	fi
	nvme disconnect -n "$SUB2" || bad disconnect2
else
	cat /tmp/disc2.txt "$R/fio-kill.txt"; bad kill-restart
fi

part "performance: 4K randread QD32 through the kernel host, ucmdd against nvmet-tcp, and ucmd's host on ucmdd"
# measured, not judged (TCG makes absolute figures meaningless; the ratio is
# the note's): both targets on loopback, namespaces of 128 MiB in memory
# (ucmdd --ram; nvmet a file on tmpfs, buffered as tmpfs has no O_DIRECT)
perf() {	# device, name: IOPS into $R/perf.txt
	fio --name="$2" --filename="$1" --ioengine=io_uring --direct=1 --rw=randread --bs=4k \
		--iodepth=32 --size=128m --time_based --runtime=10 --output-format=terse \
		> "/tmp/perf-$2.txt" 2>&1 || return 1
	# terse v3: field 8 is the read IOPS
	echo "$2 $(cut -d';' -f8 "/tmp/perf-$2.txt")" >> "$R/perf.txt"
}
# ucmd's own host transport on the same target and job (ucmd bench: one
# SQE per submit, as fio's default), the kernel host disconnected first
ucmd_perf() {
	ucmd --ctrl "nvme-tcp://127.0.0.1:4420/$SUB1" --hostnqn "$HOSTNQN" bench --rw randread \
		--bs 4k --iodepth 32 --size 128m --runtime 10s --target session --no-progress \
		--output-format json > /tmp/perf-ucmd-host.txt 2>&1 || return 1
	echo "ucmd-host $(sed -n 's/^  "iops": *\([0-9.]*\).*/\1/p' /tmp/perf-ucmd-host.txt | tail -1)" >> "$R/perf.txt"
}
N=/sys/kernel/config/nvmet
SUBNQN=$SUB1
if connect && perf "$DEV" ucmdd && disconnect && ucmd_perf &&
   mount -t configfs none /sys/kernel/config && truncate -s 128M /tmp/nvmet.img &&
   mkdir $N/subsystems/perf && echo 1 > $N/subsystems/perf/attr_allow_any_host &&
   mkdir $N/subsystems/perf/namespaces/1 &&
   echo -n /tmp/nvmet.img > $N/subsystems/perf/namespaces/1/device_path &&
   echo 1 > $N/subsystems/perf/namespaces/1/buffered_io &&
   echo 1 > $N/subsystems/perf/namespaces/1/enable &&
   mkdir $N/ports/1 && echo tcp > $N/ports/1/addr_trtype && echo ipv4 > $N/ports/1/addr_adrfam &&
   echo 127.0.0.1 > $N/ports/1/addr_traddr && echo 4430 > $N/ports/1/addr_trsvcid &&
   ln -s $N/subsystems/perf $N/ports/1/subsystems/perf &&
   nvme connect -t tcp -a 127.0.0.1 -s 4430 -n perf $H &&
   SUBNQN=perf && wait_for '[ -n "$(tcp_ctrl)" ]' && CTRL=$(tcp_ctrl) && DEV=/dev/${CTRL}n1 &&
   wait_for '[ -b $DEV ]' && perf "$DEV" nvmet && nvme disconnect -n perf; then
	cat "$R/perf.txt"
	ok perf
else
	cat /tmp/perf-*.txt; bad perf
fi

cp /tmp/syslog "$R/syslog.txt" 2>/dev/null
cp /tmp/audit.log "$R/audit.log" 2>/dev/null
echo "guest: $failed parts failed"
exit "$failed"
