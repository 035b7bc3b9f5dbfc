/* SPDX-License-Identifier: MIT */
/*
 * ucmd_ioctl(): the synchronous path of Linux's NVMe driver (NVME_IOCTL_ID,
 * NVME_IOCTL_ADMIN64_CMD, NVME_IOCTL_IO64_CMD[_VEC]) with its errors, and
 * ioctl(2) itself on a kernel engine.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <cmocka.h>

#include <ucmd/ctrl.h>
#include <ucmd/kernel.h>
#include <ucmd/nvme.h>
#include <ucmd/ucmd.h>

struct fx {
	struct ucmd_engine *e;
	struct ucmd_ctrl *ctrl;
	struct ucmd_nvme_host *host;
	int ng, dev, null_fd;
	uint8_t *buf;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ucmd_ctrl_params cp = { .serial = "IOCTLTEST" };
	struct ucmd_ns_params np = { .nsze = 1024, .store = UCMD_NS_STORE_RAM, .attach = true };

	assert_non_null(f);
	assert_int_equal(ucmd_engine_create(&f->e), 0);
	assert_int_equal(ucmd_ctrl_create(&cp, &f->ctrl), 0);
	assert_int_equal(ucmd_ctrl_ns_create(f->ctrl, &np), 1);
	assert_int_equal(ucmd_nvme_attach(f->e, f->ctrl, NULL, &f->host), 0);
	f->ng = ucmd_open(f->e, "ng0n1", O_RDWR);
	f->dev = ucmd_open(f->e, "nvme0", O_RDWR);
	f->null_fd = ucmd_open(f->e, "null", O_RDWR);
	assert_true(f->ng >= 0 && f->dev >= 0 && f->null_fd >= 0);
	f->buf = aligned_alloc(4096, 8192);
	assert_non_null(f->buf);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	ucmd_close(f->e, f->ng);
	ucmd_close(f->e, f->dev);
	ucmd_close(f->e, f->null_fd);
	ucmd_nvme_detach(f->host);
	ucmd_ctrl_destroy(f->ctrl);
	ucmd_engine_free(f->e);
	free(f->buf);
	free(f);
	return 0;
}

static void test_id(void **state)
{
	struct fx *f = *state;

	assert_int_equal(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_ID, NULL), 1);
	/* the controller device has no namespace: Linux's nvme_dev_ioctl() */
	assert_int_equal(ucmd_ioctl(f->e, f->dev, NVME_IOCTL_ID, NULL), -ENOTTY);
}

static void test_admin_identify(void **state)
{
	struct fx *f = *state;
	struct nvme_passthru_cmd64 c = {
		.opcode = 0x06, .cdw10 = 1, .addr = (uint64_t)(uintptr_t)f->buf, .data_len = 4096,
	};

	memset(f->buf, 0, 4096);
	assert_int_equal(ucmd_ioctl(f->e, f->dev, NVME_IOCTL_ADMIN64_CMD, &c), 0);
	/* Identify Controller: the serial number at byte 4, space padded */
	assert_memory_equal(f->buf + 4, "IOCTLTEST", 9);
	/* the same through a namespace device, as Linux allows */
	memset(f->buf, 0, 4096);
	assert_int_equal(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_ADMIN64_CMD, &c), 0);
	assert_memory_equal(f->buf + 4, "IOCTLTEST", 9);
}

static void test_io_write_read(void **state)
{
	struct fx *f = *state;
	struct nvme_passthru_cmd64 c = {
		.opcode = 0x01, .nsid = 1, .addr = (uint64_t)(uintptr_t)f->buf, .data_len = 512,
		.cdw10 = 7,
	};
	struct iovec iov = { f->buf + 4096, 512 };

	memset(f->buf, 0xa5, 512);
	assert_int_equal(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_IO64_CMD, &c), 0);
	/* read it back with the vectored form */
	memset(f->buf + 4096, 0, 512);
	c.opcode = 0x02;
	c.addr = (uint64_t)(uintptr_t)&iov;
	c.data_len = 1;
	assert_int_equal(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_IO64_CMD_VEC, &c), 0);
	assert_memory_equal(f->buf, f->buf + 4096, 512);
	/* an LBA beyond the namespace: a positive NVMe status, not an errno */
	c.opcode = 0x02;
	c.addr = (uint64_t)(uintptr_t)f->buf;
	c.data_len = 512;
	c.cdw10 = 4096;
	assert_true(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_IO64_CMD, &c) > 0);
}

