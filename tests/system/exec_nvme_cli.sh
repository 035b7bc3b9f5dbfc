#!/usr/bin/env bash
# Debian's nvme-cli, unmodified, on ucmd's devices through `ucmd exec` (a
# private ucmdd on a fresh controller directory): every answer, parsed from
# -o json or read back as bytes, is checked against what the controller
# holds as ucmd's own CLI reports it. Every step runs, and the failures are
# listed at the end (one run shows all of what does not work).
source "$(dirname "$0")/lib/common.sh"
dir=$T
ctrl="$dir/ctrl"
failed=()
bad() { echo "  FAIL: $*"; failed+=("$*"); }
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme python3

# nvme-cli under ucmd exec; its stderr is kept for the failure message
X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" --create --trace -- "$@" 2>"$dir/err"; }
ucmd_json() { timeout 60 "$UCMD" --ctrl "$ctrl" -o json "$@"; }
# py 'expression over a (nvme-cli's JSON) and u (ucmd's)' -> exit 0 if true
py() {
	python3 - "$@" <<'PY'
import json, sys
expr, fa, fu = sys.argv[1], sys.argv[2], sys.argv[3]
a = json.load(open(fa))
u = json.load(open(fu)) if fu != "-" else None
s = lambda v: v.strip() if isinstance(v, str) else v
try:
    ok = eval(expr)
except (KeyError, IndexError, TypeError) as e:
    print("    no such field:", repr(e))
    ok = False
if not ok:
    print("    nvme-cli:", json.dumps(a)[:400], "\n    ucmd:", json.dumps(u)[:400])
sys.exit(0 if ok else 1)
PY
}
errtail() { sed 's/^/    stderr: /' "$dir/err" | tail -5; }

step "a fresh controller (ucmd makes it), and what it holds"
timeout 60 "$UCMD" --ctrl "$ctrl" --create -o json list >"$dir/u-list.json" || fail "ucmd list on $ctrl"
ucmd_json id-ctrl >"$dir/u-ctrl.json" || fail "ucmd id-ctrl"
ucmd_json id-ns >"$dir/u-ns.json" || fail "ucmd id-ns"
ucmd_json smart-log >"$dir/u-smart.json" || fail "ucmd smart-log"

step "nvme id-ctrl /dev/nvme0 -o json"
if X nvme id-ctrl /dev/nvme0 -o json >"$dir/ctrl.json"; then
	# every scalar field both print must agree (strings as space-padded on the wire)
	py '[k for k in a if k in u and not isinstance(a[k], (list, dict)) and s(a[k]) != s(u[k])] == [] and len([k for k in a if k in u]) >= 10' \
		"$dir/ctrl.json" "$dir/u-ctrl.json" || bad "id-ctrl differs from ucmd id-ctrl"
else bad "nvme id-ctrl failed"; errtail; fi

for dev in /dev/nvme0n1 /dev/ng0n1; do
	step "nvme id-ns $dev -o json"
	if X nvme id-ns "$dev" -o json >"$dir/ns.json"; then
		py 'all(a[k] == u[k] for k in ("nsze", "ncap", "flbas", "nlbaf")) and [(l["ms"], l["ds"]) for l in a["lbafs"]] == [(l["ms"], l["ds"]) for l in u["lbafs"]]' \
			"$dir/ns.json" "$dir/u-ns.json" || bad "id-ns $dev differs from ucmd id-ns"
	else bad "nvme id-ns $dev failed"; errtail; fi
done
step "nvme id-ns /dev/nvme0 -n 1 -o json"
if X nvme id-ns /dev/nvme0 -n 1 -o json >"$dir/ns.json"; then
	py 'a["nsze"] == u["nsze"]' "$dir/ns.json" "$dir/u-ns.json" || bad "id-ns -n 1 differs"
else bad "nvme id-ns /dev/nvme0 -n 1 failed"; errtail; fi

step "nvme list -o json (libnvme's scan of the generated /sys)"
if X nvme list -o json >"$dir/list.json"; then
	lba=$(python3 -c 'import json,sys; u=json.load(open(sys.argv[1])); print(1 << u["lbafs"][u["flbas"] & 15]["ds"])' "$dir/u-ns.json")
	py 'len(a["Devices"]) == 1 and a["Devices"][0]["DevicePath"] == "/dev/nvme0n1" and s(a["Devices"][0]["SerialNumber"]) == s(u["sn"]) and s(a["Devices"][0]["ModelNumber"]) == s(u["mn"]) and s(a["Devices"][0]["Firmware"]) == s(u["fr"])' \
		"$dir/list.json" "$dir/u-ctrl.json" || bad "nvme list: device or controller fields"
	py "a['Devices'][0]['MaximumLBA'] == u['nsze'] and a['Devices'][0]['SectorSize'] == $lba and a['Devices'][0]['PhysicalSize'] == u['nsze'] * $lba" \
		"$dir/list.json" "$dir/u-ns.json" || bad "nvme list: namespace size"
