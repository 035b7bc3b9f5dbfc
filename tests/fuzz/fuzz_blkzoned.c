/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the zoned block ioctls of libucmd-preload
 * (src/preload/blkzoned.c: BLKREPORTZONE, BLKRESETZONE, BLKOPENZONE,
 * BLKCLOSEZONE, BLKFINISHZONE, BLKGETZONESZ, BLKGETNRZONES) with any
 * arguments, on a zoned RAM namespace of 8 zones of 16 blocks (at most 2
 * open, 3 active) served by the real host driver and emulated controller.
 * The preload's daemon-facing helpers (pl_devinfo, pl_admin, pl_copy_in/out
 * and the private fds) are stood in for here by the same engine in process;
 * pl_copy_* fault (-EFAULT, as copy_to_user) outside a window the input
 * sets, so short user buffers are reached too.
 *
 * Invariants, after every call: the errno is one the file documents; the
 * geometry ioctls say 16 sectors and 8 zones; a report is zone after zone
 * from the one holding the sector asked, no more than asked, each as the
 * controller holds it (condition; write pointer, the zone's end when full);
 * a call refused before any command (EINVAL, EBADF, EFAULT of the range)
 * changed no zone.
 *
 * Input: records of 16 bytes: op (which ioctl, and whether the file is
 * open for writing), zone, sector offset, count, and the fault window's
 * cut (bytes of the argument that are mapped; 0xff: all).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/blkzoned.h>
#include <linux/fs.h>

#include <nvme/types.h>

#include "nvme/ctrl/zns.h"
#include "preload/preload.h"
#include "ucmd/nvme.h"
#include "ucmd/ucmd.h"

#define ZSZE	16u		/* blocks of 512 bytes: sectors too */
#define NR_Z	8u
#define REC	16u
#define MAX_REP	12u		/* zones a report may ask for */

static struct ucmd_engine *eng;
static struct ucmd_ctrl *ctrl;
static struct ucmd_nvme_host *host;
static struct pl_devinfo dev_ctrl = { .name = "nvme0", .kind = PL_DEV_CTRL };
static struct pl_devinfo dev_ns = { .name = "nvme0n1", .kind = PL_DEV_NS_BLK, .nsid = 1,
				    .lba_size = 512, .nlba = ZSZE * NR_Z };
static const uint8_t *ok_lo, *ok_hi;	/* pl_copy_* reach [ok_lo, ok_hi) only */

/* ---- the preload's helpers, over the engine in this process ---- */

struct ucmd_engine *pl_engine(void)
{
	return eng;
}

const struct pl_devinfo *pl_devinfo(const char *name)
{
	return !strcmp(name, "nvme0") ? &dev_ctrl : !strcmp(name, "nvme0n1") ? &dev_ns : NULL;
}

int pl_private_open(struct ucmd_engine *e, const char *name, int flags)
{
	return ucmd_open(e, name, flags);
}

void pl_private_close(struct ucmd_engine *e, int fd)
{
	ucmd_close(e, fd);
}

int pl_admin(const struct pl_devinfo *d, struct nvme_passthru_cmd64 *cmd)
{
	int fd = ucmd_open(eng, d->name, O_RDONLY), ret;

	if (fd < 0)
		return fd;
	ret = ucmd_ioctl(eng, fd, NVME_IOCTL_ADMIN64_CMD, cmd);
	ucmd_close(eng, fd);
	return ret;
}

int pl_identify(const struct pl_devinfo *c, uint32_t nsid, uint32_t cns, uint8_t csi, void *buf)
{
	struct nvme_passthru_cmd64 cmd = { .opcode = nvme_admin_identify, .nsid = nsid,
					   .addr = (uintptr_t)buf, .data_len = 4096,
					   .cdw10 = cns, .cdw11 = (uint32_t)csi << 24 };

	memset(buf, 0, 4096);
	return pl_admin(c, &cmd);
}

static bool reachable(const void *p, size_t len)
{
	const uint8_t *b = p;

	return b && b >= ok_lo && len <= (size_t)(ok_hi - b);
}

int pl_copy_in(void *dst, const void *src, size_t len)
{
	if (!reachable(src, len))
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int pl_copy_out(void *dst, const void *src, size_t len)
{
	if (!reachable(dst, len))
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

/* ---- the target ---- */

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

static void rig_up(void)
{
	struct ucmd_ctrl_params cp = { 0 };
	struct ucmd_ns_params np = {
		.nsze = ZSZE * NR_Z, .store = UCMD_NS_STORE_RAM, .attach = true,
		.zoned = { .zone_size = ZSZE, .max_open = 2, .max_active = 3 },
	};

	eng = ucmd_engine_new();
	if (!eng || ucmd_ctrl_create(&cp, &ctrl) || ucmd_ctrl_ns_create(ctrl, &np) != 1 ||
	    ucmd_nvme_attach(eng, ctrl, NULL, &host))
		abort();
}

static struct ctrl_zoned *zones(void)
{
	return ctrl->ns[1]->zoned;
}

static void snapshot(struct ctrl_zone_rec *out)
{
	memcpy(out, zones()->z, NR_Z * sizeof(*out));
}

static void check_report(const struct blk_zone_report *in, const struct blk_zone_report *out,
			 const struct blk_zone *bz)
{
	struct ctrl_zoned *zn = zones();
	uint64_t first = in->sector / ZSZE;

	check(out->nr_zones <= in->nr_zones, "no more zones than asked");
	check(in->sector >= ZSZE * NR_Z ? out->nr_zones == 0
					: out->nr_zones == (in->nr_zones < NR_Z - first
							    ? in->nr_zones : NR_Z - first),
	      "every zone from the sector's to the end, or as many as asked");
	for (uint32_t i = 0; i < out->nr_zones; i++) {
		uint64_t z = first + i, start = z * ZSZE;
		uint8_t zs = zn->z[z].zs;
		uint64_t wp = le64toh(zn->z[z].wp);

		check(bz[i].start == start && bz[i].len == ZSZE && bz[i].capacity == ZSZE,
		      "zone geometry");
		check(bz[i].type == BLK_ZONE_TYPE_SEQWRITE_REQ, "sequential write required");
		check(bz[i].cond == zs, "the controller's condition");
		check(bz[i].wp == (zs == NVME_ZNS_ZS_FULL ? start + ZSZE : wp), "write pointer");
	}
}

static int one(const uint8_t *r)
{
	static const unsigned long reqs[] = { BLKREPORTZONE, BLKRESETZONE, BLKOPENZONE,
					      BLKCLOSEZONE, BLKFINISHZONE, BLKGETZONESZ,
					      BLKGETNRZONES };
	unsigned long req = reqs[(r[0] & 0x7f) % 7];
	struct pl_file f = { .dev = &dev_ns, .oflags = r[0] & 0x80 ? O_RDWR : O_RDONLY };
	uint64_t sector = (uint64_t)(r[1] % (NR_Z + 2)) * ZSZE, count;
	uint8_t buf[sizeof(struct blk_zone_report) + MAX_REP * sizeof(struct blk_zone)]
		__attribute__((aligned(8)));
	struct ctrl_zone_rec before[NR_Z];
	size_t arglen;
	int ret;

	memcpy(&count, r + 4, 8);
	/* mostly near the zone grid, sometimes anywhere */
	sector += r[2] & 0x80 ? (uint64_t)(r[2] & 0x7f) : 0;
	if (r[3] & 1)
		sector = count ^ ((uint64_t)r[2] << 56);
	memset(buf, 0xa5, sizeof(buf));
	if (req == BLKREPORTZONE) {
		struct blk_zone_report *rep = (void *)buf;

		rep->sector = sector;
		rep->nr_zones = (uint32_t)(count % (MAX_REP + 1));
		rep->flags = 0;
		arglen = sizeof(*rep) + rep->nr_zones * sizeof(struct blk_zone);
	} else if (req == BLKGETZONESZ || req == BLKGETNRZONES) {
		arglen = 4;
	} else {
		struct blk_zone_range *rg = (void *)buf;

		rg->sector = sector;
		rg->nr_sectors = r[3] & 2 ? count : (count % (NR_Z + 1)) * ZSZE;
		arglen = sizeof(*rg);
	}
	ok_lo = buf;
	ok_hi = buf + (r[12] == 0xff ? arglen : r[12] % (arglen + 1));
	struct blk_zone_report in = *(struct blk_zone_report *)buf;

	snapshot(before);
	ret = pl_blkzoned_ioctl(&f, req, r[13] == 0xee ? NULL : buf);
	check(ret == 0 || ret == -EINVAL || ret == -EBADF || ret == -EFAULT || ret == -EIO ||
	      ret == -ETOOMANYREFS || ret == -EOVERFLOW || ret == -ENOMEM,
	      "a documented errno");
	if (req == BLKGETZONESZ || req == BLKGETNRZONES) {
		uint32_t v;

		memcpy(&v, buf, 4);
		check(ret == -EFAULT || v == (req == BLKGETZONESZ ? ZSZE : NR_Z), "geometry");
	} else if (req == BLKREPORTZONE && !ret) {
		check_report(&in, (struct blk_zone_report *)buf,
			     (struct blk_zone *)(buf + sizeof(struct blk_zone_report)));
	} else if (ret == -EINVAL || ret == -EBADF || (req != BLKREPORTZONE && ret == -EFAULT)) {
		check(!memcmp(before, zones()->z, sizeof(before)), "a refused call changed no zone");
	}
	if (req != BLKREPORTZONE && req != BLKGETZONESZ && req != BLKGETNRZONES &&
	    !(f.oflags & O_RDWR))
		check(ret == -EBADF || ret == -EINVAL || ret == -EFAULT, "not open for writing");
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t reset_all[REC] = { 0x81, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0xff };
	uint8_t rec[REC];

	if (!eng)
		rig_up();
	/* every input starts from empty zones: one reset of the whole disk */
	memcpy(rec, reset_all, REC);
	rec[4] = ZSZE * NR_Z;
	check(one(rec) == 0, "reset of every zone");
	for (size_t off = 0; off + REC <= size; off += REC)
		one(data + off);
	return 0;
}