static void test_errors(void **state)
{
	struct fx *f = *state;
	struct nvme_passthru_cmd64 c = { .opcode = 0x02, .nsid = 1, .data_len = 512,
					 .addr = (uint64_t)(uintptr_t)f->buf };
	int closed = ucmd_open(f->e, "ng0n1", O_RDWR);

	/* cmocka installed its own SIGSEGV handler: put ucmd's in front again */
	assert_int_equal(ucmd_uaccess_init(), 0);
	/* a descriptor that is not open */
	assert_int_equal(ucmd_ioctl(f->e, 999, NVME_IOCTL_ID, NULL), -EBADF);
	assert_int_equal(ucmd_ioctl(f->e, -1, NVME_IOCTL_ID, NULL), -EBADF);
	assert_true(closed >= 0);
	assert_int_equal(ucmd_close(f->e, closed), 0);
	assert_int_equal(ucmd_ioctl(f->e, closed, NVME_IOCTL_IO64_CMD, &c), -EBADF);
	/* a command the driver does not know, and a device without ioctls */
	assert_int_equal(ucmd_ioctl(f->e, f->ng, _IO('N', 0x7f), &c), -ENOTTY);
	assert_int_equal(ucmd_ioctl(f->e, f->dev, NVME_IOCTL_IO64_CMD, &c), -ENOTTY);
	assert_int_equal(ucmd_ioctl(f->e, f->null_fd, NVME_IOCTL_ID, NULL), -ENOTTY);
	/* bad arguments: the command itself, then its data buffer */
	assert_int_equal(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_IO64_CMD, (void *)16), -EFAULT);
	assert_int_equal(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_IO64_CMD, NULL), -EFAULT);
	c.addr = 4096;
	assert_int_equal(ucmd_ioctl(f->e, f->ng, NVME_IOCTL_IO64_CMD, &c), -EFAULT);
	assert_int_equal(ucmd_ioctl(NULL, f->ng, NVME_IOCTL_ID, NULL), -EINVAL);
}

/* A kernel engine's descriptors are real ones: ucmd_ioctl is ioctl(2). */
static void test_kernel_engine(void **state)
{
	char path[] = "/tmp/ucmd-ioctl-XXXXXX";
	struct ucmd_engine *k;
	int tmp, fd, n = -1;

	(void)state;
	tmp = mkstemp(path);
	assert_true(tmp >= 0);
	assert_int_equal(write(tmp, "hello", 5), 5);
	close(tmp);
	assert_int_equal(ucmd_engine_create_kernel(&k), 0);
	assert_true(ucmd_engine_is_kernel(k));
	fd = ucmd_open(k, path, O_RDONLY);
	assert_true(fd >= 0);
	/* FIONREAD on a regular file: the bytes left to read, from the kernel */
	assert_int_equal(ucmd_ioctl(k, fd, FIONREAD, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(ucmd_ioctl(k, fd, NVME_IOCTL_ID, NULL), -ENOTTY);
	assert_int_equal(ucmd_close(k, fd), 0);
	assert_int_equal(ucmd_ioctl(k, fd, FIONREAD, &n), -EBADF);
	ucmd_engine_free(k);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_id, setup, teardown),
		cmocka_unit_test_setup_teardown(test_admin_identify, setup, teardown),
		cmocka_unit_test_setup_teardown(test_io_write_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test(test_kernel_engine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
