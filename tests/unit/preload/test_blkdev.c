/* SPDX-License-Identifier: MIT */
/*
 * src/preload/blkdev.c: the block device a namespace is, as the preload and
 * ucmd-supervise both answer for it (BLK* query values, lseek's
 * arithmetic, the geometry from Identify; read-modify-write of partial
 * blocks on a device of memory, O_DIRECT's rules, the range ioctls' checks
 * in Linux's order, the Dataset Management ranges of a discard).
 */
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
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

/* ---- a device of memory behind pl_blk_io ---- */

#define DEV_LBS 512u
#define DEV_SIZE (16u * DEV_LBS)

struct fake {
	unsigned char dev[DEV_SIZE];
	unsigned char user[DEV_SIZE];	/* the caller's bytes, one segment */
	unsigned calls, fail_at;	/* fail_at: the dev call that fails (1-based), 0 none */
	int fail_err;
	bool fault;			/* the caller's copy faults */
	unsigned reads, writes;
};

static long fake_dev(void *ctx, bool write, void *buf, uint32_t len, uint64_t off, unsigned rwf)
{
	struct fake *f = ctx;

	(void)rwf;
	/* whole LBAs inside the device, never more than a chunk */
	assert_int_equal(off % DEV_LBS, 0);
	assert_int_equal(len % DEV_LBS, 0);
	assert_true(off + len <= DEV_SIZE);
	assert_true(len <= 2 * DEV_LBS);
	if (++f->calls == f->fail_at)
		return f->fail_err;
	if (write) {
		memcpy(f->dev + off, buf, len);
		f->writes++;
	} else {
		memcpy(buf, f->dev + off, len);
		f->reads++;
	}
	return len;
}

static int fake_copy(void *ctx, size_t skip, void *buf, size_t n, bool to_user)
{
	struct fake *f = ctx;

	if (f->fault)
		return -EFAULT;
	if (to_user)
		memcpy(f->user + skip, buf, n);
	else
		memcpy(buf, f->user + skip, n);
	return 0;
}

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned i = 0; i < DEV_SIZE; i++)
		f->dev[i] = (unsigned char)(i * 7 + 1);
}

static void test_rw_partial(void **state)
{
	static struct fake f;
	static unsigned char bounce[2 * DEV_LBS], want[DEV_SIZE];
	struct pl_blk_geo g = { .size = DEV_SIZE, .lbs = DEV_LBS, .chunk = 2 * DEV_LBS };
	struct pl_blk_io io = { fake_dev, fake_copy, &f, bounce };

	(void)state;
	/* a write inside one LBA: that LBA read, patched, written; its neighbours kept */
	fake_init(&f);
	memcpy(want, f.dev, DEV_SIZE);
	memset(f.user, 0xaa, 10);
	memset(want + 700, 0xaa, 10);
	assert_int_equal(pl_blk_rw(&g, &io, 700, 10, true, 0), 10);
	assert_memory_equal(f.dev, want, DEV_SIZE);
	assert_int_equal(f.reads, 1);
	assert_int_equal(f.writes, 1);

	/* across chunks from an odd start to an odd end: only the edges are read */
	fake_init(&f);
	memcpy(want, f.dev, DEV_SIZE);
	for (unsigned i = 0; i < 3000; i++)
		f.user[i] = want[333 + i] = (unsigned char)(i ^ 0x5c);
	assert_int_equal(pl_blk_rw(&g, &io, 333, 3000, true, 0), 3000);
	assert_memory_equal(f.dev, want, DEV_SIZE);
	/* chunks [0,1024) [1024,2048) [2048,3072) [3072,3584): the first and last partial */
	assert_int_equal(f.writes, 4);
	assert_int_equal(f.reads, 2);

	/* a read at an odd place gives exactly those bytes */
	memset(f.user, 0, sizeof(f.user));
	assert_int_equal(pl_blk_rw(&g, &io, 1001, 2500, false, 0), 2500);
	assert_memory_equal(f.user, want + 1001, 2500);

	/* whole LBAs are written without a read */
	fake_init(&f);
	assert_int_equal(pl_blk_rw(&g, &io, 1024, 2048, true, 0), 2048);
	assert_int_equal(f.reads, 0);

	/* a failure: -errno before anything moved, the bytes moved after */
	fake_init(&f);
	f.fail_at = 1;
	f.fail_err = -EIO;
	assert_int_equal(pl_blk_rw(&g, &io, 10, 3000, false, 0), -EIO);
	fake_init(&f);
	f.fail_at = 2;
	f.fail_err = -EIO;
	assert_int_equal(pl_blk_rw(&g, &io, 10, 3000, false, 0), 1014);
	/* a short device transfer is EIO, never bytes of the bounce buffer */
	fake_init(&f);
	f.fail_at = 1;
	f.fail_err = 100;
	assert_int_equal(pl_blk_rw(&g, &io, 10, 20, true, 0), -EIO);
	/* the caller's memory faulting: EFAULT, nothing written */
	fake_init(&f);
	f.fault = true;
	assert_int_equal(pl_blk_rw(&g, &io, 10, 20, true, 0), -EFAULT);
	assert_int_equal(f.writes, 0);
}

