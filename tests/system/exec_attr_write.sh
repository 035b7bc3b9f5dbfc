#!/usr/bin/env bash
# Writes to the tree's 0644 attributes under `ucmd exec` as Linux's stores
# answer them, for what ucmd can answer truly (docs/compat.md;
# src/preload/attrw.c):
#
# - root's open for writing of a 0644 attribute succeeds (Linux's are
#   root's 0644), and a write of the current value succeeds: dash's
#   `echo none > .../queue/scheduler` ("[none]" selected), `echo 128 >
#   read_ahead_kb`, write_cache's "write back", printf without a newline,
#   tee, python's os.write and a C program's fopen + fprintf (stdio);
# - a different value is EINVAL (mq-deadline, 256, "write through"), and
#   the tree still says what it said; a uevent action ("change") is taken;
# - bash's builtin echo and printf and coreutils' echo, which write through
#   glibc's own write on 1 (or 2), get the same answers: an open of an
#   attribute for writing makes those writes trap (src/preload/seccomp.c)
#   to be judged; before, EBADF ("write error: Bad file descriptor");
# - 0444 attributes stay EACCES;
# - a static program (ucmd-supervise, src/preload/sv_attrw.c) gets the
#   same answers from write, writev, pwrite, pwritev2 and stdio on the
#   descriptor its open got (tests/exec/attr_write.c); a static shell's
#   `echo >` moves it to 1, below the numbers the supervisor sees: that
#   copy is the read-only file, its write EBADF.
source "$(dirname "$0")/lib/common.sh"
need_tools python3 cc busybox tee
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@" 2>"$T/err"; }
Q=/sys/block/nvme0n1/queue

step "dash's echo, printf and tee of the current values: taken"
ex sh -c "echo none >$Q/scheduler && echo 128 >$Q/read_ahead_kb && echo 'write back' >$Q/write_cache &&
	printf 0 >$Q/nomerges && echo 1 | tee $Q/rq_affinity >/dev/null && echo change >/sys/block/nvme0n1/uevent" ||
	fail "writes of the current values: $(cat "$T/err")"

