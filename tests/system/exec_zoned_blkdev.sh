#!/usr/bin/env bash
# A zoned namespace under `ucmd exec` as Linux presents it: /dev/ngXnY
# always; /dev/nvmeXnY only for a power-of-two zone size, with its queue
# limits in sysfs (queue/zoned host-managed, chunk_sectors, nr_zones, the
# open/active limits, zone_append_max_bytes); an NVM namespace says none.
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools timeout

X() { timeout 60 "$UCMD" exec --ctrl "$1" -- sh -c "$2"; }
# shellcheck disable=SC2016  # expanded by the sh under exec
exists='for f in /dev/ng0n1 /dev/nvme0n1 /sys/block/nvme0n1 /sys/class/nvme-generic/ng0n1; do
	if test -e $f; then echo "$f yes"; else echo "$f no"; fi; done'
# shellcheck disable=SC2016
queue='for f in zoned chunk_sectors nr_zones max_open_zones max_active_zones zone_append_max_bytes; do
	echo "$f=$(cat /sys/block/nvme0n1/queue/$f)"; done'

step "zone size 96 KiB (not a power of two): ng0n1 only, no disk"
"$UCMD" --ctrl "$T/np2" create-ctrl --zns --nsze=1152 --zone-size=96K >/dev/null ||
	fail "create-ctrl --zns --zone-size=96K"
got=$(X "$T/np2" "$exists")
want="/dev/ng0n1 yes
/dev/nvme0n1 no
/sys/block/nvme0n1 no
/sys/class/nvme-generic/ng0n1 yes"
[ "$got" = "$want" ] || fail "non-power-of-two zones: got
$got"

step "zone size 64 KiB: a host-managed disk with Linux's queue limits"
"$UCMD" --ctrl "$T/p2" create-ctrl --zns --nsze=2048 --zone-size=64K --max-open=2 \
	--max-active=3 --zasl=2 >/dev/null || fail "create-ctrl --zns --zone-size=64K"
got=$(X "$T/p2" "$exists")
want="/dev/ng0n1 yes
/dev/nvme0n1 yes
/sys/block/nvme0n1 yes
/sys/class/nvme-generic/ng0n1 yes"
[ "$got" = "$want" ] || fail "power-of-two zones: got
$got"
got=$(X "$T/p2" "$queue")
# 64 KiB zones of 512-byte blocks: 128 sectors, 16 zones; ZASL 2: 16 KiB
want="zoned=host-managed
chunk_sectors=128
nr_zones=16
max_open_zones=2
max_active_zones=3
zone_append_max_bytes=16384"
[ "$got" = "$want" ] || fail "zoned queue limits: got
$got"

step "no open/active limit: 0, as Linux says it; append capped by the zone"
"$UCMD" --ctrl "$T/nl" create-ctrl --zns --nsze=4096 --zone-size=256K >/dev/null ||
	fail "create-ctrl --zns --zone-size=256K"
got=$(X "$T/nl" "$queue")
want="zoned=host-managed
chunk_sectors=512
nr_zones=8
max_open_zones=0
max_active_zones=0
zone_append_max_bytes=262144"
[ "$got" = "$want" ] || fail "unlimited zoned queue limits: got
$got"

step "an NVM namespace: zoned none, every zone limit 0"
"$UCMD" --ctrl "$T/nvm" create-ctrl >/dev/null || fail "create-ctrl"
got=$(X "$T/nvm" "$queue")
want="zoned=none
chunk_sectors=0
nr_zones=0
max_open_zones=0
max_active_zones=0
zone_append_max_bytes=0"
[ "$got" = "$want" ] || fail "NVM queue limits: got
$got"
echo "ok"
