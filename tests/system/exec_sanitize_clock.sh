#!/usr/bin/env bash
# A sanitize keeps to the wall clock as a powered device does, whatever
# happens to the software that holds the controller: `ucmd exec`'s daemon
# is killed right after Debian's nvme-cli started an overwrite of the 1 GiB
# namespace; once the log's estimate for it has passed, the very next
# look (a new daemon, one `nvme sanitize-log`) finds it completed and the
# pattern on the media. The test waits more than the estimate and asserts
# states only: a slow machine waits longer, never less.
source "$(dirname "$0")/lib/common.sh"
dir=$T
ctrl="$dir/ctrl"
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme python3 setsid

X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@" 2>"$dir/err"; }
# the sanitize object of the state file
state() { python3 -c "import json; s=json.load(open('$ctrl/ctrl.json'))['sanitize']; print($1)"; }

step "a fresh controller, an overwrite started, its daemon killed"
"$UCMD" --ctrl "$ctrl" create-ctrl >/dev/null || fail "ucmd create-ctrl $ctrl"
setsid "$UCMD" exec --ctrl "$ctrl" -- nvme sanitize /dev/nvme0 -a 3 -n 1 -p 0x5a5a5a5a \
	>"$dir/san.out" 2>&1 &
pid=$!
for _ in $(seq 1 400); do
	[ "$(state 's["sstat"] & 7' 2>/dev/null)" = 2 ] && break
	sleep 0.05
done
[ "$(state 's["sstat"] & 7')" = 2 ] || fail "the sanitize never showed in progress: $(cat "$dir/san.out")"
dpid=$(cat "$ctrl/ctrl.pid")
kill -KILL "$dpid" 2>/dev/null || true
kill -KILL -- "-$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
while kill -0 "$dpid" 2>/dev/null; do sleep 0.05; done
r=$(state '(s["sstat"] & 7, s["start_rt_ms"] > 0)')
[ "$r" = "(2, True)" ] || fail "after the kill the state says $r, expected in progress with its start"

step "past the estimate (1 s for 1 GiB), one look: completed"
sleep 2
X nvme sanitize-log /dev/nvme0 -o json >"$dir/log.json" || fail "sanitize-log: $(cat "$dir/err")"
r=$(python3 -c "import json; d=json.load(open('$dir/log.json'))['nvme0']; print(d['sstat']['status'][:3], d['sprog'], d['sstat']['no_cmplted_passes'])")
[ "$r" = "(1) 65535 1" ] || fail "the first look after the estimate: $r (status, sprog, passes), expected completed"
X nvme read /dev/nvme0n1 -s 2097144 -c 7 -z 4096 -d "$dir/r.bin" >/dev/null || fail "read: $(cat "$dir/err")"
python3 -c "import sys; b=open('$dir/r.bin','rb').read(); sys.exit(0 if b == bytes([0x5a]) * 4096 else 1)" ||
	fail "the last blocks do not hold the pattern: $(xxd "$dir/r.bin" | head -2)"
echo "exec_sanitize_clock: all checks passed"
