/* SPDX-License-Identifier: MIT */
/*
 * The zoned block ioctls (<linux/blkzoned.h>) on a zoned nvmeXnY, served
 * with Zone Management Receive/Send on its generic device as Linux's nvme
 * driver does, with the block layer's checks and errnos: ENOTTY on a disk
 * that is not zoned, EINVAL for no argument, no zones asked for, or a range
 * not on zone boundaries; EBADF for a zone operation on a file not open for
 * writing; a device error is EIO, the open/active resource limits
 * ETOOMANYREFS/EOVERFLOW (blk_status_to_errno).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/blkzoned.h>

#include <nvme/types.h>

#include "preload/preload.h"

#define ZNS_SEND	0x79
#define ZNS_RECV	0x7a
#define ZNS_SC_TOO_MANY_ACTIVE	0x1bd
#define ZNS_SC_TOO_MANY_OPEN	0x1be
#define REPORT_BUF	4096u	/* a 64-byte header and 63 descriptors a command */

struct zctx {
	struct ucmd_engine *e;
	int fd;
	const struct pl_devinfo *d;
	struct pl_zone_info zi;
	uint64_t lba_sectors;	/* 512-byte sectors per logical block */
};

static int status_errno(int st)
{
	if (st <= 0)
		return st;
	switch (st & 0x7ff) {
	case ZNS_SC_TOO_MANY_OPEN:
		return -ETOOMANYREFS;
	case ZNS_SC_TOO_MANY_ACTIVE:
		return -EOVERFLOW;
	default:
		return -EIO;
	}
}

static int zctx_open(struct zctx *z, const struct pl_devinfo *d, int flags)
{
	const struct pl_devinfo *ctrl;
	char name[32];
	int ret;

	memset(z, 0, sizeof(*z));
	z->d = d;
	z->fd = -1;
	snprintf(name, sizeof(name), "nvme%u", d->instance);
	ctrl = pl_devinfo(name);
	if (!ctrl || pl_zone_info(ctrl, d, &z->zi) || !z->zi.zoned)
		return -ENOTTY;
	z->lba_sectors = d->lba_size / 512;
	z->e = pl_engine();
	if (!z->e)
		return -EIO;
	snprintf(name, sizeof(name), "ng%un%u", d->instance, d->nsid);
	ret = pl_private_open(z->e, name, flags);
	if (ret < 0)
		return ret;
	z->fd = ret;
	return 0;
}

static void zctx_close(struct zctx *z)
{
	if (z->fd >= 0)
		pl_private_close(z->e, z->fd);
}

static void zone_from_desc(const struct zctx *z, const uint8_t *e, struct blk_zone *bz)
{
	uint64_t zcap, zslba, wp;

	memcpy(&zcap, e + 8, 8);
	memcpy(&zslba, e + 16, 8);
	memcpy(&wp, e + 24, 8);
	memset(bz, 0, sizeof(*bz));
	bz->type = BLK_ZONE_TYPE_SEQWRITE_REQ;
	bz->cond = e[1] >> 4;
	bz->start = le64toh(zslba) * z->lba_sectors;
	bz->len = z->zi.zone_sectors;
	bz->capacity = le64toh(zcap) * z->lba_sectors;
	/* a full zone's write pointer is its end, as the block layer reports it */
	bz->wp = bz->cond == BLK_ZONE_COND_FULL ? bz->start + bz->len : le64toh(wp) * z->lba_sectors;
}

