# The guest half of tests/system/nvme_tcp_multipath.sh, run by /init as
# /test.sh (busybox sh): ucmdd exports one RAM controller on two NVMe/TCP
# listeners of the guest's loopback (two ports of one subsystem), Linux's
# own nvme-tcp host connects to both and builds its native multipath head;
# nvme-cli reads each path's ANA log; fio writes and verifies through the
# head while ucmd turns one port inaccessible and back, then the other.
# Results go to $UCMD_GUEST_RESULTS; the exit status counts the failed parts.
R=${UCMD_GUEST_RESULTS:-/tmp}
failed=0
part() { echo "=== $*"; }
ok() { echo "GUEST-PART $1 ok"; }
bad() { echo "GUEST-PART $1 FAILED"; failed=$((failed + 1)); }
H="--hostnqn=nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-0000-4000-8000-0000c0ffee03"
H="$H --hostid=5d0a1f3e-0000-4000-8000-0000c0ffee03"
wait_for() {	# a condition the kernel reaches asynchronously, bounded at 60 s
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ $i -gt 300 ] && return 1
		sleep 0.2
	done
}

ip link set lo up
[ -c /dev/nvme-fabrics ] || { echo "no /dev/nvme-fabrics: modules not loaded"; exit 100; }
echo "multipath: $(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)"

part "ucmdd with two listeners"
printf '[policy]\ndefault = allow\naudit = no\n' > /tmp/allow.ini
syslogd -O /tmp/syslog
if ucmdd --ram 128M --socket /tmp/ucmdd.sock --policy /tmp/allow.ini \
	--nvme-tcp 127.0.0.1:4420 --nvme-tcp 127.0.0.1:4421; then ok ucmdd; else bad ucmdd; exit 1; fi
SUBNQN=$(ucmd --daemon /tmp/ucmdd.sock id-ctrl | sed -n 's/^subnqn *: //p')
echo "subnqn $SUBNQN"

path_of() {	# PORT: the controller connected through it
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/transport" 2>/dev/null)" = tcp ] || continue
		grep -q "trsvcid=$1" "$c/address" 2>/dev/null && { basename "$c"; return; }
	done
}

subsys_of() {	# CTRL: the nvme-subsystem it belongs to
	for s in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ -e "$s/$1" ] && { basename "$s"; return; }
	done
}

part "nvme connect to both ports: one subsystem, one head"
# shellcheck disable=SC2086
if nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$SUBNQN" $H &&
   nvme connect -t tcp -a 127.0.0.1 -s 4421 -n "$SUBNQN" $H &&
   wait_for '[ -n "$(path_of 4420)" ] && [ -n "$(path_of 4421)" ]'; then
	C1=$(path_of 4420) C2=$(path_of 4421)
	S1=$(subsys_of $C1) S2=$(subsys_of $C2)
	HEAD=/dev/nvme${S1#nvme-subsys}n1
	NGH=/dev/ng${S1#nvme-subsys}n1
	echo "paths $C1 $C2 subsystems $S1 $S2 head $HEAD $NGH"
	ls /sys/class/nvme-subsystem/ /sys/class/nvme-subsystem/$S1/ 2>&1
	if [ "$S1" = "$S2" ] && wait_for '[ -b $HEAD ] && [ -c $NGH ]' &&
	   [ "$(cat /sys/class/nvme/$C1/cntlid)" != "$(cat /sys/class/nvme/$C2/cntlid)" ]; then
		ok connect
	else
		bad connect; cat /tmp/syslog; dmesg | tail -20; exit 1
	fi
else
	bad connect; cat /tmp/syslog; dmesg | tail -20; exit 1
fi
ls -l /dev/nvme* /dev/ng*
state() {	# CTRL: the ANA state Linux holds for its path of namespace 1
	cat /sys/block/nvme${S1#nvme-subsys}c${1#nvme}n1/ana_state 2>/dev/null
}
echo "ana_state $C1 $(state $C1), $C2 $(state $C2); iopolicy $(cat /sys/class/nvme-subsystem/$S1/iopolicy)"
if [ "$(state $C1)" = optimized ] && [ "$(state $C2)" = optimized ]; then ok ana-sysfs; else bad ana-sysfs; fi

part "nvme ana-log on each path"
nvme ana-log /dev/$C1 -o json > "$R/ana-log-1.json" 2>&1 || bad ana-log-1
ucmd --daemon /tmp/ucmdd.sock ana-state --port 2 --state non-optimized
wait_for '[ "$(state $C2)" = non-optimized ]' || bad ana-aen
nvme ana-log /dev/$C2 -o json > "$R/ana-log-2.json" 2>&1 || bad ana-log-2
nvme ana-log /dev/$C2 > "$R/ana-log-2.txt" 2>&1
# ucmd's own host through the same port, for the host side to compare
ucmd --ctrl "nvme-tcp://127.0.0.1:4421/$SUBNQN" ana-log -o json > "$R/ucmd-ana-log-2.json" 2>&1
ucmd --ctrl "nvme-tcp://127.0.0.1:4421/$SUBNQN" ana-log > "$R/ucmd-ana-log-2.txt" 2>&1
cat "$R/ana-log-1.json" "$R/ana-log-2.json" "$R/ana-log-2.txt"
ucmd --daemon /tmp/ucmdd.sock ana-state --port 2 --state optimized
wait_for '[ "$(state $C2)" = optimized ]' && ok ana-aen || bad ana-aen-back

part "fio on the head while the ports turn inaccessible and back"
common="--bs=4k --size=24m --iodepth=8 --verify=crc32c --do_verify=1 --output-format=terse"
flip() {
	sleep 2
	for p in 2 1; do
		ucmd --daemon /tmp/ucmdd.sock ana-state --port $p --state inaccessible
		sleep 3
		echo "port $p inaccessible: $C1 $(state $C1), $C2 $(state $C2)"
		ucmd --daemon /tmp/ucmdd.sock ana-state --port $p --state optimized
		sleep 2
	done
}
flip > "$R/flip.txt" 2>&1 &
FP=$!
# shellcheck disable=SC2086
fio --name=mpath --filename=$HEAD --ioengine=io_uring --direct=1 --rw=randwrite --loops=3 \
	$common > "$R/fio-head.txt" 2>&1
frc=$?
wait $FP
cat "$R/flip.txt"
if [ $frc = 0 ]; then ok fio-head; else cat "$R/fio-head.txt"; bad fio-head; fi
grep -q "port 2 inaccessible: $C1 optimized, $C2 inaccessible" "$R/flip.txt" &&
	grep -q "port 1 inaccessible: $C1 inaccessible, $C2 optimized" "$R/flip.txt" &&
	ok ana-flip || bad ana-flip

part "fio io_uring_cmd on the head $NGH, both paths optimized"
# shellcheck disable=SC2086
if fio --name=ngh --filename=$NGH --ioengine=io_uring_cmd --cmd_type=nvme --rw=randwrite \
	$common > "$R/fio-ngh.txt" 2>&1; then ok fio-ngh; else cat "$R/fio-ngh.txt"; bad fio-ngh; fi

part "nvme list-subsys"
nvme list-subsys -o json > "$R/list-subsys.json" 2>&1; cat "$R/list-subsys.json"
nvme disconnect -n "$SUBNQN" || bad disconnect
grep -i "nvme\|ana" /tmp/syslog | tail -20
dmesg | grep -i "nvme" | tail -20
exit "$failed"
