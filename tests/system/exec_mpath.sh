#!/usr/bin/env bash
# A controller directory of two controllers (create-ctrl --controllers 2)
# under `ucmd exec`: the private ucmdd makes one head over them, and the
# generated sysfs is Linux's native multipath layout, so that Debian's
# nvme-cli shows it as on Linux: `nvme list-subsys` one subsystem with both
# controllers, `nvme show-topology` namespace 1 with a path through each and
# its ANA state, `nvme list` the head's nvme0n1 once; data written through
# the head under exec reads back through ucmd's own host. NVME_IOCTL_IO_CMD
# on a controller's /dev/nvmeX (nvme io-passthru) runs on that controller's
# own path of the namespace, as Linux's nvme_dev_user_cmd does, not through
# the head's path selection: each controller's Host Write Commands count it.
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

step "ucmd list-subsys: the same subsystem and paths as nvme-cli's, key for key (JSON)"
X nvme list-subsys -o json >"$T/ls_nvme.json" 2>&1 || { cat "$T/ls_nvme.json"; fail "nvme list-subsys -o json"; }
"$UCMD" --ctrl "$ctrl" list-subsys -o json >"$T/ls_ucmd.json" 2>&1 ||
	{ cat "$T/ls_ucmd.json"; fail "ucmd list-subsys -o json"; }
python3 - "$T/ls_nvme.json" "$T/ls_ucmd.json" <<'PY' || fail "ucmd list-subsys differs from nvme-cli's"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
if a != b:
    print("nvme-cli:", json.dumps(a, indent=1)); print("ucmd:", json.dumps(b, indent=1)); sys.exit(1)
paths = [p["Name"] for p in a[0]["Subsystems"][0]["Paths"]]
if paths != ["nvme0", "nvme1"]:
    print("paths:", paths); sys.exit(1)
PY

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

# One session: each controller's SMART Host Write Commands, a write through
# /dev/nvme$1 by io-passthru, the counts again (four numbers, one a line).
cat > "$T/pw.sh" <<'EOF'
hwc() { nvme smart-log "/dev/nvme$1" -o json | sed -n 's/^ *"host_write_commands":"\([0-9]*\)",*$/\1/p'; }
hwc 0 && hwc 1 &&
	nvme io-passthru "/dev/nvme$1" --opcode=1 --namespace-id=1 --data-len=512 \
		--cdw10=$((100 + $1)) --write -i "$2" >&2 &&
	hwc 0 && hwc 1
EOF
for c in 1 0; do
	step "nvme io-passthru on /dev/nvme$c: on that controller only, data read back by ucmd"
	# nvme0 non-optimized: the head's path selection would pick nvme1
	[ "$c" = 1 ] || "$UCMD" --ctrl "$ctrl" ana-state --controller nvme0 --state non-optimized \
		> /dev/null || fail "ana-state nvme0 non-optimized"
	head -c 512 /dev/urandom > "$T/blk$c"
	X bash "$T/pw.sh" "$c" "$T/blk$c" > "$T/pw.out" 2> "$T/pw.err" ||
		{ cat "$T/pw.err"; fail "io-passthru write on nvme$c"; }
	mapfile -t n < "$T/pw.out"
	[ "${#n[@]}" = 4 ] || { cat "$T/pw.out" "$T/pw.err"; fail "no host_write_commands in smart-log"; }
	if [ "$c" = 1 ]; then
		[ "${n[3]}" = $((n[1] + 1)) ] && [ "${n[2]}" = "${n[0]}" ]
	else
		[ "${n[2]}" = $((n[0] + 1)) ] && [ "${n[3]}" = "${n[1]}" ]
	fi || fail "nvme$c's write counted: nvme0 ${n[0]} -> ${n[2]}, nvme1 ${n[1]} -> ${n[3]}"
	"$UCMD" --ctrl "$ctrl" read -s $((100 + c)) -c 0 -z 512 -d "$T/blkback" > /dev/null || fail "ucmd read"
	cmp "$T/blk$c" "$T/blkback" || fail "nvme$c's io-passthru data differ"
	X nvme io-passthru "/dev/nvme$c" --opcode=2 --namespace-id=1 --data-len=512 \
		--cdw10=$((100 + c)) --read -b > "$T/pr.out" 2> "$T/pr.err" ||
		{ cat "$T/pr.err"; fail "io-passthru read on nvme$c"; }
	cmp "$T/blk$c" "$T/pr.out" || fail "nvme$c's io-passthru read differs"
