#!/usr/bin/env bash
# The CLI's option framework: -h/--help never opens a controller nor runs a
# command (for every command, whatever else is on the line), unknown
# options are named, options work in nvme-cli's positions, a mistyped
# command gets a "did you mean", --version and version, the controller
# directory rules (--ctrl must exist unless --create / create-ctrl), and
# format's safety delay (warning naming the device, Ctrl-C cancels with the
# data intact, --force skips it).
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"
unset UCMD_DAEMON
snap() { (cd "$UCMD_CTRL" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

mapfile -t cmds < <("$UCMD" help | sed -n '/^commands:/,$p' | awk 'NR > 1 { print $1 }')
[ "${#cmds[@]}" -ge 40 ] || fail "ucmd help lists ${#cmds[@]} commands"

step "help on a missing controller creates nothing"
for c in "${cmds[@]}"; do
	"$UCMD" "$c" --help >/dev/null 2>&1 || fail "$c --help: exit $?"
done
[ ! -e "$UCMD_CTRL" ] || fail "a --help created the controller directory"

step "help never runs the command: a controller's files are unchanged"
# 16 MiB, not the default 1 GiB: snap hashes every file, four times
"$UCMD" create-ctrl --nsze 32768 >/dev/null
head -c 4096 /dev/urandom > "$dir/a.bin"
"$UCMD" write -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null
before=$(snap)
# a session alone changes the files (its power-on and counters): the check can fail
"$UCMD" flush 2>/dev/null
[ "$(snap)" != "$before" ] || fail "a session changed nothing: this check could not fail"
before=$(snap)
for c in "${cmds[@]}"; do
	for h in --help -h; do
		out=$("$UCMD" -n 1 "$c" $h 2>&1) || fail "ucmd -n 1 $c $h: exit $?"
		grep -qi "usage" <<<"$out" || fail "$c $h printed no usage"
	done
	# help wins over everything else on the line, even bad values
	"$UCMD" "$c" -n 1 --help >/dev/null 2>&1 || fail "$c -n 1 --help"
done
for c in delete-ns format sanitize fw-commit reset device-self-test; do
	"$UCMD" -n 1 "$c" -n 1 -a 2 -s 1 --force --help >/dev/null 2>&1 || fail "$c ... --help"
done
o=$("$UCMD" help delete-ns) && grep -q -- "--namespace-id=<NUM>, -n <NUM>" <<<"$o" || fail "help delete-ns"
[ "$(snap)" = "$before" ] || fail "a --help changed the controller"
"$UCMD" read -s 0 -c 7 -d "$dir/r.bin"
cmp "$dir/a.bin" "$dir/r.bin" || fail "data changed"

step "unknown options are named, exit 2, nothing runs"
for args in "id-ctrl --bogus" "delete-ns -n 1 --bogus" "flush -Z" "format --force --lbaf"; do
	rc=0
	# shellcheck disable=SC2086
	"$UCMD" $args >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] || fail "'$args': exit $rc"
	w=${args##* }
	grep -q -- "'$w'" "$dir/err" || { cat "$dir/err"; fail "'$args': does not name $w"; }
done
[ "$(snap)" = "$before" ] || fail "a refused command changed the controller"
for bad in "read -s xyz:--start-block" "error-log -e 300:--log-entries" \
	   "delete-ns -n 0:--namespace-id" "list -o yaml:--output-format" \
	   "dsm --slbs=1,x --blocks=1,2:--slbs" "sanitize -a 9:--sanact" "copy -s 1 -b 1:--sdlba"; do
	args=${bad%%:*} opt=${bad##*:}
	rc=0
	# shellcheck disable=SC2086
	"$UCMD" $args >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] && grep -q -- "$opt" "$dir/err" || { cat "$dir/err"; fail "'$args': exit $rc"; }
done
rc=0; "$UCMD" id-ns extra >/dev/null 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && grep -q "unexpected argument 'extra'" "$dir/err" || fail "stray argument"

step "nvme-cli's positions: options after the command, long and short, old globals"
a=$("$UCMD" id-ns -n 1 -o json)
b=$("$UCMD" -n 1 -o json id-ns)
c=$("$UCMD" id-ns --namespace-id=1 --output-format=json)
[ "$a" = "$b" ] && [ "$a" = "$c" ] || fail "id-ns positions differ"
python3 -c 'import json,sys; json.loads(sys.argv[1])' "$a"
[ "$("$UCMD" id-ns -n 1 -b | wc -c)" = 4096 ] || fail "id-ns -b"
[ "$("$UCMD" id-ns -n 1 -o binary | wc -c)" = 4096 ] || fail "id-ns -o binary"
"$UCMD" id-ctrl -H >/dev/null || fail "id-ctrl -H"
"$UCMD" smart-log -H >/dev/null || fail "smart-log -H"
"$UCMD" io-passthru -o 2 -n 1 --cdw12=0 -l 512 -r -b | cmp -n 512 - "$dir/a.bin" ||
	fail "io-passthru -o (opcode)"
"$UCMD" set-feature -f 4 -v 343 >/dev/null || fail "set-feature -v"
o=$("$UCMD" get-log -i 2 -l 512 -b | wc -c) && grep -qx 512 <<<"$o" || fail "get-log -i 2 -l 512 -b"
# the old global -n still names the namespace a command requires
nsid=$("$UCMD" create-ns --nsze 64 | sed -n 's/.*nsid:\([0-9]*\).*/\1/p')
o=$("$UCMD" -n "$nsid" delete-ns) && grep -q "deleted nsid:$nsid" <<<"$o" || fail "ucmd -n N delete-ns"

step "did you mean, version"
rc=0; "$UCMD" id-ctl 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && grep -q "Did you mean 'id-ctrl'" "$dir/err" || fail "no suggestion for id-ctl"
rc=0; "$UCMD" smartlog 2>"$dir/err" || rc=$?
grep -q "Did you mean 'smart-log'" "$dir/err" || fail "no suggestion for smartlog"
rc=0; "$UCMD" zzzzzzzz 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && ! grep -q "Did you mean" "$dir/err" || fail "a suggestion for nonsense"
v=$("$UCMD" --version)
grep -Eq '^ucmd version [0-9]+\.[0-9]+' <<<"$v" || fail "--version: $v"
[ "$("$UCMD" version)" = "$v" ] || fail "version differs from --version"

step "completion from the tables"
o=$("$UCMD" help --complete 1 ucmd id- | sort | tr '\n' ' ') && grep -qx "id-ctrl id-ns " <<<"$o" ||
	fail "completion of id-: $("$UCMD" help --complete 1 ucmd id-)"
o=$("$UCMD" help --complete 2 ucmd delete-ns --na) && grep -qx -- "--namespace-id" <<<"$o" ||
	fail "completion of delete-ns --na"
o=$("$UCMD" help --complete 3 ucmd id-ctrl -o j) && grep -qx json <<<"$o" || fail "completion of -o j"
[ -z "$("$UCMD" help --complete 3 ucmd io-passthru -o j)" ] || fail "io-passthru -o is the opcode"
comp="$(pwd)/tools/ucmd/ucmd.bash"
[ -f "$comp" ] || fail "no bash completion script"
got=$(PATH="$(dirname "$UCMD"):$PATH" bash -c '
	source "$1"
	COMP_WORDS=("$2" sanitize --sa); COMP_CWORD=2
	_ucmd_complete
	printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$UCMD")
[ "$got" = "--sanact" ] || fail "bash completion: '$got'"

step "--ctrl must exist unless --create or create-ctrl"
rc=0; "$UCMD" --ctrl "$dir/typo" id-ctrl 2>"$dir/err" || rc=$?
[ "$rc" = 1 ] && grep -q "no controller there" "$dir/err" || fail "a missing --ctrl: exit $rc"
[ ! -e "$dir/typo" ] || fail "a missing --ctrl was created"
rc=0; "$UCMD" exec --ctrl "$dir/typo" -- true 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && [ ! -e "$dir/typo" ] || fail "exec on a missing --ctrl: exit $rc"
"$UCMD" --ctrl "$dir/made" --create id-ns -n 1 >/dev/null || fail "--create"
o=$("$UCMD" --ctrl "$dir/new" create-ctrl --nsze 2048) && grep -q "2048 blocks" <<<"$o" || fail "create-ctrl"
"$UCMD" --ctrl "$dir/new" id-ns -o json | python3 -c '
import json,sys; assert json.load(sys.stdin)["nsze"] == 2048'
rc=0; "$UCMD" --ctrl "$dir/new" create-ctrl 2>"$dir/err" || rc=$?
[ "$rc" = 1 ] && grep -q "already holds a controller" "$dir/err" || fail "create-ctrl twice"

step "format: the warning names the device; Ctrl-C cancels with the data intact"
"$UCMD" write -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null
# not job control's process group: the shell would ignore SIGINT for a background job
"$UCMD" format -n 1 >/dev/null 2>"$dir/ferr" &
fpid=$!
# wait for the warning (an event, not a duration: the loop ends when it is there)
for _ in $(seq 600); do grep -q "10 seconds" "$dir/ferr" && break; sleep 0.05; done
grep -q "You are about to format nvme0n1" "$dir/ferr" || { cat "$dir/ferr"; fail "no warning"; }
grep -q -- "--force" "$dir/ferr" || fail "the warning does not mention --force"
kill -INT "$fpid"
rc=0; wait "$fpid" || rc=$?
[ "$rc" = 130 ] || { cat "$dir/ferr"; fail "format after SIGINT: exit $rc"; }
grep -q "cancelled" "$dir/ferr" || fail "no cancel message"
"$UCMD" read -s 0 -c 7 -d "$dir/r.bin"
cmp "$dir/a.bin" "$dir/r.bin" || fail "the cancelled format erased data"
"$UCMD" format -n 1 --force 2>"$dir/ferr" >/dev/null
! grep -q "10 seconds" "$dir/ferr" || fail "--force still warned"
"$UCMD" read -s 0 -c 7 -d "$dir/r.bin"
cmp -s "$dir/a.bin" "$dir/r.bin" && fail "format --force did not erase"
echo "cli_options: all checks passed"
