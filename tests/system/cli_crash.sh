#!/usr/bin/env bash
# Kill during writes: a writer acknowledges each FUA write only after ucmd
# returned success; the writer (and the ucmd in flight, if the kill lands
# inside one) is SIGKILLed at a random moment. A new process then finds the controller as it was
# (config, namespace) and every acknowledged block intact.
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"

"$UCMD" list >/dev/null
block() { { yes "block $1 " || true; } | head -c 512; }

writer() {
	local i=0
	while :; do
		block "$i" > "$dir/w.bin"
		"$UCMD" write -s "$((i * 7))" -c 0 -f -d "$dir/w.bin" 2>/dev/null
		echo "$i" >> "$dir/acked"
		i=$((i + 1))
	done
}
: > "$dir/acked"
setsid bash -c "$(declare -f writer block); UCMD='$UCMD' dir='$dir' writer" &
pid=$!
# let it get some writes done, then kill it wherever it is
for _ in $(seq 100); do
	[ "$(wc -l < "$dir/acked")" -ge 20 ] && break
	sleep 0.1
done
sleep 0.$((RANDOM % 10))
kill -KILL -- -"$pid" 2>/dev/null || kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
n=$(wc -l < "$dir/acked")
[ "$n" -ge 20 ] || fail "only $n writes acknowledged before the kill"
echo "killed after $n acknowledged writes"

# a new process: the controller and its namespace are there, data intact
"$UCMD" list -o json | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["Devices"][0]["MaximumLBA"] == 2097152, d'
while read -r i; do
	block "$i" > "$dir/want.bin"
	"$UCMD" read -s "$((i * 7))" -c 0 -d "$dir/got.bin"
	cmp -s "$dir/want.bin" "$dir/got.bin" || fail "acknowledged block $i lost"
done < "$dir/acked"
echo "cli_crash: all $n acknowledged writes survived"
