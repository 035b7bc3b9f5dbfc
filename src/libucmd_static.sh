#!/bin/sh
# SPDX-License-Identifier: MIT
#
# libucmd.a as one relocatable object whose hidden symbols are made local:
# the library's internal functions have kernel names (io_uring_cmd_done,
# nvme_*, blk_mq_*) that would otherwise collide with liburing's and
# libnvme's in a program that links them too. What stays global is what the
# public headers declare (ucmd_*) and the credential interposers
# (src/libucmd.map says why).
#
#   libucmd_static.sh OUT.a LTO(true|false) CC... -- LAYER.a...
# With LTO the layers hold GIMPLE, which objcopy cannot read: gcc compiles
# them during the partial link (-flinker-output=nolto-rel), so the archive
# holds machine code any compiler's link can use.
set -eu
out=$1 lto=$2
shift 2
cc=
while [ "$1" != -- ]; do cc="$cc $1"; shift; done
shift
tmp=${out%.a}.o
rm -f "$out" "$tmp"
ltoflags=
if [ "$lto" = true ]; then
	ltoflags="-flto=auto -flinker-output=nolto-rel"
fi
# shellcheck disable=SC2086
$cc -r -nostdlib $ltoflags -o "$tmp" -Wl,--whole-archive "$@" -Wl,--no-whole-archive
objcopy --localize-hidden "$tmp"
# ISA-L (CRC-32C, the 16-bit PI guard) is shared-only in Debian: a static
# program cannot link it, so its functions stay weak references, and both
# fall back to a table (src/lib/crc32c.c, src/lib/crc16_t10dif.c).
objcopy --weaken-symbol=crc32_iscsi --weaken-symbol=crc16_t10dif "$tmp"
ar rcsD "$out" "$tmp"
rm -f "$tmp"
