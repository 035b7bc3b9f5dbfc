#!/usr/bin/env bash
# /dev and /sys under `ucmd exec` are Linux's with ucmd's controller in
# them, as seen by programs nobody here wrote (coreutils ls, findutils
# find, Python, Debian's nvme-cli 2.3 through libnvme 1.3):
#  - listings of /dev, /sys/block, /sys/class, /sys/bus/pci/devices show
#    ucmd's devices beside the host's;
#  - the controller is a PCI function, /sys/devices/pci0000:00/0000:00:SS.0,
#    with nvme/nvme0 under it, the class, bus and driver links, vendor,
#    device and class files; nvme list -v and show-topology give its address;
#    find /sys/devices -name '*nvme0' | grep pci (nvme-cli's test suite's
#    check for a device) finds it;
#  - resource0 is the controller's register file, read and mmap'd: nvme
#    show-regs prints what the controller holds (CAP, VS, CC, CSTS, AQA
#    compared with ucmd's own show-regs of the same controller directory)
#    and effects-log without --csi, which reads CAP.CSS there, works;
#    writing it is EACCES;
#  - /sys/bus/pci/rescan and rescan_controller are accepted.
source "$(dirname "$0")/lib/common.sh"
set -euo pipefail
ctrl=$T/ctrl
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme python3 find

X() { timeout -k 5 120 "$UCMD" exec --ctrl "$ctrl" -- "$@"; }
timeout 60 "$UCMD" --ctrl "$ctrl" --create list >/dev/null || fail "ucmd list on a new $ctrl"

step "listings of /dev, /sys/block, /sys/class and /sys/class/nvme show ucmd's devices"
X python3 - >"$T/ls.txt" <<'PY' || fail "listing under exec"
import os, stat
def names(d): return sorted(os.listdir(d))
dev = {e.name: e for e in os.scandir("/dev") if e.name.startswith(("nvme", "ng"))}
print("dev", sorted(dev))
for n in sorted(dev):
    m = os.stat("/dev/" + n).st_mode
    print("stat", n, "c" if stat.S_ISCHR(m) else "b" if stat.S_ISBLK(m) else "?")
print("block", [n for n in names("/sys/block") if n.startswith("nvme")])
print("class", [n for n in names("/sys/class") if n.startswith("nvme")])
print("classnvme", names("/sys/class/nvme"))
print("generic", names("/sys/class/nvme-generic"))
PY
grep -qx "dev \['ng0n1', 'nvme0', 'nvme0n1'\]" "$T/ls.txt" || { cat "$T/ls.txt"; fail "/dev listing"; }
grep -qx "stat ng0n1 c" "$T/ls.txt" && grep -qx "stat nvme0 c" "$T/ls.txt" &&
	grep -qx "stat nvme0n1 b" "$T/ls.txt" || { cat "$T/ls.txt"; fail "/dev entries' types"; }
grep -qx "block \['nvme0n1'\]" "$T/ls.txt" || { cat "$T/ls.txt"; fail "/sys/block listing"; }
grep -qx "class \['nvme', 'nvme-generic', 'nvme-subsystem'\]" "$T/ls.txt" ||
	{ cat "$T/ls.txt"; fail "/sys/class listing"; }
grep -qx "classnvme \['nvme0'\]" "$T/ls.txt" && grep -qx "generic \['ng0n1'\]" "$T/ls.txt" ||
	{ cat "$T/ls.txt"; fail "/sys/class/nvme, nvme-generic listings"; }
X ls /dev >"$T/lsdev.txt" || fail "ls /dev"
grep -qx nvme0n1 "$T/lsdev.txt" && grep -qx null "$T/lsdev.txt" ||
	fail "ls /dev: $(tr '\n' ' ' <"$T/lsdev.txt")"

