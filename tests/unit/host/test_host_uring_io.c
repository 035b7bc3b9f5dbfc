/* SPDX-License-Identifier: MIT */
/* NVME_URING_CMD_IO / _IO_VEC / fixed buffers / results / device status on ng0n1. */
#include "host_fixture.h"

#include <nvme/types.h>
#include <stdlib.h>
#include <string.h>

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_int_equal(fx_setup(f, NULL), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fx_teardown(*state);
	free(*state);
	return 0;
}

static void test_write_read(void **state)
{
	struct fx *f = *state;
	size_t len = 8 * f->lbs;
	uint8_t *w = fx_alloc(len), *r = fx_alloc(len);
	struct nvme_uring_cmd c;

	fx_fill(w, len, 1);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 16, 8, w, (uint32_t)len);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 16, 8, r, (uint32_t)len);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(w, r, len);
	free(w);
	free(r);
}

/* Unaligned, odd-sized segments need SGLs; page-aligned ones go as PRPs. */
static void test_io_vec(void **state)
{
	struct fx *f = *state;
	size_t len = 16 * f->lbs;
	/* the write segments reach src + len + 300: room and pattern past that */
	uint8_t *src = fx_alloc(len + 512), *dst = fx_alloc(len + 64), *flat = fx_alloc(len);
	struct iovec wv[4] = {
		{ src + 3, 100 }, { src + 200, 1000 }, { src + 1300, 0 }, { src + 1400, len - 1100 },
	};
	struct iovec rv[3] = { { dst + 1, 513 }, { dst + 700, 7 }, { dst + 1000, len - 520 } };
	struct nvme_uring_cmd c;

	fx_fill(src, len + 512, 2);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 100, 16, wv, 4);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), 0);
	/* read back flat and compare to the concatenation */
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 100, 16, flat, (uint32_t)len);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(flat, src + 3, 100);
	assert_memory_equal(flat + 100, src + 200, 1000);
	assert_memory_equal(flat + 1100, src + 1400, len - 1100);
	/* vectored read into scattered pieces */
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 100, 16, rv, 3);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), 0);
	assert_memory_equal(dst + 1, flat, 513);
	assert_memory_equal(dst + 700, flat + 513, 7);
	assert_memory_equal(dst + 1000, flat + 520, len - 520);
	/* page-aligned segments: PRP list path with many pages */
	size_t big = 64 * 4096;
	uint8_t *a = fx_alloc(big), *b = fx_alloc(big);
	struct iovec pv[3] = { { a, 4096 }, { a + 8192, 16 * 4096 }, { a + 32 * 4096, big - 32 * 4096 } };
	size_t tot = 4096 + 16 * 4096 + big - 32 * 4096;
	fx_fill(a, big, 9);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 1024, (uint32_t)(tot / f->lbs), pv, 3);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), 0);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 1024, (uint32_t)(tot / f->lbs), b, (uint32_t)tot);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(b, a, 4096);
	assert_memory_equal(b + 4096, a + 8192, 16 * 4096);
	assert_memory_equal(b + 17 * 4096, a + 32 * 4096, big - 32 * 4096);
	free(a);
	free(b);
	free(src);
	free(dst);
	free(flat);
}

/*
 * Two pages of PRPs come without a page array (dma.c): PRP2 is the first
 * segment's next page when it spans two, else the second segment's page.
 * A flat buffer skips the segment scan, and an empty segment next to
 * the data does not count as the flat one. Each read is checked against a
 * flat read of the blocks written.
 */
static void vec_read_check(struct fx *f, struct iovec *v, unsigned n, const uint8_t *ref,
			   uint32_t nlb)
{
	struct nvme_uring_cmd c;
	size_t off = 0;

	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 200, nlb, v, n);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO_VEC, &c, NULL), 0);
	for (unsigned i = 0; i < n; i++) {
		assert_memory_equal(v[i].iov_base, ref + off, v[i].iov_len);
		off += v[i].iov_len;
	}
	assert_int_equal(off, (size_t)nlb * f->lbs);
}

