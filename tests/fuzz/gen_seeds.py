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


CC_OK = 4 << 20 | 6 << 16 | 6 << 4 | 1   # IOCQES, IOSQES, CSS all, EN


def w32(off, val):
    return struct.pack("<BHI", 0, off, val)


def w64(off, val):
    return struct.pack("<BHQ", 1, off, val)


def r32(off):
    return struct.pack("<BH", 2, off)


def enable(asqs=31, acqs=31, asq_page=0, acq_page=1, cc=CC_OK):
    return struct.pack("<BBBHHI", 3, asqs, acqs, asq_page, acq_page, cc)


def admin(cmd):
    return bytes([4]) + cmd


def io(qid, cmd):
    return bytes([5, qid - 1]) + cmd


def poke(off8, val):
    return struct.pack("<BHQ", 6, off8, val)


def create_cq(qid, size, page, flags=3, vector=1):
    return admin(sqe(opcode=0x05, prp1=BUS + page * PAGE,
                     cdw=(qid | (size - 1) << 16, flags | vector << 16, 0, 0, 0, 0)))


def create_sq(qid, size, page, cqid, flags=1):
    return admin(sqe(opcode=0x01, prp1=BUS + page * PAGE,
                     cdw=(qid | (size - 1) << 16, flags | cqid << 16, 0, 0, 0, 0)))


def rw(opcode, slba, nlb, page):
    return sqe(opcode=opcode, nsid=1, prp1=BUS + page * PAGE, cdw=(slba, 0, nlb - 1, 0, 0, 0))


