#!/usr/bin/env bash
# Errors that name their cause, once: a controller directory that is 0700 and
# someone else's is "permission denied", not "no controller there" (ucmd and
# ucmd exec); ucmd exec --ctrl nvme-tcp://... says what --ctrl takes; a
# failed open does not print the same error twice.
source "$(dirname "$0")/lib/common.sh"
need_root "a controller directory of another user (as_nobody)"
unset UCMD_DAEMON UCMD_CTRL
U=$(shared "$B/tools/ucmd")

"$UCMD" --ctrl "$T/ctrl" create-ctrl --nsze 2048 >/dev/null
chmod 0700 "$T/ctrl"

step "ucmd: someone else's 0700 directory is permission denied, said once"
rc=0; as_nobody "$U" --ctrl "$T/ctrl" id-ctrl >"$T/out" 2>"$T/err" || rc=$?
[[ $rc == 1 ]] || fail "exit $rc, not 1"
grep -q "permission denied" "$T/err" || fail "no 'permission denied': $(cat "$T/err")"
grep -q "no controller there" "$T/err" && fail "said no controller there: $(cat "$T/err")"
[[ $(wc -l <"$T/err") == 1 ]] || fail "not one line: $(cat "$T/err")"

step "ucmd exec: the same"
rc=0; as_nobody "$U" exec --ctrl "$T/ctrl" -- true 2>"$T/err" || rc=$?
[[ $rc == 2 ]] || fail "exec exit $rc, not 2"
grep -q "permission denied" "$T/err" || fail "exec: no 'permission denied': $(cat "$T/err")"
grep -q "no controller there" "$T/err" && fail "exec said no controller there: $(cat "$T/err")"

step "ucmd exec --ctrl nvme-tcp://: what --ctrl takes"
rc=0; "$UCMD" exec --ctrl nvme-tcp://127.0.0.1:1/nqn.2014-08.org.example:x -- true \
	2>"$T/err" || rc=$?
[[ $rc == 2 ]] || fail "exit $rc, not 2"
grep -q "takes a controller directory" "$T/err" || fail "does not say what it takes: $(cat "$T/err")"
grep -q "no controller there" "$T/err" && fail "said no controller there: $(cat "$T/err")"

step "an open refused with a cause: the cause, then the errno once"
mkdir "$T/bad" && echo '{' >"$T/bad/ctrl.json"
rc=0; "$UCMD" --ctrl "$T/bad" id-ctrl >/dev/null 2>"$T/err" || rc=$?
(( rc != 0 )) || fail "a broken ctrl.json opened"
grep -q "not valid JSON" "$T/err" || fail "the cause is not said: $(cat "$T/err")"
(( $(grep -cE '\(-[0-9]+\)$' "$T/err") <= 1 )) || fail "the errno twice: $(cat "$T/err")"
echo "ok"
