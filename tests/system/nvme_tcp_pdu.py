#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ucmdd's NVMe/TCP target spoken to byte by byte (tests/system/nvme_tcp.sh):
the discovery controller, an admin and an I/O queue doing in-capsule, R2T
+ H2CData and C2HData transfers with both digests, and malformed PDUs that
must get a C2HTermReq and a closed connection without harming the others.
Layouts from the NVMe/TCP 1.0 and NVMe-oF 1.1 specifications.
  nvme_tcp_pdu.py PORT HOSTNQN AUDIT_LOG [local-user]
The policy (tests/system/nvme_tcp.sh) denies writes to host ID RO_HOSTID
and to the local user nobody, and allows HOSTNQN everything else; the
audit log is ucmdd's --audit. With local-user (run as nobody) only the
check that a local peer is judged by its uid runs.
"""
import socket
import struct
import sys

import os
PORT, HOSTNQN, AUDIT = int(sys.argv[1]), sys.argv[2], sys.argv[3]
LOCAL_USER = sys.argv[4:] == ["local-user"]
RO_HOSTID = "5d0a1f3e-0000-4000-8000-00000000dead"
DISC = "nqn.2014-08.org.nvmexpress.discovery"


def crc32c_bitwise(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def crc32c_isal():
    """ISA-L's CRC32C (libisal, installed for ucmd itself), if it agrees
    with the bitwise definition above on a few inputs: the bitwise loop
    takes minutes over the 64 MiB the pipelined transfers carry."""
    try:
        import ctypes
        f = ctypes.CDLL("libisal.so.2").crc32_iscsi
    except (OSError, AttributeError):
        return None
    f.restype = ctypes.c_uint32
    f.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint32]

    def crc(data):
        data = bytes(data)
        return f(data, len(data), 0xFFFFFFFF) ^ 0xFFFFFFFF
    for v in (b"", b"123456789", bytes(range(256)) * 3 + b"odd"):
        if crc(v) != crc32c_bitwise(v):
            return None
    return crc


assert crc32c_bitwise(b"123456789") == 0xE3069283   # the check value of CRC-32C
crc32c = crc32c_isal() or crc32c_bitwise


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


class Conn:
    def __init__(self, hdgst=False, ddgst=False, icreq=True):
        self.s = socket.create_connection(("127.0.0.1", PORT), timeout=30)
        self.hd, self.dd = hdgst, ddgst
        self.cid = 0
        if icreq:
            self.icreq()

    def recvn(self, n):
        b = b""
        while len(b) < n:
            r = self.s.recv(n - len(b))
            if not r:
                raise EOFError
            b += r
        return b

    def icreq(self, pfv=0, hlen=128):
        dig = (1 if self.hd else 0) | (2 if self.dd else 0)
        pdu = struct.pack("<BBBBIHBBI", 0, 0, hlen, 0, 128, pfv, 0, dig, 0) + bytes(112)
        self.s.sendall(pdu)
        if pfv or hlen != 128:
            return
        r = self.recvn(128)
        typ, _, hl, _, plen, rpfv, cpda, rdig, maxd = struct.unpack("<BBBBIHBBI", r[:16])
        if (typ, hl, plen, rpfv, rdig) != (1, 128, 128, 0, dig) or maxd < 4096 or maxd % 4:
            fail(f"ICResp {r[:16].hex()}")

    def pdu(self, typ, hdr, data=b"", flags=0):
        hlen = 8 + len(hdr)
        hd = 4 if self.hd else 0
        pdo = (hlen + hd) if data else 0
        dd = 4 if (self.dd and data) else 0
        flags |= (1 if hd else 0) | (2 if dd else 0)
        ch = struct.pack("<BBBBI", typ, flags, hlen, pdo, hlen + hd + len(data) + dd)
        out = ch + hdr
        if hd:
            out += struct.pack("<I", crc32c(out))
        if data:
            out += data
            if dd:
                out += struct.pack("<I", crc32c(data))
        self.s.sendall(out)

    def recv_pdu(self):
        ch = self.recvn(8)
        typ, flags, hlen, pdo, plen = struct.unpack("<BBBBI", ch)
        rest = self.recvn(plen - 8)
        pdu = ch + rest
        hdr = pdu[:hlen]
        if typ == 3:  # C2HTermReq: no digests
            return typ, flags, hdr, pdu[hlen:]
        if flags & 1:
            if struct.unpack("<I", pdu[hlen:hlen + 4])[0] != crc32c(hdr):
                fail("bad header digest from the target")
        data = b""
        if pdo:
            end = plen - (4 if flags & 2 else 0)
            data = pdu[pdo:end]
            if flags & 2 and struct.unpack("<I", pdu[end:end + 4])[0] != crc32c(data):
                fail("bad data digest from the target")
        return typ, flags, hdr, data

    def cmd(self, sqe_fn, data_out=b"", data_in_len=0, incapsule=True):
        """sqe_fn(cid, sgl) -> 64-byte SQE; returns (status, dw0, dw1, data)."""
        self.cid += 1
        cid = self.cid
        if data_out and incapsule:
            sgl = struct.pack("<QI3xB", 0, len(data_out), 0x01)
        else:
            sgl = struct.pack("<QI3xB", 0, len(data_out) or data_in_len, 0x5A)
        sqe = sqe_fn(cid, sgl)
        assert len(sqe) == 64
        self.pdu(4, sqe, data_out if incapsule else b"")
        got = b""
        while True:
            typ, flags, hdr, data = self.recv_pdu()
            if typ == 9:  # R2T
                rcid, ttag, off, ln = struct.unpack("<HHII", hdr[8:20])
                if rcid != cid or off != 0 or ln != len(data_out):
                    fail(f"R2T {hdr.hex()}")
                step = 16384
                for o in range(0, ln, step):
                    chunk = data_out[o:o + step]
                    last = 4 if o + step >= ln else 0
                    self.pdu(6, struct.pack("<HHII4x", cid, ttag, o, len(chunk)), chunk, last)
            elif typ == 7:  # C2HData
                rcid, _, off, ln = struct.unpack("<HHII", hdr[8:20])
                if rcid != cid or off != len(got) or ln != len(data):
                    fail(f"C2HData {hdr.hex()}")
                got += data
            elif typ == 5:  # CapsuleResp
                dw0, dw1, sqhd, sqid, rcid, st = struct.unpack("<IIHHHH", hdr[8:24])
                if rcid != cid:
                    fail(f"response for cid {rcid}, want {cid}")
                self.last_sqhd = sqhd
                return st >> 1, dw0, dw1, got
            else:
                fail(f"unexpected PDU type {typ}")

    def connect(self, nqn, qid=0, cntlid=0xFFFF, sqsize=31, kato=0, hostnqn=HOSTNQN, cattr=0,
                hostid=bytes(16), status=0):
        data = hostid + struct.pack("<H", cntlid) + bytes(238)
        data += nqn.encode().ljust(256, b"\0") + hostnqn.encode().ljust(256, b"\0") + bytes(256)

        def sqe(cid, sgl):
            return struct.pack("<BBHB19x", 0x7F, 0x40, cid, 1) + sgl + \
                struct.pack("<HHHBxI12x", 0, qid, sqsize, cattr, kato)
        st, dw0, _, _ = self.cmd(sqe, data)
        if st != status:
            fail(f"Connect to {nqn} qid {qid}: status {st:#x}, want {status:#x}")
        return dw0 & 0xFFFF

    def admin(self, opc, cdw10=0, cdw11=0, nsid=0, cdw12=0, data_in_len=0):
        def sqe(cid, sgl):
            return struct.pack("<BBHI16x", opc, 0x40, cid, nsid) + sgl + \
                struct.pack("<IIIIII", cdw10, cdw11, cdw12, 0, 0, 0)
        return self.cmd(sqe, data_in_len=data_in_len)

    def expect_term(self, fes, fei=None):
        try:
            typ, _, hdr, _ = self.recv_pdu()
        except EOFError:
            fail(f"connection closed without a TermReq (want FES {fes})")
        rfes, rfei = struct.unpack("<HI", hdr[8:14])
        if typ != 3 or rfes != fes or (fei is not None and rfei != fei):
            fail(f"want C2HTermReq FES {fes} FEI {fei}, got type {typ} FES {rfes} FEI {rfei}")
        try:
            if self.s.recv(1):
                fail("data after a TermReq")
        except (ConnectionResetError, socket.timeout):
            pass
        print(f"ok: TermReq FES {fes}")


def rw(c, opc, slba, nblocks, data=b"", incapsule=False, bs=4096):
    def sqe(cid, sgl):
        return struct.pack("<BBHI16x", opc, 0x40, cid, 1) + sgl + \
            struct.pack("<IIIIII", slba & 0xFFFFFFFF, slba >> 32, nblocks - 1, 0, 0, 0)
    return c.cmd(sqe, data, 0 if data else nblocks * bs, incapsule)


# --- the discovery controller ---------------------------------------------
d = Conn()
cntlid = d.connect(DISC)
# Property Get CAP (8 bytes), then Identify and the Discovery Log
def prop_get(c, off, size8):
    def sqe(cid, sgl):
        return struct.pack("<BBHB19x", 0x7F, 0x40, cid, 4) + sgl + \
            struct.pack("<B3xI16x", 1 if size8 else 0, off)
    return c.cmd(sqe)
st, lo, hi, _ = prop_get(d, 0, True)
if st or (lo & 0xFFFF) < 1 or not (hi >> 5) & 1:
    fail(f"CAP {st:#x} {hi:#x}{lo:08x}")
st, _, _, idc = d.admin(0x06, cdw10=1, data_in_len=4096)
if st or idc[78:80] != struct.pack("<H", cntlid) or idc[111] != 2 or \
        idc[768:768 + len(DISC)].decode() != DISC:
    fail(f"discovery Identify: status {st:#x}")
numd = 4096 // 4 - 1
st, _, _, log = d.admin(0x02, cdw10=0x70 | (numd << 16), data_in_len=4096)
genctr, numrec, recfmt = struct.unpack("<QQH", log[:18])
if st or numrec < 1:
    fail(f"discovery log: status {st:#x}, {numrec} records")
e = log[1024:2048]
subnqn = e[256:512].rstrip(b"\0").decode()
if e[0] != 3 or e[1] != 1 or e[2] != 2 or e[3] != 0x04 or e[32:64].rstrip(b"\0").decode() != str(PORT) or \
        e[512:768].rstrip(b"\0").decode() != "127.0.0.1":
    fail(f"discovery entry {e[:64].hex()}")
nqns = [log[1024 * (i + 1) + 256:1024 * (i + 2)].split(b"\0")[0].decode() for i in range(numrec)]
if len(set(nqns)) != numrec:
    fail(f"subsystem NQNs not distinct: {nqns}")
print(f"ok: discovery: {numrec} subsystem(s), {nqns}")

# --- run as nobody: a peer on loopback is judged by its process's uid -------
if LOCAL_USER:
    if os.geteuid() != 65534:
        fail(f"local-user runs as nobody (uid 65534), not {os.geteuid()}")
    la = Conn()
    lc = la.connect(subnqn)
    la.admin(0x09, cdw10=0x07, cdw11=0)
    lio = Conn()
    lio.connect(subnqn, qid=1, cntlid=lc)
    blk = bytes(range(256)) * 16
    if rw(lio, 0x02, 20, 1)[0]:
        fail("a read by the local user nobody")
    st = rw(lio, 0x01, 20, 1, blk, incapsule=True)[0]
    if st != 0x4286:
        fail(f"a write by the local user nobody: status {st:#x}, want Access Denied (rule uid = nobody)")
    print("ok: a local peer as nobody: its uid meets the uid rule (write denied, read allowed)")
    sys.exit(0)

# --- malformed PDUs: each ends its own connection only ----------------------
b = Conn(icreq=False)
b.icreq(pfv=1)
b.expect_term(6, 8)          # unsupported PFV, at byte 8
b = Conn(icreq=False)
b.icreq(hlen=100)
b.expect_term(1, 2)          # wrong hlen, at byte 2
b = Conn(icreq=False)
b.pdu(4, bytes(64))          # a command before ICReq
b.expect_term(2)
b = Conn(hdgst=True)
b.s.sendall(struct.pack("<BBBBI", 4, 1, 72, 0, 76) + bytes(64) + b"\xde\xad\xbe\xef")
b.expect_term(3)             # header digest mismatch
b = Conn()
b.s.sendall(struct.pack("<BBBBI", 4, 0, 72, 72, 72 + 0x100000) + bytes(64))
b.expect_term(5)             # more in-capsule data than the target takes
b = Conn()
b.pdu(6, struct.pack("<HHII4x", 1, 77, 0, 4), b"abcd", 4)
b.expect_term(1, 10)         # H2CData for a transfer tag that does not exist
b = Conn()
b.s.sendall(struct.pack("<BBBBI", 0x42, 0, 24, 0, 24) + bytes(16))
b.expect_term(1, 0)          # unknown PDU type
st, _, _, _ = d.admin(0x18)  # the discovery connection still answers
if st:
    fail("Keep Alive after the malformed connections")
print("ok: the other connections are unharmed")

# --- a subsystem: admin queue, one I/O queue with digests -------------------
a = Conn()
cntlid = a.connect(subnqn)
st, _, _, idc = a.admin(0x06, cdw10=1, data_in_len=4096)
ioccsz = struct.unpack("<I", idc[1792:1796])[0]
if st or idc[78:80] != struct.pack("<H", cntlid) or idc[111] != 1 or ioccsz * 16 < 64 + 4096 or \
        idc[768:1024].split(b"\0")[0].decode() != subnqn:
    fail(f"Identify Controller over fabrics: status {st:#x}, ioccsz {ioccsz}")
# every subsystem answers with its own NQN
for n in nqns[1:]:
    o = Conn()
    o.connect(n)
    st, _, _, idn = o.admin(0x06, cdw10=1, data_in_len=4096)
    if st or idn[768:1024].split(b"\0")[0].decode() != n:
        fail(f"Identify Controller of {n}: {idn[768:800]}")
    o.s.close()
st, dw0, _, _ = a.admin(0x09, cdw10=0x07, cdw11=1 | 1 << 16)  # Number of Queues: 2
if st:
    fail("Set Features Number of Queues")
io = Conn(hdgst=True, ddgst=True)
io.connect(subnqn, qid=1, cntlid=cntlid, sqsize=31)


small = bytes(range(256)) * 16
big = bytes((i * 7 + 3) & 0xFF for i in range(256 * 1024))
st = rw(io, 0x01, 10, 1, small, incapsule=True)[0]          # in-capsule write
st |= rw(io, 0x01, 100, 64, big)[0]                           # R2T + H2CData
if st:
    fail(f"writes: status {st:#x}")
st, _, _, got = rw(io, 0x02, 10, 1)
st2, _, _, got2 = rw(io, 0x02, 100, 64)
if st or st2 or got != small or got2 != big:
    fail("read back differs")
print("ok: in-capsule, R2T/H2CData and C2HData transfers with digests")


# The target keeps each command slot's data buffer for its next command: a
# read whose data block is longer than the blocks it names must get zeros
# past them, never the bytes an earlier command left in the buffer (here:
# 8 blocks of `big`, read through the same slot just before).
def read_long_sgl(c, slba, nblocks, sgl_len):
    def sqe(cid, sgl):
        return struct.pack("<BBHI16x", 0x02, 0x40, cid, 1) + struct.pack("<QI3xB", 0, sgl_len, 0x5A) + \
            struct.pack("<IIIIII", slba & 0xFFFFFFFF, slba >> 32, nblocks - 1, 0, 0, 0)
    return c.cmd(sqe, b"", sgl_len, False)


for _ in range(2):
    st, _, _, got = rw(io, 0x02, 100, 8)
    if st or got != big[:8 * 4096]:
        fail("read of 8 blocks differs")
    st, _, _, got = read_long_sgl(io, 10, 1, 8 * 4096)
    if st == 0 and (got[:4096] != small or got[4096:] != bytes(7 * 4096)):
        stale = got[4096:] != bytes(7 * 4096)
        fail(f"a 1-block read into a 32 KiB data block: {len(got)} bytes, "
             f"{'old bytes past its block' if stale else 'its block differs'}")
    if st and got:
        fail(f"a failed read sent {len(got)} bytes")
print(f"ok: a 1-block read into a longer data block: status {st:#x}, nothing of the previous command")


def pipelined(c, cmds):
    """cmds: [(opc, slba, nblocks, data)] all sent before any response is
    read, as a host with that many in flight does; {cid: (status, data)}."""
    want, out, got, st = {}, {}, {}, {}
    for opc, slba, nb, data in cmds:
        c.cid += 1
        cid = c.cid
        ln = len(data) if data else nb * 4096
        sqe = struct.pack("<BBHI16x", opc, 0x40, cid, 1) + struct.pack("<QI3xB", 0, ln, 0x5A) + \
            struct.pack("<IIIIII", slba & 0xFFFFFFFF, slba >> 32, nb - 1, 0, 0, 0)
        c.pdu(4, sqe)
        want[cid], out[cid], got[cid] = ln, data, b""
    while len(st) < len(cmds):
        typ, flags, hdr, data = c.recv_pdu()
        if typ == 9:
            cid, ttag, off, ln = struct.unpack("<HHII", hdr[8:20])
            if cid not in out or off != 0 or ln != want[cid] or not out[cid]:
                fail(f"R2T {hdr.hex()}")
            for o in range(0, ln, 65536):
                chunk = out[cid][o:o + 65536]
                c.pdu(6, struct.pack("<HHII4x", cid, ttag, o, len(chunk)), chunk,
                      4 if o + 65536 >= ln else 0)
        elif typ == 7:
            cid, _, off, ln = struct.unpack("<HHII", hdr[8:20])
            if cid not in got or off != len(got[cid]):
                fail(f"C2HData {hdr.hex()}")
            got[cid] += data
            if flags & 0x08:   # SUCCESS: completed, no CapsuleResp follows
                if not flags & 0x04 or cid in st:
                    fail(f"C2HData SUCCESS {hdr.hex()}")
                st[cid] = (0, got[cid])
        elif typ == 5:
            cid, status = struct.unpack("<HH", hdr[20:24])
            if cid not in want or cid in st:
                fail(f"CapsuleResp for cid {cid}")
            st[cid] = (status >> 1, got[cid])
        else:
            fail(f"unexpected PDU type {typ}")
    return st


# a full queue at once (32 = sqsize + 1): writes through R2T, then reads of
# 1 MiB each, 32 MiB in all: more than the target holds per connection
# (NVMET_TCP_CONN_MEM), so commands wait for others' memory, in order
blobs = [bytes(((i * 31 + j) * 13) & 0xFF for j in range(4096)) * 64 for i in range(32)]
res = pipelined(io, [(0x01, 1000 + 64 * i, 64, blobs[i]) for i in range(32)])
if any(v[0] for v in res.values()):
    fail(f"pipelined writes: {res}")
res = pipelined(io, [(0x02, 1000 + 256 * i, 256, b"") for i in range(8)] +
                [(0x02, 1000 + 64 * i, 64, b"") for i in range(24)])
back = b"".join(v[1] for k, v in sorted(res.items())[:8])
if any(v[0] for v in res.values()) or back != b"".join(blobs):
    fail("pipelined reads differ from the pipelined writes")
for i, (k, v) in enumerate(sorted(res.items())[8:]):
    if v[1] != blobs[i]:
        fail(f"pipelined read {i} differs")
print("ok: a full queue of commands in flight, over the connection's memory bound")


def raw_read(c, slba):
    """A one-block read sent raw; its cid."""
    c.cid += 1
    sqe = struct.pack("<BBHI16x", 0x02, 0x40, c.cid, 1) + struct.pack("<QI3xB", 0, 4096, 0x5A) + \
        struct.pack("<IIIIII", slba & 0xFFFFFFFF, slba >> 32, 0, 0, 0, 0)
    c.pdu(4, sqe)
    return c.cid


def expect_rsp(c, cid, status):
    typ, flags, hdr, _ = c.recv_pdu()
    if typ != 5:
        fail(f"PDU type {typ} where the CapsuleResp of cid {cid} belongs")
    dw0, dw1, sqhd, sqid, rcid, st = struct.unpack("<IIHHHH", hdr[8:24])
    if rcid != cid or st >> 1 != status:
        fail(f"CapsuleResp cid {rcid} status {st >> 1:#x}, want cid {cid} status {status:#x}")
    return sqhd


# SQ flow control on (the default): the read's C2HData has LAST_PDU (and the
# digest flags) but not SUCCESS, and its CapsuleResp follows with an SQHD
rc = raw_read(io, 10)
typ, flags, hdr, data = io.recv_pdu()
if typ != 7 or flags != 0x04 | 0x03 or data != small:
    fail(f"C2HData with SQ flow control: type {typ} flags {flags:#x}")
expect_rsp(io, rc, 0)
# SQ flow control disabled (Connect CATTR bit 2, offered by the discovery
# log's TREQ): a successful read is completed by its one C2HData with
# LAST_PDU and SUCCESS, and no CapsuleResp; SQHD is reserved (0)
sf = Conn(hdgst=True, ddgst=True)
sf.connect(subnqn, qid=1, cntlid=cntlid, sqsize=31, cattr=0x04)
if sf.last_sqhd != 0xFFFF:   # the Connect response agrees: SQHD FFFFh (TP 8005)
    fail(f"Connect without SQ flow control: SQHD {sf.last_sqhd:#x}, want 0xffff")
rc = raw_read(sf, 10)
typ, flags, hdr, data = sf.recv_pdu()
ccid, _, datao, datal = struct.unpack("<HHII", hdr[8:20])
if (typ, flags, ccid, datao, datal) != (7, 0x0C | 0x03, rc, 0, 4096) or data != small:
    fail(f"C2HData without SQ flow control: {hdr.hex()}")
# the next PDU is the next command's response: none came for the read
if rw(sf, 0x01, 11, 1, small, incapsule=True)[0]:
    fail("write after a SUCCESS read")
# a read that fails gets its CapsuleResp and no data; SQHD 0
rc = raw_read(sf, 1 << 40)
if expect_rsp(sf, rc, 0x4080) != 0:  # LBA Out of Range, DNR
    fail("SQHD without SQ flow control is not 0")
# the same read many times over, pipelined: every one ends by its C2HData
res = pipelined(sf, [(0x02, 10, 1, b"")] * 32)
if any(v != (0, small) for v in res.values()):
    fail("pipelined SUCCESS reads")
print("ok: C2HData SUCCESS when the host disabled SQ flow control, CapsuleResp otherwise")


def raw_sgl(c, sgl, data=b""):
    def sqe(cid, _):
        return struct.pack("<BBHI16x", 0x01, 0x40, cid, 1) + sgl + struct.pack("<IIIIII", 0, 0, 0, 0, 0, 0)
    c.cid += 1
    cid = c.cid
    c.pdu(4, sqe(cid, None), data)
    typ, _, hdr, _ = c.recv_pdu()
    dw0, dw1, sqhd, sqid, rcid, st = struct.unpack("<IIHHHH", hdr[8:24])
    if typ != 5 or rcid != cid:
        fail(f"no response to an SGL the target refuses (type {typ})")
    return st >> 1


# SGL descriptors the target does not take get the NVMe status that says so
cases = [
    (struct.pack("<QI3xB", 0, 4096, 0x40), b"", 0x4011, "keyed (RDMA) data block"),
    (struct.pack("<QI3xB", 8192, 16, 0x01), bytes(4096), 0x4016, "in-capsule offset past the data"),
    (struct.pack("<QI3xB", 0, 8192, 0x01), bytes(4096), 0x400F, "in-capsule length past the data"),
    (struct.pack("<QI3xB", 0, 4096, 0x5A), bytes(4096), 0x4011, "in-capsule data a transport SGL does not describe"),
    (struct.pack("<QI3xB", 0, 64 << 20, 0x5A), b"", 0x4002, "a transfer over the MDTS"),
]
for sgl, data, want, what in cases:
    st = raw_sgl(io, sgl, data)
    if st != want:
        fail(f"{what}: status {st:#x}, want {want:#x}")
print("ok: SGL descriptors the target refuses")
# a bad data digest on the I/O queue ends that connection, not the admin queue
bad = struct.pack("<BBBBI", 4, 3, 72, 76, 76 + 4096 + 4) + \
    struct.pack("<BBHI16x", 0x01, 0x40, 99, 1) + struct.pack("<QI3xB", 0, 4096, 0x01) + \
    struct.pack("<IIIIII", 10, 0, 0, 0, 0, 0)
io.s.sendall(bad + struct.pack("<I", crc32c(bad)) + bytes(4096) + b"bad!")
try:
    while io.s.recv(4096):
        pass
except (ConnectionResetError, socket.timeout):
    pass
print("ok: data digest error: connection closed")
st, _, _, _ = a.admin(0x18)
if st:
    fail("Keep Alive on the admin queue")

# --- a host that stops reading stalls only its own connection --------------
io2 = Conn()
io2.connect(subnqn, qid=1, cntlid=cntlid, sqsize=31)
x = Conn()
x.connect(subnqn, qid=2, cntlid=cntlid, sqsize=31)
for cid in range(100, 132):   # 32 reads of 1 MiB, none of it read back
    sqe = struct.pack("<BBHI16x", 0x02, 0x40, cid, 1) + struct.pack("<QI3xB", 0, 1 << 20, 0x5A) + \
        struct.pack("<IIIIII", 0, 0, 255, 0, 0, 0)
    x.pdu(4, sqe)
for i in range(4):
    st, _, _, got = rw(io2, 0x02, 100, 64)
    if st or got != big:
        fail("I/O on another connection while one peer does not read")
if a.admin(0x18)[0]:
    fail("Keep Alive while one peer does not read")
x.s.close()
print("ok: a peer that stops reading harms no other connection")

# --- a host the policy does not name: the default policy's unprivileged user
s1 = Conn()
c1 = s1.connect(subnqn, hostnqn="nqn.2014-08.org.example:stranger")
if s1.admin(0x06, cdw10=1, data_in_len=4096)[0]:
    fail("Identify Controller for a host the policy does not name")
st = s1.admin(0x02, cdw10=0x02 | (127 << 16), nsid=0xFFFFFFFF, data_in_len=512)[0]
if st != 0x4286:
    fail(f"Get Log Page for a host the policy does not name: status {st:#x}, want Access Denied")
s1.admin(0x09, cdw10=0x07, cdw11=0)
s2 = Conn()
s2.connect(subnqn, qid=1, cntlid=c1, hostnqn="nqn.2014-08.org.example:stranger")
st = rw(s2, 0x01, 300, 1, small, incapsule=True)[0]
st |= rw(s2, 0x02, 300, 1)[0]
if st:
    fail(f"I/O for a host the policy does not name: status {st:#x}")
print("ok: an unnamed host: I/O and Identify, no other admin command (Access Denied)")

# --- the host ID is part of the identity: the policy denies writes to one
# host ID (whatever its NQN), and the audit records it ------------------------
import json
rid = bytes.fromhex(RO_HOSTID.replace("-", ""))
h1 = Conn()
hc = h1.connect(subnqn, hostid=rid)
h1.admin(0x09, cdw10=0x07, cdw11=0)
h2 = Conn()
# an I/O queue of the association must give the admin queue's host ID
h2.connect(subnqn, qid=1, cntlid=hc, hostid=bytes(16), status=0x4182)
h2 = Conn()
h2.connect(subnqn, qid=1, cntlid=hc, hostid=rid)
if rw(h2, 0x02, 10, 1)[0]:
    fail("a read from the read-only host ID")
st = rw(h2, 0x01, 10, 1, small, incapsule=True)[0]
if st != 0x4286:
    fail(f"a write from the read-only host ID: status {st:#x}, want Access Denied")
if rw(io2, 0x01, 10, 1, small, incapsule=True)[0]:
    fail("a write from the same host NQN with another host ID")
recs = [json.loads(line) for line in open(AUDIT)]
if not any(r.get("hostid") == RO_HOSTID and r.get("hostnqn") == HOSTNQN and
           r.get("decision") == "deny" and r.get("verb") == "write" for r in recs):
    fail(f"no audit record of the denied write with hostid {RO_HOSTID}")
print("ok: the host ID in the policy (hostid) and in the audit")
# this process is on loopback: the record carries its uid, gid and pid
# (a remote peer's would be uid -1, pid 0)
if not any(r.get("hostid") == RO_HOSTID and r.get("uid") == os.geteuid() and
           r.get("gid") == os.getegid() and r.get("pid") == os.getpid() for r in recs):
    fail(f"the audit does not show this local peer as uid {os.geteuid()} pid {os.getpid()}: "
         f"{[(r.get('uid'), r.get('pid')) for r in recs if r.get('hostid') == RO_HOSTID]}")
print(f"ok: a local peer is judged as its process (uid {os.geteuid()}, pid {os.getpid()})")

# --- keep-alive timeout: an admin queue that goes silent is closed ---------
k = Conn()
k.connect(subnqn, kato=300)
k.s.settimeout(30)
try:
    while k.s.recv(4096):
        pass
except ConnectionResetError:
    pass
except socket.timeout:
    fail("an admin queue silent past its keep-alive timeout was not closed")
print("ok: keep-alive timeout closes the association")
if a.admin(0x18)[0]:
    fail("Keep Alive on the first association")
print("nvme_tcp_pdu: all checks passed")
