# The guest half of tests/system/qemu_kernel.sh, run by /init as /test.sh
# (busybox sh). Results go to $UCMD_GUEST_RESULTS; the exit status counts
# the parts that failed here (the differential comparison is the host's).
R=${UCMD_GUEST_RESULTS:-/tmp}
failed=0
part() { echo "=== $*"; }
ok() { echo "GUEST-PART $1 ok"; }
bad() { echo "GUEST-PART $1 FAILED"; failed=$((failed + 1)); }

# a controller's instance by its serial (probing is asynchronous: the order may vary)
instance_of() {
	for c in /sys/class/nvme/nvme*; do
		[ "$(tr -d ' ' < "$c/serial")" = "$1" ] && { echo "${c##*/nvme}"; return 0; }
	done
	return 1
}
part "devices"
ls -l /dev/nvme* /dev/ng*
I=$(instance_of ucmd0001) || { echo "no controller ucmd0001"; exit 1; }
for n in nvme${I}n1 nvme${I}n2; do
	echo "$n: lba $(cat /sys/block/$n/queue/logical_block_size) size $(cat /sys/block/$n/size)"
done

part "kernel backend smoke test"
if kernel_smoke /dev/ng${I}n1; then ok smoke; else bad smoke; fi

part "differential sequence on /dev/ng${I}n1 + /dev/ng${I}n2"
if difftest_guest --kernel /dev/ng${I}n1 /dev/ng${I}n2 > "$R/kernel.out"; then ok difftest; else bad difftest; fi
echo "$(wc -l < "$R/kernel.out") lines"

# the zoned and PI sequences, on the third controller (run.sh --zp)
if Z=$(instance_of ucmdzp); then
	part "zoned + PI differential sequences on /dev/ng${Z}n1..6"
	for n in 1 2 3 4 5 6; do
		echo "ng${Z}n$n: $(cat /sys/block/nvme${Z}n$n/queue/zoned 2>/dev/null)" \
			"integrity $(cat /sys/block/nvme${Z}n$n/integrity/format 2>/dev/null)"
	done
	t0=$(cut -d' ' -f1 /proc/uptime)
	if difftest_guest --kernel-zp /dev/ng${Z}n1 /dev/ng${Z}n2 /dev/ng${Z}n3 /dev/ng${Z}n4 \
		/dev/ng${Z}n5 /dev/ng${Z}n6 >> "$R/kernel.out"; then
		ok difftest-zp
	else
		bad difftest-zp
	fi
	echo "guest: zoned + PI sequences took $(awk -v a="$t0" '{print $1 - a}' /proc/uptime) s;" \
		"$(wc -l < "$R/kernel.out") lines in all"
fi

