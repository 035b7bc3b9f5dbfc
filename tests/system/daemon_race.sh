#!/usr/bin/env bash
# ucmdd: the snapshot guarantee through shared memory. A user the policy
# lets read and not write submits reads while a thread of its own flips
# every SQE's NVMe opcode to Write in the shared SQ, before, during and
# after the daemon's copy. The daemon judges and executes its one copy: no
# write may reach the namespace (the region keeps its pattern), every
# command reads or is refused, and each refusal is one audit record.
# Both kinds of buffer: plain memory (bounced) and ucmd_buf_alloc() memory
# the daemon maps (zero copy, where an executed write would land directly).
source "$(dirname "$0")/lib/daemon.sh"

A=64011
W=64012
AUDIT=$T/audit.jsonl
cat > "$T/policy.ini" <<INI
[policy]
inherit = default

[rule reader-reads]
uid = $A
verb = read
action = allow

[rule reader-writes-nothing]
uid = $A
verb = write, write-zeroes, trim, write-uncor, copy, format
action = deny
INI
daemon_start --ctrl "$T/ctrl" --policy "$T/policy.ini" --socket-mode 0666 --audit "$AUDIT"

step "the region, written by a user who may"
client "$W" rw --slba 0 --nlb 8 --count 8 --seed 11 >/dev/null || fail "writing the region"

denied_total=0
for buf in malloc alloc; do
	step "race with $buf buffers"
	client "$A" race --slba 0 --count 64 --iters 4000 --seed 11 --buf "$buf" > "$T/race.out" 2>&1 ||
		{ cat "$T/race.out"; fail "race ($buf): a flipped command executed or failed oddly"; }
	cat "$T/race.out"
	grep -qx "flipped-writes-executed 0" "$T/race.out" || fail "race ($buf): flipped writes executed"
	grep -qx "corrupted-blocks 0" "$T/race.out" || fail "race ($buf): region changed"
	d=$(sed -n 's/^race: [0-9]* reads, \([0-9]*\) denied.*/\1/p' "$T/race.out")
	denied_total=$((denied_total + d))
done

step "one audit record per refused command, each a write judged from the copy"
n=$(audit_count "$AUDIT" "r['decision'] == 'deny' and r['uid'] == $A")
nw=$(audit_count "$AUDIT" "r['decision'] == 'deny' and r['uid'] == $A and r['verb'] == 'write'")
[ "$n" = "$denied_total" ] || fail "$n refusals audited for $denied_total -EACCES completions"
[ "$n" = "$nw" ] || fail "refusals of something other than a write: $n vs $nw"

daemon_stop
echo "daemon_race: no flipped write executed ($denied_total flips caught and refused)"