step "bash's builtin echo and printf, coreutils' echo (glibc's own write on 1 or 2): the current value taken"
out=$(ex bash -c "echo none >$Q/scheduler && echo 128 >$Q/read_ahead_kb && printf 'write back\n' >$Q/write_cache &&
	echo none 2>$Q/scheduler >&2 && { exec 3>$Q/scheduler; echo none >&3; } && exec 3>&- &&
	/bin/echo 128 >$Q/read_ahead_kb && echo still-stdout && echo still-stderr >&2") ||
	fail "bash's writes of the current values: $(cat "$T/err")"
[ "$out" = still-stdout ] && [ "$(cat "$T/err")" = still-stderr ] ||
	fail "bash's stdout and stderr after the writes: $out / $(cat "$T/err")"

step "bash's and coreutils' echo of another value: EINVAL (write error), as Linux's store"
out=$(ex bash -c "echo mq-deadline >$Q/scheduler || echo refused; echo 256 >$Q/read_ahead_kb || echo refused;
	/bin/echo 256 >$Q/read_ahead_kb || echo refused") || fail "bash: $(cat "$T/err")"
[ "$out" = "refused
refused
refused" ] || fail "bash's writes of other values: $out $(cat "$T/err")"
[ "$(grep -c 'write error: Invalid argument' "$T/err")" = 3 ] || fail "bash's errors: $(cat "$T/err")"

step "glibc's own write on 1 and 2 with every signal blocked (a thread's mask, a handler's sa_mask): served, not killed"
cat >"$T/masked.c" <<'EOF'
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void on_usr1(int sig)
{
	static const char m[] = "handler\n";
	(void)sig;
	if (write(2, m, sizeof(m) - 1) != (ssize_t)(sizeof(m) - 1))
		_exit(3);
}
static void *thread(void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	dup2(*(int *)arg, 1);
	printf("none\n");
	return (void *)(long)fflush(stdout);
}
int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t all;
	pthread_t t;
	void *r;
	int fd = open(argv[1], O_WRONLY), out = dup(1);
	(void)argc;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigfillset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (fd < 0 || pthread_create(&t, NULL, thread, &fd) || pthread_join(t, &r))
		return 2;
	dup2(out, 1);
	printf("thread %s\n", r ? "refused" : "ok");
	return 0;
}
EOF
cc -O2 -pthread -o "$T/masked" "$T/masked.c" || fail "cc masked"
out=$(ex "$T/masked" $Q/scheduler) || fail "masked: exit $?: $out $(cat "$T/err")"
[ "$out" = "thread ok" ] && [ "$(cat "$T/err")" = handler ] || fail "masked: $out $(cat "$T/err")"

step "python's os.write: the current value taken, another EINVAL, 0444 EACCES"
cat >"$T/w.py" <<'EOF'
import errno, os, sys
def w(p, v):
    try:
        fd = os.open(p, os.O_WRONLY)
    except OSError as e:
        return "open " + errno.errorcode[e.errno]
    try:
        r = "ok %d" % os.write(fd, v.encode())
    except OSError as e:
        r = errno.errorcode[e.errno]
    os.close(fd)
    return r
for a in sys.argv[1:]:
    p, v = a.split("=", 1)
    print(p.rsplit("/", 1)[1], repr(v), w(p, v))
EOF
ex python3 "$T/w.py" "$Q/scheduler=none
" "$Q/scheduler=[none]" "$Q/scheduler=mq-deadline
" "$Q/read_ahead_kb=128
" "$Q/read_ahead_kb=256
" "$Q/write_cache=write back
" "$Q/write_cache=write through
" "/sys/block/nvme0n1/size=2097152
" "/sys/block/nvme0n1/uevent=bogus
" >"$T/out" || fail "python: $(cat "$T/err")"
[ "$(cat "$T/out")" = "scheduler 'none\n' ok 5
scheduler '[none]' EINVAL
scheduler 'mq-deadline\n' EINVAL
read_ahead_kb '128\n' ok 4
read_ahead_kb '256\n' EINVAL
write_cache 'write back\n' ok 11
write_cache 'write through\n' EINVAL
size '2097152\n' open EACCES
uevent 'bogus\n' EINVAL" ] || fail "python's writes: $(cat "$T/out")"

step "the tree still says what it said"
out=$(ex cat $Q/scheduler $Q/read_ahead_kb $Q/write_cache) || fail "cat: $(cat "$T/err")"
[ "$out" = "[none]
128
write back" ] || fail "after the writes: $out"

step "a C program's fopen + fprintf (glibc's stdio): the current value taken, another EINVAL"
cat >"$T/fw.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	FILE *f = fopen(argv[1], "w");
	if (!f) {
		printf("fopen %s\n", strerror(errno));
		return 0;
	}
	fprintf(f, "%s\n", argv[2]);
	int r = fflush(f), e = errno;
	fclose(f);
	printf("%s\n", r ? strerror(e) : "ok");
	return 0;
}
EOF
cc -O2 -o "$T/fw" "$T/fw.c" || fail "cc fw"
out=$(ex sh -c "'$T/fw' $Q/read_ahead_kb 128; '$T/fw' $Q/read_ahead_kb 4096") || fail "fw: $(cat "$T/err")"
[ "$out" = "ok
Invalid argument" ] || fail "stdio writes: $out"

step "a static program (ucmd-supervise, sv_attrw.c): the same answers on its write family and stdio"
cc -O2 -static -o "$T/aw" "$SRC/tests/exec/attr_write.c" || fail "cc -static attr_write"
grep -q 'statically linked' <<<"$(file "$T/aw")" || fail "attr_write is not static"
out=$(ex "$T/aw" $Q/scheduler none $'none\n' mq-deadline) || fail "static aw: $(cat "$T/err")"
want=""
for v in 4 5 mq; do
	for c in write writev pwrite pwritev2 fprintf; do
		case $v in mq) want+="$c Invalid argument"$'\n' ;; *) want+="$c ok $v"$'\n' ;; esac
	done
done
[ "$out" = "${want%$'\n'}" ] || fail "static writes to scheduler: $out"
out=$(ex "$T/aw" $Q/read_ahead_kb 128 0128 256) || fail "static aw: $(cat "$T/err")"
[ "$(grep -c 'ok' <<<"$out")" = 10 ] && [ "$(grep -c 'Invalid argument' <<<"$out")" = 5 ] ||
	fail "static writes to read_ahead_kb: $out"
out=$(ex "$T/aw" /sys/block/nvme0n1/uevent change bogus) || fail "static aw: $(cat "$T/err")"
[ "$(grep -c 'ok' <<<"$out")" = 5 ] && [ "$(grep -c 'Invalid argument' <<<"$out")" = 5 ] ||
	fail "static writes to uevent: $out"
out=$(ex "$T/aw" /sys/block/nvme0n1/size 2097152) || fail "static aw: $(cat "$T/err")"
[ "$out" = "open Permission denied" ] || fail "static write to a 0444 attribute: $out"
out=$(ex busybox cat $Q/scheduler $Q/read_ahead_kb) || fail "busybox cat: $(cat "$T/err")"
[ "$out" = "[none]
128" ] || fail "after the static writes: $out"

step "a static shell's redirection: the copy on 1 is the read-only file (EBADF), never a write taken"
out=$(ex busybox sh -c "echo none >$Q/scheduler 2>&1 || echo refused") || true
case $out in *refused*) ;; *) fail "static echo to scheduler: $out $(cat "$T/err")" ;; esac
echo "exec_attr_write: ok"
