/* SPDX-License-Identifier: MIT */
/*
 * User memory (docs/security.md, "User memory"). A wild or unmapped user pointer,
 * for data, metadata, an iovec array, an iovec entry or the ioctl's own
 * argument, is -EFAULT on every path, as in Linux, and the process lives on.
 * A buffer shorter than the transfer is written page-granularly, as Linux's
 * PRPs are, but only ever the caller's memory: no engine-owned buffer is
 * sized from data_len (ASan would catch the overrun).
 */
#include "host_fixture.h"

#include <nvme/types.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "nvme/host/host.h"
#include "uaccess/uaccess.h"

/*
 * cmocka puts its own SIGSEGV handler in place around each test: put ucmd's
 * back in front of it (it passes on every fault that is not its own).
 */
#define GUARD() assert_int_equal(ucmd_uaccess_init(), 0)

/* A wild address: mapped by nothing in a test process. */
#define WILD ((void *)(uintptr_t)0xdead0000000ull)
#define PG 4096u

struct st {
	struct fx f;
	uint8_t *hole;		/* PROT_NONE, 4 pages: reserved, never accessible */
};

static int setup_lbaf(void **state, uint8_t lbaf)
{
	struct st *s = calloc(1, sizeof(*s));
	struct fx_opts o = { .mode = UCMD_CTRL_INLINE, .lbaf = lbaf };

	assert_int_equal(fx_setup(&s->f, &o), 0);
	s->hole = mmap(NULL, 4 * PG, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(s->hole != MAP_FAILED);
	*state = s;
	return 0;
}

static int setup(void **state)
{
	return setup_lbaf(state, 0);
}

static int setup_meta(void **state)
{
	return setup_lbaf(state, 1);	/* 512 + 8, separate metadata */
}

static int teardown(void **state)
{
	struct st *s = *state;

	munmap(s->hole, 4 * PG);
	fx_teardown(&s->f);
	free(s);
	return 0;
}

static long ioctl_on(struct fx *f, int fd, unsigned long cmd, void *arg)
{
	struct ucmd_file *file = fget(f->e, fd);
	long ret;

	assert_non_null(file);
	ret = vfs_ioctl(file, cmd, arg);
	fput(file);
	return ret;
}

/* The same command through the uring and the ioctl path: both results. */
static void both_paths(struct fx *f, uint32_t cmd_op, const struct nvme_uring_cmd *c, int *uring,
		       long *ioctl)
{
	struct nvme_passthru_cmd64 p;
	bool vec = cmd_op == NVME_URING_CMD_IO_VEC;

	*uring = fx_nvme(f, f->ng, cmd_op, c, NULL);
	memset(&p, 0, sizeof(p));
	memcpy(&p, c, sizeof(*c));
	*ioctl = ioctl_on(f, f->ng, vec ? NVME_IOCTL_IO64_CMD_VEC : NVME_IOCTL_IO64_CMD, &p);
}

static void expect_efault(struct fx *f, uint32_t cmd_op, const struct nvme_uring_cmd *c)
{
	int u;
	long i;

	both_paths(f, cmd_op, c, &u, &i);
	assert_int_equal(u, -EFAULT);
	assert_int_equal(i, -EFAULT);
}

static void test_wild_data(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	void *bad[] = { WILD, s->hole, s->hole + PG + 8 };
	struct nvme_uring_cmd c;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, bad[i], 512);
		expect_efault(f, NVME_URING_CMD_IO, &c);
		fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, 1, bad[i], 512);
		expect_efault(f, NVME_URING_CMD_IO, &c);
	}
	/* the engine is fine afterwards */
	uint8_t *buf = fx_alloc(512);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, buf, 512);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	free(buf);
}