else bad "nvme list failed"; errtail; fi

step "nvme list-subsys -o json"
if X nvme list-subsys -o json >"$dir/subsys.json"; then
	py '[(x["Name"], x["NQN"], [(p["Name"], p["Transport"], p["State"]) for p in x["Paths"]]) for x in a[0]["Subsystems"]] == [("nvme-subsys0", s(u["subnqn"]), [("nvme0", "pcie", "live")])]' \
		"$dir/subsys.json" "$dir/u-ctrl.json" || bad "list-subsys"
else bad "nvme list-subsys failed"; errtail; fi

step "nvme smart-log, error-log, get-log"
if X nvme smart-log /dev/nvme0 -o json >"$dir/smart.json"; then
	py 'all(a[k] == u[k] for k in ("critical_warning", "avail_spare", "spare_thresh", "percent_used"))' \
		"$dir/smart.json" "$dir/u-smart.json" || bad "smart-log differs"
else bad "nvme smart-log failed"; errtail; fi
if X nvme error-log /dev/nvme0 -o json >"$dir/errlog.json"; then
	# as many entries as Identify Controller's ELPE says the controller keeps
	py 'isinstance(a["errors"], list) and len(a["errors"]) == u["elpe"] + 1' \
		"$dir/errlog.json" "$dir/ctrl.json" || bad "error-log: entries"
else bad "nvme error-log failed"; errtail; fi
if X nvme get-log /dev/nvme0 --log-id=2 --log-len=512 -b >"$dir/smart.bin"; then
	python3 - "$dir/smart.bin" "$dir/u-smart.json" <<'PY' || bad "get-log 2: bytes differ from the SMART log"
import json, sys
b = open(sys.argv[1], "rb").read()
u = json.load(open(sys.argv[2]))
sys.exit(0 if len(b) == 512 and b[0] == u["critical_warning"] and b[3] == u["avail_spare"]
         and b[4] == u["spare_thresh"] else 1)
PY
else bad "nvme get-log failed"; errtail; fi

step "nvme admin-passthru: Identify Controller, raw"
if X nvme admin-passthru /dev/nvme0 --opcode=0x06 --cdw10=1 --data-len=4096 -r -b >"$dir/idctrl.bin"; then
	python3 - "$dir/idctrl.bin" "$dir/u-ctrl.json" <<'PY' || bad "admin-passthru: serial/model bytes"
import json, sys
b = open(sys.argv[1], "rb").read()
u = json.load(open(sys.argv[2]))
sys.exit(0 if len(b) == 4096 and b[4:24].decode().strip() == u["sn"].strip()
         and b[24:64].decode().strip() == u["mn"].strip() else 1)
PY
else bad "nvme admin-passthru failed"; errtail; fi

step "nvme io-passthru: write then read 8 blocks of ng0n1"
lba=$(python3 -c 'import json,sys; u=json.load(open(sys.argv[1])); print(1 << u["lbafs"][u["flbas"] & 15]["ds"])' "$dir/u-ns.json")
len=$((8 * lba))
head -c "$len" /dev/urandom >"$dir/data1"
if X nvme io-passthru /dev/ng0n1 --opcode=0x01 --namespace-id=1 --cdw10=16 --cdw12=7 \
	--data-len="$len" -w --input-file="$dir/data1" >/dev/null &&
   X nvme io-passthru /dev/ng0n1 --opcode=0x02 --namespace-id=1 --cdw10=16 --cdw12=7 \
	--data-len="$len" -r -b >"$dir/out1"; then
	cmp -s "$dir/data1" "$dir/out1" || bad "io-passthru: read back differs"
	timeout 60 "$UCMD" --ctrl "$ctrl" read --start-block=16 --block-count=7 >"$dir/out1u" &&
		cmp -s "$dir/data1" "$dir/out1u" || bad "io-passthru: ucmd read of the same blocks differs"
else bad "nvme io-passthru failed"; errtail; fi

