/* SPDX-License-Identifier: MIT */
/*
 * The SQE preparation helpers' exact bytes: each SQE starts filled with 0xff
 * (a reused slot), and every byte the helper must set or clear is checked.
 * Where liburing has the same helper, ucmd's must write the same bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <liburing.h>
#include <ucmd/ucmd.h>

/* Two SQE slots: one SQE128 entry, or two adjacent 64-byte SQEs. */
static struct io_uring_sqe slot[2];

static unsigned char *bytes(void)
{
	return (unsigned char *)slot;
}

static void fill(void)
{
	memset(slot, 0xff, sizeof(slot));
}

/* Bytes [from, to) are all v. */
static void assert_range(size_t from, size_t to, unsigned char v)
{
	for (size_t i = from; i < to; i++)
		if (bytes()[i] != v)
			fail_msg("byte %zu is 0x%02x, want 0x%02x", i, bytes()[i], v);
}

/* The header of a URING_CMD for fd 3, cmd_op 0x12345678, user_data untouched. */
static void assert_uring_cmd_header(void)
{
	assert_int_equal(slot[0].opcode, IORING_OP_URING_CMD);
	assert_int_equal(slot[0].fd, 3);
	assert_int_equal(slot[0].cmd_op, 0x12345678);
	assert_range(1, 4, 0);					/* flags, ioprio */
	assert_range(12, 32, 0);				/* __pad1, addr, len, flags */
	assert_range(32, 40, 0xff);				/* user_data is the caller's */
	assert_range(40, 48, 0);				/* buf_index, personality, file_index */
}

static void test_uring_cmd_64(void **state)
{
	(void)state;
	fill();
	ucmd_prep_uring_cmd(&slot[0], 0x12345678, 3);
	assert_uring_cmd_header();
	assert_range(48, 64, 0);		/* the 16 command bytes */
	assert_range(64, 128, 0xff);		/* the next SQE is not this one's */
}

static void test_uring_cmd128_clears_80(void **state)
{
	(void)state;
	fill();
	ucmd_prep_uring_cmd128(&slot[0], 0x12345678, 3);
	assert_uring_cmd_header();
	assert_range(48, 128, 0);		/* all 80 command bytes */
}

static void test_nvme_cmd_clears_rest(void **state)
{
	struct nvme_uring_cmd cmd;

	(void)state;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = 2;
	cmd.nsid = 1;
	fill();
	ucmd_prep_nvme_cmd(&slot[0], 3, 0x12345678, &cmd);
	assert_uring_cmd_header();
	assert_memory_equal(slot[0].cmd, &cmd, sizeof(cmd));
	assert_range(48 + sizeof(cmd), 128, 0);
}

static void test_prep_cmd_ring_aware(void **state)
{
	struct ucmd_ring big = { .flags = IORING_SETUP_SQE128 }, small = { .flags = 0 };
	unsigned char cmd[80];

	(void)state;
	memset(cmd, 0x5a, sizeof(cmd));
	assert_int_equal(ucmd_sqe_cmd_size(&big), 80);
	assert_int_equal(ucmd_sqe_cmd_size(&small), 16);

	fill();
	assert_int_equal(ucmd_prep_cmd(&big, &slot[0], 0x12345678, 3, cmd, 20), 0);
	assert_uring_cmd_header();
	assert_range(48, 68, 0x5a);
	assert_range(68, 128, 0);

	fill();
	assert_int_equal(ucmd_prep_cmd(&small, &slot[0], 0x12345678, 3, cmd, 16), 0);
	assert_uring_cmd_header();
	assert_range(48, 64, 0x5a);
	assert_range(64, 128, 0xff);

	/* too long for the ring: refused, nothing written */
	fill();
	assert_int_equal(ucmd_prep_cmd(&small, &slot[0], 1, 3, cmd, 17), -EINVAL);
	assert_int_equal(ucmd_prep_cmd(&big, &slot[0], 1, 3, cmd, 81), -EINVAL);
	assert_range(0, 128, 0xff);
}

/* ucmd's helper and liburing's write the same 64 bytes over 0xff. */
#define SAME_AS_LIBURING(ucmd_call, uring_call)					\
	do {									\
		fill();								\
		ucmd_call;							\
		uring_call;							\
		assert_memory_equal(&slot[0], &slot[1], sizeof(slot[0]));	\
	} while (0)

static void test_same_bytes_as_liburing(void **state)
{
	struct __kernel_timespec ts = { .tv_sec = 1, .tv_nsec = 2 };
	int x;

	(void)state;
	SAME_AS_LIBURING(ucmd_prep_fsync(&slot[0], 5, IORING_FSYNC_DATASYNC),
			 io_uring_prep_fsync(&slot[1], 5, IORING_FSYNC_DATASYNC));
	SAME_AS_LIBURING(ucmd_prep_timeout(&slot[0], &ts, 3, IORING_TIMEOUT_ABS),
			 io_uring_prep_timeout(&slot[1], &ts, 3, IORING_TIMEOUT_ABS));
	SAME_AS_LIBURING(ucmd_prep_link_timeout(&slot[0], &ts, 0),
			 io_uring_prep_link_timeout(&slot[1], &ts, 0));
	SAME_AS_LIBURING(ucmd_prep_cancel64(&slot[0], 0x1122334455667788ull, IORING_ASYNC_CANCEL_ALL),
			 io_uring_prep_cancel64(&slot[1], 0x1122334455667788ull, IORING_ASYNC_CANCEL_ALL));
	SAME_AS_LIBURING(ucmd_prep_cancel(&slot[0], &x, 0), io_uring_prep_cancel(&slot[1], &x, 0));
	SAME_AS_LIBURING(ucmd_prep_cancel_fd(&slot[0], 4, IORING_ASYNC_CANCEL_ALL),
			 io_uring_prep_cancel_fd(&slot[1], 4, IORING_ASYNC_CANCEL_ALL));
	SAME_AS_LIBURING(ucmd_prep_read(&slot[0], 4, &x, 4, (__u64)8),
			 io_uring_prep_read(&slot[1], 4, &x, 4, (__u64)8));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uring_cmd_64),
		cmocka_unit_test(test_uring_cmd128_clears_80),
		cmocka_unit_test(test_nvme_cmd_clears_rest),
		cmocka_unit_test(test_prep_cmd_ring_aware),
		cmocka_unit_test(test_same_bytes_as_liburing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
