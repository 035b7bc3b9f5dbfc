#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the binary seed corpora of the fuzz targets whose inputs are
structs (fuzz_ctrl_dma, fuzz_ctrl_regs), so that each seed says what it
is. Run from the repository root: python3 tests/fuzz/gen_seeds.py"""
import os
import struct

BUS = 0x10000          # fuzz_ctrl_dma.c / fuzz_ctrl_regs.c: ARENA_BUS
PAGE = 4096


def write(target, name, data):
    d = os.path.join("tests/fuzz/corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def sqe(opcode=0, flags=0, cid=0, nsid=0, mptr=0, prp1=0, prp2=0, sgl1=None,
        cdw=(0, 0, 0, 0, 0, 0)):
    dptr = sgl1 if sgl1 is not None else struct.pack("<QQ", prp1, prp2)
    return (struct.pack("<BBHIIIQ", opcode, flags, cid, nsid, 0, 0, mptr) + dptr +
            struct.pack("<6I", *cdw))


def sgl(addr, length, typ):
    return struct.pack("<QI3xB", addr, length, typ << 4)


class Arena:
    def __init__(self):
        self.b = bytearray()

    def put(self, off, data):
        if len(self.b) < off + len(data):
            self.b += bytes(off + len(data) - len(self.b))
        self.b[off:off + len(data)] = data


def dma(name, sel, length, cmd, arena=None):
    write("ctrl_dma", name, bytes([sel]) + struct.pack("<I", length) + cmd +
          (bytes(arena.b) if arena else b""))


def dma_seeds():
    dma("prp1_only", 0, 512, sqe(prp1=BUS + PAGE))
    dma("prp1_prp2", 0, 2 * PAGE, sqe(prp1=BUS + 0x200, prp2=BUS + 2 * PAGE))
    a = Arena()
    a.put(3 * PAGE, struct.pack("<4Q", *(BUS + (4 + i) * PAGE for i in range(4))))
    dma("prp_list", 0, 5 * PAGE, sqe(prp1=BUS, prp2=BUS + 3 * PAGE), a)
    # a list that starts in the last slot of its page chains at once
    a = Arena()
    a.put(4 * PAGE - 8, struct.pack("<Q", BUS + 5 * PAGE))
    a.put(5 * PAGE, struct.pack("<3Q", BUS + 6 * PAGE, BUS + 7 * PAGE, BUS + 8 * PAGE))
    dma("prp_list_chain", 0, 4 * PAGE, sqe(prp1=BUS, prp2=BUS + 4 * PAGE - 8), a)
    # a chain pointer to itself: must fail, not spin
    a = Arena()
    a.put(4 * PAGE - 8, struct.pack("<Q", BUS + 4 * PAGE - 8))
    dma("prp_list_self", 0, 4 * PAGE, sqe(prp1=BUS, prp2=BUS + 4 * PAGE - 8), a)
    dma("prp_outside", 0, 2 * PAGE, sqe(prp1=BUS + 16 * PAGE - 8, prp2=BUS + 16 * PAGE))
    dma("prp_mdts", 2, 8 * PAGE, sqe(prp1=BUS, prp2=BUS + PAGE))
    dma("sgl_data", 0, 300, sqe(flags=0x40, sgl1=sgl(BUS + 0x123, 300, 0)))
    a = Arena()
    a.put(PAGE, sgl(BUS + 2 * PAGE, 100, 0) + sgl(BUS + 3 * PAGE, 200, 0))
    dma("sgl_last_seg", 0, 300, sqe(flags=0x40, sgl1=sgl(BUS + PAGE, 32, 3)), a)
    a = Arena()
    a.put(PAGE, sgl(BUS + 2 * PAGE, 100, 0) + sgl(BUS + PAGE + 0x100, 32, 2))
    a.put(PAGE + 0x100, sgl(BUS + 3 * PAGE, 50, 0) + sgl(BUS + PAGE + 0x200, 16, 3))
    a.put(PAGE + 0x200, sgl(BUS + 4 * PAGE, 150, 0))
    dma("sgl_seg_chain", 0, 300, sqe(flags=0x40, sgl1=sgl(BUS + PAGE, 32, 2)), a)
    a = Arena()
    a.put(PAGE, sgl(BUS + PAGE, 16, 2))
    dma("sgl_seg_self", 0, 300, sqe(flags=0x40, sgl1=sgl(BUS + PAGE, 16, 2)), a)
    dma("meta_contig", 1, 64, sqe(mptr=BUS + 0x40))
    a = Arena()
    a.put(PAGE, sgl(BUS + 2 * PAGE, 64, 0))
    dma("meta_sgl", 1, 64, sqe(flags=0x80, mptr=BUS + PAGE), a)


if __name__ == "__main__":
    dma_seeds()