/* Good first page, unmapped second: the whole command is -EFAULT. */
static void test_partial_hole(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	uint8_t *m = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct nvme_uring_cmd c;

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + PG, PG, PROT_NONE), 0);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 3 * PG / f->lbs, m, 3 * PG);
	expect_efault(f, NVME_URING_CMD_IO, &c);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, 3 * PG / f->lbs, m, 3 * PG);
	expect_efault(f, NVME_URING_CMD_IO, &c);
	/* unaligned (SGL) too */
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 2 * PG / f->lbs, m + 3, 2 * PG);
	expect_efault(f, NVME_URING_CMD_IO, &c);
	munmap(m, 3 * PG);
}

/* A read writes into the buffer: a read-only mapping is -EFAULT, a write from it works. */
static void test_readonly_buffer(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	uint8_t *m = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct nvme_uring_cmd c;
	int u;
	long i;

	assert_true(m != MAP_FAILED);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, PG / f->lbs, m, PG);
	expect_efault(f, NVME_URING_CMD_IO, &c);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, PG / f->lbs, m, PG);
	both_paths(f, NVME_URING_CMD_IO, &c, &u, &i);
	assert_int_equal(u, 0);
	assert_int_equal(i, 0);
	munmap(m, PG);
}

static void test_wild_iovec_array(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	struct nvme_uring_cmd c;

	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, WILD, 1);
	expect_efault(f, NVME_URING_CMD_IO_VEC, &c);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, 1, s->hole, 2);
	expect_efault(f, NVME_URING_CMD_IO_VEC, &c);
	/* the array's second entry lies in an unmapped page */
	struct iovec *edge;
	uint8_t *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *buf = fx_alloc(1024);

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + PG, PG, PROT_NONE), 0);
	edge = (struct iovec *)(void *)(m + PG - sizeof(struct iovec));
	edge->iov_base = buf;
	edge->iov_len = 512;
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 2, edge, 2);
	expect_efault(f, NVME_URING_CMD_IO_VEC, &c);
	munmap(m, 2 * PG);
	free(buf);
}

static void test_wild_iovec_entry(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	uint8_t *buf = fx_alloc(PG);
	struct iovec v[2] = { { buf, 512 }, { s->hole, 512 } };
	struct nvme_uring_cmd c;

	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 2, v, 2);
	expect_efault(f, NVME_URING_CMD_IO_VEC, &c);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, 2, v, 2);
	expect_efault(f, NVME_URING_CMD_IO_VEC, &c);
	v[1].iov_base = WILD;
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 2, v, 2);
	expect_efault(f, NVME_URING_CMD_IO_VEC, &c);
	/* odd segments (SGL) */
	v[0].iov_base = buf + 1;
	v[0].iov_len = 511;
	v[1].iov_len = 513;
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, 2, v, 2);
	expect_efault(f, NVME_URING_CMD_IO_VEC, &c);
	free(buf);
}

static void test_wild_metadata(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	uint8_t *buf = fx_alloc(2 * 512), *meta = fx_alloc(16);
	void *bad[] = { WILD, s->hole };
	struct nvme_uring_cmd c;

	for (unsigned i = 0; i < 2; i++) {
		for (unsigned w = 0; w < 2; w++) {
			fx_rw_cmd(&c, w ? nvme_cmd_write : nvme_cmd_read, f->nsid, 0, 2, buf, 1024);
			c.metadata = (uint64_t)(uintptr_t)bad[i];
			c.metadata_len = 16;
			expect_efault(f, NVME_URING_CMD_IO, &c);
		}
	}
	/* the same with good metadata works both ways */
	int u;
	long l;
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, 2, buf, 1024);
	c.metadata = (uint64_t)(uintptr_t)meta;
	c.metadata_len = 16;
	both_paths(f, NVME_URING_CMD_IO, &c, &u, &l);
	assert_int_equal(u, 0);
	assert_int_equal(l, 0);
	free(buf);
	free(meta);
}

