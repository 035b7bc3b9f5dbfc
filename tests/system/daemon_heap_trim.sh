#!/usr/bin/env bash
# ucmdd keeps the heap its ring threads free (mallopt M_TRIM_THRESHOLD in
# ucmdd.c): a ring thread allocates a bounce buffer per request and frees
# it at completion, and with glibc's default trim threshold a pass of many
# 4 KiB reads ended in an madvise(MADV_DONTNEED) of the arena's top, a TLB
# shootdown on every CPU, then page faults to fill it again. Counted by
# strace on ucmdd while fio's batch-8 job under `ucmd exec` reads plain
# memory (every read bounced), whose submits leave passes of many SQEs:
# thousands of passes, and ucmdd may madvise only a handful of times
# (thread stacks, arenas), not per pass (333 in such a run before).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
need_tools fio strace

daemon_start --ram 64M
strace -f -qq -e trace=madvise -c -o "$T/strace.txt" -p "$DPID" &
st=$!
STARTED_PIDS+=("$st")
# strace says nothing when it is attached: give it the moment it takes
sleep 1

step "fio batch-8 randread under exec, 2 s, ucmdd traced"
(cd "$T" && timeout -k 5 120 "$UCMD" exec --daemon "$SOCK" -- fio --name=t --rw=randread \
	--ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --bs=4k --size=32M \
	--iodepth=32 --iodepth_batch_submit=8 --iodepth_batch_complete_min=8 --time_based \
	--runtime=2 --output-format=terse --terse-version=3) >"$T/fio.txt" ||
	fail "fio failed: $(tail -3 "$T/fio.txt")"
kill -INT "$st"
wait "$st" || true
# terse v3: field 6 is the read I/O in KiB
kib=$(cut -d';' -f6 "$T/fio.txt")
calls=$(awk '$NF == "madvise" { print $4 }' "$T/strace.txt")
calls=${calls:-0}
echo "reads: $((kib / 4)), ucmdd madvise calls: $calls"
[ "$((kib / 4))" -ge 2000 ] || fail "too few reads to judge: $((kib / 4))"
[ "$calls" -le 20 ] || { cat "$T/strace.txt"; fail "ucmdd made $calls madvise calls: its heap is trimmed per pass"; }
daemon_stop
echo "ok"