for dev in /dev/ng0n1 /dev/nvme0n1; do
	step "nvme write/read/compare on $dev"
	head -c "$len" /dev/urandom >"$dir/data2"
	if X nvme write "$dev" --start-block=100 --block-count=7 --data-size="$len" \
		--data="$dir/data2" >/dev/null &&
	   X nvme read "$dev" --start-block=100 --block-count=7 --data-size="$len" \
		--data="$dir/out2" >/dev/null; then
		cmp -s "$dir/data2" "$dir/out2" || bad "read on $dev: differs from what was written"
		X nvme compare "$dev" --start-block=100 --block-count=7 --data-size="$len" \
			--data="$dir/data2" >/dev/null || bad "compare on $dev: same data miscompares"
		head -c "$len" /dev/zero >"$dir/zero"
		if X nvme compare "$dev" --start-block=100 --block-count=7 --data-size="$len" \
			--data="$dir/zero" >/dev/null; then
			bad "compare on $dev: other data compares equal"
		fi
	else bad "nvme write/read on $dev failed"; errtail; fi
done

step "nvme format: to the 4 KiB, no-metadata LBA format"
fmt4k=$(python3 -c 'import json,sys; u=json.load(open(sys.argv[1])); print([i for i, l in enumerate(u["lbafs"]) if l["ds"] == 12 and l["ms"] == 0][0])' "$dir/u-ns.json")
X nvme format /dev/nvme0 -n 1 --lbaf="$fmt4k" --force >/dev/null || { bad "nvme format failed"; errtail; }
ucmd_json id-ns >"$dir/u-ns2.json"
if X nvme id-ns /dev/ng0n1 -o json >"$dir/ns2.json"; then
	py "(a['flbas'] & 15) == $fmt4k == (u['flbas'] & 15) and a['nsze'] == u['nsze']" \
		"$dir/ns2.json" "$dir/u-ns2.json" || bad "format: id-ns does not show the new format"
else bad "nvme id-ns after format failed"; errtail; fi
if X nvme read /dev/ng0n1 --start-block=16 --block-count=0 --data-size=4096 \
	--data="$dir/out3" >/dev/null; then
	cmp -s "$dir/out3" <(head -c 4096 /dev/zero) || bad "format: old data still there"
else bad "nvme read after format failed"; errtail; fi

step "nvme create-ns, attach-ns; the new namespace; detach-ns, delete-ns"
cntlid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cntlid"])' "$dir/u-ctrl.json")
if X nvme create-ns /dev/nvme0 --nsze=4096 --ncap=4096 --flbas="$fmt4k" >"$dir/create.txt"; then
	grep -q "created nsid:2" "$dir/create.txt" || bad "create-ns: $(cat "$dir/create.txt")"
	X nvme attach-ns /dev/nvme0 --namespace-id=2 --controllers="$cntlid" >/dev/null ||
		{ bad "attach-ns failed"; errtail; }
	if X nvme id-ns /dev/ng0n2 -o json >"$dir/ns3.json"; then
		py 'a["nsze"] == 4096 and (a["flbas"] & 15) == int(sys.argv[4])' "$dir/ns3.json" - "$fmt4k" ||
			bad "id-ns of the new namespace"
	else bad "nvme id-ns /dev/ng0n2 failed"; errtail; fi
	X sh -c 'cat /sys/class/nvme/nvme0/ng0n2/dev && cat /sys/block/nvme0n2/size' >"$dir/sys.txt" ||
		bad "sysfs of the new namespace"
	[ "$(tail -1 "$dir/sys.txt")" = $((4096 * 8)) ] || bad "sysfs size of nvme0n2: $(cat "$dir/sys.txt")"
	X nvme detach-ns /dev/nvme0 --namespace-id=2 --controllers="$cntlid" >/dev/null ||
		{ bad "detach-ns failed"; errtail; }
	X nvme delete-ns /dev/nvme0 --namespace-id=2 >/dev/null || { bad "delete-ns failed"; errtail; }
	ucmd_json list >"$dir/u-list2.json"
	# ucmd list -o json is nvme-cli's layout
	py '[x["DevicePath"] for x in a["Devices"]] == ["/dev/nvme0n1"]' "$dir/u-list2.json" - ||
		bad "the namespace is still there after delete-ns"
else bad "nvme create-ns failed"; errtail; fi

step "a path that is not ucmd's is untouched; a device ucmd has not is absent"
X sh -c 'test -e /dev/null && ! test -e /dev/ng7n1 && ! test -e /sys/class/nvme/nvme7' ||
	bad "/dev/null or an absent device"

if [ ${#failed[@]} -gt 0 ]; then
	echo "FAIL: ${#failed[@]} step(s):"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "PASS"