/* The ioctl's argument itself: read from and, for the result, written to. */
static void test_ioctl_wild_arg(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	struct nvme_passthru_cmd64 *ro;

	assert_int_equal(ioctl_on(f, f->ng, NVME_IOCTL_IO64_CMD, WILD), -EFAULT);
	assert_int_equal(ioctl_on(f, f->ng, NVME_IOCTL_IO64_CMD, s->hole), -EFAULT);
	assert_int_equal(ioctl_on(f, f->dev, NVME_IOCTL_ADMIN64_CMD, s->hole + PG), -EFAULT);
	/* straddling into the hole */
	assert_int_equal(ioctl_on(f, f->dev, NVME_IOCTL_ADMIN64_CMD, s->hole - 8), -EFAULT);
	/* readable but not writeable: the command runs, put_user of the result fails */
	ro = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(ro != MAP_FAILED);
	memset(ro, 0, sizeof(*ro));
	ro->opcode = nvme_admin_get_features;
	ro->cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	assert_int_equal(ioctl_on(f, f->dev, NVME_IOCTL_ADMIN64_CMD, ro), 0);
	assert_int_equal(mprotect(ro, PG, PROT_READ), 0);
	assert_int_equal(ioctl_on(f, f->dev, NVME_IOCTL_ADMIN64_CMD, ro), -EFAULT);
	munmap(ro, PG);
}

static int one_cqe(struct fx *f)
{
	struct io_uring_cqe *cqe;
	int res;

	assert_int_equal(ucmd_submit_and_wait(&f->ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&f->ring, &cqe), 0);
	res = cqe->res;
	ucmd_cqe_seen(&f->ring, cqe);
	return res;
}

/* The block device: READ/WRITE/READV/WRITEV with wild buffers or arrays. */
static void test_bdev_wild(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	struct iovec v = { s->hole, PG };

	ucmd_prep_read(ucmd_get_sqe(&f->ring), f->bdev, s->hole, PG, 0);
	assert_int_equal(one_cqe(f), -EFAULT);
	ucmd_prep_write(ucmd_get_sqe(&f->ring), f->bdev, WILD, PG, 0);
	assert_int_equal(one_cqe(f), -EFAULT);
	ucmd_prep_readv(ucmd_get_sqe(&f->ring), f->bdev, (const struct iovec *)WILD, 1, 0);
	assert_int_equal(one_cqe(f), -EFAULT);
	ucmd_prep_writev(ucmd_get_sqe(&f->ring), f->bdev, (const struct iovec *)(void *)s->hole, 1,
			 0);
	assert_int_equal(one_cqe(f), -EFAULT);
	ucmd_prep_readv(ucmd_get_sqe(&f->ring), f->bdev, &v, 1, 0);
	assert_int_equal(one_cqe(f), -EFAULT);
}

/* io_uring_register(2) reads the table and pins each buffer. */
static void test_register_wild(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	struct iovec v = { s->hole, PG };
	int files[1];

	assert_int_equal(ucmd_register_buffers(&f->ring, &v, 1), -EFAULT);
	assert_int_equal(ucmd_register_buffers(&f->ring, (const struct iovec *)WILD, 1), -EFAULT);
	assert_int_equal(ucmd_register_files(&f->ring, (const int *)(void *)s->hole, 1), -EFAULT);
	files[0] = f->ng;
	assert_int_equal(ucmd_register_files(&f->ring, files, 1), 0);
}

/*
 * Class 6: data_len shorter than the 1-LBA transfer, through every way the
 * engine maps a buffer. The buffer is a whole page the test owns, so the
 * device may write the LBA into it (Linux's PRPs are page-granular too);
 * what must not happen is a write into memory the engine allocated for the
 * transfer (ASan reports it) or past the buffer's page.
 */
static void check_page_parity(const uint8_t *page, size_t written)
{
	for (size_t i = written; i < 2 * PG; i++)
		if (page[i] != 0xa5)
			fail_msg("byte %zu past the transfer changed", i);
}

