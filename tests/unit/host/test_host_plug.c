/* SPDX-License-Identifier: MIT */
/* Seed 004: many commands in one submit leave in batches, one doorbell each. */
#include "host_fixture.h"

#include <nvme/types.h>
#include <stdlib.h>

static void totals(struct fx *f, unsigned long *disp, unsigned long *batches)
{
	*disp = *batches = 0;
	for (unsigned q = 1; q <= 2; q++) {
		unsigned long d, b;

		assert_int_equal(ucmd_nvme_queue_stats(f->host, q, &d, &b), 0);
		*disp += d;
		*batches += b;
	}
}

static void run(enum ucmd_ctrl_mode mode)
{
	struct fx f;
	struct fx_opts o = { .mode = mode, .entries = 64 };
	struct ucmd_ctrl_stats s0, s1;
	unsigned long d0, b0, d1, b1;
	const unsigned n = 48;
	uint8_t *buf = fx_alloc(n * 4096);
	struct nvme_uring_cmd c;

	assert_int_equal(fx_setup(&f, &o), 0);
	totals(&f, &d0, &b0);
	ucmd_ctrl_get_stats(f.ctrl, &s0);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&f.ring);

		fx_fill(buf + i * 4096, 4096, i);
		fx_rw_cmd(&c, nvme_cmd_write, f.nsid, i * (4096 / f.lbs), 4096 / f.lbs,
			  buf + i * 4096, 4096);
		ucmd_prep_nvme_cmd(sqe, f.ng, NVME_URING_CMD_IO, &c);
	}
	assert_int_equal(ucmd_submit_and_wait(&f.ring, n), (int)n);
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;

		assert_int_equal(ucmd_wait_cqe(&f.ring, &cqe), 0);
		assert_int_equal(cqe->res, 0);
		ucmd_cqe_seen(&f.ring, cqe);
	}
	totals(&f, &d1, &b1);
	ucmd_ctrl_get_stats(f.ctrl, &s1);
	assert_int_equal(d1 - d0, n);
	/* 32 per plug: two batches, not 48 */
	assert_true(b1 - b0 <= 3);
	assert_true(b1 - b0 >= 2);
	/* SQ doorbells: one per batch (CQ head doorbells come on top, also per batch) */
	assert_true(s1.doorbells - s0.doorbells <= 2 * (b1 - b0) + 2 * 48 / 32 + 4);
	fx_teardown(&f);
	free(buf);
}

static void test_plug_inline(void **state)
{
	(void)state;
	run(UCMD_CTRL_INLINE);
}

static void test_plug_thread(void **state)
{
	(void)state;
	run(UCMD_CTRL_THREAD);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plug_inline),
		cmocka_unit_test(test_plug_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
