#!/usr/bin/env bash
# A policy file must be a regular file of at most 1 MiB named directly
# (docs/security.md, "Policy and audit files"): `ucmd policy check` and `--policy` refuse a FIFO, a
# symbolic link, a directory, /dev/zero and an oversized file at once, with
# a message that says what the path is; none of them hangs (every run is
# under timeout, and a timeout fails the test). --audit refuses a symbolic
# link and a FIFO nobody reads.
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"

printf '[rule]\nverb = read\naction = allow\n' > "$dir/ok.ini"
mkfifo "$dir/fifo.ini"
ln -s "$dir/ok.ini" "$dir/link.ini"
mkdir "$dir/dir.ini"
head -c $((1024 * 1024 + 1)) /dev/zero | tr '\0' '\n' > "$dir/big.ini"

refused() {	# path, expected text, ucmd arguments...
	local path=$1 want=$2 rc=0
	shift 2
	timeout 10 "$UCMD" "$@" >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" -ne 124 ] || fail "ucmd $* hangs on $path"
	[ "$rc" -ne 0 ] || fail "ucmd $* accepted $path"
	grep -q -- "$want" "$dir/err" || { cat "$dir/err"; fail "ucmd $*: no '$want' in the message"; }
	grep -qF -- "$path" "$dir/err" || { cat "$dir/err"; fail "ucmd $*: the message does not name $path"; }
}

step "policy check: a regular file is valid"
timeout 10 "$UCMD" policy check "$dir/ok.ini" >/dev/null || fail "a valid policy refused"
for sub in check flag; do
	step "policy $sub: FIFO, symlink, directory, /dev/zero, 1 MiB + 1 refused"
	for case in "$dir/fifo.ini:a FIFO" "$dir/link.ini:a symbolic link" \
		    "$dir/dir.ini:a directory" "/dev/zero:a character device" \
		    "$dir/big.ini:at most 1048576"; do
		path=${case%%:*}
		want=${case#*:}
		if [ "$sub" = check ]; then
			refused "$path" "$want" policy check "$path"
		else
			refused "$path" "$want" --policy "$path" id-ctrl
		fi
	done
done

step "--audit: a symbolic link and a FIFO nobody reads are refused"
ln -s "$dir/elsewhere" "$dir/audit.link"
refused "$dir/audit.link" "a symbolic link" --audit "$dir/audit.link" id-ctrl
[ ! -e "$dir/elsewhere" ] || fail "the audit link's target was created"
mkfifo "$dir/audit.fifo"
refused "$dir/audit.fifo" "a FIFO nobody reads" --audit "$dir/audit.fifo" id-ctrl
step "policy check: a 223-byte host NQN (longer than libinih's lines) is valid"
nqn="nqn.2014-08.org.example:$(head -c 199 /dev/zero | tr '\0' h)"
[ "${#nqn}" = 223 ] || fail "the NQN is ${#nqn} bytes"
printf '[rule tcp]\nhostnqn = %s\naction = allow\n' "$nqn" > "$dir/nqn.ini"
timeout 10 "$UCMD" policy check "$dir/nqn.ini" >/dev/null 2>"$dir/err" ||
	{ cat "$dir/err"; fail "a 223-byte NQN refused"; }
step "policy check: an absurdly long line is refused, naming its line"
{ printf '[rule]\nverb = '; head -c 100000 /dev/zero | tr '\0' r; printf '\naction = allow\n'; } \
	> "$dir/long.ini"
refused "$dir/long.ini" "long.ini:2: line longer than 65536 bytes" policy check "$dir/long.ini"
echo "policy_file: all checks passed"
