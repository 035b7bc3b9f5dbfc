/* SPDX-License-Identifier: MIT */
/*
 * blkdev.c: a namespace's block device nvmeXnY as Linux shows it, for the
 * preload and ucmd-supervise alike.
 */
#ifndef UCMD_PRELOAD_BLKDEV_H
#define UCMD_PRELOAD_BLKDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <linux/nvme_ioctl.h>

#include "preload/preload.h"

struct pl_blk_geo {
	uint64_t size;		/* bytes the block device has */
	uint32_t lbs;		/* logical block size */
	uint32_t chunk;		/* bytes per command, a multiple of lbs */
};

/* d's lba_size, ms, ext and nlba from Identify Namespace (4 KiB at id_ns). */
void pl_ns_geometry(const void *id_ns, struct pl_devinfo *d);
/* The controller's max transfer from Identify Controller (MDTS), at most max. */
uint32_t pl_mdts_bytes(const void *id_ctrl, uint32_t max);
/* The block device of namespace d, whose controller moves max_bytes per command. */
void pl_blk_geo_of(const struct pl_devinfo *d, uint32_t max_bytes, struct pl_blk_geo *g);
/*
 * The value a BLK* query ioctl (BLKGETSIZE64, BLKSSZGET, BLKPBSZGET, ...)
 * copies out, in val (8 bytes at most): its size, or -ENOTTY if req is not
 * one of them.
 */
int pl_blk_query(const struct pl_blk_geo *g, unsigned long req, void *val);
/* lseek(2) on a block device of size bytes at position cur: the new position or -errno. */
int64_t pl_blk_llseek(uint64_t size, int64_t cur, int64_t off, int whence);


/*
 * How bytes of a call reach the device and the caller, for pl_blk_rw and
 * pl_blk_zeroout: the preload moves them with copy_{to,from}_user and its
 * thread's ring; ucmd-supervise with process_vm_readv/writev and a ring on
 * a connection of its own.
 */
struct pl_blk_io {
	/* len bytes (whole LBAs) at device offset off, into or from buf: bytes moved or -errno */
	long (*dev)(void *ctx, bool write, void *buf, uint32_t len, uint64_t off, unsigned rwf);
	/* n bytes of the caller's data, from its byte skip on, to or from buf: 0 or -EFAULT */
	int (*copy)(void *ctx, size_t skip, void *buf, size_t n, bool to_user);
	void *ctx;
	void *bounce;		/* g->chunk bytes at least */
};

/*
 * total bytes (already cut to the device's end) at byte pos, as Linux's
 * buffered block device: whole LBAs through the bounce buffer, a chunk at
 * a time, the LBAs at unaligned edges read, patched and written back.
 * rwf: RWF_* for the writes. Bytes moved (short after a failure past the
 * first chunk) or -errno.
 */
ssize_t pl_blk_rw(const struct pl_blk_geo *g, const struct pl_blk_io *io, uint64_t pos,
		  size_t total, bool write, unsigned rwf);
/* Zeroes over [start, start + len) (whole LBAs, inside the device): 0 or -errno. */
int pl_blk_zeroout(const struct pl_blk_geo *g, const struct pl_blk_io *io, uint64_t start,
		   uint64_t len);
/*
 * O_DIRECT's rules for a call of total bytes (cut to the device) at pos
 * over segments iov[cnt]: the position and every segment's length
 * multiples of the logical block size, every segment's address of
 * PL_BLK_DMA_ALIGN. 0 or -EINVAL.
 */
#define PL_BLK_DMA_ALIGN 4u	/* NVMe's dword DMA alignment (Linux >= 6.0) */
int pl_blk_dio_check(const struct pl_blk_geo *g, uint64_t pos, const struct iovec *iov, int cnt,
		     size_t total);
/*
 * BLKDISCARD, BLKSECDISCARD, BLKZEROOUT: Linux's checks of the call in its
 * order (blk_ioctl_discard, blk_ioctl_secure_erase, blk_ioctl_zeroout):
 * EBADF if the fd is not open for writing, EOPNOTSUPP for a discard the
 * device cannot do (dsm: ONCS has Dataset Management; NVMe has no secure
 * erase on the block node), the range fetched from the caller (fetch: 0 or
 * -EFAULT), EINVAL for an empty, unaligned or out of device range. 0 with
 * the range to discard or zero in r, or -errno.
 */
int pl_blk_range_ioctl(const struct pl_blk_geo *g, unsigned long req, bool writable, bool dsm,
		       int (*fetch)(void *ctx, uint64_t r[2]), void *ctx, uint64_t r[2]);
/*
 * Deallocate [start, start + len) (whole LBAs, inside the device) of
 * namespace nsid: NVMe Dataset Management with AD, as Linux's discard, a
 * range of at most 2^32 - 1 blocks per command, each given to cmd (the
 * caller's engine and private fd on the namespace's generic node: 0, an
 * NVMe status > 0, or -errno). 0 or -errno (-EIO for a status).
 */
int pl_blk_discard(const struct pl_blk_geo *g, uint32_t nsid, uint64_t start, uint64_t len,
		   int (*cmd)(void *ctx, struct nvme_passthru_cmd64 *c), void *ctx);

#endif