static void test_io_vec_two_pages(void **state)
{
	struct fx *f = *state;
	const size_t len = 8192;
	uint8_t *ref = fx_alloc(len), *a = fx_alloc(5 * 4096);
	struct nvme_uring_cmd c;

	fx_fill(ref, len, 5);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 200, (uint32_t)(len / f->lbs), ref, (uint32_t)len);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	/* one segment over two pages */
	struct iovec one[1] = { { a + 512, 4096 } };
	vec_read_check(f, one, 1, ref, 8);
	memset(a, 0, 5 * 4096);
	/* one page each: the second segment's page is PRP2, not the first's next */
	struct iovec two[2] = { { a + 3072, 1024 }, { a + 3 * 4096, 3072 } };
	vec_read_check(f, two, 2, ref, 8);
	for (size_t i = 4096; i < 3 * 4096; i++)
		assert_int_equal(a[i], 0);
	memset(a, 0, 5 * 4096);
	/* an empty segment first: the data is the second one's */
	struct iovec empty_first[2] = { { a + 4096, 0 }, { a + 1024, 4096 } };
	vec_read_check(f, empty_first, 2, ref, 8);
	/* three pages from two segments: a PRP list */
	struct iovec three[2] = { { a + 2048, 2048 }, { a + 2 * 4096, 6144 } };
	vec_read_check(f, three, 2, ref, 16);
	free(ref);
	free(a);
}

static void test_fixed(void **state)
{
	struct fx *f = *state;
	size_t len = 64 * 1024;
	uint8_t *buf = fx_alloc(len), *r = fx_alloc(len);
	struct iovec reg = { buf, len };
	struct nvme_uring_cmd c;

	assert_int_equal(ucmd_register_buffers(&f->ring, &reg, 1), 0);
	fx_fill(buf, len, 3);
	fx_rw_cmd(&c, nvme_cmd_write, f->nsid, 0, (uint32_t)(8192 / f->lbs), buf + 4096, 8192);
	assert_int_equal(fx_nvme_ex(f, f->ng, NVME_URING_CMD_IO, &c, IORING_URING_CMD_FIXED, 0,
				    NULL), 0);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, (uint32_t)(8192 / f->lbs), r, 8192);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(r, buf + 4096, 8192);
	/* outside the registered buffer */
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 16, buf + len - 512, 8192);
	assert_int_equal(fx_nvme_ex(f, f->ng, NVME_URING_CMD_IO, &c, IORING_URING_CMD_FIXED, 0,
				    NULL), -EFAULT);
	/* vectored fixed buffers (Linux 6.15): segments inside the registered buffer */
	struct iovec v[2] = { { buf + 16384, 4096 }, { buf + 8192, 4096 } };

	memcpy(r, buf + 4096, 8192);	/* what LBA 0 on holds */
	memset(buf + 8192, 0, 4096);
	memset(buf + 16384, 0, 4096);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, (uint32_t)(8192 / f->lbs), v, 2);
	assert_int_equal(fx_nvme_ex(f, f->ng, NVME_URING_CMD_IO_VEC, &c, IORING_URING_CMD_FIXED,
				    0, NULL), 0);
	assert_memory_equal(buf + 16384, r, 4096);
	assert_memory_equal(buf + 8192, r + 4096, 4096);
	/* a segment that leaves the buffer, or one outside it: -EFAULT */
	v[1] = (struct iovec){ buf + len - 2048, 4096 };
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, (uint32_t)(8192 / f->lbs), v, 2);
	assert_int_equal(fx_nvme_ex(f, f->ng, NVME_URING_CMD_IO_VEC, &c, IORING_URING_CMD_FIXED,
				    0, NULL), -EFAULT);
	v[1] = (struct iovec){ r, 4096 };
	assert_int_equal(fx_nvme_ex(f, f->ng, NVME_URING_CMD_IO_VEC, &c, IORING_URING_CMD_FIXED,
				    0, NULL), -EFAULT);
	/* the array itself is the program's, anywhere: a bad one is -EFAULT */
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 0, 1, (void *)8, 2);
	assert_int_equal(fx_nvme_ex(f, f->ng, NVME_URING_CMD_IO_VEC, &c, IORING_URING_CMD_FIXED,
				    0, NULL), -EFAULT);
	assert_int_equal(ucmd_unregister_buffers(&f->ring), 0);
	free(buf);
	free(r);
}

