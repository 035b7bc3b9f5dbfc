#!/usr/bin/env bash
# A controller directory of two controllers (create-ctrl --controllers 2)
# under `ucmd exec`: the private ucmdd makes one head over them, and the
# generated sysfs is Linux's native multipath layout, so that Debian's
# nvme-cli shows it as on Linux: `nvme list-subsys` one subsystem with both
# controllers, `nvme show-topology` namespace 1 with a path through each and
# its ANA state, `nvme list` the head's nvme0n1 once; data written through
# the head under exec reads back through ucmd's own host.
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme timeout cmp
ctrl=$T/ctrl
X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@"; }

step "a subsystem of two controllers"
"$UCMD" --ctrl "$ctrl" create-ctrl --controllers 2 --nsze=4096 > "$T/create.out" ||
	fail "create-ctrl --controllers 2"
grep -q "2 controllers (IDs 1 to 2)" "$T/create.out" || { cat "$T/create.out"; fail "create-ctrl says"; }
nqn=$("$UCMD" --ctrl "$ctrl" id-ctrl | sed -n 's/^subnqn *: //p')
[ -n "$nqn" ] || fail "no subsystem NQN"

step "nvme list-subsys: one subsystem, both controllers"
X nvme list-subsys > "$T/ls.out" 2>&1 || { cat "$T/ls.out"; fail "nvme list-subsys"; }
[ "$(grep -c '^nvme-subsys' "$T/ls.out")" = 1 ] && grep -q "^nvme-subsys0 - NQN=$nqn\$" "$T/ls.out" &&
	grep -Eq '^ \+- nvme0 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live' "$T/ls.out" &&
	grep -Eq '^ \+- nvme1 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live' "$T/ls.out" || { cat "$T/ls.out"; fail "list-subsys"; }

step "nvme show-topology: namespace 1, a path through each controller, ANA optimized"
X nvme show-topology > "$T/topo.out" 2>&1 || { cat "$T/topo.out"; fail "nvme show-topology"; }
grep -q '^ +- ns 1$' "$T/topo.out" &&
	grep -Eq '^  \+- nvme0 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live optimized$' "$T/topo.out" &&
	grep -Eq '^  \+- nvme1 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live optimized$' "$T/topo.out" ||
	{ cat "$T/topo.out"; fail "show-topology"; }

step "nvme list: the head's namespace once"
X nvme list > "$T/list.out" 2>&1 || { cat "$T/list.out"; fail "nvme list"; }
[ "$(grep -c '^/dev/nvme0n1 ' "$T/list.out")" = 1 ] && ! grep -q '/dev/nvme1n1' "$T/list.out" ||
	{ cat "$T/list.out"; fail "nvme list"; }

step "data through the head under exec, read back by ucmd"
head -c 8192 /dev/urandom > "$T/pat"
X nvme write /dev/nvme0n1 -s 8 -c 15 -z 8192 -d "$T/pat" > "$T/w.out" 2>&1 ||
	{ cat "$T/w.out"; fail "nvme write through the head"; }
"$UCMD" --ctrl "$ctrl" read -s 8 -c 15 -z 8192 -d "$T/back" > /dev/null || fail "ucmd read"
cmp "$T/pat" "$T/back" || fail "the data differ"
echo "PASS"
