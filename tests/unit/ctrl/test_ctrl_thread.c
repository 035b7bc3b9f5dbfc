/* SPDX-License-Identifier: MIT */
/* UCMD_CTRL_THREAD: one wake-up per doorbell batch, concurrent submitters,
 * delayed commands (fault injection) and aborting them, reset under load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static uint32_t open_threaded(struct host *h)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 4096, .store = UCMD_NS_STORE_RAM, .attach = true };

	host_default_params(&p);
	p.mode = UCMD_CTRL_THREAD;
	return host_open_ns(h, &p, &nsp);
}

static void test_batch_one_wakeup(void **state)
{
	struct host h;
	struct ucmd_ctrl_stats a, b;
	struct ucmd_nvme_cqe cqe;
	uint32_t nsid;

	(void)state;
	nsid = open_threaded(&h);
	assert_int_not_equal(nsid, 0);
	h.q[1].auto_ack = false;
	ucmd_ctrl_get_stats(h.ctrl, &a);
	for (int i = 0; i < 32; i++) {
		struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_flush, .nsid = nsid };
		host_push(&h, 1, &s);
	}
	host_ring(&h, 1);
	for (int i = 0; i < 32; i++) {
		assert_true(host_wait(&h, 1, &cqe));
		assert_int_equal(ucmd_nvme_cqe_status(&cqe), 0);
	}
	ucmd_ctrl_get_stats(h.ctrl, &b);
	assert_int_equal(b.wakeups - a.wakeups, 1);
	assert_int_equal(b.commands - a.commands, 32);
	assert_int_equal(b.interrupts - a.interrupts, 1);
	host_ack(&h, 1);
	host_close(&h);
}

struct worker {
	struct host *h;
	uint16_t qid;
	uint32_t nsid;
	uint8_t *wb, *rb;
	int fails;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct host *h = w->h;
	uint8_t *wb = w->wb, *rb = w->rb;

	for (int i = 0; i < 200; i++) {
		struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_write, .nsid = w->nsid };
		uint64_t slba = w->qid * 1000 + (i % 100) * 8;

		fill_pattern(wb, 8 * 512, (unsigned)(i + w->qid));
		s.cdw10 = (uint32_t)slba;
		s.cdw12 = 7;
		host_set_prp(h, &s, wb, 8 * 512);
		if (host_cmd(h, w->qid, &s, NULL))
			w->fails++;
		memset(&s, 0, sizeof(s));
		s.opcode = nvme_cmd_read;
		s.nsid = w->nsid;
		s.cdw10 = (uint32_t)slba;
		s.cdw12 = 7;
		host_set_prp(h, &s, rb, 8 * 512);
		if (host_cmd(h, w->qid, &s, NULL) || memcmp(wb, rb, 8 * 512))
			w->fails++;
	}
	return NULL;
}

static void test_concurrent_queues(void **state)
{
	struct host h;
	struct worker w[2];
	pthread_t t[2];
	uint32_t nsid;

	(void)state;
	nsid = open_threaded(&h);
	assert_int_equal(host_create_io_queue(&h, 2, 32, true, 2), 0);
	/* host_alloc is not thread safe: allocate up front. 4 KiB page-aligned
	 * transfers need no PRP list, so workers allocate nothing. */
	for (int i = 0; i < 2; i++)
		w[i] = (struct worker){ .h = &h, .qid = (uint16_t)(i + 1), .nsid = nsid,
					.wb = host_alloc(&h, 4096), .rb = host_alloc(&h, 4096) };
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, worker_fn, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(w[0].fails, 0);
	assert_int_equal(w[1].fails, 0);
	host_close(&h);
}

static void test_delay_and_abort(void **state)
{
	struct host h;
	struct ucmd_nvme_cqe cqe;
	uint32_t nsid;

	(void)state;
	nsid = open_threaded(&h);
	ucmd_ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 60000);
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_flush, .nsid = nsid };
	uint16_t cid = host_push(&h, 1, &s);
	host_ring(&h, 1);
	/* Other commands still complete while the flush is held */
	uint8_t *b = host_alloc(&h, 4096);
	assert_int_equal(host_io(&h, nvme_cmd_read, nsid, 0, 8, b, 4096, NULL, 0), 0);
	assert_false(host_pop(&h, 1, &cqe));
	struct ucmd_nvme_sqe a = { .opcode = nvme_admin_abort_cmd, .cdw10 = (uint32_t)cid << 16 | 1 };
	assert_int_equal(host_cmd(&h, 0, &a, &cqe), 0);
	assert_int_equal(cqe.dw0 & 1, 0);
	assert_true(host_wait(&h, 1, &cqe));
	assert_int_equal(cqe.cid, cid);
	assert_int_equal(ucmd_nvme_cqe_status(&cqe), SC(0, 0x07));

	/* A short delay completes on its own */
	ucmd_ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 5);
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	/* A held command dies with a controller reset, which must not hang */
	ucmd_ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 60000);
	host_push(&h, 1, &s);
	host_ring(&h, 1);
	ucmd_ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 0);
	host_disable(&h);
	assert_int_equal(host_enable(&h, 16), 0);
	assert_int_equal(host_create_io_queue(&h, 1, 16, true, 1), 0);
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	host_close(&h);
}

/* CQ smaller than the SQ: the thread stops fetching and resumes when the
 * host frees CQ slots (the head doorbell must wake it). */
static void test_cq_full_wakes(void **state)
{
	struct host h;
	struct ucmd_nvme_cqe cqe;
	struct ucmd_nvme_sqe s = { .opcode = 0x05 };
	struct host_q *q = &h.q[2];
	uint32_t nsid;
	int got = 0;

	(void)state;
	nsid = open_threaded(&h);
	q->qid = 2;
	q->phase = 1;
	q->cq = host_alloc(&h, 4 * 16);
	s.dptr.prp1 = (uintptr_t)q->cq;
	s.cdw10 = 3u << 16 | 2;
	s.cdw11 = 2u << 16 | 3;
	assert_int_equal(host_cmd(&h, 0, &s, NULL), 0);
	q->sq = host_alloc(&h, 16 * 64);
	memset(&s, 0, sizeof(s));
	s.opcode = 0x01;
	s.dptr.prp1 = (uintptr_t)q->sq;
	s.cdw10 = 15u << 16 | 2;
	s.cdw11 = 2u << 16 | 1;
	assert_int_equal(host_cmd(&h, 0, &s, NULL), 0);
	q->size = 16;
	for (int i = 0; i < 12; i++) {
		struct ucmd_nvme_sqe f = { .opcode = nvme_cmd_flush, .nsid = nsid };
		host_push(&h, 2, &f);
	}
	host_ring(&h, 2);
	q->size = 4;		/* from here on the ring indexes the CQ */
	q->auto_ack = false;
	while (got < 12) {
		int n = 0;

		assert_true(host_wait(&h, 2, &cqe));
		n++;
		while (n < 3 && host_wait(&h, 2, &cqe))
			n++;
		assert_int_equal(n, 3);	/* never more than size - 1 outstanding */
		assert_false(host_pop(&h, 2, &cqe));
		got += n;
		host_ack(&h, 2);
	}
	host_close(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_one_wakeup),
		cmocka_unit_test(test_concurrent_queues),
		cmocka_unit_test(test_delay_and_abort),
		cmocka_unit_test(test_cq_full_wakes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
