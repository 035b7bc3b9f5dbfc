#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What one user may hold of ucmdd's NVMe/TCP target, and who it is
(tests/system/nvme_tcp_limits.sh runs each part as the user it needs):
  idle PORT BOUND_MS              a connection that never sends ICReq is closed
  noconnect PORT BOUND_MS         one that sends ICReq and never Connect is closed
  kato0 PORT SUBNQN BOUND_MS      an association with KATO 0 that goes silent ends
  conns PORT SUBNQN N DIR         N connections (an association, N-1 I/O queues), the
                                  next refused; held until DIR/done
  assocs PORT SUBNQN N DIR        N associations, the next Connect refused (busy);
                                  held until DIR/done
  one PORT SUBNQN                 one association with an I/O queue: a 4 KiB read
  trickle PORT SUBNQN BOUND_MS    reads asked for and taken a little at a time:
                                  the target closes within BOUND_MS of the first
  inflight PORT SUBNQN DIR        the I/O queue's socket is in flight in an
                                  SCM_RIGHTS message when the target accepts it
                                  (DIR/stop-me, DIR/stopped: the harness holds
                                  ucmdd stopped meanwhile); then a write
  closed PORT DIR                 ICReq, then the socket closed before the accept
                                  (same handshake): no file holds it any more
Layouts from NVMe/TCP 1.0 and NVMe-oF 1.1; no digests.
"""
import array
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from nvme_tcp_wire import Closed, Conn, fail  # noqa: E402  (tests/system/lib)

PATTERN = b"ucmd-inflight-write!" * 204 + b"abcdefghijklmnop"   # 4096 bytes
assert len(PATTERN) == 4096


def association(port, subnqn):
    """An admin queue with one I/O queue granted, and that I/O queue."""
    a = Conn(port)
    st, cntlid = a.connect(subnqn, kato=10000)
    if st or a.admin(0x09, cdw10=0x07, cdw11=0):
        fail(f"admin Connect or Set Features: status {st:#x}")
    io = Conn(port)
    st, _ = io.connect(subnqn, qid=1, cntlid=cntlid)
    if st:
        fail(f"I/O queue Connect: status {st:#x}")
    return a, io, cntlid


def hold(d):
    open(os.path.join(d, "held"), "w").close()
    while not os.path.exists(os.path.join(d, "done")):
        time.sleep(0.05)


def refused(port):
    """A connection the target closes without an ICResp."""
    try:
        c = Conn(port, icreq=False)
        c.send_icreq()
        c.recv_icresp()
    except (Closed, ConnectionResetError, BrokenPipeError):
        return True
    return False


def fd_in_flight(d, port):
    """A connection whose socket only an SCM_RIGHTS message holds while the
    target accepts it; the socket back once the target is done with the accept."""
    open(os.path.join(d, "stop-me"), "w").close()
    while not os.path.exists(os.path.join(d, "stopped")):
        time.sleep(0.02)
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    lport = s.getsockname()[1]
    s.sendall(struct.pack("<BBBBIHBBI", 0, 0, 128, 0, 128, 0, 0, 0, 0) + bytes(112))
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))])
    os.close(s.detach())     # only the message holds it now
    return a, b, lport


def tcp_state(lport):
    """(state, rx_queue) of this host's TCP socket bound to 127.0.0.1:lport."""
    want = "0100007F:%04X" % lport
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            p = line.split()
            if p[1] == want:
                return int(p[3], 16), int(p[4].split(":")[1], 16)
    return None, 0


part, port = sys.argv[1], int(sys.argv[2])
if part == "idle":
    Conn(port, icreq=False).wait_closed(int(sys.argv[3]), "no ICReq")
elif part == "noconnect":
    Conn(port).wait_closed(int(sys.argv[3]), "ICReq but no Connect")
elif part == "kato0":
    c = Conn(port)
    st, _ = c.connect(sys.argv[3], kato=0)
    if st:
        fail(f"Connect with KATO 0: status {st:#x}")
    c.wait_closed(int(sys.argv[4]), "an association with KATO 0, silent")
elif part == "conns":
    # connected (an association and its I/O queues), so that no deadline closes them
    subnqn, n, d = sys.argv[3], int(sys.argv[4]), sys.argv[5]
    adm = Conn(port)
    st, cntlid = adm.connect(subnqn, kato=120000)
    if st or adm.admin(0x09, cdw10=0x07, cdw11=(n - 2) | (n - 2) << 16):
        fail(f"admin Connect: status {st:#x}")
    held = [adm]
    for q in range(1, n):
        io = Conn(port)
        st, _ = io.connect(subnqn, qid=q, cntlid=cntlid)
        if st:
            fail(f"I/O queue {q} Connect: status {st:#x}")
        held.append(io)
    if not refused(port):
        fail(f"connection {n + 1} of one user was not refused")
    print(f"ok: {n} connections, the next refused", flush=True)
    hold(d)
