# SPDX-License-Identifier: MIT
"""The host side of NVMe/TCP on the wire, for the system tests that speak it
byte by byte (nvme_tcp_limits.py, nvme_tcp_ana.py): a connection, its ICReq,
Fabrics Connect, admin commands, reads and writes, and a bounded wait for the
target to close it. Layouts from NVMe/TCP 1.0 and NVMe-oF 1.1; no digests.
"""
import socket
import struct
import sys
import time

HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:5d0a1f3e-0000-4000-8000-0000c0ffee01"


def fail(msg):
    print("FAIL:", msg, flush=True)
    sys.exit(1)


class Closed(Exception):
    pass


class Conn:
    def __init__(self, port, sock=None, icreq=True, hostnqn=None):
        self.s = sock or socket.create_connection(("127.0.0.1", port), timeout=30)
        self.hostnqn = hostnqn or HOSTNQN
        self.cid = 0
        if icreq:
            self.send_icreq()
            self.recv_icresp()

    def recvn(self, n):
        b = b""
        while len(b) < n:
            try:
                r = self.s.recv(n - len(b))
            except ConnectionResetError:
                r = b""
            if not r:
                raise Closed
            b += r
        return b

    def send_icreq(self):
        self.s.sendall(struct.pack("<BBBBIHBBI", 0, 0, 128, 0, 128, 0, 0, 0, 0) + bytes(112))

    def recv_icresp(self):
        r = self.recvn(128)
        if r[0] != 1:
            fail(f"ICResp: PDU type {r[0]}")

    def recv_pdu(self):
        ch = self.recvn(8)
        typ, flags, hlen, pdo, plen = struct.unpack("<BBBBI", ch)
        pdu = ch + self.recvn(plen - 8)
        return typ, flags, pdu[:hlen], pdu[pdo:] if pdo else b""

    def cmd(self, sqe_fn, data_out=b"", data_in_len=0):
        """sqe_fn(cid, sgl) -> 64-byte SQE; (status, dw0, data). Data out in the capsule."""
        self.cid += 1
        if data_out:
            sgl = struct.pack("<QI3xB", 0, len(data_out), 0x01)
        else:
            sgl = struct.pack("<QI3xB", 0, data_in_len, 0x5A)
        sqe = sqe_fn(self.cid, sgl)
        hlen = 72
        self.s.sendall(struct.pack("<BBBBI", 4, 0, hlen, hlen if data_out else 0,
                                   hlen + len(data_out)) + sqe + data_out)
        got = b""
        while True:
            typ, flags, hdr, data = self.recv_pdu()
            if typ == 7:
                got += data
            elif typ == 5:
                dw0, _, _, _, rcid, st = struct.unpack("<IIHHHH", hdr[8:24])
                if rcid != self.cid:
                    fail(f"response for cid {rcid}, want {self.cid}")
                return st >> 1, dw0, got
            else:
                fail(f"unexpected PDU type {typ}")

    def connect(self, nqn, qid=0, cntlid=0xFFFF, kato=0):
        data = bytes(16) + struct.pack("<H", cntlid) + bytes(238)
        data += nqn.encode().ljust(256, b"\0") + self.hostnqn.encode().ljust(256, b"\0") + bytes(256)

        def sqe(cid, sgl):
            return struct.pack("<BBHB19x", 0x7F, 0x40, cid, 1) + sgl + \
                struct.pack("<HHHBxI12x", 0, qid, 31, 0, kato)
        st, dw0, _ = self.cmd(sqe, data)
        return st, dw0 & 0xFFFF

    def admin(self, opc, cdw10=0, cdw11=0):
        def sqe(cid, sgl):
            return struct.pack("<BBHI16x", opc, 0x40, cid, 0) + sgl + \
                struct.pack("<IIIIII", cdw10, cdw11, 0, 0, 0, 0)
        return self.cmd(sqe)[0]

    def rw(self, opc, slba, data=b"", nblocks=1):
        def sqe(cid, sgl):
            return struct.pack("<BBHI16x", opc, 0x40, cid, 1) + sgl + \
                struct.pack("<IIIIII", slba, 0, nblocks - 1, 0, 0, 0)
        return self.cmd(sqe, data, 0 if data else 4096 * nblocks)

    def wait_closed(self, bound_ms, what):
        """Read until the target closes; fail if that takes longer than bound_ms."""
        t0 = time.monotonic()
        self.s.settimeout(bound_ms / 1000 + 5)
        try:
            while self.s.recv(65536):
                pass
        except ConnectionResetError:
            pass
        except socket.timeout:
            fail(f"{what}: still open after {bound_ms / 1000 + 5:.0f} s")
        ms = (time.monotonic() - t0) * 1000
        if ms > bound_ms:
            fail(f"{what}: closed after {ms:.0f} ms, more than {bound_ms} ms")
        print(f"ok: {what}: closed after {ms:.0f} ms", flush=True)
