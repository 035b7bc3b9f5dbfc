/* SPDX-License-Identifier: MIT */
/* Every rejection the kernel's nvme uring_cmd paths make, with its errno. */
#include "host_fixture.h"

#include <nvme/types.h>
#include <stdlib.h>
#include <string.h>

static struct fx *fx_with(unsigned ring_flags)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .ring_flags = ring_flags,
			     .ring_flags_set = true };

	assert_int_equal(fx_setup(f, &o), 0);
	return f;
}

static void fx_free(struct fx *f)
{
	fx_teardown(f);
	free(f);
}

static void read_cmd(struct fx *f, struct nvme_uring_cmd *c, void *buf)
{
	fx_rw_cmd(c, nvme_cmd_read, f->nsid, 0, 1, buf, f->lbs);
}

/* A 64-byte SQE ring: refused before the command's second half is read. */
static void test_sqe64(void **state)
{
	struct fx *f = fx_with(IORING_SETUP_CQE32);
	uint8_t buf[4096];
	struct nvme_uring_cmd c;

	(void)state;
	read_cmd(f, &c, buf);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EOPNOTSUPP);
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, NULL), -EOPNOTSUPP);
	fx_free(f);
}

static void test_cqe16(void **state)
{
	struct fx *f = fx_with(IORING_SETUP_SQE128);
	uint8_t buf[4096];
	struct nvme_uring_cmd c;

	(void)state;
	read_cmd(f, &c, buf);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EOPNOTSUPP);
	fx_free(f);
}

static void test_fields(void **state)
{
	struct fx *f = fx_with(IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	uint8_t *buf = fx_alloc(8192);
	struct nvme_uring_cmd c;
	struct iovec *iov;

	(void)state;
	read_cmd(f, &c, buf);
	c.flags = 0x40;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	read_cmd(f, &c, buf);
	c.nsid = f->nsid + 1;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	read_cmd(f, &c, buf);
	assert_int_equal(fx_nvme(f, f->ng, 0x12345678, &c, NULL), -ENOTTY);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_ADMIN, &c, NULL), -ENOTTY);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_ADMIN_VEC, &c, NULL), -ENOTTY);
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_IO, &c, NULL), -ENOTTY);
	/* bad buffers */
	read_cmd(f, &c, NULL);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EFAULT);
	read_cmd(f, &c, (void *)(uintptr_t)~0xfffull);
	c.data_len = 0x2000;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EFAULT);
	/* iovec array: bad pointer, bad element, too many */
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, NULL, 2);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), -EFAULT);
	iov = calloc(1025, sizeof(*iov));
	for (int i = 0; i < 1025; i++) {
		iov[i].iov_base = buf;
		iov[i].iov_len = 8;
	}
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, iov, 1025);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), -EINVAL);
	iov[0].iov_base = NULL;
	iov[0].iov_len = 512;
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, iov, 2);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), -EFAULT);
	/* metadata on a format without metadata */
	read_cmd(f, &c, buf);
	c.metadata = (uint64_t)(uintptr_t)(buf + 4096);
	c.metadata_len = 8;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	free(iov);
	free(buf);
	fx_free(f);
}

/* Admin commands are never polled: IOPOLL ring + nvme0 → -EOPNOTSUPP. */
static void test_iopoll_admin(void **state)
{
	struct fx *f = fx_with(IORING_SETUP_SQE128 | IORING_SETUP_CQE32 | IORING_SETUP_IOPOLL);
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_features, .cdw10 = 7 };

	(void)state;
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, NULL), -EOPNOTSUPP);
	fx_free(f);
}

/* lbaf 1: 512 + 8 separate metadata; length must be nlb * 8. */
/*
 * A command whose own fields (NLB, NUMD) ask for more than its buffer, from
 * this process (an in-process user, and ucmdd's NVMe/TCP target, whose
 * buffers are its own but whose commands a remote host wrote): the
 * controller may not walk the buffer's second page as a PRP list and write
 * wherever its bytes point. Data Transfer Error, nothing outside the buffer
 * written (the host's DMA window, ctrl_set_dma_window).
 */
static void test_short_buffer_no_prp_walk(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE };
	uint8_t *buf = fx_alloc(2 * 4096), *canary = fx_alloc(4096);
	struct nvme_uring_cmd c;

	(void)state;
	assert_int_equal(fx_setup(f, &o), 0);
	memset(canary, 0x77, 4096);
	for (unsigned i = 0; i < 512; i++)
		((uint64_t *)(void *)(buf + 4096))[i] = (uint64_t)(uintptr_t)canary;
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 4 * 4096 / f->lbs, buf, 2 * 4096);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL),
			 NVME_SC_DATA_XFER_ERROR | NVME_SC_DNR);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(canary[i], 0x77);
	/* the admin queue: Get Log Page (SMART), NUMD for 16 KiB */
	for (unsigned i = 0; i < 512; i++)
		((uint64_t *)(void *)(buf + 4096))[i] = (uint64_t)(uintptr_t)canary;
	memset(&c, 0, sizeof(c));
	c.opcode = nvme_admin_get_log_page;
	c.nsid = 0xffffffff;
	c.addr = (uint64_t)(uintptr_t)buf;
	c.data_len = 2 * 4096;
	c.cdw10 = (4 * 4096 / 4 - 1) << 16 | NVME_LOG_LID_SMART;
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, NULL),
			 NVME_SC_DATA_XFER_ERROR | NVME_SC_DNR);
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(canary[i], 0x77);
	/* the same within the buffer is served */
	c.cdw10 = (2 * 4096 / 4 - 1) << 16 | NVME_LOG_LID_SMART;
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, NULL), 0);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 2 * 4096 / f->lbs, buf, 2 * 4096);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	fx_teardown(f);
	free(f);
	free(buf);
	free(canary);
}

static void test_metadata(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .lbaf = 1 };
	uint8_t *buf = fx_alloc(4096), *meta = fx_alloc(64), *rmeta = fx_alloc(64);
	struct nvme_uring_cmd c;

	(void)state;
	assert_int_equal(fx_setup(f, &o), 0);
	fx_fill(meta, 32, 5);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 8, 4, buf, 2048);
	c.metadata = (uint64_t)(uintptr_t)meta;
	c.metadata_len = 24;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	c.metadata_len = 32;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 8, 4, buf, 2048);
	c.metadata = (uint64_t)(uintptr_t)rmeta;
	c.metadata_len = 32;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(meta, rmeta, 32);
	fx_teardown(f);

	/* extended LBA: separate metadata must be absent */
	o.extended = true;
	assert_int_equal(fx_setup(f, &o), 0);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, buf, 520);
	c.metadata = (uint64_t)(uintptr_t)rmeta;
	c.metadata_len = 8;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), -EINVAL);
	c.metadata = 0;
	c.metadata_len = 0;
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	fx_teardown(f);
	free(f);
	free(buf);
	free(meta);
	free(rmeta);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sqe64),
		cmocka_unit_test(test_short_buffer_no_prp_walk),
		cmocka_unit_test(test_cqe16),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_iopoll_admin),
		cmocka_unit_test(test_metadata),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
