#!/usr/bin/env bash
# The CLI through ucmdd (--daemon, $UCMD_DAEMON): root starts the daemon on
# a controller directory of its own; root and an unprivileged user (uid
# 1234, no groups, no capabilities) run ucmd against its socket. The
# daemon's policy lets uid 1234 identify and read, nothing else: its read
# returns what root wrote, its write is -EACCES (and audited once), and it
# cannot reach the images themselves, neither directly nor with --ctrl.
source "$(dirname "$0")/lib/daemon.sh"
dir=$T	# the socket's directory (0755): others may reach the socket
sock=$SOCK
READER=(setpriv --reuid 1234 --regid 1234 --clear-groups --inh-caps=-all --)
RUCMD=$(shared "$UCMD")	# a copy of the CLI uid 1234 can reach

cat > "$dir/policy.ini" <<'INI'
[policy]
default = deny

[rule root]
uid = 0
action = allow

[rule reader-identify]
uid = 1234
verb = identify
action = allow

[rule reader-reads]
uid = 1234
verb = read
action = allow
INI

step "ucmdd owns the controller directory"
# who may connect is the socket's mode (--socket-mode, with the policy); what they may do, the policy's
daemon_start --ctrl "$dir/ctrl" --policy "$dir/policy.ini" --socket-mode 0666 --audit "$dir/audit.jsonl"
[ "$(stat -c %a "$SOCK")" = 666 ] || fail "socket mode $(stat -c %a "$SOCK")"

step "root: list, id-ctrl, write, read"
timeout 60 "$UCMD" --daemon "$sock" list | tee "$dir/list.txt"
grep -q "ng0n1" "$dir/list.txt" || fail "list does not show ng0n1"
timeout 60 "$UCMD" --daemon "$sock" --output-format json id-ctrl >"$dir/id.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert "sn" in j or "vid" in j, j' \
	"$dir/id.json" || fail "id-ctrl through the daemon"
head -c 4096 /dev/urandom > "$dir/in.bin"
timeout 60 "$UCMD" --daemon "$sock" write -s 16 -c 7 -d "$dir/in.bin" 2>/dev/null
timeout 60 "$UCMD" --daemon "$sock" read -s 16 -c 7 > "$dir/root-out.bin"
cmp "$dir/in.bin" "$dir/root-out.bin" || fail "root's read back differs"

step "uid 1234: reads what the policy allows"
# $UCMD_DAEMON is the default when neither --ctrl nor a /dev path is given
UCMD_DAEMON="$sock" timeout 60 "${READER[@]}" "$RUCMD" id-ctrl >/dev/null
timeout 60 "${READER[@]}" "$RUCMD" --daemon "$sock" read -s 16 -c 7 > "$dir/user-out.bin"
cmp "$dir/in.bin" "$dir/user-out.bin" || fail "uid 1234's read differs from what root wrote"

step "uid 1234: a write is refused with EACCES, audited once"
if timeout 60 "${READER[@]}" "$RUCMD" --daemon "$sock" write -s 16 -c 7 -d /dev/zero 2>"$dir/err"; then
	fail "uid 1234 wrote"
fi
grep -q "Permission denied" "$dir/err" || { cat "$dir/err"; fail "the write's error is not EACCES"; }
timeout 60 "$UCMD" --daemon "$sock" read -s 16 -c 7 > "$dir/root-out2.bin"
cmp "$dir/in.bin" "$dir/root-out2.bin" || fail "the refused write changed the data"
python3 - "$dir/audit.jsonl" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
deny = [r for r in recs if r.get("decision") == "deny" and r.get("uid") == 1234]
assert len(deny) == 1 and deny[0].get("verb") == "write", recs
PY

step "uid 1234 cannot reach the images"
imgs=$(find "$dir/ctrl" -type f)
[ -n "$imgs" ] || fail "no files in the controller directory"
for f in $imgs; do
	if "${READER[@]}" cat "$f" >/dev/null 2>&1; then fail "uid 1234 read $f"; fi
done
if timeout 60 "${READER[@]}" "$RUCMD" --ctrl "$dir/ctrl" read -s 16 -c 7 >/dev/null 2>&1; then
	fail "uid 1234 opened the daemon's directory in process"
fi

step "SIGTERM: ucmdd exits 0, then clients get a clear error, not a hang"
daemon_stop	# exit status 0, or fail
if timeout 20 "$UCMD" --daemon "$sock" list >/dev/null 2>"$dir/err"; then
	fail "list worked with no daemon"
fi
grep -qi "ucmdd\|refused\|No such file" "$dir/err" || { cat "$dir/err"; fail "unclear error"; }
echo "daemon_cli: all checks passed"
