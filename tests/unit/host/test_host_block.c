/* SPDX-License-Identifier: MIT */
/* nvme0n1: READ/WRITE family through NVMe Read/Write; block-size alignment. */
#include "host_fixture.h"

#include <errno.h>
#include <linux/fs.h>
#include <nvme/types.h>
#include <stdlib.h>
#include <string.h>

static int rw(struct fx *f, int op, void *buf, unsigned len, uint64_t off, unsigned rwf)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(&f->ring);
	struct io_uring_cqe *cqe;
	int res;

	ucmd_prep_rw(op, sqe, f->bdev, buf, len, off);
	sqe->rw_flags = rwf;
	assert_int_equal(ucmd_submit_and_wait(&f->ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&f->ring, &cqe), 0);
	res = cqe->res;
	ucmd_cqe_seen(&f->ring, cqe);
	return res;
}

static void test_block(void **state)
{
	struct fx f;
	uint8_t *w = fx_alloc(65536), *r = fx_alloc(65536);

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	fx_fill(w, 65536, 11);
	assert_int_equal(rw(&f, IORING_OP_WRITE, w, 65536, 8192, 0), 65536);
	assert_int_equal(rw(&f, IORING_OP_READ, r, 65536, 8192, 0), 65536);
	assert_memory_equal(w, r, 65536);
	/* FUA write */
	assert_int_equal(rw(&f, IORING_OP_WRITE, w, 512, 0, RWF_DSYNC), 512);
	/* misaligned offset / length */
	assert_int_equal(rw(&f, IORING_OP_READ, r, 512, 100, 0), -EINVAL);
	assert_int_equal(rw(&f, IORING_OP_READ, r, 100, 0, 0), -EINVAL);
	/* past the end: the device's LBA Out of Range is -EIO for a block device */
	assert_int_equal(rw(&f, IORING_OP_READ, r, 512, 4096ull * 512, 0), -EIO);
	/* vectored, and visible through the passthrough device */
	struct iovec v[2] = { { w, 1024 }, { w + 4096, 512 } };
	struct io_uring_sqe *sqe = ucmd_get_sqe(&f.ring);
	struct io_uring_cqe *cqe;
	ucmd_prep_writev(sqe, f.bdev, v, 2, 1024 * 512);
	assert_int_equal(ucmd_submit_and_wait(&f.ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&f.ring, &cqe), 0);
	assert_int_equal(cqe->res, 1536);
	ucmd_cqe_seen(&f.ring, cqe);
	struct nvme_uring_cmd c;
	fx_rw_cmd(&c, nvme_cmd_read, f.nsid, 1024, 3, r, 1536);
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(r, w, 1024);
	assert_memory_equal(r + 1024, w + 4096, 512);
	fx_teardown(&f);
	free(w);
	free(r);
}

/*
 * nvme0n1 keeps disk statistics (Linux's /sys/block/<dev>/stat) of its own
 * I/O, failed I/O included; requests refused before they exist, and
 * passthrough I/O on ng0n1, are not counted.
 */
static void test_disk_stats(void **state)
{
	struct ucmd_disk_stat s, z = { { 0 } };
	struct nvme_uring_cmd c;
	struct fx f;
	uint8_t *w = fx_alloc(65536), *r = fx_alloc(65536);

	(void)state;
	assert_int_equal(fx_setup(&f, NULL), 0);
	assert_int_equal(ucmd_disk_stat(f.e, "nvme0n1", &s), 0);
	assert_memory_equal(&s, &z, sizeof(s));
	assert_int_equal(ucmd_disk_stat(f.e, "ng0n1", &s), -ENOTBLK);
	assert_int_equal(ucmd_disk_stat(f.e, "nvme0", &s), -ENOTBLK);
	assert_int_equal(ucmd_disk_stat(f.e, "nvme9n9", &s), -ENOENT);
	assert_int_equal(ucmd_disk_stat(f.e, NULL, &s), -EINVAL);
	assert_int_equal(ucmd_disk_stat(f.e, "nvme0n1", NULL), -EINVAL);

	fx_fill(w, 65536, 5);
	assert_int_equal(rw(&f, IORING_OP_WRITE, w, 65536, 8192, 0), 65536);
	assert_int_equal(rw(&f, IORING_OP_READ, r, 4096, 8192, 0), 4096);
	/* three reads in one submission: one plug */
	for (int i = 0; i < 3; i++)
		ucmd_prep_read(ucmd_get_sqe(&f.ring), f.bdev, r + 4096 * i, 4096, 4096u * i);
	assert_int_equal(ucmd_submit_and_wait(&f.ring, 3), 3);
	struct io_uring_cqe *cqe;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(ucmd_wait_cqe(&f.ring, &cqe), 0);
		assert_int_equal(cqe->res, 4096);
		ucmd_cqe_seen(&f.ring, cqe);
	}
	/* the device fails it: counted */
	assert_int_equal(rw(&f, IORING_OP_READ, r, 512, 4096ull * 512, 0), -EIO);
	/* refused before a request exists: not counted */
	assert_int_equal(rw(&f, IORING_OP_READ, r, 512, 100, 0), -EINVAL);
	/* passthrough: not counted */
	fx_rw_cmd(&c, nvme_cmd_read, f.nsid, 0, 8, r, 4096);
	assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);

	assert_int_equal(ucmd_disk_stat(f.e, "nvme0n1", &s), 0);
	assert_int_equal(s.ios[0], 5);
	assert_int_equal(s.ios[1], 1);
	assert_int_equal(s.sectors[0], (4 * 4096 + 512) / 512);
	assert_int_equal(s.sectors[1], 65536 / 512);
	assert_int_equal(s.merges[0] + s.merges[1], 0);
	assert_true(s.time_in_queue_ms >= s.ticks_ms[0] + s.ticks_ms[1]);
	assert_true(s.time_in_queue_ms <= s.ticks_ms[0] + s.ticks_ms[1] + 1);
	fx_teardown(&f);
	free(w);
	free(r);
}

/* A read the controller holds for 30 ms shows as 30 ms of read time and busy time. */
static void test_disk_stats_time(void **state)
{
	struct fx_opts o = { .mode = UCMD_CTRL_THREAD };
	struct ucmd_disk_stat s;
	struct fx f;
	uint8_t *r = fx_alloc(4096);

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	ctrl_inject_delay(f.ctrl, false, nvme_cmd_read, 30);
	assert_int_equal(rw(&f, IORING_OP_READ, r, 4096, 0, 0), 4096);
	assert_int_equal(ucmd_disk_stat(f.e, "nvme0n1", &s), 0);
	assert_int_equal(s.ios[0], 1);
	assert_true(s.ticks_ms[0] >= 29);
	assert_true(s.io_ticks_ms >= 28);
	assert_int_equal(s.ticks_ms[1], 0);
	fx_teardown(&f);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block),
		cmocka_unit_test(test_disk_stats),
		cmocka_unit_test(test_disk_stats_time),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
