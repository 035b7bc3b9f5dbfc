/* SPDX-License-Identifier: MIT */
/*
 * A namespace's block device nvmeXnY as Linux shows it: its geometry from
 * Identify, the values of the BLK* query ioctls and lseek's arithmetic.
 * Shared by the preload (rw.c, devinfo.c), which copies into the program
 * with copy_to_user, and ucmd-supervise (sv_dev.c), which writes the
 * program's memory from outside: one answer for a dynamic and a static
 * program.
 */
#include <errno.h>
#include <endian.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <linux/fs.h>

#include <nvme/types.h>

#include "preload/blkdev.h"

void pl_ns_geometry(const void *id_ns, struct pl_devinfo *d)
{
	const struct nvme_id_ns *id = id_ns;
	/* FLBAS: bits 3:0, and 6:5 above them for formats past 16 */
	unsigned f = (id->flbas & 0xf) | ((id->flbas >> 5 & 3u) << 4);

	if (f < 64 && id->lbaf[f].ds >= 9 && id->lbaf[f].ds < 32) {
		d->lba_size = 1u << id->lbaf[f].ds;
		d->ms = le16toh(id->lbaf[f].ms);
	}
	d->ext = id->flbas & 0x10;
	d->nlba = le64toh(id->nsze);
}

uint32_t pl_mdts_bytes(const void *id_ctrl, uint32_t max)
{
	const uint8_t *id = id_ctrl;

	/* MDTS, byte 77: 2^n minimum pages (4 KiB, the host's NVME_PAGE_SIZE) */
	if (id[77] && id[77] < 20 && (4096u << id[77]) < max)
		return 4096u << id[77];
	return max;
}

void pl_blk_geo_of(const struct pl_devinfo *d, uint32_t max_bytes, struct pl_blk_geo *g)
{
	g->lbs = d->lba_size ? d->lba_size : 512;
	/*
	 * Interleaved metadata has no byte view: Linux gives such a namespace
	 * capacity 0 on the block node (only ngXnY reaches it).
	 */
	g->size = d->ms && d->ext ? 0 : d->nlba * g->lbs;
	g->chunk = max_bytes / g->lbs * g->lbs;
	if (!g->chunk)
		g->chunk = g->lbs;
}

#define VAL(type, v) ({ type v_ = (type)(v); memcpy(val, &v_, sizeof(v_)); (int)sizeof(v_); })

int pl_blk_query(const struct pl_blk_geo *g, unsigned long req, void *val)
{
	unsigned bsize;

	switch (req) {
	case BLKGETSIZE64:
		return VAL(uint64_t, g->size);
	case BLKGETSIZE:
		return VAL(unsigned long, g->size >> 9);
	case BLKSSZGET:
		return VAL(int, g->lbs);
	case BLKBSZGET:
		/* the soft block size Linux starts with: set_init_blocksize() */
		for (bsize = g->lbs; bsize < 4096 && !(g->size & bsize); bsize <<= 1)
			;
		return VAL(int, bsize);
	case BLKPBSZGET:
	case BLKIOMIN:
		return VAL(unsigned int, g->lbs);
	case BLKIOOPT:
		return VAL(unsigned int, 0);
	case BLKALIGNOFF:
		return VAL(int, 0);
	case BLKROGET:
		return VAL(int, 0);
	case BLKRAGET:
	case BLKFRAGET:
		/* read_ahead_kb 128, in 512-byte sectors */
		return VAL(long, 256);
	case BLKSECTGET:
		return VAL(unsigned short, g->chunk >> 9 > 0xffff ? 0xffff : g->chunk >> 9);
	case BLKROTATIONAL:
		return VAL(unsigned short, 0);
	case BLKDISCARDZEROES:
		return VAL(unsigned int, 0);
	default:
		return -ENOTTY;
	}
}

int64_t pl_blk_llseek(uint64_t size, int64_t cur, int64_t off, int whence)
{
	int64_t pos;

	switch (whence) {
	case SEEK_SET:
		pos = off;
		break;
	case SEEK_CUR:
		if (__builtin_add_overflow(cur, off, &pos))
			return -EINVAL;
		break;
	case SEEK_END:
		if (__builtin_add_overflow((int64_t)size, off, &pos))
			return -EINVAL;
		break;
	case SEEK_DATA:
	case SEEK_HOLE:
		/* one extent of data, the whole device; past the end is ENXIO */
		if (off < 0 || (uint64_t)off >= size)
			return -ENXIO;
		pos = whence == SEEK_DATA ? off : (int64_t)size;
		break;
	default:
		return -EINVAL;
	}
	/* fixed_size_llseek: nothing before the start or past the end */
	if (pos < 0 || (uint64_t)pos > size)
		return -EINVAL;
	return pos;
}
