/* SPDX-License-Identifier: MIT */
/* ucmd_get_probe / ucmd_opcode_supported: what the engine implements, and only that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "parity.h"

static void check(const struct io_uring_probe *p)
{
	int yes[] = { IORING_OP_NOP, IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_FSYNC,
		      IORING_OP_READ_FIXED, IORING_OP_WRITE_FIXED, IORING_OP_TIMEOUT,
		      IORING_OP_ASYNC_CANCEL, IORING_OP_LINK_TIMEOUT, IORING_OP_READ,
		      IORING_OP_WRITE, IORING_OP_URING_CMD };

	assert_non_null(p);
	assert_int_equal(p->last_op, IORING_OP_LAST - 1);
	for (unsigned i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(ucmd_opcode_supported(p, yes[i]));
	assert_false(ucmd_opcode_supported(p, IORING_OP_POLL_ADD));
	assert_false(ucmd_opcode_supported(p, IORING_OP_ACCEPT));
	assert_false(ucmd_opcode_supported(p, -1));
	assert_false(ucmd_opcode_supported(p, IORING_OP_LAST));
	assert_false(ucmd_opcode_supported(p, 255));
}

static void test_probe(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct io_uring_probe *p;

	(void)state;
	p = ucmd_get_probe();
	check(p);
	ucmd_free_probe(p);
	ring_setup(e, &r, 4, 0);
	p = ucmd_get_probe_ring(&r);
	check(p);
	ucmd_free_probe(p);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
