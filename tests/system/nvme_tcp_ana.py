#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ANA on two ports of ucmdd's NVMe/TCP target, as a host sees it on the wire
(tests/system/nvme_tcp_ana.sh runs it):
  aen PORT1 PORT2 SUBNQN UCMD SOCK
    - an association on each port: distinct controller IDs; an I/O queue
      Connect naming the other port's controller is refused;
    - PORT2's association enables ANA Change notices (AEC bit 11) and sends
      an AER; PORT1's sends one without enabling them;
    - `ucmd ana-state` turns PORT2 inaccessible: PORT2's AER completes
      (Notice, ANA Change, log 0Ch) within 3 s, PORT1's stays parked;
    - PORT2's ANA log (0Ch) then says group 1 inaccessible with a higher
      change count, and lists namespace 1; with RGO no namespace;
    - I/O on PORT2 gets Asymmetric Access Inaccessible (SCT 3h, SC 02h,
      no DNR), on PORT1 it succeeds.
Layouts from NVMe 2.0 (log page 0Ch) and NVMe/TCP 1.0; no digests.
"""
import functools
import os
import socket
import struct
import subprocess
import sys
import time

# The host side (tests/system/lib/nvme_tcp_wire.py), as another host
HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-0000-4000-8000-0000c0ffee02"
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nvme_tcp_wire import Conn, fail  # noqa: E402  (tests/system/lib)

Conn = functools.partial(Conn, hostnqn=HOSTNQN)


def send_only(c, opc, cdw10=0):
    """A capsule without data whose response is not awaited (an AER)."""
    c.cid += 1
    sgl = struct.pack("<QI3xB", 0, 0, 0x5A)
    sqe = struct.pack("<BBHI16x", opc, 0x40, c.cid, 0) + sgl + struct.pack("<6I", cdw10, 0, 0, 0, 0, 0)
    c.s.sendall(struct.pack("<BBBBI", 4, 0, 72, 0, 72) + sqe)
    return c.cid


def get_log(c, lid, length, lsp=0):
    numd = length // 4 - 1

    def sqe(cid, sgl):
        return struct.pack("<BBHI16x", 0x02, 0x40, cid, 0xFFFFFFFF) + sgl + \
            struct.pack("<6I", lid | (lsp << 8) | ((numd & 0xFFFF) << 16), numd >> 16, 0, 0, 0, 0)
    return c.cmd(sqe, data_in_len=length)


def ana_log(c, rgo=False):
    st, _, data = get_log(c, 0x0C, 4096, 1 if rgo else 0)
    if st:
        fail(f"ANA log: status {st:#x}")
    chg, ngrps = struct.unpack("<QH", data[:10])
    groups, off = [], 16
    for _ in range(ngrps):
        grpid, nnsids, gchg, state = struct.unpack("<IIQB", data[off:off + 17])
        nsids = struct.unpack(f"<{nnsids}I", data[off + 32:off + 32 + 4 * nnsids])
        groups.append((grpid, state, list(nsids)))
        off += 32 + 4 * nnsids
    return chg, groups


def association(port, nqn):
    a = Conn(port)
    st, cntlid = a.connect(nqn, kato=10000)
    if st or a.admin(0x09, cdw10=0x07, cdw11=0):
        fail(f"port {port}: admin Connect or Number of Queues: status {st:#x}")
    io = Conn(port)
    st, _ = io.connect(nqn, qid=1, cntlid=cntlid)
    if st:
        fail(f"port {port}: I/O queue Connect: status {st:#x}")
    return a, io, cntlid


def aen(port1, port2, nqn, ucmd, sock):
    a1, io1, c1 = association(port1, nqn)
    a2, io2, c2 = association(port2, nqn)
    if c1 == c2:
        fail(f"both ports gave controller ID {c1}: a host would refuse the second path")
    stray = Conn(port2)
    st, _ = stray.connect(nqn, qid=1, cntlid=c1)
    if st == 0:
        fail(f"port {port2} took an I/O queue of port {port1}'s controller {c1}")
    print(f"ok: controller IDs {c1} and {c2}; a queue for the other port's controller refused "
          f"({st:#x})", flush=True)

    chg0, groups = ana_log(a2)
    if groups != [(1, 1, [1])]:
        fail(f"ANA log before: {groups}, want group 1 optimized with namespace 1")
    if a2.admin(0x09, cdw10=0x0B, cdw11=1 << 11):
        fail("Set Features AEC (ANA Change) refused")
    aer2 = send_only(a2, 0x0C)
    send_only(a1, 0x0C)   # no notices enabled: stays parked

    subprocess.run([ucmd, "--daemon", sock, "ana-state", "--port", "2", "--state", "inaccessible"],
                   check=True, stdout=subprocess.DEVNULL)
    a2.s.settimeout(3)
    try:
        typ, _, hdr, _ = a2.recv_pdu()
    except TimeoutError:
        fail("no ANA Change notice within 3 s of the change")
    dw0, _, _, _, rcid, st = struct.unpack("<IIHHHH", hdr[8:24])
    if typ != 5 or rcid != aer2 or st >> 1:
        fail(f"AER completion: PDU {typ}, cid {rcid} (want {aer2}), status {st >> 1:#x}")
    if dw0 != 0x000C0302:
        fail(f"AER dw0 {dw0:#010x}: want Notice (2), ANA Change (03h), log 0Ch")
    a1.s.settimeout(2)
    try:
        typ, _, hdr, _ = a1.recv_pdu()
        fail(f"port {port1}'s association, notices not enabled, got PDU {typ}")
    except TimeoutError:
        pass
    print("ok: ANA Change notice on the changed port's association; none where not enabled",
          flush=True)

    a2.s.settimeout(30)
    chg1, groups = ana_log(a2)
    if chg1 <= chg0 or groups != [(1, 3, [1])]:
        fail(f"ANA log after: count {chg0} -> {chg1}, groups {groups}: want group 1 "
             "inaccessible with namespace 1 and a higher count")
    _, groups = ana_log(a2, rgo=True)
    if groups != [(1, 3, [])]:
        fail(f"ANA log with RGO: {groups}: want group 1 inaccessible, no namespace list")
    _, groups = ana_log(a1)
    if groups != [(1, 1, [1])]:
        fail(f"port {port1}'s ANA log: {groups}: the other port's change leaked")
    print(f"ok: ANA log per port: change count {chg0} -> {chg1}, RGO", flush=True)

    st = io2.rw(0x02, 0)[0]
    if st != 0x302:
        fail(f"read through the inaccessible port: status {st:#x}, want 0x302 (no DNR)")
    st = io1.rw(0x02, 0)[0]
    if st:
        fail(f"read through the optimized port: status {st:#x}")
    print("ok: I/O through the inaccessible port: Asymmetric Access Inaccessible; the other "
          "port serves it", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "aen":
        aen(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6])
    else:
        fail("usage: aen PORT1 PORT2 SUBNQN UCMD SOCK")
