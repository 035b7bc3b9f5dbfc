#!/usr/bin/env bash
# Per-uid quotas and the reserve: one unprivileged user holding as many
# connections or devices as it can does not lock anyone else out, root
# least of all. Under the defaults, a user's 256 connections or 64 x 64
# devices (which filled the daemon's tables) stop at its quota with EDQUOT
# and root still connects and works. With --limit, each quota (conns, fds,
# rings, regions) answers EDQUOT; what the unprivileged users hold together
# stops short of the reserve (EUSERS, ENFILE) while root still gets in; and
# a connection that never holds anything is closed after --idle-timeout.
source "$(dirname "$0")/lib/daemon.sh"

U=64071
CTRL=$T/ctrl
ulimit -n 8192

root_works() {	# what
	local out rc=0
	out=$(client 0 rw --slba 0 --nlb 8 --count 4 --seed 7 2>&1) || rc=$?
	[ "$rc" = 0 ] || fail "root refused ($1): exit $rc: $out"
}

# Run a hostile check as uid in the background holding what it got; its first line.
hold() {	# uid outfile args...
	local u=$1 out=$2; shift 2
	setpriv --reuid "$u" --regid "$u" --clear-groups --inh-caps=-all -- \
		"$CLIENT" hostile "$@" --stall-ms 60000 --daemon "$SOCK" >"$out" 2>&1 &
	STARTED_PIDS+=("$!")
	for _ in $(seq 600); do
		[ -s "$out" ] && break
		sleep 0.1
	done
	[ -s "$out" ] || fail "hostile $* printed nothing"
}
# The holders killed; the daemon sees them go (the sleep) and gives their share back.
release() {
	for p in "${STARTED_PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	STARTED_PIDS=()
	sleep 2
}

daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"

step "defaults: one user's 300 connections stop at 32, EDQUOT; root still works"
hold "$U" "$T/c.out" conns --count 300
grep -qx "conns: 32 EDQUOT" "$T/c.out" || fail "connections of one user: $(cat "$T/c.out")"
root_works "beside one user's connections"
release

step "defaults: one user's 4096 devices stop at 512, EDQUOT; root still works"
hold "$U" "$T/f.out" fds --count 4096
grep -qx "fds: 512 EDQUOT" "$T/f.out" || fail "devices of one user: $(cat "$T/f.out")"
root_works "beside one user's devices"
release
daemon_stop

# No --idle-timeout here: a holder opening 100 connections on a loaded machine
# may take longer than a short one, which would close its first ones.
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}" --limit conns=100,fds=2000,rings=3,regions=2

step "--limit: rings and regions stop at the user's quota"
out=$(client "$U" hostile rings --count 10 --stall-ms 0)
grep -qx "rings: 3 EDQUOT" <<<"$out" || fail "rings: $out"
out=$(client "$U" hostile regions --count 10 --stall-ms 0)
grep -qx "regions: 2 EDQUOT" <<<"$out" || fail "regions: $out"

step "what everyone but root holds stops short of the reserve: EUSERS, ENFILE"
hold "$U" "$T/c1.out" conns --count 100
hold "$((U + 1))" "$T/c2.out" conns --count 100
hold "$((U + 2))" "$T/c3.out" conns --count 100
grep -qx "conns: 100 OK" "$T/c1.out" || fail "first user: $(cat "$T/c1.out")"
grep -qx "conns: 100 OK" "$T/c2.out" || fail "second user: $(cat "$T/c2.out")"
grep -qx "conns: 40 EUSERS" "$T/c3.out" || fail "third user: $(cat "$T/c3.out")"
root_works "with 240 connections of others"
release
hold "$U" "$T/f1.out" fds --count 2000
hold "$((U + 1))" "$T/f2.out" fds --count 2000
grep -qx "fds: 2000 OK" "$T/f1.out" || fail "first user: $(cat "$T/f1.out")"
grep -qx "fds: 1840 ENFILE" "$T/f2.out" || fail "second user: $(cat "$T/f2.out")"
root_works "with 3840 devices of others"
release

step "a refused client learns why: ucmd_engine_connect says EDQUOT"
hold "$U" "$T/c4.out" conns --count 100
out=$(client "$U" expect-errno read 2>&1 || true)
grep -q "EDQUOT" <<<"$out" || fail "the refused client's errno: $out"
# the CLI as the user: a copy it can reach (the checkout may be 0700)
out=$(as_user "$U" timeout 60 "$(shared "$UCMD")" --daemon "$SOCK" list 2>&1 || true)
grep -q "Disk quota exceeded (this user holds as many connections" <<<"$out" ||
	fail "the refused CLI's message: $out"
release
daemon_stop

daemon_start --ctrl "$CTRL" "${ANY_USER[@]}" --idle-timeout 2
step "a connection that never holds anything is closed after --idle-timeout"
out=$(client "$U" hostile idle --seconds 6)
[ "$out" = closed ] || fail "an idle connection stayed: $out"
daemon_stop
echo "daemon_quota: per-uid quotas hold, root always gets in"