static void test_short_buffer(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	uint8_t *page = fx_alloc(2 * PG), *fixed = fx_alloc(2 * PG), *lba = fx_alloc(512);
	struct iovec reg = { fixed, 2 * PG }, one = { page, 100 };
	struct nvme_passthru_cmd64 p;
	struct nvme_uring_cmd c;

	fx_fill(lba, 512, 7);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 3, 1, lba, 512);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);

	/* uring, flat buffer (PRP) */
	memset(page, 0xa5, 2 * PG);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 3, 1, page, 100);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(page, lba, 512);
	check_page_parity(page, 512);
	/* ioctl (the synchronous path) */
	memset(page, 0xa5, 2 * PG);
	memset(&p, 0, sizeof(p));
	memcpy(&p, &c, sizeof(c));
	assert_int_equal(ioctl_on(f, f->ng, NVME_IOCTL_IO64_CMD, &p), 0);
	assert_memory_equal(page, lba, 512);
	check_page_parity(page, 512);
	/* vectored, uring and ioctl */
	memset(page, 0xa5, 2 * PG);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 3, 1, &one, 1);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), 0);
	check_page_parity(page, 512);
	memcpy(&p, &c, sizeof(c));
	assert_int_equal(ioctl_on(f, f->ng, NVME_IOCTL_IO64_CMD_VEC, &p), 0);
	check_page_parity(page, 512);
	/* fixed buffer */
	assert_int_equal(ucmd_register_buffers(&f->ring, &reg, 1), 0);
	memset(fixed, 0xa5, 2 * PG);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 3, 1, fixed, 100);
	assert_int_equal(fx_nvme_ex(f, f->ng, NVME_URING_CMD_IO, &c, IORING_URING_CMD_FIXED, 0,
				    NULL), 0);
	check_page_parity(fixed, 512);
	assert_int_equal(ucmd_unregister_buffers(&f->ring), 0);
	/* admin data (Identify, 4 KiB) into 100 bytes: the page, never the next one */
	memset(page, 0xa5, 2 * PG);
	memset(&c, 0, sizeof(c));
	c.opcode = nvme_admin_identify;
	c.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	c.addr = (uint64_t)(uintptr_t)page;
	c.data_len = 100;
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, NULL), 0);
	check_page_parity(page, PG);
	memcpy(&p, &c, sizeof(c));
	assert_int_equal(ioctl_on(f, f->dev, NVME_IOCTL_ADMIN64_CMD, &p), 0);
	check_page_parity(page, PG);
	/* a short buffer that is not dword aligned goes as an SGL, which is exact: refused */
	memset(page, 0xa5, 2 * PG);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 3, 1, page + 1, 100);
	assert_true(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL) > 0);
	check_page_parity(page, 0);
	free(page);
	free(fixed);
	free(lba);
}

/* The driver's own commands: a buffer the controller could overrun is refused. */
static void test_sync_cmd_buffer(void **state)
{
	struct st *s = *state;
	struct fx *f = &s->f;

	GUARD();
	struct ucmd_file *file = fget(f->e, f->dev);
	struct nvme_host *h = file->private_data;
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_identify, .cdw10 = NVME_IDENTIFY_CNS_CTRL };
	uint8_t *page = fx_alloc(PG), *small = malloc(100);

	assert_non_null(small);
	assert_int_equal(nvme_submit_sync_cmd(h, &c, small, 100, NULL), -EINVAL);
	assert_int_equal(nvme_submit_sync_cmd(h, &c, page + 64, PG - 64, NULL), -EINVAL);
	assert_int_equal(nvme_submit_sync_cmd(h, &c, page, PG, NULL), 0);
	fput(file);
	free(small);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wild_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_hole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_readonly_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wild_iovec_array, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wild_iovec_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wild_metadata, setup_meta, teardown),
		cmocka_unit_test_setup_teardown(test_ioctl_wild_arg, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bdev_wild, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_wild, setup, teardown),
		cmocka_unit_test_setup_teardown(test_short_buffer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_cmd_buffer, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
