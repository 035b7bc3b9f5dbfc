/* SPDX-License-Identifier: MIT */
/*
 * The controller on its own thread: interrupts from that thread, several
 * submitter threads each with a ring, and IOPOLL rings on polled queues.
 */
#include "host_fixture.h"

#include <nvme/types.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct worker {
	struct fx *f;
	unsigned id;
	int errors;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct fx *f = w->f;
	struct ucmd_ring ring;
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	const unsigned depth = 8, rounds = 40;
	uint8_t *buf = aligned_alloc(4096, depth * 4096), *rd = aligned_alloc(4096, depth * 4096);
	struct nvme_uring_cmd c;

	if (ucmd_queue_init_engine(f->e, 32, &ring, &p)) {
		w->errors++;
		return NULL;
	}
	for (unsigned r = 0; r < rounds; r++) {
		for (int pass = 0; pass < 2; pass++) {
			for (unsigned i = 0; i < depth; i++) {
				struct io_uring_sqe *sqe = ucmd_get_sqe(&ring);
				uint64_t slba = (w->id * depth + i) * (4096 / f->lbs);

				if (!pass)
					fx_fill(buf + i * 4096, 4096, r * 100 + i + w->id);
				fx_rw_cmd(&c, pass ? nvme_cmd_read : nvme_cmd_write, f->nsid, slba,
					  4096 / f->lbs, (pass ? rd : buf) + i * 4096, 4096);
				ucmd_prep_nvme_cmd(sqe, f->ng, NVME_URING_CMD_IO, &c);
			}
			if (ucmd_submit_and_wait(&ring, depth) != (int)depth)
				w->errors++;
			for (unsigned i = 0; i < depth; i++) {
				struct io_uring_cqe *cqe;

				if (ucmd_wait_cqe(&ring, &cqe) || cqe->res)
					w->errors++;
				ucmd_cqe_seen(&ring, cqe);
			}
		}
		if (memcmp(buf, rd, depth * 4096))
			w->errors++;
	}
	ucmd_queue_exit(&ring);
	free(buf);
	free(rd);
	return NULL;
}

static void test_threads(void **state)
{
	struct fx f;
	struct fx_opts o = { .mode = UCMD_CTRL_THREAD, .nr_io_queues = 2 };
	struct worker w[4];
	pthread_t t[4];

	(void)state;
	assert_int_equal(fx_setup(&f, &o), 0);
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct worker){ .f = &f, .id = i };
		assert_int_equal(pthread_create(&t[i], NULL, worker_fn, &w[i]), 0);
	}
	for (unsigned i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].errors, 0);
	}
	fx_teardown(&f);
}

static void iopoll_run(enum ucmd_ctrl_mode mode, unsigned poll_queues)
{
	struct fx f;
	struct fx_opts o = { .mode = mode, .nr_poll_queues = poll_queues,
			     .ring_flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |
					   IORING_SETUP_IOPOLL };
	uint8_t *w = fx_alloc(8192), *r = fx_alloc(8192);
	struct nvme_uring_cmd c;

	assert_int_equal(fx_setup(&f, &o), 0);
	for (unsigned i = 0; i < 20; i++) {
		fx_fill(w, 8192, i);
		fx_rw_cmd(&c, nvme_cmd_write, f.nsid, i * 16, 8192 / f.lbs, w, 8192);
		assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
		fx_rw_cmd(&c, nvme_cmd_read, f.nsid, i * 16, 8192 / f.lbs, r, 8192);
		assert_int_equal(fx_nvme(&f, f.ng, NVME_URING_CMD_IO, &c, NULL), 0);
		assert_memory_equal(w, r, 8192);
	}
	/* the block device polls too */
	struct io_uring_sqe *sqe = ucmd_get_sqe(&f.ring);
	struct io_uring_cqe *cqe;
	ucmd_prep_read(sqe, f.bdev, r, 8192, 0);
	assert_int_equal(ucmd_submit_and_wait(&f.ring, 1), 1);
	assert_int_equal(ucmd_wait_cqe(&f.ring, &cqe), 0);
	assert_int_equal(cqe->res, 8192);
	ucmd_cqe_seen(&f.ring, cqe);
	fx_teardown(&f);
	free(w);
	free(r);
}

static void test_iopoll_inline(void **state)
{
	(void)state;
	iopoll_run(UCMD_CTRL_INLINE, 1);
}

static void test_iopoll_thread(void **state)
{
	(void)state;
	iopoll_run(UCMD_CTRL_THREAD, 1);
}

/* No polled queues: IOPOLL still works, completions come through interrupts. */
static void test_iopoll_no_poll_queues(void **state)
{
	(void)state;
	iopoll_run(UCMD_CTRL_THREAD, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_iopoll_inline),
		cmocka_unit_test(test_iopoll_thread),
		cmocka_unit_test(test_iopoll_no_poll_queues),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
