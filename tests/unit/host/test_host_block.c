/* SPDX-License-Identifier: MIT */
/* nvme0n1: READ/WRITE family through NVMe Read/Write; block-size alignment. */
#include "host_fixture.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
