#!/usr/bin/env bash
# Boot a Debian cloud kernel under QEMU (TCG) with an NVMe controller that
# has two namespaces (512-byte blocks; 4096-byte blocks + 8 bytes of
# separate metadata), run a test script in the guest, bring back its files
# and exit status.
#   run.sh --out DIR --script FILE [--bin FILE]... [--dyn FILE]... [--fio]
#          [--mod NAME]... [--append ARGS] [--zp] [--mp]
# Guest: /test.sh is FILE, each --bin (static) lands in /bin, each --dyn
# (dynamic) too with its shared libraries and the loader; --fio is
# --dyn $(command -v fio). Each --mod is a kernel module of the same kernel
# package (nvme-tcp, ...), with the modules it depends on: /init loads
# them, dependencies first, before /test.sh runs. /test.sh writes result files to
# $UCMD_GUEST_RESULTS; they appear in DIR with guest.log (its output),
# status (its exit status) and console.log (the serial console).
# --append adds ARGS to the guest kernel's command line (tests/system/
# bpf_lsm.sh: lsm=...,bpf); other tests keep theirs unchanged.
# --zp adds, after the results controller, a third controller (serial
# "ucmdzp", Zone Append Size Limit 5) with the zoned namespace and the five
# protection information namespaces of tests/system/qemu/difftest.h.
# --mp adds an NVM subsystem (nvme-subsys, NQN "ucmdmp") of two controllers
# (QEMU wants one serial in a subsystem: "ucmdmp" for both) sharing namespace 1 (512-byte blocks,
# DT_MP_BLOCKS of tests/system/qemu/dt_subsys.h): Linux's native multipath
# makes its head.
# Exit status: the guest script's; 125 when the guest did not come up or
# finish in time (the console tail is printed), or the harness failed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="" script="" fio=0 bins=() dyns=() mods=() append="" zp=0 mp=0
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--script) script=$2; shift 2 ;;
	--bin) bins+=("$2"); shift 2 ;;
	--dyn) dyns+=("$2"); shift 2 ;;
	--fio) fio=1; shift ;;
	--mod) mods+=("$2"); shift 2 ;;
	--append) append=" $2"; shift 2 ;;
	--zp) zp=1; shift ;;
	--mp) mp=1; shift ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 125 ;;
	esac
done
[ -n "$out" ] && [ -n "$script" ] || { echo "usage: run.sh --out DIR --script FILE [--bin FILE]... [--dyn FILE]... [--fio]" >&2; exit 125; }
BOOT_TIMEOUT=${UCMD_QEMU_BOOT_TIMEOUT:-90}	# seconds until the guest's first marker
RUN_TIMEOUT=${UCMD_QEMU_RUN_TIMEOUT:-420}	# seconds for the whole guest run
# Seconds QEMU has to exit once the guest's results are on the image: a
# power-off that never ends (seen once on CI, after the status, with a
# multipath subsystem in the guest) must not fail a run whose results are in.
OFF_TIMEOUT=${UCMD_QEMU_OFF_TIMEOUT:-60}
say() { echo "qemu: $*"; }

# --- tools ------------------------------------------------------------------
if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /bin/busybox ] || ! command -v cpio >/dev/null ||
   { [ "$fio" = 1 ] && ! command -v fio >/dev/null; }; then
	say "installing the system-test packages (scripts/deps.sh)"
	UCMD_DEPS_SYSTEM=1 bash "$here/../../../scripts/deps.sh"
fi
busybox_bin=/bin/busybox
is_dynamic() { grep -q INTERP <<<"$(readelf -l "$1" 2>/dev/null)"; }
is_dynamic "$busybox_bin" && { echo "qemu: $busybox_bin is not static (busybox-static)" >&2; exit 125; }