elif part == "assocs":
    subnqn, n, d = sys.argv[3], int(sys.argv[4]), sys.argv[5]
    held = []
    for i in range(n):
        c = Conn(port)
        st, _ = c.connect(subnqn, kato=120000)   # held, whatever kato0 is
        if st:
            fail(f"association {i + 1}: status {st:#x}")
        held.append(c)
    c = Conn(port)
    st, _ = c.connect(subnqn)
    if st != 0x4181:
        fail(f"association {n + 1} of one user: status {st:#x}, want Controller Busy (0x4181)")
    c.s.close()     # only the associations stay held
    print(f"ok: {n} associations, the next Connect refused (Controller Busy)", flush=True)
    hold(d)
elif part == "one":
    a, io, _ = association(port, sys.argv[3])
    st, _, data = io.rw(0x02, 0)
    if st or len(data) != 4096:
        fail(f"a read: status {st:#x}")
    print(f"ok: uid {os.geteuid()}: an association and a read", flush=True)
elif part == "trickle":
    subnqn, bound = sys.argv[3], int(sys.argv[4])
    a, io, _ = association(port, subnqn)
    io.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    for cid in range(100, 132):   # 32 reads of 1 MiB
        sqe = struct.pack("<BBHI16x", 0x02, 0x40, cid, 1) + \
            struct.pack("<QI3xB", 0, 1 << 20, 0x5A) + struct.pack("<IIIIII", 0, 0, 255, 0, 0, 0)
        io.s.sendall(struct.pack("<BBBBI", 4, 0, 72, 0, 72) + sqe)
    t0 = time.monotonic()
    io.s.settimeout(bound / 1000 + 10)
    got = 0
    try:
        while True:   # a little, often: every partial send of the target progresses
            r = io.s.recv(2048)
            if not r:
                break
            got += len(r)
            time.sleep(0.05)
            if time.monotonic() - t0 > bound / 1000 + 10:
                break
    except ConnectionResetError:
        pass
    ms = (time.monotonic() - t0) * 1000
    if ms > bound:
        fail(f"a peer that reads {got} bytes slowly: still open after {ms:.0f} ms "
             f"(bound {bound} ms)")
    print(f"ok: a peer reading slowly ({got} bytes) closed after {ms:.0f} ms", flush=True)
elif part == "inflight":
    subnqn, d = sys.argv[3], sys.argv[4]
    adm = Conn(port)
    st, cntlid = adm.connect(subnqn, kato=30000)
    if st or adm.admin(0x09, cdw10=0x07, cdw11=0):
        fail(f"admin Connect: status {st:#x}")
    a, b, lport = fd_in_flight(d, port)
    open(os.path.join(d, "inflight"), "w").close()
    # the target has identified the peer once it answered (ICResp) or closed
    for _ in range(600):
        state, rxq = tcp_state(lport)
        if rxq or state != 1:
            break
        time.sleep(0.05)
    else:
        fail("the target neither answered nor closed the connection in 30 s")
    msg, anc, _, _ = b.recvmsg(1, socket.CMSG_LEN(4))
    fd = array.array("i", anc[0][2][:4])[0]
    io = Conn(port, sock=socket.socket(fileno=fd), icreq=False)
    io.s.settimeout(30)
    try:
        io.recv_icresp()
        st, _ = io.connect(subnqn, qid=1, cntlid=cntlid)
        if st:
            print(f"refused: I/O queue Connect status {st:#x}", flush=True)
            sys.exit(0)
        st, _, _ = io.rw(0x01, 30, PATTERN)
    except Closed:
        print("refused: the target closed the connection whose socket was in flight",
              flush=True)
        sys.exit(0)
    print(f"write status {st:#x}", flush=True)
elif part == "closed":
    # ICReq sent, then the socket closed by its process before the accept:
    # the kernel still holds it (no file does), what it sent is queued
    d = sys.argv[3]
    open(os.path.join(d, "stop-me"), "w").close()
    while not os.path.exists(os.path.join(d, "stopped")):
        time.sleep(0.02)
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(struct.pack("<BBBBIHBBI", 0, 0, 128, 0, 128, 0, 0, 0, 0) + bytes(112))
    s.close()
    open(os.path.join(d, "inflight"), "w").close()
    print("ok: ICReq sent, socket closed before the accept", flush=True)
else:
    fail(f"unknown part {part}")
