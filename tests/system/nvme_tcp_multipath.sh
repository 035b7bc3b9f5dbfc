#!/usr/bin/env bash
# Linux's native NVMe multipath over two ports of one ucmdd subsystem, in a
# QEMU guest (tests/system/qemu/run.sh, Debian's cloud kernel, nvme-tcp
# from the same package): ucmdd listens twice on the guest's loopback,
# Linux's nvme-tcp host connects to both and makes one subsystem with two
# controllers (distinct CNTLIDs) and one head device; its per-path ANA
# states follow `ucmd ana-state` (ANA log and ANA Change events);
# `nvme ana-log` reads each path's log and ucmd's ana-log prints the same
# keys; fio writes and verifies through the head (io_uring) while each port
# in turn is made inaccessible and back, with no error; io_uring_cmd on
# the head's char device works (tests/system/qemu/nvme_tcp_multipath_guest.sh).
source "$(dirname "$0")/lib/common.sh"
need_root "QEMU"
[ -f "$B/build.ninja" ] || meson setup "$B" >/dev/null
ninja -C "$B" src/server/ucmdd tools/ucmd >/dev/null || fail "build failed"
need_tools nvme fio python3
out=${UCMD_QEMU_OUT:-$T/qemu}
grc=0
bash tests/system/qemu/run.sh --out "$out" --script tests/system/qemu/nvme_tcp_multipath_guest.sh \
	--mod nvme-tcp --dyn "$UCMDD" --dyn "$UCMD" --dyn "$(command -v nvme)" --fio || grc=$?
[ -f "$out/guest.log" ] && sed 's/^/guest| /' "$out/guest.log" | grep -E 'GUEST-PART|===|paths|ana_state|inaccessible:|FAIL' || true
[ "$grc" -eq 125 ] && fail "the guest did not run"
[ "$grc" -eq 0 ] || fail "guest parts failed (status $grc; $out/guest.log)"

step "nvme ana-log in the guest: both paths, the keys ucmd ana-log prints"
python3 - "$out" <<'EOP' || fail "nvme ana-log's JSON"
import json, sys
out = sys.argv[1]
a1, a2 = (json.load(open(f"{out}/ana-log-{i}.json")) for i in (1, 2))
for a, state in ((a1, "optimized"), (a2, "non-optimized")):
    d = a["ANA DESC LIST "]
    assert a["ngrps"] == 1 and len(d) == 1, a
    assert d[0]["grpid"] == 1 and d[0]["state"] == state and d[0]["NSIDS"] == [{"nsid": 1}], a
    # the keys ucmd's print_ana_log writes, no more, no fewer
    assert set(a) == {"Asymmetric Namespace Access Log for NVMe device", "chgcnt", "ngrps",
                      "ANA DESC LIST "}, a
    assert set(d[0]) == {"grpid", "nnsids", "chgcnt", "state", "NSIDS"}, d
# ucmd ana-log through the same port: nvme-cli's document, byte for byte but the device name
dev = a2["Asymmetric Namespace Access Log for NVMe device"]
for ext in ("json", "txt"):
    mine = open(f"{out}/ucmd-ana-log-2.{ext}").read().replace("nvme0", dev)
    theirs = open(f"{out}/ana-log-2.{ext}").read()
    assert mine == theirs, (ext, mine, theirs)
# both paths in one subsystem
subs = [s for h in json.load(open(f"{out}/list-subsys.json")) for s in h["Subsystems"]
        if s["NQN"] != "nqn.2019-08.org.qemu:ucmdres" and "qemu" not in s["NQN"]]
assert len(subs) == 1, subs
ports = sorted(p["Address"].split("trsvcid=")[1].split(",")[0] for p in subs[0]["Paths"])
assert ports == ["4420", "4421"] and all(p["State"] == "live" for p in subs[0]["Paths"]), subs
print("ana-log: both paths, group 1, optimized and non-optimized; ucmd ana-log prints what "
      "nvme-cli prints; list-subsys: one subsystem, paths 4420 and 4421")
EOP
echo "nvme_tcp_multipath: all checks passed"