# the multipath subsystem (run.sh --mp): its device names, then the sequence
# through its head and each controller. Its two controllers share one
# serial: A is the one with the lower controller ID.
mp_ctrls() {
	for c in /sys/class/nvme/nvme*; do
		[ "$(tr -d ' ' < "$c/serial")" = ucmdmp ] && echo "$(cat "$c/cntlid") ${c##*/nvme}"
	done | sort -n | awk '{print $2}' | tr '\n' ' '
}
read -r MA MB extra <<EOF
$(mp_ctrls)
EOF
if [ -n "$MB" ] && [ -z "$extra" ]; then
	part "multipath: subsystem of nvme$MA + nvme$MB"
	MS=""
	for d in /sys/class/nvme-subsystem/nvme-subsys*; do
		[ -e "$d/nvme$MA" ] && MS=${d##*/nvme-subsys}
	done
	echo "subsystem $MS:" /sys/class/nvme-subsystem/nvme-subsys"$MS"/* /sys/block/*
	if [ -n "$MS" ] && sh /bin/mp_names.sh "$MS" "$MA" "$MB" >> "$R/kernel.out" &&
	   difftest_guest --kernel-mp /dev/ng"$MS"n1 /dev/nvme"$MA" /dev/nvme"$MB" >> "$R/kernel.out"; then
		ok difftest-mp
	else
		bad difftest-mp
	fi
fi

if [ -x /bin/ucmd ]; then
	# nvme-cli style: a /dev path after the command selects the kernel backend
	part "ucmd CLI on /dev/ng${I}n1"
	D=/dev/ng${I}n1
	head -c 3584 /dev/urandom > /tmp/in.bin
	if ucmd write $D -s 200 -c 6 -d /tmp/in.bin && ucmd flush $D &&
	   ucmd read $D -s 200 -c 6 -d /tmp/out.bin && cmp /tmp/in.bin /tmp/out.bin &&
	   ucmd io-passthru $D --opcode=2 --cdw10=200 --cdw12=6 --data-len=3584 --read \
		--raw-binary > /tmp/pt.bin && cmp /tmp/in.bin /tmp/pt.bin &&
	   ucmd --output-format json id-ctrl /dev/nvme$I > "$R/cli-id-ctrl.json" &&
	   ucmd --output-format json id-ns $D > "$R/cli-id-ns.json" &&
	   ! ucmd read $D -s 3000000 -c 0 -d /tmp/x 2> /tmp/err && grep -qi "LBA Out of Range" /tmp/err &&
	   ! ucmd io-passthru $D --opcode=0x7e 2> /tmp/err && grep -qi "Invalid Command Opcode" /tmp/err
	then
		ok cli
	else
		cat /tmp/err 2>/dev/null
		bad cli
	fi
	part "ucmd bench --path block on $D: disk stats from /sys/block/nvme${I}n1/stat"
	# buffered reads of a cold range: the disk sees at least one read
	echo 3 > /proc/sys/vm/drop_caches
	if ucmd --output-format json bench $D --target session --path block --rw read --size 1M --bs 4k \
		--ops 64 --no-progress > "$R/bench-block.json" &&
	   grep -q '"disk_util"' "$R/bench-block.json" &&
	   grep -Eq '"read_ios": *[1-9]' "$R/bench-block.json" &&
	   grep -Eq '"name": *"/dev/nvme'"$I"'n1"' "$R/bench-block.json"
	then
		ok bench-disk-stats
	else
		cat "$R/bench-block.json"
		bad bench-disk-stats
	fi
else
	echo "GUEST-PART cli absent (the CLI has no kernel backend yet)"
fi

if [ -x /bin/fio ]; then
	part "fio ioengine=io_uring_cmd on /dev/ng${I}n1: write a pattern, verify it"
	# engine options (fixedbufs, hipri, ...) must follow --ioengine in $common
	common="--filename=/dev/ng${I}n1 --ioengine=io_uring_cmd --cmd_type=nvme --bs=4k --size=8m
		--offset=16m --iodepth=8 --verify=pattern --verify_pattern=0x5a6b7c8d --output-format=terse"
	# shellcheck disable=SC2086
	if fio --name=write --rw=write --do_verify=0 $common > "$R/fio-write.txt" 2>&1 &&
	   fio --name=verify --rw=read --verify_only=1 $common > "$R/fio-verify.txt" 2>&1 &&
	   fio --name=sqpoll $common --rw=randread --verify_only=1 --fixedbufs=1 \
		--registerfiles=1 --sqthread_poll=1 > "$R/fio-sqpoll.txt" 2>&1 &&
	   fio --name=iopoll $common --rw=randread --verify_only=1 --hipri=1 \
		> "$R/fio-iopoll.txt" 2>&1; then
		ok fio
	else
		cat "$R"/fio-*.txt
		bad fio
	fi
	# a verify must catch a wrong pattern, or it proves nothing
	# shellcheck disable=SC2086
	if fio --name=wrong --rw=read --verify_only=1 $common --verify_pattern=0x01020304 \
		> "$R/fio-wrong.txt" 2>&1; then
		bad fio-negative
	else
		ok fio-negative
	fi
fi
echo "guest: $failed parts failed"
exit "$failed"
