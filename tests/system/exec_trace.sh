#!/usr/bin/env bash
# UCMD_EXEC_TRACE=PATH, opened by root's preloaded program, must not be
# redirected by another user: a symlink nobody planted in a sticky
# world-writable directory (a /tmp of our own) is not followed and root's
# file stays unchanged; nobody's own file there, and a file with a second
# link, are not written to either; each refusal is said on stderr and the
# program runs on. A new file, and "1" (stderr), still get the trace lines.
# The lines come from a program with no daemon to reach: the preload
# traces "cannot connect to ucmdd".
set -euo pipefail
B=${UCMD_BUILD:-build}
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $*"; }
[ "$(id -u)" = 0 ] || fail "runs as root (root's program, nobody's symlink)"
PRELOAD=$(meson introspect "$B" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == "ucmd-preload" and t["type"] == "shared library":
        print(t["filename"][0]); break
')
[ -n "$PRELOAD" ] && [ -f "$PRELOAD" ] || fail "no libucmd-preload.so in $B"

T=$(mktemp -d /tmp/ucmd-trace.XXXXXX)
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all -- "$@"
}
shared=$T/shared	# like /tmp: root's, sticky, world-writable
mkdir "$shared"
chmod 1777 "$shared"
victim=$T/victim
printf 'root:secret\n' >"$victim"
chmod 0600 "$victim"
victim_sum=$(sha256sum "$victim")
victim_ok() { [ "$(sha256sum "$victim")" = "$victim_sum" ] || fail "root's file was written: $*"; }

# root's program under the preload, tracing to $1; stderr to $T/err
traced() {
	rm -rf "$T/root"
	UCMD_DAEMON=$T/no-daemon UCMD_EXEC_ROOT=$T/root UCMD_EXEC_TRACE=$1 LD_PRELOAD=$PRELOAD \
		timeout -k 5 60 cat /dev/nvme0n1 >/dev/null 2>"$T/err" || true
}
said() {	# what the stderr must say
	grep -qF "$1" "$T/err" || { cat "$T/err"; fail "stderr does not say '$1'"; }
}

step "a symlink planted by another user is not followed"
as_nobody ln -s "$victim" "$shared/trace"
traced "$shared/trace"
victim_ok "through nobody's symlink"
said "UCMD_EXEC_TRACE=$shared/trace: a symbolic link: not followed; not tracing"
said "No such file or directory"	# the program itself ran on

step "nor one in a private directory (the last component is never followed)"
ln -s "$victim" "$T/mylink"
traced "$T/mylink"
victim_ok "through root's own symlink"
said "a symbolic link: not followed"

step "another user's file in the sticky directory is not written to"
as_nobody touch "$shared/theirs"
traced "$shared/theirs"
[ ! -s "$shared/theirs" ] || fail "root's trace went into nobody's file"
said "another user's file in a directory others may write"

step "nor a file with a second link there"
ln "$victim" "$shared/hardlink"
traced "$shared/hardlink"
victim_ok "through a hard link"
said "several links"
rm "$shared/hardlink"

step "a new file gets the lines, private to root"
traced "$shared/new"
grep -q "cannot connect to ucmdd" "$shared/new" || fail "no trace line in a new file"
[ "$(stat -c '%u %a' "$shared/new")" = "0 600" ] || fail "trace file $(stat -c '%u %a' "$shared/new")"
if grep -q "UCMD_EXEC_TRACE" "$T/err"; then cat "$T/err"; fail "a refusal for a new file"; fi
# and appended to when it is root's own
lines=$(wc -l <"$shared/new")
traced "$shared/new"
[ "$(wc -l <"$shared/new")" -gt "$lines" ] || fail "root's own trace file not appended to"

step "UCMD_EXEC_TRACE=1 traces to stderr"
traced 1
said "cannot connect to ucmdd"
echo "exec_trace: all checks passed"
