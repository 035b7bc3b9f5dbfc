#!/usr/bin/env bash
# ucmd-supervise makes a program's opens with its own credentials, root and
# mount namespace: the ones the program started with. A program that drops
# them (util-linux's setpriv, as a root service drops to a user) must not
# have its files opened with the rights it gave up: such an open is EACCES,
# never made with the supervisor's. Where Linux refuses the file to that
# user, so does exec; what the program reached before it changed them it
# still reaches.
source "$(dirname "$0")/lib/common.sh"
need_tools setpriv cat
[ "$(id -u)" = 0 ] || skip "needs root (setpriv --reuid)"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
echo "ucmd-secret-$$" >"$T/secret"
chmod 600 "$T/secret"
chmod 755 "$T"
DROP=(setpriv --reuid=65534 --regid=65534 --clear-groups)

step "Linux: the dropped user cannot read the root-only file"
if "${DROP[@]}" cat "$T/secret" >/dev/null 2>&1; then
	fail "setpriv's user read a 0600 root file outside exec: the test's premise is wrong"
fi

step "under exec: root reads it, the dropped user's program does not"
out=$(ex cat "$T/secret" 2>&1) || fail "root cat under exec: $out"
[ "$out" = "ucmd-secret-$$" ] || fail "root cat under exec: '$out'"
out=$(ex "${DROP[@]}" cat "$T/secret" 2>&1) && fail "the dropped user's cat succeeded: '$out'"
grep -q "ucmd-secret" <<<"$out" && fail "the dropped user read the root-only file under exec: '$out'"

step "a thread that keeps its credentials still opens as before"
out=$(ex setpriv --inh-caps=-all cat "$T/secret" 2>&1) || fail "setpriv without a uid change: $out"
[ "$out" = "ucmd-secret-$$" ] || fail "setpriv without a uid change: '$out'"
echo "ok"
