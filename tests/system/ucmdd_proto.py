#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A raw client of ucmdd's socket protocol (src/daemon/proto.h), for the
system tests: it builds messages byte by byte, so that it can also send
what no real client would. Run as a program, it runs one named check and
exits 0 when what it saw is what the check expects (argv: SOCKET CHECK).
"""
import array
import ctypes
import errno
import os
import socket
import struct
import sys

MAGIC = 0x444D4355
VERSION = 1
HDR = struct.Struct("<IHHIiII")
(HELLO, DEVICE_NAMES, DISK_STAT, OPEN, CLOSE, IOCTL, QUEUE_INIT, QUEUE_EXIT,
 REGISTER, REGION_ADD, REGION_DEL, ANA_STATE, ADOPT, PORT_STATE,
 REGS_READ, CTRL_ANA_STATE, RING_BOUNCE) = range(1, 18)


def ioc(d, t, nr, size):
    return (d << 30) | (size << 16) | (ord(t) << 8) | nr


NVME_IOCTL_ID = ioc(0, "N", 0x40, 0)
NVME_IOCTL_ADMIN64_CMD = ioc(3, "N", 0x47, 80)
NVME_IOCTL_IO64_CMD = ioc(3, "N", 0x48, 80)
NVME_IOCTL_IO64_CMD_VEC = ioc(3, "N", 0x49, 80)
CMD64 = struct.Struct("<BBHIIIQQII6IIIQ")
assert CMD64.size == 80


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.connect(path)
        self.seq = 0

    def close(self):
        self.s.close()

    def raw(self, data, fds=()):
        """Send bytes as one message; the reply: (hdr tuple, payload, fds)."""
        anc = []
        if fds:
            anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
        self.s.sendmsg([data], anc)
        return self.reply()

    def reply(self):
        data, anc, flags, _ = self.s.recvmsg(65536, socket.CMSG_SPACE(4 * 4))
        if not data:
            return None
        got = []
        for level, typ, cdata in anc:
            if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                a = array.array("i")
                a.frombytes(cdata[: len(cdata) - len(cdata) % 4])
                got += list(a)
        return HDR.unpack_from(data), data[HDR.size:], got

    def msg(self, op, payload=b"", fds=(), **kw):
        self.seq += 1
        h = dict(magic=MAGIC, op=op, flags=0, seq=self.seq, result=0,
                 len=len(payload), pad=0)
        h.update(kw)
        r = self.raw(HDR.pack(h["magic"], h["op"], h["flags"], h["seq"],
                              h["result"], h["len"], h["pad"]) + payload, fds)
        if r is None:
            raise ConnectionError("the daemon hung up")
        hdr, body, rfds = r
        assert hdr[0] == MAGIC, "reply magic"
        assert hdr[3] == h["seq"], "reply seq %d for %d" % (hdr[3], h["seq"])
        return hdr[4], body, rfds

    # ---- the requests ----
    def hello(self, version=VERSION):
        return self.msg(HELLO, struct.pack("<IIII", version, 0, 0, 0))

    def device_names(self):
        res, body, _ = self.msg(DEVICE_NAMES)
        names = [n.decode() for n in body.split(b"\0")[:-1]] if res >= 0 else []
        return res, names

    def disk_stat(self, name):
        res, body, _ = self.msg(DISK_STAT, struct.pack("<64s", name.encode()))
        return res, body

    def open(self, name, flags=os.O_RDWR):
        return self.msg(OPEN, struct.pack("<iI64s", flags, 0, name.encode()))[0]

    def close_fd(self, fd):
        return self.msg(CLOSE, struct.pack("<iI", fd, 0))[0]

    def ioctl(self, fd, cmd, arg):
        return self.msg(IOCTL, struct.pack("<iIQQ", fd, 0, cmd, arg))[0]


def passthru(opcode, nsid=0, addr=0, data_len=0, cdw10=0, cdw11=0, cdw12=0):
    """A struct nvme_passthru_cmd64 in this process's memory (ctypes)."""
    raw = CMD64.pack(opcode, 0, 0, nsid, 0, 0, 0, addr, 0, data_len,
                     cdw10, cdw11, cdw12, 0, 0, 0, 0, 0, 0)
    return ctypes.create_string_buffer(raw, len(raw))


def identify_ctrl(c, fd, addr=None):
    """Identify Controller through NVME_IOCTL_ADMIN64_CMD: (res, data)."""
    buf = ctypes.create_string_buffer(4096)
    a = ctypes.addressof(buf) if addr is None else addr
    cmd = passthru(0x06, addr=a, data_len=4096, cdw10=1)
    res = c.ioctl(fd, NVME_IOCTL_ADMIN64_CMD, ctypes.addressof(cmd))
    return res, buf.raw


def smart_log(c, fd):
    """Get Log Page, SMART / Health (LID 02h): admin, CAP_SYS_ADMIN by default."""
    buf = ctypes.create_string_buffer(512)
    cmd = passthru(0x02, nsid=0xFFFFFFFF, addr=ctypes.addressof(buf), data_len=512,
                   cdw10=0x02 | ((512 // 4 - 1) << 16))
    return c.ioctl(fd, NVME_IOCTL_ADMIN64_CMD, ctypes.addressof(cmd))


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def smartlog_check(path, want):
    c = Client(path)
    fd = c.open("nvme0", os.O_RDONLY)
    check(fd >= 0, "open nvme0: %d" % fd)
    log = smart_log(c, fd)
    check(log == want, "smart-log: %d, want %d" % (log, want))
    # Identify is anyone's (the default policy): the same client is not simply refused
    res, data = identify_ctrl(c, fd)
    check(res == 0, "identify as the same user: %d" % res)
    print("uid %d: smart-log %d, identify 0: ok" % (os.getuid(), log))


def main():
    path, what = sys.argv[1], sys.argv[2]
    if what == "smartlog-allowed":
        smartlog_check(path, 0)
    elif what == "smartlog-denied":
        smartlog_check(path, -errno.EACCES)
    elif what == "eof":
        # connected before SIGTERM (the shell sends it when this prints)
        c = Client(path)
        check(c.hello()[0] == 0, "hello before SIGTERM")
        print("connected", flush=True)
        sys.stdin.readline()
        try:
            r = c.hello()
            check(False, "a request after SIGTERM was answered: %r" % (r,))
        except (ConnectionError, BrokenPipeError, ConnectionResetError):
            print("after SIGTERM: the connection is closed")
    else:
        check(False, "unknown check " + what)


if __name__ == "__main__":
    main()