def regs_seeds():
    write("ctrl_regs", "enable_identify",
          enable() + admin(sqe(opcode=0x06, prp1=BUS + 2 * PAGE, cdw=(1, 0, 0, 0, 0, 0))))
    write("ctrl_regs", "io_queue_rw",
          enable() + create_cq(1, 64, 3) + create_sq(1, 64, 4, 1) +
          io(1, rw(0x01, 0, 8, 8)) + io(1, rw(0x02, 0, 8, 10)) +
          admin(sqe(opcode=0x00, cdw=(1, 0, 0, 0, 0, 0))) +
          admin(sqe(opcode=0x04, cdw=(1, 0, 0, 0, 0, 0))))
    write("ctrl_regs", "hostile_queues",
          enable() + create_cq(1, 0x10000, 3) + create_cq(2, 64, 0x7fff) +
          create_cq(9, 64, 3) + create_sq(1, 64, 4, 3) + create_cq(1, 256, 31) +
          create_sq(2, 256, 28, 1) + admin(sqe(opcode=0x04, cdw=(1, 0, 0, 0, 0, 0))))
    write("ctrl_regs", "doorbells",
          enable() + w32(0x1000, 200) + w32(0x1004, 5) + w32(0x1008, 1) + w32(0x1ffc, 1) +
          w32(0x1002, 1) + r32(0x1000) + enable(1, 1) + w32(0x1000, 1))
    write("ctrl_regs", "regs_while_enabled",
          enable() + w64(0x28, BUS + 9 * PAGE) + w32(0x24, 0) + r32(0x1c) + r32(0x00) +
          w32(0x14, CC_OK | 1 << 14) + r32(0x1c) + w32(0x14, 0) + r32(0x1c) +
          w32(0x0c, 0xffffffff) + w32(0x10, 1) + enable(cc=CC_OK | 7 << 7))
    write("ctrl_regs", "queue_memory_changes",
          enable() + create_cq(1, 4, 3) + create_sq(1, 4, 4, 1) +
          io(1, rw(0x02, 0, 1, 8)) + poke(4 * PAGE // 8, 0xffffffffffffffff) +
          w32(0x1008, 3) + poke(3 * PAGE // 8 + 1, 0) + io(1, rw(0x02, 60, 8, 8)))


def audit(name, flags, ret, pid, uid, gid, tuid, tgid, cmd_op, opcode, verb, dirn, nsid,
          select, offset, length, slba, nlb, device, rule):
    # fuzz_audit.c: flags bits: 0 override_creds hook, 1 audit, 2 with desc,
    # 3 cap_sys_admin, 4 admin, 5 has_range, 6 destructive, 7 has_select,
    # 8 intrusive, 9 raw verdict
    hdr = struct.pack("<HiiIIIIIBiiI", flags, ret, pid, uid, gid, tuid, tgid, cmd_op,
                      opcode, verb, dirn, nsid)
    hdr += struct.pack("<I", select)[:3] + struct.pack("<4Q", offset, length, slba, nlb)
    assert len(hdr) == 78
    write("audit", name, hdr + device.ljust(32, b"\0")[:32] + rule)


def audit_seeds():
    audit("deny_write", 4 | 32 | 64, -13, 1234, 65534, 65534, 0, 0, 0xC0484E80, 1, 1, 1,
          1, 0, 51200, 4096, 100, 8, b"ng0n1", b"/etc/ucmd/site.ini:8 no-writes")
    audit("allow_audited", 2 | 4 | 32, 0, 1, 0, 0, 0, 0, 0xC0484E80, 2, 0, 2, 1, 0, 0,
          512, 0, 1, b"ng0n1", b"site.ini:1 reads")
    audit("quiet_allow", 4, 0, 1, 1000, 1000, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 0,
          b"ng0n1", b"")
    audit("override_creds", 1, -1, 77, 1000, 100, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
          b"", b"personality")
    audit("hostile_strings", 4 | 8 | 16 | 128 | 256, -13, -1, 0xffffffff, 0xffffffff, 0, 0,
          0xffffffff, 255, 0x7fffffff, -5, 0xffffffff, 0xffffff, 2**64 - 1, 2**64 - 1,
          2**64 - 1, 2**64 - 1, b"ng\"\\\n\x01\x7f\xff\xc3\x28nvme0n1abcdefghijklmnop",
          b"\xe2\x82 \xf0\x9f\x98\x80 \"quoted\" \t\r\n/slash\\ " + b"x" * 120)
    audit("raw_verdict", 512 | 4, -2**31, 0, 0, 0, 0, 0, 0, 0, -1, 4, 0, 0, 0, 1, 0, 0,
          b"ng0n1", b"int-min")


# ---- fuzz_daemon_msg: ucmdd requests (src/daemon/proto.h) ----
UCMDD_MAGIC = 0x444d4355


def ucmdd_msg(name, op, payload, seq=1, magic=UCMDD_MAGIC, flags=0, length=None):
    if length is None:
        length = len(payload)
    hdr = struct.pack("<IHHIiII", magic, op, flags, seq, 0, length, 0)
    write("daemon_msg", name, hdr + payload)


def io_uring_params(flags=0, cq_entries=0, sq_thread_idle=0):
    # struct io_uring_params: 120 bytes, sq_off and cq_off left zero
    return struct.pack("<IIIII3I", 0, cq_entries, flags, 0, sq_thread_idle, 0, 0, 0) + bytes(88)


def daemon_seeds():
    name = lambda s: s.encode().ljust(64, b"\0")
    ucmdd_msg("hello", 1, struct.pack("<4I", 1, 0, 0, 0))
    ucmdd_msg("device_names", 2, b"")
    ucmdd_msg("disk_stat", 3, name("nvme0n1"))
    ucmdd_msg("open_ng", 4, struct.pack("<iI", 2, 0) + name("ng0n1"))
    ucmdd_msg("close", 5, struct.pack("<iI", 0, 0))
    ucmdd_msg("ioctl_admin64", 6, struct.pack("<iIQQ", 0, 0, 0xC0484E47, 0x7f0000001000))
    # SQE128 | CQE32
    ucmdd_msg("queue_init", 7, struct.pack("<II", 64, 0) + io_uring_params(flags=(1 << 10) | (1 << 11)))
    ucmdd_msg("queue_exit", 8, struct.pack("<II", 0, 0))
    ucmdd_msg("register_buffers", 9, struct.pack("<IIQII", 0, 0, 0x7f0000002000, 2, 0))
    ucmdd_msg("region_add", 10, struct.pack("<QQ", 0x7f0000100000, 1 << 20))
    ucmdd_msg("region_del", 11, struct.pack("<QQ", 0x7f0000100000, 0))
    ucmdd_msg("ring_bounce", 17, struct.pack("<II", 0, 0))
    # broken: the length lies, the name fills its field, an unknown op, bad magic
    ucmdd_msg("bad_len", 4, struct.pack("<iI", 2, 0) + name("ng0n1"), length=0xffffffff)
    ucmdd_msg("unterminated_name", 4, struct.pack("<iI", 2, 0) + b"n" * 64)
    ucmdd_msg("unknown_op", 0xffff, b"\x01" * 16)
    ucmdd_msg("bad_magic", 1, struct.pack("<4I", 1, 0, 0, 0), magic=0x55434d44)
    ucmdd_msg("short_payload", 7, struct.pack("<II", 64, 0))
    write("daemon_msg", "short_header", struct.pack("<IH", UCMDD_MAGIC, 1))


# fuzz_daemon_sqe.c: byte 0 the mode (1: 128-byte SQEs, 2: raw, 4: the
# client is dead at completion), a 128-byte SQE, then iovecs (base, len) and
# the same bytes raw at the arena's 1 KiB.
# An address is mapped by its top 3 bits: 0 the plain part (+ offset), 2
# region A.., 3 the hole, 4 low, 5 the plain part's end, 6 the top of user
# space, 7 as it is. Client fds: 3 ng0n1, 4 nvme0, 5 nvme0n1, 6 null, 7
# closed; fixed files: 0 ng0n1, 1 empty, 2 null, 3 nvme0n1, 4 nvme0; fixed
# buffers: 0 plain+8K (16K), 1 region A+4K (16K), 2 retired region (8K),
# 3 plain+32K+100 (5000).
XL_PLAIN, XL_REGION, XL_HOLE, XL_TOP = 0, 2 << 61, 3 << 61, 6 << 61
XL_DATA = 1024
NVME_IO, NVME_IO_VEC, NVME_ADMIN, NVME_ADMIN_VEC = (0xC0484E80, 0xC0484E81,
                                                    0xC0484E82, 0xC0484E83)


def io_sqe(opcode, fd=-1, flags=0, off=0, addr=0, length=0, op_flags=0, user_data=0x1234,
           buf_index=0, cmd=b""):
    head = struct.pack("<BBHiQQIIQHHiQQ", opcode, flags, 0, fd, off, addr, length,
                       op_flags, user_data, buf_index, 0, 0, 0, 0)
    return head[:48] + cmd.ljust(80, b"\0")


def nvme_ucmd(opcode, nsid=1, addr=0, data_len=0, metadata=0, metadata_len=0,
              cdw10=0, cdw11=0, cdw12=0):
    return struct.pack("<BBHIIIQQII6III", opcode, 0, 0, nsid, 0, 0, metadata, addr,
                       metadata_len, data_len, cdw10, cdw11, cdw12, 0, 0, 0, 0, 0)


def uring_cmd(fd, cmd_op, ucmd, flags=0, op_flags=0, buf_index=0):
    return io_sqe(46, fd=fd, flags=flags, off=cmd_op, op_flags=op_flags,
                  buf_index=buf_index, cmd=ucmd)


def iovs(*pairs):
    return b"".join(struct.pack("<QQ", a, n) for a, n in pairs)


def xl(name, sqe_bytes, tail=b"", mode=1):
    write("daemon_sqe", name, bytes([mode]) + sqe_bytes + tail)


def sqe_seeds():
    two = iovs((XL_PLAIN + 4096, 2048), (XL_REGION + 8192, 2048))
    xl("nop", io_sqe(0))
    xl("nop_skip_success_link", io_sqe(0, flags=0x40 | 0x04))
    xl("read_bdev", io_sqe(22, fd=5, addr=XL_PLAIN + 4096, length=4096))
    xl("write_bdev_region", io_sqe(23, fd=5, off=8192, addr=XL_REGION + 4096, length=4096))
    xl("write_two_regions", io_sqe(23, fd=5, addr=XL_REGION + 30 * 1024, length=4096))
    xl("read_null_64", io_sqe(22, fd=6, addr=XL_PLAIN + 100, length=300), mode=0)
    xl("readv_bdev", io_sqe(1, fd=5, addr=XL_PLAIN, length=2), two)
    xl("writev_bdev_table_in_region", io_sqe(2, fd=5, addr=XL_REGION, length=2), two)
    xl("readv_fixed_file", io_sqe(1, fd=3, flags=0x01, addr=XL_PLAIN, length=2), two)
    xl("read_fixed_shadow", io_sqe(4, fd=5, addr=XL_PLAIN + 8192, length=4096, buf_index=0))
    xl("write_fixed_region", io_sqe(5, fd=5, addr=XL_REGION + 4096, length=8192, buf_index=1))
    xl("read_fixed_retired", io_sqe(4, fd=5, addr=XL_REGION + 64 * 1024, length=4096,
                                    buf_index=2))
    xl("read_fixed_odd", io_sqe(4, fd=5, addr=XL_PLAIN + 32 * 1024 + 100, length=5000,
                                buf_index=3))
    xl("write_fixed_outside", io_sqe(5, fd=5, addr=XL_PLAIN, length=4096, buf_index=0))
    xl("fsync", io_sqe(3, fd=5))
    xl("fsync_fixed_empty", io_sqe(3, fd=1, flags=0x01))
    xl("timeout", io_sqe(11, addr=XL_PLAIN + XL_DATA, length=1),
       struct.pack("<qq", 0, 200000))
    xl("timeout_abs_far", io_sqe(11, addr=XL_PLAIN + XL_DATA, length=1, op_flags=1),
       struct.pack("<qq", 1 << 40, 0))
    xl("timeout_count", io_sqe(11, off=1, addr=XL_PLAIN + XL_DATA, length=1),
       struct.pack("<qq", 5, 0))
    xl("link_timeout_alone", io_sqe(15, addr=XL_PLAIN + XL_DATA, length=1),
       struct.pack("<qq", 0, 1000))
    xl("timeout_in_hole", io_sqe(11, addr=XL_HOLE + 16, length=1))
    xl("cancel_held", io_sqe(14, addr=0xc0ffee))
    xl("cancel_any", io_sqe(14, op_flags=4))
    xl("cancel_fd", io_sqe(14, fd=5, op_flags=2))
    xl("cancel_fd_fixed", io_sqe(14, fd=3, op_flags=2 | 8))
    rd = nvme_ucmd(0x02, addr=XL_PLAIN + 4096, data_len=4096, cdw12=7)
    xl("nvme_read", uring_cmd(3, NVME_IO, rd))
    xl("nvme_write_region", uring_cmd(3, NVME_IO, nvme_ucmd(0x01, addr=XL_REGION, data_len=4096,
                                                             cdw10=16, cdw12=7)))
    xl("nvme_write_meta", uring_cmd(3, NVME_IO, nvme_ucmd(0x01, addr=XL_PLAIN, data_len=512,
                                                           metadata=XL_PLAIN + 8192,
                                                           metadata_len=8)))
    xl("nvme_read_vec", uring_cmd(3, NVME_IO_VEC, nvme_ucmd(0x02, addr=XL_PLAIN, data_len=2,
                                                             cdw12=7)),
       two)
    xl("nvme_read_fixed", uring_cmd(3, NVME_IO, nvme_ucmd(0x02, addr=XL_PLAIN + 8192,
                                                           data_len=4096, cdw12=7),
                                    op_flags=1, buf_index=0))
    xl("nvme_write_fixed_region", uring_cmd(3, NVME_IO,
                                            nvme_ucmd(0x01, addr=XL_REGION + 4096,
                                                      data_len=4096, cdw12=7),
                                            op_flags=1, buf_index=1))
    xl("nvme_read_fixed_file", uring_cmd(0, NVME_IO, rd, flags=0x01))
    xl("nvme_identify", uring_cmd(4, NVME_ADMIN, nvme_ucmd(0x06, nsid=0, addr=XL_PLAIN + 4096,
                                                            data_len=4096, cdw10=1)))
    xl("nvme_identify_vec", uring_cmd(4, NVME_ADMIN_VEC, nvme_ucmd(0x06, nsid=0, addr=XL_PLAIN,
                                                                    data_len=1, cdw10=1)),
       iovs((XL_PLAIN + 4096, 4096)))
    xl("nvme_get_log", uring_cmd(4, NVME_ADMIN, nvme_ucmd(0x02, nsid=0xffffffff,
                                                           addr=XL_REGION + 4096,
                                                           data_len=512,
                                                           cdw10=0x02 | (127 << 16))))
    xl("nvme_async_event_skipped", uring_cmd(4, NVME_ADMIN, nvme_ucmd(0x0c, nsid=0)))
    xl("nvme_read_64", uring_cmd(3, NVME_IO, rd), mode=0)
    xl("nvme_unknown_cmd_op", uring_cmd(3, 0x12345, rd))
    xl("null_uring_cmd", uring_cmd(6, 77, nvme_ucmd(0x02, addr=0xdead000, data_len=4096)))
    xl("bdev_uring_cmd", uring_cmd(5, NVME_IO, rd))
    # bad client memory, lengths and descriptors
    xl("read_hole", io_sqe(22, fd=5, addr=XL_HOLE, length=4096))
    xl("write_past_plain", io_sqe(23, fd=5, addr=(5 << 61) | 100, length=4096))
    xl("write_top", io_sqe(23, fd=6, addr=XL_TOP | (0x10 << 1), length=64))
    xl("read_wraps", io_sqe(22, fd=6, addr=XL_TOP | 1 | (0x20 << 1), length=64))
    xl("readv_too_many", io_sqe(1, fd=6, addr=XL_PLAIN, length=0xf0000400))
    xl("readv_bad_segment", io_sqe(1, fd=6, addr=XL_PLAIN, length=2),
       iovs((XL_PLAIN, 64), (XL_HOLE, 64)))
    xl("writev_raw_table", io_sqe(2, fd=6, addr=XL_PLAIN + XL_DATA, length=2),
       iovs((0x1000, 64), (0x7fff00000000, 64)))
    xl("read_raw", io_sqe(22, fd=6, addr=0x7f0000001000, length=4096), mode=3)
    xl("read_stale_fd", io_sqe(22, fd=7, addr=XL_PLAIN, length=512))
    xl("read_huge", io_sqe(22, fd=6, addr=XL_PLAIN, length=0xf0000000))
    xl("buffer_select", io_sqe(22, fd=5, flags=0x20, addr=XL_PLAIN, length=8))
    xl("read_dead_client", io_sqe(22, fd=5, addr=XL_PLAIN + 4096, length=4096), mode=5)
    xl("unknown_opcode", io_sqe(200))
    xl("openat_unsupported", io_sqe(18, fd=5))


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def tcp_pdu_seeds():
    """fuzz_tcp_pdu: one byte of receiver state (bit 0 hdgst, 1 ddgst, 2
    ICReq done, 3 receiver is the target, 4-7 pda), then a PDU."""
    def ch(typ, flags, hlen, pdo, plen):
        return struct.pack("<BBBBI", typ, flags, hlen, pdo, plen)

    def seed(name, state, pdu):
        write("tcp_pdu", name, bytes([state]) + pdu)

    tgt, tgt_ic = 8, 8 | 4
    seed("icreq", tgt, ch(0, 0, 128, 0, 128) + struct.pack("<HBBI", 0, 0, 3, 0) + bytes(112))
    seed("icresp", 0, ch(1, 0, 128, 0, 128) + struct.pack("<HBBI", 0, 0, 0, 131072) + bytes(112))
    seed("icreq_bad_pfv", tgt, ch(0, 0, 128, 0, 128) + struct.pack("<HBBI", 1, 0, 0, 0) + bytes(112))
    cmd = sqe(opcode=1, cid=1, nsid=1, sgl1=struct.pack("<QI3xB", 0, 512, 0x01))
    seed("cmd_nodata", tgt_ic, ch(4, 0, 72, 0, 72) + cmd)
    seed("cmd_incapsule", tgt_ic, ch(4, 0, 72, 72, 72 + 512) + cmd + bytes(512))
    h = ch(4, 1, 72, 0, 76) + cmd
    seed("cmd_hdgst", tgt_ic | 1, h + struct.pack("<I", crc32c(h)))
    seed("cmd_hdgst_bad", tgt_ic | 1, h + b"\xde\xad\xbe\xef")
    h = ch(4, 3, 72, 76, 76 + 512 + 4) + cmd
    seed("cmd_both_digests", tgt_ic | 3, h + struct.pack("<I", crc32c(h)) + bytes(516))
    seed("cmd_pda", tgt_ic | 0x30, ch(4, 0, 72, 80, 80 + 512) + cmd)
    seed("h2c_data", tgt_ic, ch(6, 4, 24, 24, 24 + 4096) + struct.pack("<HHII4x", 1, 0, 0, 4096))
    seed("h2c_datal_wrong", tgt_ic, ch(6, 4, 24, 24, 24 + 4096) + struct.pack("<HHII4x", 1, 0, 0, 4095))
    seed("h2c_term", tgt_ic, ch(2, 0, 24, 0, 24 + 8) + struct.pack("<HI10x", 1, 2) + bytes(8))
    seed("c2h_data_success", 4, ch(7, 12, 24, 24, 24 + 64) + struct.pack("<HHII4x", 1, 0, 0, 64))
    seed("r2t", 4, ch(9, 0, 24, 0, 24) + struct.pack("<HHII4x", 1, 3, 0, 65536))
    seed("rsp", 4, ch(5, 0, 24, 0, 24) + bytes(16))
    seed("c2h_term", 0, ch(3, 0, 24, 0, 24 + 128) + struct.pack("<HI10x", 3, 0) + bytes(128))
    seed("reserved_type", tgt_ic, ch(8, 0, 24, 0, 24) + bytes(16))


def pi_seeds():
    """fuzz_ctrl_pi.c: header, then data and metadata."""
    def pi(name, typ, pif, first, ms_sel, lbads_sel, control, ilbrt, slba, lbat, lbatm, i,
           bit, payload=b""):
        write("ctrl_pi", name, struct.pack("<5BHQQHHIH", typ, pif, first, ms_sel, lbads_sel,
                                           control, ilbrt, slba, lbat, lbatm, i, bit) + payload)
    prchk = 7 << 10
    pi("type1_16b_ms8", 1, 0, 0, 0, 0, prchk, 100, 100, 0x1234, 0xffff, 0, 5, bytes(range(256)) * 2)
    pi("type2_16b_ms64_last", 2, 0, 0, 2, 1, prchk, 7, 0, 0xabcd, 0xff00, 3, 4000)
    pi("type3_64b_ms16_first", 3, 2, 1, 1, 1, prchk | 1 << 13, 2**48 - 1, 9, 0xffff, 0, 1, 1)
    pi("type1_64b_ilbrt_mismatch", 1, 2, 0, 2, 0, prchk, 1, 2, 0, 0, 0, 0, b"\xff" * 600)
    pi("escape_apptag", 1, 0, 1, 1, 0, prchk, 0, 0, 0xffff, 0xffff, 2, 17)
    pi("bad_format", 1, 2, 0, 0, 0, prchk, 0, 0, 0, 0, 0, 0)
    # storage tags: byte 2 is first | STS << 1, bit 2 of byte 3 LBSTM all
    # ones, bit 1 of byte 4 STC
    pi("stag_64b_sts16_stc", 1, 2, 16 << 1, 1 | 4, 1 | 2, prchk, 0xabcd00000028, 0x28, 1,
       0xffff, 0, 9)
    pi("stag_64b_sts8_mask_slba", 2, 2, 8 << 1, 1, 1 | 2, prchk, 0x4200000000ff, 0x0f00000000ff,
       0, 0, 1, 3)
    pi("stag_64b_sts48_type3", 3, 2, 48 << 1 | 1, 1 | 4, 2, prchk, 2**48 - 1, 0, 0xffff, 0, 0, 2)
    pi("stag_16b_sts33_refused", 1, 0, 33 << 1, 0, 2, prchk, 0, 0, 0, 0, 0, 0)


def pi_migrate_seeds():
    """fuzz_pi_migrate.c: flags, then an nsN.pimig record (48-byte header, 8 bytes a block)."""
    def rec(name, flags, blk, nblk, body, magic=b"UCMDPIM1", nsid=1, lbaf=1, dps=1, nsze=64):
        hdr = magic + struct.pack("<IBB2xQQQII", nsid, lbaf, dps, nsze, blk, nblk, 0, 0)
        write("pi_migrate", name, bytes([flags]) + hdr + body)
    rec("whole_fixed", 7, 2, 4, bytes(range(32)))
    rec("whole_all_blocks", 7, 0, 64, bytes(range(256)) * 2)
    rec("read_only", 15, 2, 4, bytes(32))
    rec("bad_crc", 3, 2, 4, bytes(range(32)))
    rec("past_the_end", 7, 62, 4, bytes(32))
    rec("other_namespace", 6, 0, 1, bytes(8), nsid=2)
    write("pi_migrate", "short", b"\x07UCMDPIM1")


if __name__ == "__main__":
    tcp_pdu_seeds()
    audit_seeds()
    daemon_seeds()
    sqe_seeds()
    dma_seeds()
    regs_seeds()
    pi_seeds()
    pi_migrate_seeds()
