#!/usr/bin/env bash
# ucmd's own commands and Debian's nvme-cli 2.3 (unmodified, under `ucmd
# exec`) on ONE live controller served by a private ucmdd: both go through
# the daemon, so both read the same controller state. Every report must be
# the same document: for JSON the same keys, nesting, value types and
# values (python3, key by key); for the reports nvme-cli 2.3 prints only as
# text (get-feature, get-log) the same lines. The only values allowed to
# differ are listed in VOLATILE with the reason. Every step runs, and the
# failures are listed at the end.
source "$(dirname "$0")/lib/common.sh"
dir=$T
sock="$dir/ucmdd.sock"
pid=
failed=()
on_fail() { [ -f "$dir/ucmdd.log" ] && tail -20 "$dir/ucmdd.log"; }
bad() { echo "  FAIL: $*"; failed+=("$*"); }
[ -x "$UCMD" ] || fail "no $UCMD: build first"
[ -x "$UCMDD" ] || fail "no $UCMDD: build first"
need_tools nvme python3
grep -q "^nvme version 2\.3" <<<"$(nvme version)" || fail "this test compares with nvme-cli 2.3: $(nvme version | head -1)"
need_root "ucmdd serves the controller"

# ucmd's command, options in nvme-cli's positions (after the command)
U() { local c=$1; shift; timeout 60 "$UCMD" --daemon "$sock" "$c" "$@" 2>>"$dir/err"; }
# nvme-cli on the same controller
N() { timeout 120 "$UCMD" exec --daemon "$sock" -- nvme "$@" 2>>"$dir/err"; }
errtail() { sed 's/^/    stderr: /' "$dir/err" | tail -5; : >"$dir/err"; }

# Fields whose values may legitimately change between the two reads (their
# key and type are still compared):
#   power_on_hours        the controller's clock may cross an hour between reads
#   controller_busy_time  minutes the controller spent on commands, which both
#                         reads are
VOLATILE="power_on_hours controller_busy_time"

