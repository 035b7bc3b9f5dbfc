#!/bin/busybox sh
# /init of the test guest: mount the basics, run /test.sh, carry its output
# and exit status back to the host on the results controller (the NVMe
# controller whose serial is "ucmdres"), then power off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /results
echo "UCMD-GUEST-UP $(cut -d' ' -f1 /proc/uptime)"
# run.sh --mod: kernel modules, in dependency order
if [ -f /modules.list ]; then
	while read -r m; do
		insmod "/lib/modules/$m" || echo "UCMD-GUEST: insmod $m failed"
	done < /modules.list
fi

res=""
for c in /sys/class/nvme/nvme*; do
	[ "$(cat "$c/serial" 2>/dev/null | tr -d ' ')" = ucmdres ] && res=/dev/$(basename "$c")n1
done
export UCMD_GUEST_RESULTS=/results
sh /test.sh > /results/guest.log 2>&1
echo $? > /results/status
cat /results/guest.log
echo "UCMD-GUEST-STATUS $(cat /results/status)"
if [ -n "$res" ]; then
	(cd /results && tar -cf - .) > "$res"
	sync
	# the host may stop QEMU from here on: the results are on its image
	echo "UCMD-GUEST-SYNCED"
else
	echo "UCMD-GUEST: no results controller"
fi
poweroff -f
