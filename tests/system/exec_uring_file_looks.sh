#!/usr/bin/env bash
# A program doing io_uring on its own files under `ucmd exec` pays no
# readlink per io_uring_enter: the preload looks for raw copies of devices
# among an SQE's unknown numbers (src/preload/uring.c), and a number that
# is no directory (a file, a pipe) cannot be one, which one fstat says. A
# loop of N reads of a regular file (tests/exec/uring_file_loop.c) adds
# fewer than N/4 readlinks to a run of none (strace -c); before, each enter
# cost one.
source "$(dirname "$0")/lib/common.sh"
need_tools cc strace
cc -O2 -o "$T/loop" "$SRC/tests/exec/uring_file_loop.c" -luring || fail "cc uring_file_loop"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" "$@"; }
head -c 4096 /dev/urandom >"$T/file"

# readlink and readlinkat calls of a run of N reads, the program's and the preload's
looks() {	# N
	ex -- strace -f -c -o "$T/strace.$1" -e trace=readlink,readlinkat,fstat,newfstatat \
		"$T/loop" "$1" "$T/file" >"$T/out.$1" || fail "uring_file_loop $1"
	awk '$NF == "readlink" || $NF == "readlinkat" { n += ($4 ~ /^[0-9]+$/) ? $4 : $5 }
	     END { print n + 0 }' "$T/strace.$1"
}

N=200
step "$N io_uring reads of a regular file: no readlink per enter"
base=$(looks 0)
many=$(looks $N)
echo "readlinks: $base for 0 reads, $many for $N"
cat "$T/strace.$N"
[ $((many - base)) -lt $((N / 4)) ] || fail "$N enters cost $((many - base)) readlinks"
echo "exec_uring_file_looks: ok"