# jcmp NAME UCMD.json NVME.json: same document, key by key
jcmp() {
	python3 - "$@" "$VOLATILE" <<'PY'
import json, sys
name, fu, fn, volatile = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
try:
    u = json.load(open(fu))
    n = json.load(open(fn))
except ValueError as e:
    print("    %s: not JSON: %s" % (name, e)); sys.exit(1)
diffs = []
def walk(a, b, path):
    if type(a) is not type(b):
        diffs.append("%s: type %s (ucmd) vs %s (nvme-cli)" % (path, type(a).__name__, type(b).__name__))
        return
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a: diffs.append("%s.%s: missing in ucmd" % (path, k))
            elif k not in b: diffs.append("%s.%s: not in nvme-cli" % (path, k))
            else: walk(a[k], b[k], path + "." + k)
        if list(a) != list(b) and set(a) == set(b):
            diffs.append("%s: key order differs" % path)
    elif isinstance(a, list):
        if len(a) != len(b):
            diffs.append("%s: %d entries (ucmd) vs %d (nvme-cli)" % (path, len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, "%s[%d]" % (path, i))
    elif a != b and path.split(".")[-1] not in volatile:
        diffs.append("%s: %r (ucmd) vs %r (nvme-cli)" % (path, a, b))
walk(u, n, name)
for d in diffs[:20]:
    print("    " + d)
sys.exit(1 if diffs else 0)
PY
}

# both: NAME 'ucmd args' 'nvme-cli args' -> JSON compared
both_json() {
	local name=$1 uargs=$2 nargs=$3
	step "$name: ucmd $uargs / nvme $nargs"
	# shellcheck disable=SC2086
	if ! U $uargs >"$dir/u.json"; then bad "$name: ucmd failed"; errtail; return; fi
	# shellcheck disable=SC2086
	if ! N $nargs >"$dir/n.json"; then bad "$name: nvme-cli failed"; errtail; return; fi
	jcmp "$name" "$dir/u.json" "$dir/n.json" || bad "$name: documents differ"
}

# both_text NAME 'ucmd args' 'nvme-cli args' [SKIP-REGEX]: the same lines
both_text() {
	local name=$1 uargs=$2 nargs=$3 skip=${4:-^$^}
	step "$name: ucmd $uargs / nvme $nargs (text)"
	# shellcheck disable=SC2086
	if ! U $uargs >"$dir/u.txt"; then bad "$name: ucmd failed"; errtail; return; fi
	# shellcheck disable=SC2086
	if ! N $nargs >"$dir/n.txt"; then bad "$name: nvme-cli failed"; errtail; return; fi
	[ -s "$dir/n.txt" ] || { bad "$name: nvme-cli printed nothing"; return; }
	if ! diff <(grep -Ev "$skip" "$dir/u.txt") <(grep -Ev "$skip" "$dir/n.txt") >"$dir/diff"; then
		bad "$name: output differs"
		head -10 "$dir/diff" | sed 's/^/    /'	# (sed | head: SIGPIPE under pipefail)
	fi
}

step "ucmdd on a fresh controller"
"$UCMDD" --ctrl "$dir/ctrl" --socket "$sock" --foreground 2>"$dir/ucmdd.log" &
pid=$!
for _ in $(seq 200); do
	[ -S "$sock" ] && break
	kill -0 "$pid" 2>/dev/null || fail "ucmdd exited"
	sleep 0.05
done
[ -S "$sock" ] || fail "no socket at $sock"

step "a failed command first, so that the error log has an entry to compare"
if N get-log /dev/nvme0 --log-id=0x7f --log-len=512 >/dev/null; then
	bad "get-log of a reserved log id succeeded"
fi
: >"$dir/err"
U error-log -o json >"$dir/errlog.json" || { bad "ucmd error-log"; errtail; }
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["errors"]; sys.exit(0 if e and e[0]["error_count"] >= 1 and e[0]["status_field"] == 0x4109 else 1)' \
	"$dir/errlog.json" || bad "the error log has no entry for the failed get-log"

both_json list "list -o json" "list -o json"
both_json "list -v" "list -v -o json" "list -v -o json"
both_json list-subsys "list-subsys -o json" "list-subsys -o json"
both_json id-ctrl "id-ctrl -o json" "id-ctrl /dev/nvme0 -o json"
both_json id-ns "id-ns -n 1 -o json" "id-ns /dev/nvme0 -n 1 -o json"
both_json ns-descs "ns-descs -n 1 -o json" "ns-descs /dev/nvme0 -n 1 -o json"
both_json smart-log "smart-log -o json" "smart-log /dev/nvme0 -o json"
both_json error-log "error-log -o json" "error-log /dev/nvme0 -o json"
# nvme-cli 2.3 reads CAP from the mapped BAR without --csi; with --csi=0 it
# asks for the NVM command set's page, the one ucmd prints
both_json effects-log "effects-log -o json" "effects-log /dev/nvme0 --csi=0 -o json"
both_json fw-log "fw-log -o json" "fw-log /dev/nvme0 -o json"

# sanitize and self-test logs: the same document, or the same refusal while
# the controller has no such log
for log in sanitize-log self-test-log; do
	step "$log"
	us=0; ns=0
	U $log -o json >"$dir/u.json" || us=$?
	N $log /dev/nvme0 -o json >"$dir/n.json" || ns=$?
	if [ $us = 0 ] && [ $ns = 0 ]; then
		jcmp "$log" "$dir/u.json" "$dir/n.json" || bad "$log: documents differ"
	elif [ $us = 0 ] || [ $ns = 0 ]; then
		bad "$log: ucmd exit $us, nvme-cli exit $ns"; errtail
	else
		grep -q "Invalid Log Page" "$dir/err" || { bad "$log: both failed, not as Invalid Log Page"; errtail; }
		echo "    both report Invalid Log Page (the controller has no $log yet)"
	fi
	: >"$dir/err"
done

step "text: the normal output, line for line"
both_text id-ctrl "id-ctrl" "id-ctrl /dev/nvme0"
both_text id-ns "id-ns -n 1" "id-ns /dev/nvme0 -n 1"
both_text ns-descs "ns-descs -n 1" "ns-descs /dev/nvme0 -n 1"
both_text smart-log "smart-log" "smart-log /dev/nvme0" "^(power_on_hours|controller_busy_time)"
both_text error-log "error-log" "error-log /dev/nvme0"
both_text fw-log "fw-log" "fw-log /dev/nvme0"
both_text list "list" "list"
both_text "list -v" "list -v" "list -v"
# -H: the decoded fields, line for line
both_text "id-ctrl -H" "id-ctrl -H" "id-ctrl /dev/nvme0 -H"
both_text "id-ns -H" "id-ns -n 1 -H" "id-ns /dev/nvme0 -n 1 -H"
both_text "smart-log -H" "smart-log -H" "smart-log /dev/nvme0 -H" "^(power_on_hours|controller_busy_time)"
both_text "effects-log -H" "effects-log -H" "effects-log /dev/nvme0 --csi=0 -H"
both_text effects-log "effects-log" "effects-log /dev/nvme0 --csi=0"
both_text list-subsys "list-subsys" "list-subsys"
for fid in 1 2 4 5 6 7 8 0xa 0xb; do
	both_text "get-feature $fid" "get-feature -f $fid" "get-feature /dev/nvme0 -f $fid"
done
both_text "get-feature 6 sel 3" "get-feature -f 6 -s 3" "get-feature /dev/nvme0 -f 6 -s 3"
both_text "get-feature 7 -H" "get-feature -f 7 -H" "get-feature /dev/nvme0 -f 7 -H"
both_text "get-feature 4 -H" "get-feature -f 4 -H" "get-feature /dev/nvme0 -f 4 -H"
both_text "get-log 1" "get-log --log-id=1 --log-len=512" "get-log /dev/nvme0 --log-id=1 --log-len=512"
both_text "get-log 3" "get-log --log-id=3 --log-len=512" "get-log /dev/nvme0 --log-id=3 --log-len=512"
both_text "get-log 5" "get-log --log-id=5 --log-len=4096" "get-log /dev/nvme0 --log-id=5 --log-len=4096"
# SMART bytes 70h..8Fh hold controller busy time and power on hours (VOLATILE)
both_text "get-log 2" "get-log --log-id=2 --log-len=512" "get-log /dev/nvme0 --log-id=2 --log-len=512" "^00[78]0:"

step "the comparison fails on a missing key and on another type"
echo '{"a":1,"b":{"c":"1"}}' >"$dir/x.json"
echo '{"a":1,"b":{}}' >"$dir/y.json"
echo '{"a":"1","b":{"c":"1"}}' >"$dir/z.json"
if jcmp self "$dir/x.json" "$dir/y.json" >/dev/null; then bad "jcmp missed a missing key"; fi
if jcmp self "$dir/x.json" "$dir/z.json" >/dev/null; then bad "jcmp missed a type change"; fi

kill -0 "$pid" 2>/dev/null || bad "ucmdd died"
if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: ${#failed[@]} step(s):"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "PASS"