static void test_zeroout(void **state)
{
	static struct fake f;
	static unsigned char bounce[2 * DEV_LBS];
	struct pl_blk_geo g = { .size = DEV_SIZE, .lbs = DEV_LBS, .chunk = 2 * DEV_LBS };
	struct pl_blk_io io = { fake_dev, fake_copy, &f, bounce };
	unsigned char zero[5 * DEV_LBS] = { 0 };

	(void)state;
	fake_init(&f);
	memset(bounce, 0xff, sizeof(bounce));
	assert_int_equal(pl_blk_zeroout(&g, &io, DEV_LBS, 5 * DEV_LBS), 0);
	assert_memory_equal(f.dev + DEV_LBS, zero, sizeof(zero));
	assert_int_equal(f.dev[0], 1);
	assert_int_not_equal(f.dev[6 * DEV_LBS], 0);
	fake_init(&f);
	f.fail_at = 2;
	f.fail_err = -ENOSPC;
	assert_int_equal(pl_blk_zeroout(&g, &io, 0, 5 * DEV_LBS), -ENOSPC);
}

static void test_dio_check(void **state)
{
	struct pl_blk_geo g = { .size = 1 << 20, .lbs = 4096, .chunk = 128 * 1024 };
	static char buf[3 * 4096] __attribute__((aligned(4096)));
	struct iovec ok[2] = { { buf, 4096 }, { buf + 4096, 8192 } };
	struct iovec len[2] = { { buf, 4096 }, { buf + 4096, 512 } };
	struct iovec addr[1] = { { buf + 2, 4096 } };
	struct iovec dword[2] = { { buf + 4, 4096 }, { buf, 0 } };

	(void)state;
	assert_int_equal(pl_blk_dio_check(&g, 8192, ok, 2, 12288), 0);
	assert_int_equal(pl_blk_dio_check(&g, 512, ok, 2, 12288), -EINVAL);
	assert_int_equal(pl_blk_dio_check(&g, 0, len, 2, 4608), -EINVAL);
	assert_int_equal(pl_blk_dio_check(&g, 0, addr, 1, 4096), -EINVAL);
	/* a dword is enough (NVMe's DMA alignment); an empty segment is not judged */
	assert_int_equal(pl_blk_dio_check(&g, 0, dword, 2, 4096), 0);
	/* what lies past the end of the device (cut off) is not judged */
	assert_int_equal(pl_blk_dio_check(&g, 0, len, 2, 4096), 0);
}

struct fetch {
	uint64_t r[2];
	int ret;
	unsigned calls;
};

static int fetch_range(void *ctx, uint64_t r[2])
{
	struct fetch *w = ctx;

	w->calls++;
	memcpy(r, w->r, sizeof(w->r));
	return w->ret;
}

