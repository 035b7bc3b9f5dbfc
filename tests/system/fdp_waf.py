#!/usr/bin/env python3
# The write amplification workloads of docs/fdp.md, as an application would
# run them: NVMe Write commands with a placement identifier (DTYPE 2, DSPEC)
# through the kernel's passthrough ioctl on /dev/ng0n1 (under `ucmd exec`).
# Fills the namespace, then overwrites it PASSES times over:
#   one: 80% of writes to the first 20% of the LBAs, all through handle 0
#   two: the same LBA sequence, hot LBAs through handle 0, cold ones handle 1
#   seq: sequential overwrites through handle 0
# Usage: fdp_waf.py one|two|seq NSZE PASSES (4 KiB blocks, one per write)
import ctypes
import fcntl
import os
import sys

class PassthruCmd(ctypes.Structure):
    # struct nvme_passthru_cmd (linux/nvme_ioctl.h)
    _fields_ = [("opcode", ctypes.c_uint8), ("flags", ctypes.c_uint8),
                ("rsvd1", ctypes.c_uint16), ("nsid", ctypes.c_uint32),
                ("cdw2", ctypes.c_uint32), ("cdw3", ctypes.c_uint32),
                ("metadata", ctypes.c_uint64), ("addr", ctypes.c_uint64),
                ("metadata_len", ctypes.c_uint32), ("data_len", ctypes.c_uint32),
                ("cdw10", ctypes.c_uint32), ("cdw11", ctypes.c_uint32),
                ("cdw12", ctypes.c_uint32), ("cdw13", ctypes.c_uint32),
                ("cdw14", ctypes.c_uint32), ("cdw15", ctypes.c_uint32),
                ("timeout_ms", ctypes.c_uint32), ("result", ctypes.c_uint32)]

# _IOWR('N', 0x43, struct nvme_passthru_cmd)
NVME_IOCTL_IO_CMD = (3 << 30) | (ctypes.sizeof(PassthruCmd) << 16) | (ord('N') << 8) | 0x43
BS = 4096

def main():
    work, nsze, passes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    fd = os.open("/dev/ng0n1", os.O_RDWR)
    buf = ctypes.create_string_buffer(b"\xa5" * BS, BS)
    cmd = PassthruCmd()

    def write(lba, pid):
        ctypes.memset(ctypes.addressof(cmd), 0, ctypes.sizeof(cmd))
        cmd.opcode, cmd.nsid = 0x01, 1
        cmd.addr, cmd.data_len = ctypes.addressof(buf), BS
        cmd.cdw10, cmd.cdw11 = lba & 0xffffffff, lba >> 32
        cmd.cdw12 = 2 << 20            # 1 block, DTYPE 2: data placement
        cmd.cdw13 = pid << 16          # DSPEC: the placement identifier
        ret = fcntl.ioctl(fd, NVME_IOCTL_IO_CMD, cmd)
        if ret:
            sys.exit("write of LBA %d through %d: NVMe status %#x" % (lba, pid, ret))

    hot = nsze // 5
    pid_of = (lambda lba: int(lba >= hot)) if work == "two" else (lambda lba: 0)
    for lba in range(nsze):
        write(lba, pid_of(lba))
    seed = 42
    for i in range(passes * nsze):
        if work == "seq":
            lba = i % nsze
        else:
            seed = (seed * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            r = seed >> 33
            seed = (seed * 6364136223846793005 + 1442695040888963407) % (1 << 64)
            r2 = seed >> 33
            lba = r2 % hot if r % 100 < 80 else hot + r2 % (nsze - hot)
        write(lba, pid_of(lba))
    os.close(fd)

main()
