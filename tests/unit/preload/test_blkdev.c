/* SPDX-License-Identifier: MIT */
/*
 * src/preload/blkdev.c: the block device a namespace is, as the preload and
 * ucmd-supervise both answer for it (BLK* query values, lseek's
 * arithmetic, the geometry from Identify).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/fs.h>

#include "preload/blkdev.h"

static void test_geometry(void **state)
{
	uint8_t id[4096] = { 0 }, ctrl[4096] = { 0 };
	struct pl_devinfo d = { 0 };
	struct pl_blk_geo g;

	(void)state;
	id[0] = 0x00, id[1] = 0x10;	/* NSZE 4096 */
	id[26] = 1;			/* FLBAS: format 1 */
	id[128 + 4 + 2] = 12;		/* LBAF1: 4 KiB */
	pl_ns_geometry(id, &d);
	assert_int_equal(d.lba_size, 4096);
	assert_int_equal(d.nlba, 4096);
	ctrl[77] = 3;			/* MDTS: 32 KiB */
	pl_blk_geo_of(&d, pl_mdts_bytes(ctrl, 128 * 1024), &g);
	assert_int_equal(g.size, 4096ull * 4096);
	assert_int_equal(g.lbs, 4096);
	assert_int_equal(g.chunk, 32 * 1024);
	ctrl[77] = 0;			/* no limit: the caller's */
	assert_int_equal(pl_mdts_bytes(ctrl, 128 * 1024), 128 * 1024);
	/* interleaved metadata: no byte view, capacity 0 as Linux's block node */
	d.ms = 8;
	d.ext = true;
	pl_blk_geo_of(&d, 128 * 1024, &g);
	assert_int_equal(g.size, 0);
	/* a format with no size (LBADS 0): 512, as an unformatted answer */
	memset(&d, 0, sizeof(d));
	id[26] = 2;
	pl_ns_geometry(id, &d);
	pl_blk_geo_of(&d, 128 * 1024, &g);
	assert_int_equal(g.lbs, 512);
}

static void test_query(void **state)
{
	struct pl_blk_geo g = { .size = 1ull << 30, .lbs = 512, .chunk = 128 * 1024 };
	uint64_t v = 0;

	(void)state;
	assert_int_equal(pl_blk_query(&g, BLKGETSIZE64, &v), 8);
	assert_int_equal(v, 1ull << 30);
	v = 0;
	assert_int_equal(pl_blk_query(&g, BLKGETSIZE, &v), sizeof(unsigned long));
	assert_int_equal(v, (1ull << 30) >> 9);
	v = 0;
	assert_int_equal(pl_blk_query(&g, BLKSSZGET, &v), sizeof(int));
	assert_int_equal((uint32_t)v, 512);
	v = 0;
	assert_int_equal(pl_blk_query(&g, BLKPBSZGET, &v), sizeof(unsigned));
	assert_int_equal((uint32_t)v, 512);
	v = 0;
	assert_int_equal(pl_blk_query(&g, BLKBSZGET, &v), sizeof(int));
	assert_int_equal((uint32_t)v, 4096);	/* set_init_blocksize: up to a page */
	v = 0;
	assert_int_equal(pl_blk_query(&g, BLKSECTGET, &v), sizeof(unsigned short));
	assert_int_equal((uint16_t)v, 256);
	assert_int_equal(pl_blk_query(&g, BLKDISCARD, &v), -ENOTTY);
	assert_int_equal(pl_blk_query(&g, BLKFLSBUF, &v), -ENOTTY);
	assert_int_equal(pl_blk_query(&g, 0x4e40, &v), -ENOTTY);	/* NVME_IOCTL_ID */
}

static void test_llseek(void **state)
{
	const uint64_t size = 1 << 20;

	(void)state;
	assert_int_equal(pl_blk_llseek(size, 0, 4096, SEEK_SET), 4096);
	assert_int_equal(pl_blk_llseek(size, 4096, 4096, SEEK_CUR), 8192);
	assert_int_equal(pl_blk_llseek(size, 0, 0, SEEK_END), size);
	assert_int_equal(pl_blk_llseek(size, 0, -4096, SEEK_END), size - 4096);
	assert_int_equal(pl_blk_llseek(size, 0, 1, SEEK_END), -EINVAL);
	assert_int_equal(pl_blk_llseek(size, 0, -1, SEEK_SET), -EINVAL);
	assert_int_equal(pl_blk_llseek(size, INT64_MAX, 1, SEEK_CUR), -EINVAL);
	assert_int_equal(pl_blk_llseek(size, 0, INT64_MAX, SEEK_END), -EINVAL);
	assert_int_equal(pl_blk_llseek(size, 0, 512, SEEK_DATA), 512);
	assert_int_equal(pl_blk_llseek(size, 0, 512, SEEK_HOLE), size);
	assert_int_equal(pl_blk_llseek(size, 0, size, SEEK_DATA), -ENXIO);
	assert_int_equal(pl_blk_llseek(size, 0, -1, SEEK_HOLE), -ENXIO);
	assert_int_equal(pl_blk_llseek(size, 0, 0, 7), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_llseek),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
