#!/usr/bin/env bash
# Kill during zone appends: a writer records each append's LBA only after
# `ucmd zns zone-append` printed it (acknowledged); the writer and the ucmd
# in flight are SIGKILLed at a random moment. A new process then finds every
# acknowledged block at the LBA it was acknowledged at, a write pointer past
# all of them, and the next append exactly there: no acknowledged append is
# lost or overwritten, and the write pointer survived as the data did.
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"
unset UCMD_DAEMON
[ -x "$UCMD" ] || fail "no $UCMD: build first"

# 4 zones of 2000 blocks (not a power of two), appends go to zone 1 (LBA 2000)
"$UCMD" create-ctrl --zns --nsze=8000 --zone-size=1024000 >/dev/null || fail "create-ctrl --zns"
block() { { yes "append $1 " || true; } | head -c 512; }

writer() {
	local i=0 out
	while :; do
		block "$i" > "$dir/w.bin"
		out=$("$UCMD" zns zone-append -s 2000 -z 512 -d "$dir/w.bin" 2>/dev/null)
		echo "$i ${out##* }" >> "$dir/acked"
		i=$((i + 1))
	done
}
: > "$dir/acked"
setsid bash -c "$(declare -f writer block); UCMD='$UCMD' dir='$dir' writer" &
pid=$!
for _ in $(seq 200); do
	[ "$(wc -l < "$dir/acked")" -ge 20 ] && break
	sleep 0.1
done
sleep 0.$((RANDOM % 10))
kill -KILL -- -"$pid" 2>/dev/null || kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
n=$(wc -l < "$dir/acked")
[ "$n" -ge 20 ] || fail "only $n appends acknowledged before the kill"
echo "killed after $n acknowledged appends"

# a new process: the zone's write pointer is past every acknowledged LBA
wp=$("$UCMD" -o json zns report-zones | python3 -c '
import json,sys; print(json.load(sys.stdin)["zone_list"][1]["wp"])')
max=0
while read -r i hex; do
	lba=$((16#$hex))
	[ "$lba" -ge 2000 ] && [ "$lba" -lt 4000 ] || fail "append $i acknowledged at LBA $lba, outside zone 1"
	[ "$lba" -gt "$max" ] && max=$lba
	block "$i" > "$dir/want.bin"
	"$UCMD" read -s "$lba" -c 0 -d "$dir/got.bin" 2>/dev/null
	cmp -s "$dir/want.bin" "$dir/got.bin" || fail "acknowledged append $i at LBA $lba lost"
done < "$dir/acked"
[ "$wp" -gt "$max" ] || fail "write pointer $wp is not past the last acknowledged append ($max)"
# at most the one append in flight at the kill may have landed unacknowledged
[ "$wp" -le $((max + 2)) ] || fail "write pointer $wp, more than one append past $max"
block next > "$dir/w.bin"
out=$("$UCMD" zns zone-append -s 2000 -z 512 -d "$dir/w.bin") || fail "append after the kill"
[ "$((16#${out##* }))" -eq "$wp" ] || fail "append after the kill at ${out##* }, write pointer was $wp"
echo "cli_zns_crash: all $n acknowledged appends survived, write pointer $wp"
