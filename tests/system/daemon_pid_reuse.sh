#!/usr/bin/env bash
# ucmdd and pid reuse: a client (nobody) connects, forks a child that keeps
# the socket, and exits; a root process holding a secret then takes its pid
# (ns_last_pid, in a PID namespace of this test's own: unshare -p -f
# --mount-proc, ucmdd and every process inside it). The child's commands
# name the root process's addresses (tests/system/ucmdd_mm_attack.py
# pidreuse): the secret must neither reach the namespace nor be
# overwritten, and the client must be cut off: its memory was the exited
# process's, never whatever has its pid now.
set -euo pipefail
if [ "${UCMD_PID_NS:-}" != 1 ]; then
	[ "$(id -u)" = 0 ] || { echo "FAIL: runs as root (a PID namespace, setpriv)"; exit 1; }
	command -v unshare >/dev/null || { echo "FAIL: unshare is missing (util-linux)"; exit 1; }
	exec env UCMD_PID_NS=1 unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib/daemon.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
CC=${CC:-cc}
[ -w /proc/sys/kernel/ns_last_pid ] || fail "no writable /proc/sys/kernel/ns_last_pid"
cp tests/system/ucmdd_proto.py tests/system/ucmdd_mm_attack.py "$T/"
chmod 0644 "$T"/*.py

"$CC" -O1 -o "$T/secret_holder" tests/system/secret_holder.c

daemon_start --ctrl "$T/ctrl" "${ANY_USER[@]}"
S=$T/state
mkdir -m 1777 "$S"
mkfifo "$S/vin"
exec 7<>"$S/vin"	# the victim's stdin, held open: it starts at once, reads when told
wait_file() {
	for _ in $(seq 600); do [ -s "$1" ] && return 0; sleep 0.1; done
	cat "$T/attack.out"
	fail "no $1"
}

step "a client connects, keeps its socket in a child, and exits"
as_user 65534 timeout -k 5 120 "$PY" "$T/ucmdd_mm_attack.py" pidreuse "$SOCK" "$S" \
	>"$T/attack.out" 2>&1 &
wait_file "$S/pid"
P=$(cat "$S/pid")
for _ in $(seq 600); do [ -e "/proc/$P" ] || break; sleep 0.1; done
[ -e "/proc/$P" ] && fail "the client (pid $P) did not exit"

step "a root process takes pid $P"
vp=
for _ in $(seq 50); do
	echo $((P - 1)) >/proc/sys/kernel/ns_last_pid
	"$T/secret_holder" <&7 >"$S/victim.out" &
	vp=$!
	[ "$vp" = "$P" ] && break
	kill "$vp"; wait "$vp" || true
done
[ "$vp" = "$P" ] || fail "no root process took pid $P"
wait_file "$S/victim.out"
read -r vpid veuid vaddr <"$S/victim.out"
[ "$vpid" = "$P" ] && [ "$veuid" = 0 ] || fail "victim: $(cat "$S/victim.out")"
echo "$vpid $vaddr" >"$S/victim.tmp"
mv "$S/victim.tmp" "$S/victim"

step "the client's child names the root process's memory"
wait_file "$S/done"
echo >&7
vrc=0
wait "$vp" || vrc=$?
# The victim's own account of its page, or what became of it: renamed into
# place whole, since the client's child reads it the moment it exists.
v=$(sed -n 2p "$S/victim.out")
[ -n "$v" ] || v="none: the victim (pid $P) exited with status $vrc without a verdict"
echo "$v" >"$S/verdict.tmp"
mv "$S/verdict.tmp" "$S/verdict"
wait_file "$S/rc"
cat "$T/attack.out"
[ "$(cat "$S/rc")" = 0 ] || fail "pid reuse attack: rc $(cat "$S/rc")"
daemon_alive
daemon_stop
echo "pid reuse: ok"