step "the controller is a PCI function: links, ids, address"
X sh -c 'readlink /sys/class/nvme/nvme0; readlink /sys/class/nvme/nvme0/device;
	cat /sys/class/nvme/nvme0/address /sys/class/nvme/nvme0/transport;
	cat /sys/class/nvme/nvme0/device/vendor /sys/class/nvme/nvme0/device/device;
	cat /sys/class/nvme/nvme0/device/class; readlink /sys/class/nvme/nvme0/device/driver;
	ls /sys/bus/pci/devices; ls /sys/bus/pci/drivers/nvme;
	readlink -f /sys/bus/pci/devices/$(cat /sys/class/nvme/nvme0/address)/nvme/nvme0' \
	>"$T/pci.txt" || { cat "$T/pci.txt"; fail "reading the PCI function"; }
mapfile -t L <"$T/pci.txt"
addr=${L[2]}
[[ $addr =~ ^0000:00:[0-9a-f]{2}\.0$ ]] || fail "address '$addr' is not a PCI function's"
[ -e "/sys/bus/pci/devices/$addr" ] && fail "$addr is the host's own function"
[ "${L[0]}" = "../../devices/pci0000:00/$addr/nvme/nvme0" ] || fail "class link: ${L[0]}"
[ "${L[1]}" = "../../../$addr" ] || fail "device link: ${L[1]}"
[ "${L[3]}" = pcie ] || fail "transport ${L[3]}"
[ "${L[4]} ${L[5]} ${L[6]}" = "0x1b36 0x0010 0x010802" ] ||
	fail "vendor/device/class: ${L[4]} ${L[5]} ${L[6]}"
[ "${L[7]}" = ../../../bus/pci/drivers/nvme ] || fail "driver link: ${L[7]}"
grep -qx "$addr" <(sed -n '9,$p' "$T/pci.txt" | sort | uniq -c | awk '$1 == 2 {print $2}') ||
	{ cat "$T/pci.txt"; fail "$addr not in /sys/bus/pci/devices and drivers/nvme"; }
grep -qx "/sys/devices/pci0000:00/$addr/nvme/nvme0" "$T/pci.txt" ||
	{ cat "$T/pci.txt"; fail "/sys/bus/pci/devices/$addr/nvme/nvme0"; }

step "find /sys/devices -name '*nvme0' (nvme-cli's test suite's check) finds the PCI device"
X find /sys/devices -name '*nvme0' >"$T/find.txt" || { cat "$T/find.txt"; fail "find failed"; }
grep -qx "/sys/devices/pci0000:00/$addr/nvme/nvme0" "$T/find.txt" ||
	{ cat "$T/find.txt"; fail "find did not find the controller under its PCI function"; }

step "nvme list -v, show-topology: the controller at its PCI address"
X nvme list -v -o json >"$T/listv.json" || fail "nvme list -v"
python3 - "$T/listv.json" "$addr" <<'PY' || fail "nvme list -v: $(cat "$T/listv.json")"
import json, sys
j = json.load(open(sys.argv[1]))
c = [c for d in j["Devices"] for s in d["Subsystems"] for c in s["Controllers"]]
assert [(x["Controller"], x["Transport"], x["Address"]) for x in c] == [("nvme0", "pcie", sys.argv[2])], c
assert [n["NameSpace"] for n in c[0]["Namespaces"]] == ["nvme0n1"], c
PY
X nvme show-topology -o json >"$T/topo.json" || fail "nvme show-topology"
python3 - "$T/topo.json" "$addr" <<'PY' || fail "show-topology: $(cat "$T/topo.json")"
import json, sys
j = json.load(open(sys.argv[1]))
c = [(c["Name"], c["Transport"], c["Address"], c["State"]) for h in j for s in h["Subsystems"]
     for n in s["Namespaces"] for c in n["Controller"]]
assert c == [("nvme0", "pcie", sys.argv[2], "live")], c
PY

