#!/usr/bin/env bash
# ucmd-supervise makes a program's opens as the thread that asks would make
# them: a program that changed its credentials, root or mount namespace
# since it started (util-linux's setpriv and unshare, as a root service
# drops to a user) has its files opened with the rights it has now, never
# with the ones it gave up (the supervisor's). Where Linux refuses the file
# to that user, so does exec (EACCES); what that user may read it reads; a
# program that drops privileges and then execs loads its libraries (the
# dynamic loader's opens reach the supervisor); a file it creates is that
# user's; one thread of a program that takes on a user opens as that user
# while the others keep theirs (the supervisor's thread that takes the
# user's ids on changes its own alone), and a device it opens is judged by
# its number as any. The preload's own opens (cat's) go to the kernel,
# which judges them so by itself; tests/exec/cred_open.c's go to the
# supervisor.
source "$(dirname "$0")/lib/common.sh"
need_tools setpriv cat unshare mount cc
[ "$(id -u)" = 0 ] || skip "needs root (setpriv --reuid, unshare -m)"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
cc -O2 -pthread -o "$T/cred_open" "$SRC/tests/exec/cred_open.c" || fail "cc cred_open"
# The dropped user's dynamic loader opens the preload as that user: a build
# tree under a 0700 home (CI's clone under /root) is not the user's to read,
# and the loader would run the program without it. An installed ucmd is
# under /usr; here a copy in the test's 0755 directory stands for it.
cp "$B/src/preload/libucmd-preload.so" "$T/libucmd-preload.so" || fail "copy the preload"
chmod 644 "$T/libucmd-preload.so"
export UCMD_PRELOAD=$T/libucmd-preload.so
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
echo "ucmd-secret-$$" >"$T/secret"
chmod 600 "$T/secret"
echo "ucmd-public-$$" >"$T/public"
chmod 644 "$T/public"
mkdir -m 1777 "$T/drop"
mkdir "$T/mnt"
chmod 755 "$T"
DROP=(setpriv --reuid=65534 --regid=65534 --clear-groups)

step "Linux: the dropped user cannot read the root-only file, and reads the public one"
if "${DROP[@]}" cat "$T/secret" >/dev/null 2>&1; then
	fail "setpriv's user read a 0600 root file outside exec: the test's premise is wrong"
fi
[ "$("${DROP[@]}" cat "$T/public")" = "ucmd-public-$$" ] || fail "the premise: public file"

step "under exec: root reads the root-only file"
out=$(ex cat "$T/secret" 2>&1) || fail "root cat under exec: $out"
[ "$out" = "ucmd-secret-$$" ] || fail "root cat under exec: '$out'"

step "a program that dropped to a user, then exec'd: loads, reads what that user may, not more"
out=$(ex "${DROP[@]}" cat "$T/public" 2>&1) || fail "the dropped user's cat of a public file: '$out'"
[ "$out" = "ucmd-public-$$" ] || fail "the dropped user's cat of a public file: '$out'"
out=$(ex "${DROP[@]}" cat "$T/secret" 2>&1) && fail "the dropped user's cat succeeded: '$out'"
[ "$out" = "cat: $T/secret: Permission denied" ] || fail "the dropped user's cat: '$out' (Linux's EACCES)"

step "opens the supervisor makes, after the program took on a user itself"
out=$(ex "$T/cred_open" -u 65534 "$T/public" "$T/secret" 2>&1) || fail "cred_open: $out"
[ "$out" = "$T/public: ucmd-public-$$
$T/secret: Permission denied" ] || fail "cred_open as 65534: '$out'"
out=$(ex "$T/cred_open" -u 65534 -c "$T/drop/made" "$T/made" 2>&1) || fail "cred_open -c: $out"
[ "$out" = "$T/drop/made: uid 65534 mode 0644
$T/made: Permission denied" ] || fail "cred_open -c as 65534: '$out'"
[ "$(stat -c %u "$T/drop/made")" = 65534 ] || fail "the file made is not the user's"
[ ! -e "$T/made" ] || fail "a file was made where the user may not write"

step "one thread of the program takes on a user, the others keep root: each opens as it is"
# the supervisor's thread that opens as the user changes its own ids alone
out=$(ex "$T/cred_open" -t 65534 "$T/public" "$T/secret" 2>&1) || fail "cred_open -t: $out"
[ "$out" = "thread $T/public: ucmd-public-$$
thread $T/secret: Permission denied
main $T/public: ucmd-public-$$
main $T/secret: ucmd-secret-$$" ] || fail "cred_open -t 65534: '$out'"
out=$(ex "$T/cred_open" -t 65534 -c "$T/drop/t-made" 2>&1) || fail "cred_open -t -c: $out"
[ "$out" = "thread $T/drop/t-made: uid 65534 mode 0644
main $T/drop/t-made: File exists" ] || fail "cred_open -t 65534 -c: '$out'"

step "a device opened as the user is judged by its number as any (ENXIO for an NVMe major's)"
out=$(ex "$T/cred_open" -t 65534 /dev/null 2>&1) || fail "cred_open -t /dev/null: $out"
[ "$out" = "thread /dev/null: 
main /dev/null: " ] || fail "cred_open -t 65534 /dev/null: '$out'"
out=$(UCMD_TEST_NVME_MAJORS=c:1 ex "$T/cred_open" -t 65534 /dev/null 2>&1) ||
	fail "cred_open -t /dev/null, major 1 as NVMe's: $out"
[ "$out" = "thread /dev/null: No such device or address
main /dev/null: No such device or address" ] || fail "/dev/null as an NVMe major's: '$out'"

step "a program in a mount namespace of its own: its mounts, its libraries"
out=$(ex unshare -m --propagation private sh -c \
	"mount -t tmpfs ucmd-test '$T/mnt' && echo in-ns >'$T/mnt/f' && '$T/cred_open' '$T/mnt/f'" 2>&1) ||
	fail "unshare -m under exec: '$out'"
[ "$out" = "$T/mnt/f: in-ns" ] || fail "the file of the new namespace's mount: '$out'"
[ ! -e "$T/mnt/f" ] || fail "the namespace's mount leaked out"

step "a thread that keeps its credentials still opens as before"
out=$(ex setpriv --inh-caps=-all cat "$T/secret" 2>&1) || fail "setpriv without a uid change: $out"
[ "$out" = "ucmd-secret-$$" ] || fail "setpriv without a uid change: '$out'"
echo "exec_cred_change: ok"