static int report(struct zctx *z, void *arg)
{
	struct blk_zone_report rep;
	uint8_t *buf = aligned_alloc(4096, REPORT_BUF);
	uint64_t capacity = z->d->nlba * z->lba_sectors, sector;
	uint32_t done = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	if (pl_copy_in(&rep, arg, sizeof(rep))) {
		ret = -EFAULT;
		goto out;
	}
	if (!rep.nr_zones) {
		ret = -EINVAL;
		goto out;
	}
	/* from the zone that holds rep.sector */
	sector = rep.sector - rep.sector % z->zi.zone_sectors;
	while (done < rep.nr_zones && sector < capacity) {
		uint64_t slba = sector / z->lba_sectors, n;
		struct nvme_passthru_cmd64 c = {
			.opcode = ZNS_RECV, .nsid = z->d->nsid, .addr = (uintptr_t)buf,
			.data_len = REPORT_BUF, .cdw10 = (uint32_t)slba,
			.cdw11 = (uint32_t)(slba >> 32), .cdw12 = REPORT_BUF / 4 - 1,
			.cdw13 = 1u << 16,	/* partial: the count is of what was returned */
		};

		memset(buf, 0, REPORT_BUF);
		ret = status_errno(ucmd_ioctl(z->e, z->fd, NVME_IOCTL_IO64_CMD, &c));
		if (ret)
			goto out;
		memcpy(&n, buf, 8);
		n = le64toh(n);
		if (!n || n > REPORT_BUF / 64 - 1)
			break;
		for (uint64_t i = 0; i < n && done < rep.nr_zones; i++, done++) {
			struct blk_zone bz;
			struct blk_zone *dst = (struct blk_zone *)((char *)arg + sizeof(rep)) + done;

			zone_from_desc(z, buf + 64 + i * 64, &bz);
			if (pl_copy_out(dst, &bz, sizeof(bz))) {
				ret = -EFAULT;
				goto out;
			}
			sector = bz.start + bz.len;
		}
	}
	rep.nr_zones = done;
	rep.flags = BLK_ZONE_REP_CAPACITY;
	if (pl_copy_out(arg, &rep, sizeof(rep)))
		ret = -EFAULT;
out:
	free(buf);
	return ret;
}

static int mgmt(struct zctx *z, unsigned long req, void *arg)
{
	static const uint8_t zsa[] = { [0] = 4 /* reset */, [1] = 3 /* open */,
				       [2] = 1 /* close */, [3] = 2 /* finish */ };
	uint64_t capacity = z->d->nlba * z->lba_sectors, end;
	struct blk_zone_range r;
	uint8_t action;
	int ret = 0;

	action = req == BLKRESETZONE ? zsa[0] : req == BLKOPENZONE ? zsa[1] :
		 req == BLKCLOSEZONE ? zsa[2] : zsa[3];
	if (pl_copy_in(&r, arg, sizeof(r)))
		return -EFAULT;
	/* blkdev_zone_mgmt: a non-empty range inside the disk, on zone boundaries */
	if (__builtin_add_overflow(r.sector, r.nr_sectors, &end) || end <= r.sector ||
	    end > capacity)
		return -EINVAL;
	if (r.sector % z->zi.zone_sectors ||
	    (r.nr_sectors % z->zi.zone_sectors && end != capacity))
		return -EINVAL;
	for (uint64_t s = r.sector; s < end && !ret; s += z->zi.zone_sectors) {
		uint64_t slba = s / z->lba_sectors;
		struct nvme_passthru_cmd64 c = {
			.opcode = ZNS_SEND, .nsid = z->d->nsid, .cdw10 = (uint32_t)slba,
			.cdw11 = (uint32_t)(slba >> 32), .cdw13 = action,
		};

		ret = status_errno(ucmd_ioctl(z->e, z->fd, NVME_IOCTL_IO64_CMD, &c));
	}
	return ret;
}

int pl_blkzoned_ioctl(struct pl_file *f, unsigned long req, void *arg)
{
	bool write = req != BLKREPORTZONE && req != BLKGETZONESZ && req != BLKGETNRZONES;
	int acc = f->oflags & O_ACCMODE;
	bool writable = !(f->oflags & O_PATH) && (acc == O_WRONLY || acc == O_RDWR);
	struct zctx z;
	uint32_t v;
	int ret;

	/* a file not open for writing is refused (EBADF) before any command */
	ret = zctx_open(&z, f->dev, write && writable ? O_RDWR : O_RDONLY);
	if (req == BLKGETZONESZ || req == BLKGETNRZONES) {
		/* a disk that is not zoned says 0 */
		v = ret ? 0 : req == BLKGETZONESZ ? (uint32_t)z.zi.zone_sectors : z.zi.nr_zones;
		zctx_close(&z);
		return pl_copy_out(arg, &v, sizeof(v)) ? -EFAULT : 0;
	}
	if (!arg) {
		ret = -EINVAL;
		goto out;
	}
	if (ret)
		goto out;
	if (req == BLKREPORTZONE) {
		ret = report(&z, arg);
	} else if (!writable) {
		ret = -EBADF;
	} else {
		ret = mgmt(&z, req, arg);
	}
out:
	zctx_close(&z);
	return ret;
}
