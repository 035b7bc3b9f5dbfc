/* SPDX-License-Identifier: MIT */
/*
 * io_rings_create_at (src/ring/ring.c): the SQEs at a far offset of the
 * ring memfd (IORING_OFF_SQES for ucmd-supervise), so that a program's own
 * mmap(IORING_OFF_SQES) of the memfd finds them, with the rings and the
 * tail at the start and a hole between that costs no memory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "ring/ring.h"

static void test_sqes_at_linux_offset(void **state)
{
	struct io_uring_params p = { 0 };
	struct io_rings r;
	struct stat st;
	void *m;

	(void)state;
	assert_int_equal(io_rings_create_at(&r, 8, &p, 64, IORING_OFF_SQES), 0);
	/* the engine's view: one range, the SQEs where the offset says */
	assert_ptr_equal((char *)r.sqes, (char *)r.mem + IORING_OFF_SQES);
	assert_int_equal(p.sq_off.resv2, IORING_OFF_SQES);
	assert_true(r.tail_off + 64 <= IORING_OFF_SQES);
	assert_int_equal(r.size, IORING_OFF_SQES + 4096);	/* 8 SQEs, one page */
	/* the hole is a hole: only the rings, the tail and the SQEs have pages */
	assert_int_equal(fstat(r.memfd, &st), 0);
	assert_int_equal(st.st_size, (off_t)r.size);
	assert_true(st.st_blocks * 512 <= 64 * 1024);
	/* a second mapping of the memfd at IORING_OFF_SQES sees the engine's SQEs */
	r.sqes[3].user_data = 0x5eed;
	m = mmap(NULL, 8 * 64, PROT_READ, MAP_SHARED, r.memfd, IORING_OFF_SQES);
	assert_true(m != MAP_FAILED);
	assert_int_equal(((struct io_uring_sqe *)m)[3].user_data, 0x5eed);
	munmap(m, 8 * 64);
	/* and one at 0 the SQ ring's head and tail */
	*r.sq_tail = 5;
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, r.memfd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(*(unsigned *)((char *)m + p.sq_off.tail), 5);
	munmap(m, 4096);
	io_rings_destroy(&r);
}

static void test_bad_offsets(void **state)
{
	struct io_uring_params p = { 0 };
	struct io_rings r;

	(void)state;
	/* not page-aligned, and inside the rings: refused, nothing made */
	assert_int_equal(io_rings_create_at(&r, 8, &p, 64, IORING_OFF_SQES + 64), -EINVAL);
	memset(&p, 0, sizeof(p));
	assert_int_equal(io_rings_create_at(&r, 8, &p, 64, 4096), -EINVAL);
	/* 0: the usual layout, SQEs right after the rings */
	memset(&p, 0, sizeof(p));
	assert_int_equal(io_rings_create_at(&r, 8, &p, 64, 0), 0);
	assert_true(p.sq_off.resv2 < IORING_OFF_SQES);
	assert_true(r.tail_off > p.sq_off.resv2);
	io_rings_destroy(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sqes_at_linux_offset),
		cmocka_unit_test(test_bad_offsets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
