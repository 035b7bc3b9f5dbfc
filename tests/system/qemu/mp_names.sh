#!/bin/sh
# mp_names.sh S A B: the names a multipath subsystem's devices get, for the
# differential comparison (tests/system/qemu_kernel.sh): S is the
# subsystem's instance (nvme-subsysS, the head's nvmeSnY and ngSnY), A and
# B its two controllers' (nvmeA, nvmeB; a per-path disk is nvmeScAnY).
# Instances are the host's to number (Linux probes asynchronously), so they
# print as the letters S, A and B; names of other devices are left out.
# One line per place the names show: the subsystem's sysfs directory,
# /sys/block, /dev, the nvme-generic class; then the iopolicy.
S=$1 A=$2 B=$3
norm() {
	case $1 in
	nvme"$S"c"$A"n*) echo "nvmeScAn${1#nvme"$S"c"$A"n}" ;;
	nvme"$S"c"$B"n*) echo "nvmeScBn${1#nvme"$S"c"$B"n}" ;;
	nvme"$S"n*) echo "nvmeSn${1#nvme"$S"n}" ;;
	ng"$S"n*) echo "ngSn${1#ng"$S"n}" ;;
	nvme"$A") echo nvmeA ;;
	nvme"$B") echo nvmeB ;;
	nvme"$A"n*) echo "nvmeAn${1#nvme"$A"n}" ;;
	nvme"$B"n*) echo "nvmeBn${1#nvme"$B"n}" ;;
	ng"$A"n*) echo "ngAn${1#ng"$A"n}" ;;
	ng"$B"n*) echo "ngBn${1#ng"$B"n}" ;;
	*) [ "$2" = keep ] && echo "$1" ;;
	esac
}
names() {
	for p in "$1"/*; do
		[ -e "$p" ] || [ -L "$p" ] || continue
		norm "${p##*/}" "$2"
	done | sort | tr '\n' ',' | sed 's/,$//'
}
echo "mp.names.subsys value=$(names /sys/class/nvme-subsystem/nvme-subsys"$S" keep)"
echo "mp.names.block value=$(names /sys/block)"
echo "mp.names.dev value=$(names /dev)"
echo "mp.names.generic value=$(names /sys/class/nvme-generic)"
echo "mp.iopolicy value=$(cat /sys/class/nvme-subsystem/nvme-subsys"$S"/iopolicy 2>/dev/null)"
