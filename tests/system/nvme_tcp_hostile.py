#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A hostile NVMe/TCP target for ucmd's host (tests/system/nvme_tcp_hostile.sh):
it listens on 127.0.0.1 (a free port, written to PORT_FILE) and misbehaves
in one way, MODE:
  silent          accepts the connection, never answers ICReq
  silent-connect  answers ICReq, never answers Connect
  silent-admin    answers ICReq and Connect, nothing after
  wrong-cid       answers everything after Connect with another command ID
  r2t-read        a well-behaved controller until Identify (a read), which
                  gets an R2T asking the host for the read's buffer
Everything it sees goes to stdout, one line each ("h2cdata ..." if the host
ever sends data for an R2T). PDU layouts from NVMe/TCP 1.0 and NVMe-oF 1.1.
  nvme_tcp_hostile.py MODE PORT_FILE
"""
import socket
import struct
import sys
import threading

MODE, PORT_FILE = sys.argv[1], sys.argv[2]
MODES = ("silent", "silent-connect", "silent-admin", "wrong-cid", "r2t-read")
if MODE not in MODES:
    sys.exit(f"unknown mode {MODE}: {MODES}")


def log(*a):
    print(*a, flush=True)


def recvn(s, n):
    b = b""
    while len(b) < n:
        r = s.recv(n - len(b))
        if not r:
            raise EOFError
        b += r
    return b


def recv_pdu(s):
    """(type, flags, header, data); the host asks for no digests."""
    ch = recvn(s, 8)
    typ, flags, hlen, pdo, plen = struct.unpack("<BBBBI", ch)
    rest = recvn(s, plen - 8)
    pdu = ch + rest
    return typ, flags, pdu[:hlen], pdu[pdo:] if pdo else b""


def send_rsp(s, cid, dw0=0, dw1=0, status=0):
    cqe = struct.pack("<IIHHHH", dw0, dw1, 0, 0, cid, status << 1)
    s.sendall(struct.pack("<BBBBI", 5, 0, 24, 0, 24) + cqe)


def serve(s):
    cc = 0
    try:
        typ, _, hdr, _ = recv_pdu(s)
        log(f"pdu {typ} (ICReq expected)")
        if MODE == "silent":
            recvn(s, 1)     # until the host gives up
            return
        # ICResp: PFV 0, CPDA 0, no digests, MAXH2CDATA 128 KiB
        s.sendall(struct.pack("<BBBBIHBBI", 1, 0, 128, 0, 128, 0, 0, 0, 128 << 10) + bytes(112))
        while True:
            typ, flags, hdr, data = recv_pdu(s)
            if typ == 6:
                log(f"h2cdata {len(data)} bytes")
                continue
            if typ != 4:
                log(f"pdu {typ}")
                continue
            opc, _, cid = struct.unpack("<BBH", hdr[8:12])
            fctype = hdr[12]
            log(f"cmd opcode {opc:#x} fctype {fctype:#x} cid {cid:#x}")
            if opc == 0x7F and fctype == 0x01:     # Connect
                if MODE == "silent-connect":
                    continue
                send_rsp(s, cid, dw0=1)
                continue
            if MODE == "silent-admin":
                continue
            if MODE == "wrong-cid":
                send_rsp(s, (cid + 1) & 0xFFFF)
                continue
            # r2t-read: a controller good enough to reach Identify
            if opc == 0x7F and fctype == 0x04:     # Property Get
                attrib, off = struct.unpack("<B3xI", hdr[48:56])
                val = {0x00: 31 | 1 << 16 | 2 << 24 | 1 << 37, 0x08: 0x00010400,
                       0x14: cc, 0x1C: 1 if cc & 1 else 0}.get(off, 0)
                send_rsp(s, cid, dw0=val & 0xFFFFFFFF, dw1=val >> 32)
            elif opc == 0x7F and fctype == 0x00:   # Property Set
                off, val = struct.unpack("<IQ", hdr[52:64])
                if off == 0x14:
                    cc = val & 0xFFFFFFFF
                send_rsp(s, cid)
            elif opc == 0x06:                      # Identify: a read
                ln = struct.unpack("<I", hdr[40:44])[0]
                log(f"r2t for the read, {ln} bytes")
                s.sendall(struct.pack("<BBBBIHHII4x", 9, 0, 24, 0, 24, cid, 0, 0, ln))
            else:
                send_rsp(s, cid)
    except (EOFError, ConnectionResetError, BrokenPipeError):
        log("closed by the host")
    finally:
        s.close()


ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", 0))
ls.listen(8)
with open(PORT_FILE + ".tmp", "w") as f:
    f.write(str(ls.getsockname()[1]))
import os
os.rename(PORT_FILE + ".tmp", PORT_FILE)
while True:
    c, _ = ls.accept()
    log("accepted")
    threading.Thread(target=serve, args=(c,), daemon=True).start()
