#!/usr/bin/env bash
# ucmdd never reaches memory, or capabilities, that are not its client's
# own (tests/system/ucmdd_mm_attack.py drives each attack as nobody):
#   exec     a client connects, forks a child that keeps the socket and
#            exec's a set-user-ID root program that holds a secret; the
#            child's commands name the program's addresses: the secret must
#            neither reach the namespace (an NVMe Write from it) nor be
#            overwritten (Identify into it), and the client is cut off.
#   filecap  a client connects while ucmdd is stopped (the accept delayed),
#            exec's a program with the file capability cap_sys_admin+ep,
#            and the child sends Format NVM once ucmdd runs: it must not run
#            with the program's capability.
# Pid reuse (a root process taking the pid of a client that exited) is
# daemon_pid_reuse.sh. Both helpers are built here: a C secret holder made
# set-user-ID root, and a copy of sleep(1) given a file capability (setcap,
# libcap2-bin).
source "$(dirname "$0")/lib/daemon.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
command -v setcap >/dev/null || fail "setcap is missing (libcap2-bin)"
CC=${CC:-cc}

cp tests/system/ucmdd_proto.py tests/system/ucmdd_mm_attack.py "$T/"
chmod 0644 "$T"/*.py

step "helpers: a set-user-ID root secret holder, a cap_sys_admin+ep program"
"$CC" -O1 -o "$T/secret_holder" tests/system/secret_holder.c
chown root:root "$T/secret_holder"
chmod 4755 "$T/secret_holder"
cp "$(command -v sleep)" "$T/cap_sleep"
setcap cap_sys_admin+ep "$T/cap_sleep"

daemon_start --ctrl "$T/ctrl" "${ANY_USER[@]}"

mkdir -m 1777 "$T/state"
# The answer of an attack's child (its parent became another program): bounded wait.
child_rc() {	# file
	for _ in $(seq 600); do [ -s "$1" ] && break; sleep 0.1; done
	cat "$1" 2>/dev/null || echo none
}

step "exec: a set-user-ID root program's memory, named by a child of the client"
as_user 65534 timeout -k 5 120 "$PY" "$T/ucmdd_mm_attack.py" exec "$SOCK" "$T/secret_holder" \
	"$T/state/exec.rc" >"$T/exec.out" 2>&1 || true	# the helper's status: the child's is exec.rc
rc=$(child_rc "$T/state/exec.rc")
cat "$T/exec.out"	# after the answer: the child says what happened before it answers
[ "$rc" = 0 ] || fail "exec attack: rc $rc"
daemon_alive

step "filecap: Format NVM with the capability of a program exec'd before the accept"
kill -STOP "$DPID"
timeout -k 5 120 setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all -- \
	"$PY" "$T/ucmdd_mm_attack.py" filecap "$SOCK" "$T/cap_sleep" \
	"$T/state/ready" >"$T/filecap.out" 2>&1 &
apid=$!
for _ in $(seq 600); do [ -e "$T/state/ready" ] && break; kill -0 "$apid" 2>/dev/null || break; sleep 0.1; done
kill -CONT "$DPID"
{ wait "$apid"; } 2>/dev/null || true	# the connecting process, killed by its child at the end
rc=$(child_rc "$T/state/rc")
cat "$T/filecap.out"
[ "$rc" = 0 ] || fail "file-capability attack: rc $rc"
daemon_alive

step "nobody without any of that is still served"
client 65534 rw --slba 0 --nlb 8 --count 4 --seed 1 >"$T/rw.out" 2>&1 || { cat "$T/rw.out"; fail "plain client"; }
daemon_stop
echo "client memory and capabilities: ok"
