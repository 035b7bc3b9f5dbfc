/* SPDX-License-Identifier: MIT */
/*
 * blkdev.c: a namespace's block device nvmeXnY as Linux shows it, for the
 * preload and ucmd-supervise alike.
 */
#ifndef UCMD_PRELOAD_BLKDEV_H
#define UCMD_PRELOAD_BLKDEV_H

#include <stdint.h>

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

#endif
