#!/usr/bin/env bash
# Statically linked programs and `ucmd exec`: a static liburing program
# (tests/exec/static_uring.c, built here with `cc -static` against Debian's
# liburing.a) has no dynamic linker to load the preload, so it must never
# run where it would open the host's /dev instead of ucmd's.
#
# - the same source linked dynamically is served through the preload
#   (NVME_URING_CMD_IO write, read, verify), and the namespace read back
#   with ucmd's CLI outside exec holds its pattern;
# - started by a preloaded program (bash, env's execvp, Python's
#   posix_spawn), the static one is refused: exit 126 (EACCES), a line that
#   says it is statically linked, and it never ran (it would print "open"
#   or "ok");
# - `ucmd exec` given it directly runs it under ucmd-supervise (seccomp user
#   notifications): passthrough write/read/verify on /dev/ng0n1 and
#   pwrite/lseek/read on /dev/nvme0n1, both proven on the namespace with
#   ucmd's CLI outside exec; readv, writev and mmap on the device fd fail
#   (nothing reaches a file); NVMe names ucmd does not serve are ENOENT;
#   with no daemon, RLIMIT_NOFILE below the supervisor's descriptors, or a
#   set-user-ID program, nothing runs and the reason is printed; a forked
#   child of the program opens a device too (served as a process of its
#   own: tests/system/exec_static_forkio.sh has its I/O); a program that
#   opens its device after the daemon's idle timeout is still served.
source "$(dirname "$0")/lib/common.sh"
need_tools cc python3
dir=$T
SRC_C=$SRC/tests/exec/static_uring.c
[ -f /usr/lib/x86_64-linux-gnu/liburing.a ] || fail "no liburing.a (liburing-dev, scripts/deps.sh)"
cc -O2 -static -o "$dir/static_uring" "$SRC_C" -luring || fail "cc -static"
cc -O2 -o "$dir/dyn_uring" "$SRC_C" -luring || fail "cc"
grep -q 'statically linked' <<<"$(file "$dir/static_uring")" || fail "static_uring is not static"

CTRL=$dir/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
LBS=$(timeout 60 "$UCMD" --ctrl "$CTRL" --output-format json id-ns | python3 -c '
import json, sys
ns = json.load(sys.stdin)
print(1 << ns["lbafs"][ns["flbas"] & 0xf]["ds"])')

# bytes of LBA $1.. (8 KiB) of namespace 1 equal the program's pattern of seed $2
ns_has_pattern() {	# slba seed
	local n=$((8192 / LBS))
	timeout 60 "$UCMD" --ctrl "$CTRL" read -s "$1" -c "$((n - 1))" -z 8192 \
		-d "$dir/back.bin" >/dev/null || fail "ucmd read"
	python3 - "$dir/back.bin" "$2" <<'PY'
import sys
data, seed = open(sys.argv[1], 'rb').read(), int(sys.argv[2])
want = bytes((seed * 131 + i * 7 + (i >> 9)) & 0xff for i in range(8192))
sys.exit(0 if data[:8192] == want else 1)
PY
}

step "the dynamic build under ucmd exec: passthrough write, read, verify"
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$dir/dyn_uring" /dev/ng0n1 1 "$LBS" 64 5 2>&1) ||
	fail "dyn_uring: $out"
grep -q '^ok' <<<"$out" || fail "dyn_uring: $out"
ns_has_pattern 64 5 || fail "the namespace does not hold dyn_uring's data"

# A refused start: status 126, the reason on stderr, the program never ran.
refused() {	# what output
	local what=$1 out=$2
	grep -q 'statically linked' <<<"$out" || fail "$what: no reason given: $out"
	if grep -qE '^ok|^open ' <<<"$out"; then fail "$what: the static program ran: $out"; fi
}

step "a shell under ucmd exec running the static program: refused"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- bash -c \
	"'$dir/static_uring' /dev/ng0n1 1 $LBS 96 7; echo status \$?" 2>&1)
set -e
refused "bash" "$out"
grep -q '^status 126$' <<<"$out" || fail "bash: the exec did not fail with EACCES (126): $out"

step "env's execvp (glibc's internal execve) and Python's posix_spawn: refused"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- env "$dir/static_uring" /dev/ng0n1 1 "$LBS" 96 7 2>&1)
rc=$?
set -e
refused "env" "$out"
[ "$rc" = 126 ] || fail "env: status $rc, not 126: $out"
set +e
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- python3 -c '
import errno, os, sys
try:
    pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
    print("spawned, status", os.waitpid(pid, 0)[1])
except OSError as e:
    print("spawn errno", errno.errorcode[e.errno])
' "$dir/static_uring" /dev/ng0n1 1 "$LBS" 96 7 2>&1)
set -e
refused "posix_spawn" "$out"
grep -q '^spawn errno EACCES$' <<<"$out" || fail "posix_spawn: not EACCES: $out"

step "execl, execlp, execle (their lists gathered by the preload): refused, a dynamic program runs"
# libc's own through ctypes: HOW PROGRAM ARGS... (execle's environment: X=execle-env)
lexec() {
	timeout 300 "$UCMD" exec --ctrl "$CTRL" -- python3 -c '
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
how, prog = sys.argv[1], sys.argv[2].encode()
args = [ctypes.c_char_p(a.encode()) for a in sys.argv[2:]] + [None]
if how == "execle":
    env = (ctypes.c_char_p * 2)(b"X=execle-env", None)
    libc.execle(prog, *args, env)
else:
    getattr(libc, how)(prog, *args)
print(how, "errno", errno.errorcode[ctypes.get_errno()])
' "$@" 2>&1
}
for how in execl execlp execle; do
	out=$(lexec "$how" "$dir/static_uring" /dev/ng0n1 1 "$LBS" 96 7) || true
	refused "$how" "$out"
	grep -q "^$how errno EACCES\$" <<<"$out" || fail "$how: not EACCES: $out"