# --- kernel: the package linux-image-cloud-amd64 depends on, cached ----------
if [ -n "${UCMD_QEMU_CACHE:-}" ]; then cache=$UCMD_QEMU_CACHE
elif [ -w /var/cache ]; then cache=/var/cache/ucmd-qemu
else cache=${XDG_CACHE_HOME:-$HOME/.cache}/ucmd-qemu; fi
mkdir -p "$cache"
kpkg_of() { apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
kpkg=$(kpkg_of || true)
if [ -z "$kpkg" ]; then
	say "apt-get update (no package lists)"
	apt-get update -qq
	kpkg=$(kpkg_of)
fi
[ -n "$kpkg" ] || { echo "qemu: linux-image-cloud-amd64 has no kernel dependency" >&2; exit 125; }
kdir=$cache/$kpkg
if [ ! -f "$kdir/vmlinuz" ]; then
	say "fetching $kpkg"
	tmp=$(mktemp -d "$cache/dl.XXXXXX")
	chmod 777 "$tmp"	# apt's sandbox user writes the download
	(cd "$tmp" && apt-get download -q "$kpkg" >/dev/null)
	dpkg-deb -x "$tmp"/*.deb "$tmp/x"
	mkdir -p "$kdir"
	cp "$tmp"/x/boot/vmlinuz-* "$kdir/vmlinuz.new"
	cp "$tmp"/x/boot/config-* "$kdir/config"
	mv "$kdir/vmlinuz.new" "$kdir/vmlinuz"
	rm -rf "$tmp"
fi
say "kernel $kpkg ($kdir/vmlinuz)"
# its modules, kept once something asks for one (the kernel was cached without them)
if [ ${#mods[@]} -gt 0 ] && [ ! -d "$kdir/modules" ]; then
	say "fetching $kpkg's modules"
	tmp=$(mktemp -d "$cache/dl.XXXXXX")
	chmod 777 "$tmp"
	(cd "$tmp" && apt-get download -q "$kpkg" >/dev/null)
	dpkg-deb -x "$tmp"/*.deb "$tmp/x"
	mkdir -p "$kdir/modules.new"
	cp -a "$tmp"/x/lib/modules/*/kernel/. "$kdir/modules.new/"
	mv "$kdir/modules.new" "$kdir/modules"
	rm -rf "$tmp"
fi

# --- initramfs -----------------------------------------------------------------
mkdir -p "$out"
work=$(mktemp -d /var/tmp/ucmd-qemu.XXXXXX)
qpid=""
cleanup() { [ -n "$qpid" ] && kill "$qpid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib,lib64,etc}
cp "$busybox_bin" "$root/bin/busybox"
cp "$here/init.sh" "$root/init"
cp "$script" "$root/test.sh"
chmod +x "$root/init"
for b in "${bins[@]}"; do
	if is_dynamic "$b"; then
		echo "qemu: $b is dynamically linked; guest binaries must be static" >&2; exit 125
	fi
	cp "$b" "$root/bin/"
done
if [ "$fio" = 1 ]; then dyns+=("$(command -v fio)"); fi
for b in "${dyns[@]}"; do
	# a dynamic program: it, every library ldd finds, and the loader
	cp "$b" "$root/bin/"
	ldd "$b" | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | while read -r lib; do
		case "$lib" in
		/lib*|/usr/*) dest=$lib ;;
		# the build tree's own (libucmd.so.0, found through the build
		# rpath): the guest's loader finds it in /lib
		*) dest=/lib/$(basename "$lib") ;;
		esac
		mkdir -p "$root$(dirname "$dest")"
		cp -L "$lib" "$root$dest"
	done
done
# modules: the .ko files (the package's are not compressed) and the order to
# load them in, dependencies first, from each module's own "depends=" field
mod_file() {
	local a=${1//_/-} b=${1//-/_}
	find "$kdir/modules" \( -name "$a.ko" -o -name "$b.ko" \) | head -1
}
add_mod() {
	local f dep
	f=$(mod_file "$1")
	[ -n "$f" ] || { echo "qemu: no module $1 in $kpkg" >&2; exit 125; }
	grep -qx "$(basename "$f")" "$root/modules.list" 2>/dev/null && return 0
	for dep in $(tr '\0' '\n' < "$f" | sed -n 's/^depends=//p' | tr , ' '); do
		add_mod "$dep"
	done
	mkdir -p "$root/lib/modules"
	cp "$f" "$root/lib/modules/"
	basename "$f" >> "$root/modules.list"
}
for m in "${mods[@]}"; do add_mod "$m"; done
say "initramfs: busybox, ${#bins[@]} static and ${#dyns[@]} dynamic programs, $(find "$root/lib" "$root/lib64" "$root/usr" -type f 2>/dev/null | wc -l) libraries"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1 > "$work/initrd")

# --- disks: the namespaces under test and the results controller -------------
truncate -s 64M "$work/ns1.img" "$work/ns2.img"
truncate -s 16M "$work/res.img"

# --- boot -------------------------------------------------------------------------
# no_timer_check: on a loaded host a TCG guest's early IO-APIC timer test can
# miss its ticks and panic ("IO-APIC + timer doesn't work"); the check is for
# broken hardware, not for QEMU's emulated chipset.
qemu=(qemu-system-x86_64 -accel tcg -cpu max -m 1G -smp 2 -nographic -no-reboot -nic none
	-kernel "$kdir/vmlinuz" -initrd "$work/initrd"
	-append "console=ttyS0 quiet panic=-1 no_timer_check nvme.poll_queues=1$append"
	-drive "file=$work/ns1.img,if=none,id=ns1,format=raw,discard=unmap"
	-drive "file=$work/ns2.img,if=none,id=ns2,format=raw,discard=unmap"
	-drive "file=$work/res.img,if=none,id=res,format=raw"
	-device nvme,serial=ucmd0001,id=nvme0
	-device nvme-ns,drive=ns1,bus=nvme0,nsid=1,logical_block_size=512,physical_block_size=512
	-device nvme-ns,drive=ns2,bus=nvme0,nsid=2,logical_block_size=4096,physical_block_size=4096,ms=8
	-device nvme,serial=ucmdres,id=nvme1,drive=res)
if [ "$zp" = 1 ]; then
	# zoned: 16 zones of 1 MiB, 768 KiB writable, at most 2 open and 3 active
	truncate -s 16M "$work/zns.img"
	qemu+=(-drive "file=$work/zns.img,if=none,id=zns,format=raw"
		-device nvme,serial=ucmdzp,id=nvme2,zoned.zasl=5
		-device "nvme-ns,drive=zns,bus=nvme2,nsid=1,logical_block_size=512,physical_block_size=512,zoned=true,zoned.zone_size=1M,zoned.zone_capacity=768K,zoned.max_open=2,zoned.max_active=3")
	# PI: 256 blocks each, QEMU keeping the metadata after the data in the image
	# nsid:block size:ms:mset:pi:pil:pif
	for f in 2:512:8:0:1:0:0 3:4096:16:1:2:0:0 4:512:8:1:3:0:0 5:4096:16:0:1:0:2 6:512:16:0:1:1:0; do
		IFS=: read -r id bs ms mset pi pil pif <<<"$f"
		truncate -s $((256 * (bs + ms))) "$work/pi$id.img"
		qemu+=(-drive "file=$work/pi$id.img,if=none,id=pi$id,format=raw"
			-device "nvme-ns,drive=pi$id,bus=nvme2,nsid=$id,logical_block_size=$bs,physical_block_size=$bs,ms=$ms,mset=$mset,pi=$pi,pil=$pil,pif=$pif")
	done
fi
if [ "$mp" = 1 ]; then
	# shared=on: the namespace is attached to every controller of the subsystem
	truncate -s 16M "$work/mp.img"
	qemu+=(-device nvme-subsys,id=mpsubsys,nqn=ucmdmp
		-device nvme,serial=ucmdmp,id=nvmemp0,subsys=mpsubsys
		-device nvme,serial=ucmdmp,id=nvmemp1,subsys=mpsubsys
		-drive "file=$work/mp.img,if=none,id=mp,format=raw"
		-device "nvme-ns,drive=mp,bus=nvmemp0,nsid=1,shared=on,logical_block_size=512,physical_block_size=512")
fi
say "${qemu[*]}"
log=$out/console.log
start=$(date +%s)
"${qemu[@]}" </dev/null >"$log" 2>&1 &
qpid=$!
fail() {
	echo "qemu: FAILED: $*" >&2
	echo "---- console tail ($log)" >&2
	tail -40 "$log" | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' >&2
	exit 125
}
up=0 synced=0
while kill -0 "$qpid" 2>/dev/null; do
	now=$(date +%s)
	if [ "$up" = 0 ] && grep -q UCMD-GUEST-UP "$log"; then
		up=1; say "guest up after $((now - start)) s"
	fi
	if [ "$synced" = 0 ] && grep -q UCMD-GUEST-SYNCED "$log"; then
		synced=$now; say "guest results written after $((now - start)) s"
	fi
	if [ "$synced" != 0 ] && [ $((now - synced)) -ge "$OFF_TIMEOUT" ]; then
		say "WARNING: the guest did not power off within $OFF_TIMEOUT s of writing its results; stopping QEMU"
		tail -5 "$log" | tr -d '\r' | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/^/qemu: console| /'
		kill -9 "$qpid" 2>/dev/null
		break
	fi
	[ "$up" = 0 ] && [ $((now - start)) -ge "$BOOT_TIMEOUT" ] && fail "guest did not come up within $BOOT_TIMEOUT s"
	[ "$synced" = 0 ] && [ $((now - start)) -ge "$RUN_TIMEOUT" ] &&
		fail "guest did not finish within $RUN_TIMEOUT s"
	sleep 0.5
done
{ wait "$qpid"; } 2>/dev/null || true	# "Killed" after a stopped power-off is said above
qpid=""
say "guest finished after $(( $(date +%s) - start )) s"
grep -q UCMD-GUEST-UP "$log" || fail "guest never came up"
tar -xf "$work/res.img" -C "$out" 2>/dev/null || fail "no results from the guest"
[ -f "$out/status" ] || fail "the guest wrote no status"
status=$(cat "$out/status")
say "guest test script exit status $status"
exit "$status"
