#!/usr/bin/env bash
# UCMD_EXEC_TRACE=PATH, opened by root's preloaded program, must not be
# redirected by another user: a symlink nobody planted in a sticky
# world-writable directory (a /tmp of our own) is not followed and root's
# file stays unchanged; nobody's own file there, and a file with a second
# link, are not written to either; each refusal is said on stderr and the
# program runs on. A new file, and "1" (stderr), still get the trace lines.
# The lines come from a program with no daemon to reach: the preload
# traces "cannot connect to ucmdd".
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
need_root "root's program, nobody's symlink"
need_tools setpriv timeout python3 sha256sum cat
PRELOAD=$(meson introspect "$B" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == "ucmd-preload" and t["type"] == "shared library":
        print(t["filename"][0]); break
')
[ -n "$PRELOAD" ] && [ -f "$PRELOAD" ] || fail "no libucmd-preload.so in $B"

sticky=$T/sticky	# like /tmp: root's, sticky, world-writable
mkdir "$sticky"
chmod 1777 "$sticky"
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
as_nobody ln -s "$victim" "$sticky/trace"
traced "$sticky/trace"
victim_ok "through nobody's symlink"
said "UCMD_EXEC_TRACE=$sticky/trace: a symbolic link: not followed; not tracing"
said "No such file or directory"	# the program itself ran on

step "nor one in a private directory (the last component is never followed)"
ln -s "$victim" "$T/mylink"
traced "$T/mylink"
victim_ok "through root's own symlink"
said "a symbolic link: not followed"

step "another user's file in the sticky directory is not written to"
as_nobody touch "$sticky/theirs"
traced "$sticky/theirs"
[ ! -s "$sticky/theirs" ] || fail "root's trace went into nobody's file"
said "another user's file in a directory others may write"

step "nor a file with a second link there"
ln "$victim" "$sticky/hardlink"
traced "$sticky/hardlink"
victim_ok "through a hard link"
said "several links"
rm "$sticky/hardlink"

step "a new file gets the lines, private to root"
traced "$sticky/new"
grep -q "cannot connect to ucmdd" "$sticky/new" || fail "no trace line in a new file"
[ "$(stat -c '%u %a' "$sticky/new")" = "0 600" ] || fail "trace file $(stat -c '%u %a' "$sticky/new")"
if grep -q "UCMD_EXEC_TRACE" "$T/err"; then cat "$T/err"; fail "a refusal for a new file"; fi
# and appended to when it is root's own
lines=$(wc -l <"$sticky/new")
traced "$sticky/new"
[ "$(wc -l <"$sticky/new")" -gt "$lines" ] || fail "root's own trace file not appended to"

step "UCMD_EXEC_TRACE=1 traces to stderr"
traced 1
said "cannot connect to ucmdd"
echo "exec_trace: all checks passed"