done
# ucmd list-subsys [DEVICE] and nvme-cli's under exec, text and JSON, byte
# for byte (nvme-cli's text has a path's empty ANA field: a trailing space).
same_list_subsys() {
	local d=$1 f
	for f in normal json; do
		X nvme list-subsys -o "$f" ${d:+"$d"} > "$T/lsn.$f" 2>&1 ||
			{ cat "$T/lsn.$f"; fail "nvme list-subsys -o $f $d"; }
		"$UCMD" --ctrl "$ctrl" list-subsys -o "$f" ${d:+"$d"} > "$T/lsu.$f" 2>&1 ||
			{ cat "$T/lsu.$f"; fail "ucmd list-subsys -o $f $d"; }
		cmp -s "$T/lsn.$f" "$T/lsu.$f" ||
			{ diff "$T/lsn.$f" "$T/lsu.$f"; fail "list-subsys -o $f $d: ucmd differs from nvme-cli"; }
	done
}

step "list-subsys /dev/nvme0n1: each path's ANA state, nvme1 made inaccessible, as nvme-cli's"
"$UCMD" --ctrl "$ctrl" ana-state --controller nvme1 --state inaccessible > /dev/null ||
	fail "ana-state nvme1 inaccessible"
for d in /dev/nvme0n1 "" /dev/nvme0n7 /dev/nvme1n1 /dev/nvme0n-1; do
	same_list_subsys "$d"
done
"$UCMD" --ctrl "$ctrl" list-subsys /dev/nvme0n1 > "$T/lsu.txt" || fail "ucmd list-subsys /dev/nvme0n1"
grep -Eq '^ \+- nvme0 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live non-optimized$' "$T/lsu.txt" &&
	grep -Eq '^ \+- nvme1 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live inaccessible$' "$T/lsu.txt" ||
	{ cat "$T/lsu.txt"; fail "list-subsys /dev/nvme0n1: the ANA states"; }
"$UCMD" --ctrl "$ctrl" list-subsys /dev/nvme0c1n1 > "$T/bad.out" 2>&1 && fail "nvme0c1n1 taken"
grep -q '^Invalid device name nvme0c1n1$' "$T/bad.out" || { cat "$T/bad.out"; fail "its message"; }

step "list-subsys of a namespace attached to nvme1 alone: its one path (Linux's)"
"$UCMD" --ctrl "$ctrl" create-ns --nsze=256 > /dev/null && "$UCMD" --ctrl "$ctrl" attach-ns -n 2 -c 2 \
	> /dev/null || fail "namespace 2 on controller 2"
# with its one path usable, nvme-cli under exec agrees: exec's sysfs has a
# path only through a controller the namespace is attached to, as Linux's
"$UCMD" --ctrl "$ctrl" ana-state --controller nvme1 --state optimized > /dev/null ||
	fail "ana-state nvme1 optimized"
same_list_subsys /dev/nvme0n2
"$UCMD" --ctrl "$ctrl" ana-state --controller nvme1 --state inaccessible > /dev/null ||
	fail "ana-state nvme1 inaccessible again"
# with none usable, NVME_IOCTL_ID on the head is EWOULDBLOCK (Linux's
# nvme_ns_head_ioctl), so nvme-cli lists every controller without a state;
# ucmd's list-subsys still shows the one path and why it is unusable
X nvme id-ns /dev/nvme0n2 > "$T/idns2.out" 2>&1 && fail "id-ns through a head with no usable path"
grep -q "Resource temporarily unavailable" "$T/idns2.out" || { cat "$T/idns2.out"; fail "its errno"; }
"$UCMD" --ctrl "$ctrl" list-subsys -o json /dev/nvme0n2 > "$T/ls2.json" || fail "list-subsys nvme0n2"
python3 - "$T/ls2.json" <<'PY' || fail "list-subsys /dev/nvme0n2"
import json, sys
p = json.load(open(sys.argv[1]))[0]["Subsystems"][0]["Paths"]
if [(x["Name"], x["ANAState"]) for x in p] != [("nvme1", "inaccessible")]:
    print(p); sys.exit(1)
PY
echo "PASS"
