#!/usr/bin/env bash
# gen_vmlinux_h.sh OUT: the vmlinux.h the BPF LSM program (src/bpf/) is
# compiled against, dumped with bpftool from the BTF of the kernel the QEMU
# harness boots (the package linux-image-cloud-amd64 depends on, as
# tests/system/qemu/run.sh picks it). No kernel headers: the program is
# CO-RE, so this one kernel's types serve every kernel with BTF. The kernel
# package and the result are cached with run.sh's (UCMD_QEMU_CACHE).
set -euo pipefail
out=$1
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
[ -x "$bpftool" ] || { echo "gen_vmlinux_h: bpftool is missing (scripts/deps.sh)" >&2; exit 1; }
if [ -n "${UCMD_QEMU_CACHE:-}" ]; then cache=$UCMD_QEMU_CACHE
elif [ -w /var/cache ]; then cache=/var/cache/ucmd-qemu
else cache=${XDG_CACHE_HOME:-$HOME/.cache}/ucmd-qemu; fi
mkdir -p "$cache"
kpkg_of() { apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'; }
kpkg=$(kpkg_of || true)
if [ -z "$kpkg" ]; then
	# no package lists: whatever kernel run.sh cached, else ask apt once
	kpkg=$(cd "$cache" && ls -d linux-image-* 2>/dev/null | head -1 || true)
	if [ -z "$kpkg" ]; then
		apt-get update -qq
		kpkg=$(kpkg_of)
	fi
fi
[ -n "$kpkg" ] || { echo "gen_vmlinux_h: no linux-image-cloud-amd64 kernel package" >&2; exit 1; }
kdir=$cache/$kpkg
if [ -f "$kdir/vmlinux.h" ]; then
	cp "$kdir/vmlinux.h" "$out"
	exit 0
fi
mkdir -p "$kdir"
work=$(mktemp -d "$cache/btf.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -f "$kdir/vmlinuz" ]; then
	cp "$kdir/vmlinuz" "$work/vmlinuz"
else
	chmod 777 "$work"	# apt's sandbox user writes the download
	(cd "$work" && apt-get download -q "$kpkg" >/dev/null)
	dpkg-deb -x "$work"/*.deb "$work/x"
	cp "$work"/x/boot/vmlinuz-* "$work/vmlinuz"
fi
# The bzImage carries the ELF vmlinux compressed: try each compressed stream
# the image holds until one unpacks to an ELF with BTF.
python3 - "$work/vmlinuz" "$work" <<'PY'
import sys
img = open(sys.argv[1], 'rb').read()
magics = {'lz4': b'\x02\x21\x4c\x18', 'gz': b'\x1f\x8b\x08', 'xz': b'\xfd7zXZ\x00',
          'zst': b'\x28\xb5\x2f\xfd', 'bz2': b'BZh'}
n = 0
for kind, m in magics.items():
    i = img.find(m)
    while i >= 0 and n < 64:
        open('%s/part%03d.%s' % (sys.argv[2], n, kind), 'wb').write(img[i:])
        n += 1
        i = img.find(m, i + 1)
PY
found=0
for p in "$work"/part*; do
	case $p in
	*.lz4) cmd=(lz4 -dc) ;; *.gz) cmd=(gzip -dc) ;; *.xz) cmd=(xz -dc) ;;
	*.zst) cmd=(zstd -dc) ;; *.bz2) cmd=(bzip2 -dc) ;;
	esac
	# trailing bytes after the stream make the tools complain: the ELF decides
	"${cmd[@]}" < "$p" > "$work/vmlinux" 2>/dev/null || true
	if [ "$(head -c 4 "$work/vmlinux" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] &&
	   "$bpftool" btf dump file "$work/vmlinux" format c > "$work/vmlinux.h" 2>/dev/null; then
		found=1
		break
	fi
done
[ "$found" = 1 ] || { echo "gen_vmlinux_h: no vmlinux with BTF inside $kpkg's vmlinuz" >&2; exit 1; }
cp "$work/vmlinux.h" "$kdir/vmlinux.h.new" && mv "$kdir/vmlinux.h.new" "$kdir/vmlinux.h"
cp "$kdir/vmlinux.h" "$out"
