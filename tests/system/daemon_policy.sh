#!/usr/bin/env bash
# ucmdd: the policy as a real boundary. One root daemon owns one controller;
# two unprivileged users use it at the same time. The policy lets user A
# read and refuses A writes and Format; user B may write and format. A's
# refusals are -EACCES with exactly one audit record each (JSON lines,
# counted). Neither user can read the controller's files: the data is
# reachable only through the daemon, judged there.
source "$(dirname "$0")/lib/daemon.sh"

A=64001
B=64002
CTRL=$T/ctrl
AUDIT=$T/audit.jsonl
cat > "$T/policy.ini" <<INI
[policy]
inherit = default

[rule a-reads]
uid = $A
device = ng0n1
verb = read
action = allow

[rule a-no-writes]
uid = $A
verb = write, write-zeroes, trim, write-uncor, copy, format
action = deny

[rule b-formats]
uid = $B
device = nvme0
verb = format
action = allow
INI

step "ucmdd owns $CTRL (created 0700), policy and audit in force"
daemon_start --ctrl "$CTRL" --policy "$T/policy.ini" --socket-mode 0666 --audit "$AUDIT"
[ "$(stat -c %a "$CTRL")" = 700 ] || fail "controller directory is $(stat -c %a "$CTRL"), not 0700"

step "B writes while A reads and is refused, at the same time"
client "$B" rw --slba 0 --nlb 8 --count 32 --seed 7 > "$T/b-prep.out" ||
	fail "B could not write the region A reads"
(
	set -e
	client "$A" rw --read-only --slba 0 --nlb 8 --count 32
	client "$A" expect-errno write --slba 4096 --want EACCES
	client "$A" expect-errno format --want EACCES
	# what A read is what B wrote
	client "$A" rw --verify-only --slba 0 --nlb 8 --count 32 --seed 7
) > "$T/a.out" 2>&1 &
apid=$!
( client "$B" rw --slba 8192 --nlb 8 --count 256 --seed 8 ) > "$T/b.out" 2>&1 &
bpid=$!
wait "$apid" || { cat "$T/a.out"; fail "user A: reads allowed, write and format refused -EACCES"; }
wait "$bpid" || { cat "$T/b.out"; fail "user B: writes allowed"; }
cat "$T/a.out" "$T/b.out"

step "B may format; A still may not"
client "$B" expect-errno format --want OK || fail "B's Format refused"
client "$A" rw --read-only --slba 0 --nlb 8 --count 4 || fail "A cannot read after B's format"

step "exactly one audit record per refusal, and only A's"
n_w=$(audit_count "$AUDIT" "r['decision'] == 'deny' and r['uid'] == $A and r['verb'] == 'write'")
n_f=$(audit_count "$AUDIT" "r['decision'] == 'deny' and r['uid'] == $A and r['verb'] == 'format'")
n_all=$(audit_count "$AUDIT" "r['decision'] == 'deny'")
[ "$n_w" = 1 ] || fail "$n_w audit records of A's refused write, not 1"
[ "$n_f" = 1 ] || fail "$n_f audit records of A's refused format, not 1"
[ "$n_all" = 2 ] || { cat "$AUDIT"; fail "$n_all refusals audited, 2 expected"; }
# the daemon judged the client, not itself
n_root=$(audit_count "$AUDIT" "r['uid'] == 0")
[ "$n_root" = 0 ] || fail "$n_root audit records name uid 0: the daemon judged itself"

step "the controller's files are the daemon's alone"
for u in "$A" "$B"; do
	if as_user "$u" cat "$CTRL/ns1.img" >/dev/null 2>&1; then fail "uid $u read ns1.img"; fi
	if as_user "$u" ls "$CTRL" >/dev/null 2>&1; then fail "uid $u listed $CTRL"; fi
	if as_user "$u" "$UCMD" --ctrl "$CTRL" read -s 0 -c 7 >/dev/null 2>&1; then
		fail "uid $u opened the controller directory without the daemon"
	fi
done

step "the CLI through the daemon: A reads, A's write is refused"
as_user "$A" "$UCMD" --daemon "$SOCK" read -s 0 -c 7 > "$T/cli.bin" ||
	fail "ucmd --daemon read as A"
[ "$(stat -c %s "$T/cli.bin")" -gt 0 ] || fail "ucmd --daemon read returned nothing"
head -c 4096 /dev/zero > "$T/zero.bin"
chmod 0644 "$T/zero.bin"
if as_user "$A" "$UCMD" --daemon "$SOCK" write -s 0 -c 7 -d "$T/zero.bin" 2>"$T/cli.err"; then
	fail "ucmd --daemon write as A allowed"
fi
grep -q "Permission denied" "$T/cli.err" || { cat "$T/cli.err"; fail "the CLI's refusal is not EACCES"; }
n_w=$(audit_count "$AUDIT" "r['decision'] == 'deny' and r['uid'] == $A and r['verb'] == 'write'")
[ "$n_w" = 2 ] || fail "$n_w audit records of A's refused writes after the CLI's, not 2"

step "SIGTERM"
daemon_stop
echo "daemon_policy: all checks passed"