/* Linux 6.18 on a loop device of 4 KiB blocks answers each of these the same. */
static void test_range_ioctl(void **state)
{
	struct pl_blk_geo g = { .size = 1 << 20, .lbs = 4096, .chunk = 128 * 1024 };
	const unsigned long reqs[] = { BLKDISCARD, BLKZEROOUT };
	struct fetch w;
	uint64_t r[2];

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		unsigned long req = reqs[i];

#define RANGE(a, b, writable, dsm) \
	(w = (struct fetch){ { (a), (b) }, 0, 0 }, \
	 pl_blk_range_ioctl(&g, req, (writable), (dsm), fetch_range, &w, r))
		/* not open for writing: EBADF before the range is read */
		assert_int_equal(RANGE(0, 4096, false, true), -EBADF);
		assert_int_equal(w.calls, 0);
		assert_int_equal(RANGE(4096, 8192, true, true), 0);
		assert_int_equal(r[0], 4096);
		assert_int_equal(r[1], 8192);
		assert_int_equal(RANGE(0, 0, true, true), -EINVAL);
		assert_int_equal(RANGE(1, 4096, true, true), -EINVAL);
		assert_int_equal(RANGE(512, 4096, true, true), -EINVAL);	/* 512 but not 4 KiB */
		assert_int_equal(RANGE(0, 4608, true, true), -EINVAL);
		assert_int_equal(RANGE((1 << 20) - 4096, 4096, true, true), 0);
		assert_int_equal(RANGE((1 << 20) - 4096, 8192, true, true), -EINVAL);
		assert_int_equal(RANGE(UINT64_MAX - 4095, 8192, true, true), -EINVAL);
		w = (struct fetch){ { 0, 4096 }, -EFAULT, 0 };
		assert_int_equal(pl_blk_range_ioctl(&g, req, true, true, fetch_range, &w, r),
				 -EFAULT);
	}
	/* a device without discard says so before reading the range; zeroes need none */
	{
		unsigned long req = BLKDISCARD;

		assert_int_equal(RANGE(0, 0, true, false), -EOPNOTSUPP);
		assert_int_equal(w.calls, 0);
		req = BLKZEROOUT;
		assert_int_equal(RANGE(0, 4096, true, false), 0);
		/* no secure erase on an NVMe block node, whatever the range */
		req = BLKSECDISCARD;
		assert_int_equal(RANGE(0, 0, true, true), -EOPNOTSUPP);
		assert_int_equal(RANGE(0, 4096, false, true), -EBADF);
	}
#undef RANGE
}

struct dsm_log {
	unsigned n;
	uint64_t slba[4];
	uint32_t nlb[4];
	int status;
};

static int dsm_cmd(void *ctx, struct nvme_passthru_cmd64 *c)
{
	struct dsm_log *l = ctx;
	const uint8_t *range = (const uint8_t *)(uintptr_t)c->addr;
	uint32_t nlb;
	uint64_t slba;

	assert_int_equal(c->opcode, 0x09);
	assert_int_equal(c->nsid, 3);
	assert_int_equal(c->cdw10, 0);		/* NR: one range (0's based) */
	assert_int_equal(c->cdw11, 1u << 2);	/* AD */
	assert_int_equal(c->data_len, 16);
	memcpy(&nlb, range + 4, 4);
	memcpy(&slba, range + 8, 8);
	assert_true(l->n < 4);
	l->slba[l->n] = le64toh(slba);
	l->nlb[l->n] = le32toh(nlb);
	l->n++;
	return l->status;
}

static void test_discard(void **state)
{
	struct pl_blk_geo g = { .size = 1ull << 50, .lbs = 512, .chunk = 128 * 1024 };
	struct dsm_log l = { 0 };

	(void)state;
	assert_int_equal(pl_blk_discard(&g, 3, 4096, 8192, dsm_cmd, &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.slba[0], 8);
	assert_int_equal(l.nlb[0], 16);
	/* more blocks than one range holds (2^32 - 1): a second command */
	memset(&l, 0, sizeof(l));
	assert_int_equal(pl_blk_discard(&g, 3, 0, (1ull << 32) * 512, dsm_cmd, &l), 0);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.nlb[0], 0xffffffffu);
	assert_int_equal(l.slba[1], 0xffffffffu);
	assert_int_equal(l.nlb[1], 1);
	/* an NVMe status is EIO, and stops there */
	memset(&l, 0, sizeof(l));
	l.status = 0x80;
	assert_int_equal(pl_blk_discard(&g, 3, 0, (1ull << 32) * 512, dsm_cmd, &l), -EIO);
	assert_int_equal(l.n, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_geometry),
		cmocka_unit_test(test_query),
		cmocka_unit_test(test_llseek),
		cmocka_unit_test(test_rw_partial),
		cmocka_unit_test(test_zeroout),
		cmocka_unit_test(test_dio_check),
		cmocka_unit_test(test_range_ioctl),
		cmocka_unit_test(test_discard),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
