#!/usr/bin/env bash
# The benches that take positional arguments (bench_zns, bench_pi,
# bench_fdp): -h/--help prints the usage and exits 0 before any setup; a
# malformed or out-of-range SECONDS or RUNS, an unknown word or one
# argument too many prints the usage and exits 2 without running (before,
# "--help" ran a zero-second bench that printed "0 IOPS" and "-nanx").
source "$(dirname "$0")/lib/common.sh"
BD=$SRC/$B/bench
for b in bench_zns bench_pi bench_fdp; do
	[ -x "$BD/$b" ] || fail "$BD/$b is not built"
	step "$b: help and bad arguments"
	"$BD/$b" --help >"$T/out" 2>&1 || fail "$b --help: exit $?"
	grep -q "^usage: .*$b \[SECONDS\] \[RUNS\]" "$T/out" || { cat "$T/out"; fail "$b --help: no usage"; }
	bad=(0 -1 nan inf 2x "" 86401 "1 0" "1 1001" "1 3x" "1 -2" "1 2 inline extra")
	[ "$b" = bench_fdp ] || bad+=("1 2 inline")
	[ "$b" = bench_fdp ] && bad+=("1 2 online")
	for a in "${bad[@]}"; do
		# shellcheck disable=SC2086 # the words of $a are the arguments
		if [ -z "$a" ]; then set -- ""; else set -- $a; fi
		rc=0
		timeout 30 "$BD/$b" "$@" >"$T/out" 2>"$T/err" || rc=$?
		[ "$rc" = 2 ] || { cat "$T/out" "$T/err"; fail "$b '$a': exit $rc, expected 2"; }
		grep -q "^usage: " "$T/err" || { cat "$T/err"; fail "$b '$a': no usage on stderr"; }
		[ ! -s "$T/out" ] || { cat "$T/out"; fail "$b '$a': ran anyway"; }
	done
done
echo "bench_args: all checks passed"
