#!/usr/bin/env bash
# A ring costs the daemon CPU only while it works, unless it is a SQPOLL
# ring the policy allowed, within its user's budget (--limit sqpoll=N).
# A client rings the doorbells of 16 idle rings with sq_thread_idle 100 ms
# every 50 ms for 2 s: ucmdd's CPU time over that run (utime + stime from
# /proc/PID/stat) stays under 0.5 s for rings without SQPOLL, for SQPOLL
# rings beyond the budget, and for SQPOLL rings the policy refuses (each
# proxy spun 100 ms per doorbell before, about 4 s of CPU on two cores).
source "$(dirname "$0")/lib/daemon.sh"

U=64081
TICK=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$DPID/stat"; }

# The daemon's CPU seconds while a hostile idle-rings check runs; its output in $T/out.
idle_cpu() {	# check
	local before after
	before=$(cpu_ticks)
	client "$U" hostile "$1" --count 16 --seconds 2 >"$T/out" || fail "$1: the client failed"
	after=$(cpu_ticks)
	python3 -c "print('%.2f' % (($after - $before) / $TICK))"
}

under() { python3 -c "import sys; sys.exit(0 if $1 < $2 else 1)"; }

cat > "$T/policy.ini" <<INI
[policy]
inherit = default

[rule]
hook = sqpoll
uid = $U
action = deny
INI

daemon_start --ram 64M "${ANY_USER[@]}"
step "16 idle rings without SQPOLL, rung every 50 ms"
s=$(idle_cpu idle-rings)
grep -qx "rings: 16" "$T/out" || fail "rings: $(cat "$T/out")"
echo "ucmdd CPU: $s s"
under "$s" 0.5 || fail "16 idle rings cost ucmdd $s s of CPU in 2 s"
daemon_stop

daemon_start --ram 64M "${ANY_USER[@]}" --limit sqpoll=0
step "16 idle SQPOLL rings beyond the user's budget (sqpoll=0)"
s=$(idle_cpu idle-rings-sqpoll)
grep -qx "rings: 16" "$T/out" || fail "SQPOLL rings: $(cat "$T/out")"
echo "ucmdd CPU: $s s"
under "$s" 0.5 || fail "16 idle SQPOLL rings over budget cost ucmdd $s s of CPU in 2 s"
daemon_stop

daemon_start --ram 64M --policy "$T/policy.ini" --socket-mode 0666
step "SQPOLL refused by the policy: no ring, no polling"
s=$(idle_cpu idle-rings-sqpoll)
grep -q "rings: 0, then" "$T/out" || fail "SQPOLL rings the policy refuses: $(cat "$T/out")"
echo "ucmdd CPU: $s s"
under "$s" 0.5 || fail "refused SQPOLL rings cost ucmdd $s s of CPU"
step "and its rings without SQPOLL still work"
s=$(idle_cpu idle-rings)
grep -qx "rings: 16" "$T/out" || fail "rings: $(cat "$T/out")"
under "$s" 0.5 || fail "16 idle rings cost ucmdd $s s of CPU in 2 s"
daemon_stop
echo "daemon_spin: idle rings cost the daemon no CPU"
