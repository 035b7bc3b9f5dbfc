#!/usr/bin/env bash
# Who may connect to ucmdd by default: as with a device node, the socket's
# owner, group and mode. Without options it is ucmdd's user's alone (0600):
# an unprivileged user cannot connect, so cannot open a namespace O_RDWR;
# --socket-group GROUP makes it 0660 of GROUP, whose members connect and
# get Linux's default rules, while a user outside the group still cannot;
# a mode that lets everyone connect (--socket-mode 0666) is refused
# without a --policy.
source "$(dirname "$0")/lib/daemon.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
cp tests/system/ucmdd_proto.py "$T/"
chmod 0644 "$T/ucmdd_proto.py"
G=64123		# a group no test user is in unless given it

# open ng0n1 O_RDWR as the caller: prints "connect-refused", or the OPEN's result
try_open() {	# setpriv args...
	timeout -k 5 60 setpriv "$@" --inh-caps=-all -- "$PY" - "$SOCK" <<'PY'
import os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
from ucmdd_proto import Client
try:
    c = Client(sys.argv[1])
except PermissionError:
    print("connect-refused")
    sys.exit(0)
print("open", c.open("ng0n1", os.O_RDWR))
PY
}

step "default: the socket is ucmdd's user's, 0600; nobody cannot connect"
daemon_start --ctrl "$T/ctrl"
st=$(stat -c '%a %u' "$SOCK")
[ "$st" = "600 0" ] || fail "socket mode/owner: $st"
out=$(try_open --reuid 65534 --regid 65534 --clear-groups)
[ "$out" = connect-refused ] || fail "nobody, default socket: $out"
out=$(try_open --reuid 0 --regid 0 --keep-groups)
[[ "$out" =~ ^open\ [0-9]+$ ]] || fail "root, default socket: $out"
daemon_stop

step "--socket-group: 0660, members connect and open O_RDWR; others still cannot"
daemon_start --ctrl "$T/ctrl" --socket-group "$G"
st=$(stat -c '%a %u %g' "$SOCK")
[ "$st" = "660 0 $G" ] || fail "socket mode/owner/group: $st"
out=$(try_open --reuid 65534 --regid 65534 --clear-groups)
[ "$out" = connect-refused ] || fail "nobody outside the group: $out"
out=$(try_open --reuid 65534 --regid 65534 --groups "$G")
[[ "$out" =~ ^open\ [0-9]+$ ]] || fail "nobody in the group: $out"
daemon_stop

step "a socket everyone may connect to needs a policy"
rc=0; "$UCMDD" --ctrl "$T/ctrl" --socket "$SOCK" --socket-mode 0666 --foreground \
	2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "needs a --policy" "$T/err" || fail "0666 without a policy: rc $rc $(cat "$T/err")"
[ ! -e "$SOCK" ] || fail "socket left by a refused start"
for bad in 1777 888 x -1 ""; do
	rc=0; "$UCMDD" --ctrl "$T/ctrl" --socket "$SOCK" --socket-mode "$bad" 2>"$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "--socket-mode '$bad': rc $rc"
done
rc=0; "$UCMDD" --ctrl "$T/ctrl" --socket "$SOCK" --socket-group no-such-group-here 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "no such group" "$T/err" || fail "--socket-group unknown: rc $rc"
daemon_start --ctrl "$T/ctrl" "${ANY_USER[@]}"
[ "$(stat -c %a "$SOCK")" = 666 ] || fail "--socket-mode 0666 with a policy: $(stat -c %a "$SOCK")"
out=$(try_open --reuid 65534 --regid 65534 --clear-groups)
[[ "$out" =~ ^open\ [0-9]+$ ]] || fail "nobody, 0666 with a policy: $out"
daemon_stop
echo "socket access: ok"
