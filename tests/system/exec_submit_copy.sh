#!/usr/bin/env bash
# fio under `ucmd exec` on rings whose submit copies the program's SQEs
# into ucmdd's SQ and returns at once (UCMDD_QI_SUBMIT_COPY, docs/daemon.md):
# fio reuses an SQE slot as soon as its enter returns, so a copy taken late
# or twice would show as wrong data. Debian's fio io_uring_cmd engine,
# without SQPOLL (the copying path), QD32: a random write + verify with
# fio's defaults (one SQE per enter) and with batches of 8, two job
# processes on one ucmdd. Then clients killed in the middle of their
# submits (SIGKILL every few hundred ms of a busy run, 10 rounds): ucmdd
# stays up, its descriptors and threads come back to their count before,
# and a verify pass afterwards still finds the data.
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
need_tools fio

daemon_start --ram 64M

X() { (cd "$T" && timeout -k 5 300 "$UCMD" exec --daemon "$SOCK" -- "$@"); }
# total errors and I/O of every job in fio's JSON
io_of() { python3 -c '
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])
print(sum(x["error"] for x in j["jobs"]), sum(x[sys.argv[2]]["total_ios"] for x in j["jobs"]))' "$@"; }

CMD=(--ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --bs=4k --size=8M
     --numjobs=2 --offset_increment=8M --iodepth=32 --verify=crc32c --output-format=json)

step "fio's defaults: randwrite + verify, QD32, 2 job processes"
X fio --name=d --rw=randwrite "${CMD[@]}" --output="$T/d.json" ||
	fail "fio failed: $(tail -5 "$T/d.json" 2>/dev/null)"
read -r err ios < <(io_of "$T/d.json" read)
[ "$err" = 0 ] && [ "$ios" = 4096 ] || fail "default job: errors $err, $ios blocks verified (want 4096)"

step "batches of 8 submitted and reaped: randwrite + verify at another offset"
X fio --name=b --rw=randwrite "${CMD[@]}" --offset=16M --iodepth_batch_submit=8 \
	--iodepth_batch_complete_min=8 --output="$T/b.json" ||
	fail "fio failed: $(tail -5 "$T/b.json" 2>/dev/null)"
read -r err ios < <(io_of "$T/b.json" read)
[ "$err" = 0 ] && [ "$ios" = 4096 ] || fail "batch job: errors $err, $ios blocks verified (want 4096)"

step "clients killed mid-submit, 10 rounds"
fds0=$(proc_fds "$DPID")
thr0=$(proc_status "$DPID" Threads)
for i in $(seq 10); do
	( cd "$T" && exec setsid "$UCMD" exec --daemon "$SOCK" -- fio --name="k$$-$i" --rw=randread \
		--ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --bs=4k --size=32M \
		--iodepth=32 --iodepth_batch_submit=$(( i % 2 ? 1 : 8 )) --time_based --runtime=30 \
		>/dev/null 2>&1 ) &
	k=$!
	STARTED_PIDS+=("$k")
	sleep "0.$(( 2 + i % 5 ))"
	# the whole session: ucmd exec, its supervisor and fio; fio's job
	# process is a session of its own (fio calls setsid), so it is found
	# by its job name
	kill -KILL -- "-$k" 2>/dev/null || kill -KILL "$k"
	pkill -KILL -f -- "--name=k$$-$i " || true
	wait "$k" 2>/dev/null || true
	daemon_alive
done
# the daemon frees a dead client's rings when it sees the hang-up: give it a moment
for _ in $(seq 100); do
	[ "$(proc_fds "$DPID")" = "$fds0" ] && [ "$(proc_status "$DPID" Threads)" = "$thr0" ] && break
	sleep 0.1
done
[ "$(proc_fds "$DPID")" = "$fds0" ] || fail "ucmdd fds $(proc_fds "$DPID"), $fds0 before the kills"
[ "$(proc_status "$DPID" Threads)" = "$thr0" ] ||
	fail "ucmdd threads $(proc_status "$DPID" Threads), $thr0 before the kills"

step "after the kills: a verify pass still finds the data the first job wrote"
X fio --name=d --rw=randwrite --verify_only=1 "${CMD[@]}" --output="$T/v.json" ||
	fail "verify-only pass failed"
read -r err ios < <(io_of "$T/v.json" read)
[ "$err" = 0 ] && [ "$ios" = 4096 ] || fail "verify-only: errors $err, $ios blocks read"
daemon_stop
echo "ok"