step "nvme show-regs reads resource0: what the controller holds"
X nvme show-regs /dev/nvme0 -H >"$T/regs.txt" || fail "nvme show-regs -H"
grep -q "Enable                              (EN): Yes" "$T/regs.txt" || fail "show-regs -H: CC.EN"
# nvme-cli 2.3 exits with the output format as its status under -o json
# (show_registers: err = flags): the JSON itself is what is judged
X nvme show-regs /dev/nvme0 -o json >"$T/regs.json" || true
timeout 60 "$UCMD" --ctrl "$ctrl" show-regs -o json >"$T/uregs.json" || fail "ucmd show-regs"
python3 - "$T/regs.json" "$T/uregs.json" <<'PY' || fail "show-regs differs from the controller's"
import json, sys
a, u = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
bad = [(k, a.get(k), u.get(k)) for k in ("cap", "vs", "cc", "csts", "aqa") if a.get(k) != u.get(k)]
# a live controller: enabled, ready, an admin queue
# ASQ and ACQ are the daemon's addresses: zeros through it
ok = not bad and a["cc"] & 1 and a["csts"] & 1 and a["aqa"] and a["vs"] >= 0x10400 \
    and a["asq"] == a["acq"] == 0
if not ok:
    print("    nvme-cli vs ucmd:", bad, a)
sys.exit(0 if ok else 1)
PY
# ucmd's own show-regs through the same daemon (UCMDD_REGS_READ, not Property Get)
X sh -c '"$0" --daemon "$UCMD_DAEMON" show-regs -o json' "$UCMD" >"$T/dregs.json" ||
	fail "ucmd --daemon show-regs"
python3 - "$T/regs.json" "$T/dregs.json" <<'PY' || fail "ucmd show-regs through ucmdd differs"
import json, sys
a, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sys.exit(0 if all(a[k] == d[k] for k in ("cap", "vs", "cc", "csts", "aqa", "asq", "acq")) else 1)
PY
X nvme effects-log /dev/nvme0 -o json >"$T/effects.json" || fail "nvme effects-log"
python3 - "$T/effects.json" <<'PY' || fail "effects-log: $(head -c 400 "$T/effects.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert 0 in [x["command_set_identifier"] for x in j], j   # the NVM command set, from CAP.CSS
nvm = [x for x in j if x["command_set_identifier"] == 0][0]
assert nvm["admin_cmd_set"]["ACS_6 (Identify)"] & 1
PY

step "resource0: read, mmap read-only; writing is EACCES"
X python3 - >"$T/res.txt" 2>&1 <<'PY' || { cat "$T/res.txt"; fail "resource0"; }
import errno, mmap, os
p = "/sys/class/nvme/nvme0/device/resource0"
fd = os.open(p, os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ)
assert m[0:0x38] == os.pread(fd, 0x38, 0), "mmap and read differ"
cc = int.from_bytes(m[0x14:0x18], "little")
assert cc & 1, hex(cc)
for flags in (os.O_WRONLY, os.O_RDWR):
    try:
        os.open(p, flags)
        raise SystemExit("opened for writing")
    except PermissionError:
        pass
try:
    mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    raise SystemExit("writable mapping")
except PermissionError:
    pass
try:
    open("/sys/class/nvme/nvme0/model", "w")
    raise SystemExit("model opened for writing")
except PermissionError:
    pass
print("ok")
PY

step "/sys/bus/pci/rescan and rescan_controller are accepted"
X sh -c 'echo 1 >/sys/bus/pci/rescan && echo 1 >/sys/class/nvme/nvme0/rescan_controller &&
	test -b /dev/nvme0n1' || fail "rescan"

step "ls -l in the tree and on a device: no error (lgetxattr reaches the tree, ENODATA)"
X ls -lL /sys/class/nvme /sys/class/nvme/nvme0/ /dev/nvme0n1 >"$T/lsl.out" 2>"$T/lsl.err" ||
	{ cat "$T/lsl.err"; fail "ls -l under exec"; }
[ ! -s "$T/lsl.err" ] || { cat "$T/lsl.err"; fail "ls -l printed errors"; }
X python3 -c 'import os, sys
for p in sys.argv[1:]:
    try:
        os.getxattr(p, "security.selinux", follow_symlinks=False)
    except OSError as e:
        print(e.errno)' /sys/class/nvme/nvme0 /dev/nvme0n1 >"$T/xattr.out" ||
	fail "getxattr under exec"
[ "$(cat "$T/xattr.out")" = "$(printf '61\n61')" ] || { cat "$T/xattr.out"; fail "getxattr: ENODATA twice"; }

echo "exec_sysfs_pci: ok"
