/* SPDX-License-Identifier: MIT */
/*
 * A namespace's block device nvmeXnY as Linux shows it: its geometry from
 * Identify, the values of the BLK* query ioctls and lseek's arithmetic;
 * byte-addressed reads and writes as the buffered block device serves them
 * (read-modify-write of partial LBAs), O_DIRECT's alignment rules, the
 * checks of BLKDISCARD/BLKSECDISCARD/BLKZEROOUT and the Dataset Management
 * commands of a discard.
 * Shared by the preload (rw.c, devinfo.c), which copies into the program
 * with copy_to_user, and ucmd-supervise (sv_dev.c), which writes the
 * program's memory from outside: one answer for a dynamic and a static
 * program.
 */
#include <errno.h>
#include <endian.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
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

ssize_t pl_blk_rw(const struct pl_blk_geo *g, const struct pl_blk_io *io, uint64_t pos,
		  size_t total, bool write, unsigned rwf)
{
	uint64_t lmask = g->lbs - 1, end = (pos + total + lmask) & ~lmask;
	size_t done = 0;
	long res;

	while (done < total) {
		uint64_t p = pos + done, a = p & ~lmask;
		uint64_t b = a + g->chunk < end ? a + g->chunk : end;
		size_t in = (size_t)(p - a), n = (size_t)(b - p);

		if (n > total - done)
			n = total - done;
		/* a read, or a write that covers only part of the first or last LBA */
		if (!write || in || p + n < b) {
			res = io->dev(io->ctx, false, io->bounce, (uint32_t)(b - a), a, 0);
			if (res >= 0 && (uint64_t)res < b - a)
				res = -EIO;
			if (res < 0)
				goto err;
		}
		res = io->copy(io->ctx, done, (char *)io->bounce + in, n, !write);
		if (res < 0)
			goto err;
		if (write) {
			res = io->dev(io->ctx, true, io->bounce, (uint32_t)(b - a), a, rwf);
			if (res >= 0 && (uint64_t)res < b - a)
				res = -EIO;
			if (res < 0)
				goto err;
		}
		done += n;
	}
	return (ssize_t)done;
err:
	return done ? (ssize_t)done : res;
}

int pl_blk_zeroout(const struct pl_blk_geo *g, const struct pl_blk_io *io, uint64_t start,
		   uint64_t len)
{
	memset(io->bounce, 0, g->chunk);
	while (len) {
		uint32_t n = len < g->chunk ? (uint32_t)len : g->chunk;
		long res = io->dev(io->ctx, true, io->bounce, n, start, 0);

		if (res >= 0 && res < n)
			res = -EIO;
		if (res < 0)
			return (int)res;
		start += n;
		len -= n;
	}
	return 0;
}

int pl_blk_dio_check(const struct pl_blk_geo *g, uint64_t pos, const struct iovec *iov, int cnt,
		     size_t total)
{
	size_t seen = 0;

	if (pos & (g->lbs - 1))
		return -EINVAL;
	for (int i = 0; i < cnt && seen < total; i++) {
		if (!iov[i].iov_len)
			continue;
		if (((uintptr_t)iov[i].iov_base & (PL_BLK_DMA_ALIGN - 1)) ||
		    (iov[i].iov_len & (g->lbs - 1)))
			return -EINVAL;
		seen += iov[i].iov_len;
	}
	return 0;
}

int pl_blk_range_ioctl(const struct pl_blk_geo *g, unsigned long req, bool writable, bool dsm,
		       int (*fetch)(void *ctx, uint64_t r[2]), void *ctx, uint64_t r[2])
{
	uint64_t end;
	int ret;

	if (!writable)
		return -EBADF;
	/* discard support is judged before the range is read */
	if (req == BLKSECDISCARD || (req == BLKDISCARD && !dsm))
		return -EOPNOTSUPP;
	ret = fetch(ctx, r);
	if (ret)
		return ret;
	if (!r[1] || ((r[0] | r[1]) & 511) || ((r[0] | r[1]) & (g->lbs - 1)))
		return -EINVAL;
	if (__builtin_add_overflow(r[0], r[1], &end) || end > g->size)
		return -EINVAL;
	return 0;
}

int pl_blk_discard(const struct pl_blk_geo *g, uint32_t nsid, uint64_t start, uint64_t len,
		   int (*cmd)(void *ctx, struct nvme_passthru_cmd64 *c), void *ctx)
{
	struct nvme_passthru_cmd64 c = { .opcode = 0x09, .nsid = nsid, .data_len = 16,
					 .cdw11 = 1u << 2 /* AD */ };
	uint64_t *range = aligned_alloc(4096, 4096);
	int ret = 0;

	if (!range)
		return -ENOMEM;
	while (ret == 0 && len) {
		/* one range: context attributes, NLB, SLBA */
		uint64_t nlb = len / g->lbs < 0xffffffffu ? len / g->lbs : 0xffffffffu;

		memset(range, 0, 16);
		range[0] = htole64(nlb << 32);
		range[1] = htole64(start / g->lbs);
		c.addr = (uint64_t)(uintptr_t)range;
		ret = cmd(ctx, &c);
		start += nlb * g->lbs;
		len -= nlb * g->lbs;
	}
	free(range);
	return ret > 0 ? -EIO : ret;
}
