#!/usr/bin/env bash
# A program's own `syscall` instructions for io_uring_enter under `ucmd
# exec` (src/preload/callsite.h): after the first trap, the layouts the
# preload knows jump to a stub instead of trapping; the others stay on the
# trap. tests/exec/uring_callsite.c, five layouts, each checking after
# every call its result and its NOP's completion, the argument registers,
# vector registers, the carry flag and rcx:
#
# - on Linux's io_uring (no exec): every layout works, no site changes;
# - under exec: every layout works; `mov $426,%eax; syscall`,
#   `mov $426,%eax; mov %ecx,%edx; syscall` and fio's reap (the mov across
#   a 16-byte boundary, a `mov $1,%r10d` before it) now start with a jmp
#   (e9); a RIP-relative instruction before the syscall and a lone mov
#   across a 16-byte boundary are left as they were (b8), and --trace says
#   so for each;
# - Debian's fio (io_uring_cmd, its default job) under exec: its submit
#   site is taken over and the job reads without an error.
source "$(dirname "$0")/lib/common.sh"
dir=$T
need_tools fio
PROG="$(pwd)/$B/tests/exec/uring_callsite"
[ -x "$PROG" ] || fail "no $PROG"

# "name: ok site=XX" of one layout in file $1, or fail
site_of() {	# file name
	local line
	line=$(grep "^$2: " "$1") || fail "no line for $2: $(cat "$1")"
	[[ $line =~ ^$2:\ ok\ site=([0-9a-f]{2}) ]] || fail "$line"
	echo "${BASH_REMATCH[1]}"
}

step "on Linux's io_uring: every layout works and stays as built"
"$PROG" >"$dir/linux.txt" || fail "on Linux: $(cat "$dir/linux.txt")"
for l in plain gap riprel straddle; do
	[ "$(site_of "$dir/linux.txt" $l)" = b8 ] || fail "$l changed without ucmd"
done
[ "$(site_of "$dir/linux.txt" reap)" = 41 ] || fail "reap changed without ucmd"	# mov $1,%r10d

step "under ucmd exec: three layouts taken over, two left on the trap, every call right"
timeout 300 "$UCMD" exec --trace --ctrl "$dir/ctrl" --create -- "$PROG" \
	>"$dir/exec.txt" 2>"$dir/exec.err" || fail "under exec: $(cat "$dir/exec.txt" "$dir/exec.err")"
[ "$(site_of "$dir/exec.txt" plain)" = e9 ] || fail "plain was not taken over: $(cat "$dir/exec.err")"
[ "$(site_of "$dir/exec.txt" gap)" = e9 ] || fail "gap was not taken over: $(cat "$dir/exec.err")"
[ "$(site_of "$dir/exec.txt" reap)" = e9 ] || fail "reap was not taken over: $(cat "$dir/exec.err")"
[ "$(site_of "$dir/exec.txt" riprel)" = b8 ] || fail "riprel was rewritten"
[ "$(site_of "$dir/exec.txt" straddle)" = b8 ] || fail "straddle was rewritten"
[ "$(grep -c 'system call 426 at .*: call site taken over' "$dir/exec.err")" = 3 ] ||
	fail "trace: $(cat "$dir/exec.err")"
grep -q 'system call 426 at .*: Exec format error' "$dir/exec.err" || fail "no trace of riprel"
grep -q 'system call 426 at .*: Resource temporarily unavailable' "$dir/exec.err" ||
	fail "no trace of straddle"

step "fio's own io_uring_enter under exec: its submit site taken over, no error"
(cd "$dir" && timeout 300 "$UCMD" exec --trace --ctrl "$dir/ctrl" -- fio --name=r \
	--rw=randread --bs=4k --iodepth=32 --size=8M --time_based --runtime=2 \
	--ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --output-format=json \
	--output="$dir/fio.json") 2>"$dir/fio.err" || fail "fio: $(tail -5 "$dir/fio.err")"
grep -q 'system call 426 at .*: call site taken over' "$dir/fio.err" ||
	fail "fio's site was not taken over: $(cat "$dir/fio.err")"
python3 - "$dir/fio.json" <<'PY' || fail "fio's job: $(tail -20 "$dir/fio.json")"
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
sys.exit(0 if j["error"] == 0 and j["read"]["total_ios"] > 0 else 1)
PY
echo "exec_callsite: ok"