done
out=$(lexec execl /bin/echo execl runs) || fail "execl /bin/echo: $out"
grep -qx "execl runs" <<<"$out" || fail "execl /bin/echo: $out"
out=$(lexec execlp echo execlp runs) || fail "execlp echo: $out"
grep -qx "execlp runs" <<<"$out" || fail "execlp echo: $out"
out=$(lexec execle /usr/bin/env) || fail "execle env: $out"
grep -qx "X=execle-env" <<<"$out" || fail "execle env: $out"

step "ucmd exec given the static program directly: served by ucmd-supervise"
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$dir/static_uring" /dev/ng0n1 1 "$LBS" 96 7 1 \
	/dev/nvme0n1 2>&1) || fail "static_uring under ucmd exec: $out"
grep -q '^ok' <<<"$out" || fail "static_uring: $out"
# the calls ucmd does not serve on a device fd fail by themselves, moving nothing
grep -q '^readv/writev fail$' <<<"$out" || fail "static_uring: $out"
grep -q '^mmap errno No such device$' <<<"$out" || fail "static_uring: mmap: $out"
grep -q '^blk ok$' <<<"$out" || fail "static_uring: block I/O: $out"
ns_has_pattern 96 7 || fail "the namespace does not hold static_uring's passthrough data"
ns_has_pattern "$((96 + 16))" 8 || fail "the namespace does not hold static_uring's pwrite data"

step "the static program's forked child: its device open is served, and so is the parent"
out=$(STATIC_URING_FORK=1 timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$dir/static_uring" \
	/dev/ng0n1 1 "$LBS" 96 7 2>&1) || fail "fork: $out"
grep -q '^child open: ok$' <<<"$out" || fail "fork: the child: $out"
grep -q '^ok' <<<"$out" || fail "fork: the parent: $out"

step "a static program that opens the device after the daemon's idle timeout: still served"
sock=$dir/idle.sock
"$UCMDD" --ctrl "$CTRL" --socket "$sock" --foreground --idle-timeout 1 >"$dir/idle.log" 2>&1 &
idle_pid=$!
idle_stop() { kill "$idle_pid" 2>/dev/null || true; }
at_exit idle_stop
for _ in $(seq 300); do [ -S "$sock" ] && break; sleep 0.1; done
[ -S "$sock" ] || fail "ucmdd --idle-timeout 1 made no socket"
out=$(STATIC_URING_SLEEP=3 timeout 300 "$UCMD" exec --daemon "$sock" -- "$dir/static_uring" \
	/dev/ng0n1 1 "$LBS" 128 9 2>&1) || fail "after the idle timeout: $out"
grep -q '^ok' <<<"$out" || fail "after the idle timeout: $out"
idle_stop
wait "$idle_pid" || true
ns_has_pattern 128 9 || fail "the namespace does not hold the late program's data"

step "a static program opening NVMe names ucmd does not serve: ENOENT, never the host's"
for p in /dev/ng1n1 /dev/nvme7 /dev//ng0n2; do
	set +e
	out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$dir/static_uring" "$p" 1 "$LBS" 96 7 2>&1)
	rc=$?
	set -e
	[ "$rc" = 2 ] && grep -q "open $p: No such file or directory" <<<"$out" ||
		fail "$p: status $rc: $out"
done

step "refused, saying why: no daemon, too few descriptors, set-user-ID"
set +e
out=$(timeout 60 "$UCMD" exec --daemon "$dir/nobody.sock" -- "$dir/static_uring" /dev/ng0n1 1 \
	"$LBS" 96 7 2>&1)
rc=$?
set -e
[ "$rc" != 0 ] && grep -q 'cannot reach ucmdd' <<<"$out" || fail "no daemon: status $rc: $out"
if grep -qE '^ok|^open ' <<<"$out"; then fail "no daemon: the program ran: $out"; fi
set +e
out=$(ulimit -n 512 && timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$dir/static_uring" \
	/dev/ng0n1 1 "$LBS" 96 7 2>&1)
rc=$?
set -e
[ "$rc" = 126 ] && grep -q 'RLIMIT_NOFILE' <<<"$out" || fail "ulimit -n 512: status $rc: $out"
if grep -qE '^ok|^open ' <<<"$out"; then fail "ulimit: the program ran: $out"; fi
if [ "$(id -u)" = 0 ]; then
	cp "$dir/static_uring" "$dir/suid_uring"
	chown 65534:65534 "$dir/suid_uring"
	chmod 4755 "$dir/suid_uring"
	set +e
	out=$(timeout 60 "$UCMD" exec --ctrl "$CTRL" -- "$dir/suid_uring" /dev/ng0n1 1 "$LBS" 96 7 2>&1)
	rc=$?
	set -e
	[ "$rc" = 126 ] && grep -q 'set-user-ID' <<<"$out" || fail "set-user-ID: status $rc: $out"
else
	echo "(not root: the set-user-ID case needs a file of another user)"
fi
echo "exec_static: ok"