/* Admin results arrive in big_cqe[0]: Get Features, Number of Queues. */
static void test_result(void **state)
{
	struct fx *f = *state;
	struct nvme_uring_cmd c = { .opcode = nvme_admin_get_features };
	uint64_t res2 = 0;

	c.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, &res2), 0);
	/* the driver asked for 2 I/O queue pairs at attach: 0-based 1 in both halves */
	assert_int_equal(res2 & 0xffff, 1);
	assert_int_equal((res2 >> 16) & 0xffff, 1);

	/* Identify Controller into a buffer through the admin path */
	struct nvme_id_ctrl *id = fx_alloc(4096);
	memset(&c, 0, sizeof(c));
	c.opcode = nvme_admin_identify;
	c.cdw10 = NVME_IDENTIFY_CNS_CTRL;
	c.addr = (uint64_t)(uintptr_t)id;
	c.data_len = 4096;
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &c, NULL), 0);
	assert_memory_equal(id->sn, "HOSTTEST01", 10);
	free(id);
}

/* Device errors come back as the NVMe status: SCT<<8 | SC plus DNR. */
static void test_status(void **state)
{
	struct fx *f = *state;
	uint8_t *buf = fx_alloc(4096);
	struct nvme_uring_cmd c;
	int res;

	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 4096, 1, buf, f->lbs);
	res = fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL);
	assert_int_equal(res, NVME_SC_LBA_RANGE | NVME_SC_DNR);
	/* invalid opcode */
	memset(&c, 0, sizeof(c));
	c.opcode = 0x7e;
	c.nsid = f->nsid;
	res = fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL);
	assert_int_equal(res & 0x7ff, NVME_SC_INVALID_OPCODE);
	free(buf);
}

/* The ioctl path shares the builder: same results for the same commands. */
static void test_sync_ioctl(void **state)
{
	struct fx *f = *state;
	struct ucmd_file *file;
	uint8_t *w = fx_alloc(4096), *r = fx_alloc(4096);
	struct nvme_passthru_cmd64 p = { .opcode = nvme_cmd_write, .nsid = f->nsid };
	long ret;

	fx_fill(w, 4096, 7);
	p.addr = (uint64_t)(uintptr_t)w;
	p.data_len = 4096;
	p.cdw10 = 200;
	p.cdw12 = 4096 / f->lbs - 1;
	file = fget(f->e, f->ng);
	assert_non_null(file);
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_IO64_CMD, &p), 0);
	struct nvme_uring_cmd c;
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 200, 4096 / f->lbs, r, 4096);
	assert_int_equal(fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL), 0);
	assert_memory_equal(w, r, 4096);
	/* same device error both ways */
	p.opcode = nvme_cmd_read;
	p.cdw10 = 5000;
	p.addr = (uint64_t)(uintptr_t)r;
	ret = vfs_ioctl(file, NVME_IOCTL_IO64_CMD, &p);
	fx_rw_cmd(&c, nvme_cmd_read, f->nsid, 5000, 4096 / f->lbs, r, 4096);
	assert_int_equal(ret, fx_nvme(f, f->ng, NVME_URING_CMD_IO, &c, NULL));
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_ID, NULL), f->nsid);
	/* same validation: wrong nsid, flags */
	p.nsid = f->nsid + 1;
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_IO64_CMD, &p), -EINVAL);
	p.nsid = f->nsid;
	p.flags = 1;
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_IO64_CMD, &p), -EINVAL);
	assert_int_equal(vfs_ioctl(file, 0x1234, &p), -ENOTTY);
	fput(file);

	/* admin through the controller device: result written back */
	struct nvme_passthru_cmd64 a = { .opcode = nvme_admin_get_features };
	a.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	file = fget(f->e, f->dev);
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_ADMIN64_CMD, &a), 0);
	uint64_t res2;
	struct nvme_uring_cmd ac = { .opcode = nvme_admin_get_features,
				     .cdw10 = NVME_FEAT_FID_NUM_QUEUES };
	assert_int_equal(fx_nvme(f, f->dev, NVME_URING_CMD_ADMIN, &ac, &res2), 0);
	assert_int_equal(a.result, res2);
	assert_int_equal(vfs_ioctl(file, NVME_IOCTL_IO64_CMD, &p), -ENOTTY);
	fput(file);
	free(w);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_io_vec, setup, teardown),
		cmocka_unit_test_setup_teardown(test_io_vec_two_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fixed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_result, setup, teardown),
		cmocka_unit_test_setup_teardown(test_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sync_ioctl, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
