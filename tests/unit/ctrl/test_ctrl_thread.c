/* SPDX-License-Identifier: MIT */
/* UCMD_CTRL_THREAD: one wake-up per doorbell batch, polling before sleep,
 * concurrent submitters, delayed commands (fault injection) and aborting
 * them, reset under load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <nvme/types.h>

#include "host_sim.h"
#include "lib/clock.h"

#define SC(sct, sc) ((sct) << 8 | (sc))
#define DNR 0x4000

static uint32_t open_polling(struct host *h, uint32_t poll_ns)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 4096, .store = UCMD_NS_STORE_RAM, .attach = true };

	host_default_params(&p);
	p.mode = UCMD_CTRL_THREAD;
	p.poll_ns = poll_ns;
	return host_open_ns(h, &p, &nsp);
}

static uint32_t open_threaded(struct host *h)
{
	return open_polling(h, 0);
}

static void flush_cmd(struct host *h, uint32_t nsid)
{
	struct ucmd_nvme_sqe s = { .opcode = nvme_cmd_flush, .nsid = nsid };

	assert_int_equal(host_cmd(h, 1, &s, NULL), 0);
}

/*
 * A doorbell 10 ms after the last pass: inside a 2 s polling window the
 * thread is still watching and takes it without being woken; with polling
 * off it has gone to sleep and must be woken. Either way it is one pass.
 */
static void idle_doorbell(uint32_t poll_ns, uint64_t want_wakeups, uint64_t want_hits)
{
	struct ucmd_ctrl_stats a, b;
	struct timespec gap = { 0, 10 * 1000 * 1000 };
	struct host h;
	uint32_t nsid;

	nsid = open_polling(&h, poll_ns);
	assert_int_not_equal(nsid, 0);
	flush_cmd(&h, nsid);
	nanosleep(&gap, NULL);
	ucmd_ctrl_get_stats(h.ctrl, &a);
	flush_cmd(&h, nsid);
	ucmd_ctrl_get_stats(h.ctrl, &b);
	assert_int_equal(b.wakeups - a.wakeups, want_wakeups);
	assert_int_equal(b.poll_hits - a.poll_hits, want_hits);
	host_close(&h);
}

static void test_poll_window(void **state)
{
	(void)state;
	idle_doorbell(2000000000u, 1, 1);
}

static void test_no_poll(void **state)
{
	(void)state;
	idle_doorbell(UCMD_CTRL_NO_POLL, 1, 0);
}

/* Stopping the thread does not wait out the polling window. */
static void test_stop_while_polling(void **state)
{
	struct host h;
	uint64_t t0;

	(void)state;
	assert_int_not_equal(open_polling(&h, 4000000000u), 0);
	t0 = ktime_get_ns();
	host_close(&h);
	assert_true(ktime_get_ns() - t0 < 2000000000ull);
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
	ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 60000);
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
	ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 5);
	assert_int_equal(host_cmd(&h, 1, &s, NULL), 0);
	/* A held command dies with a controller reset, which must not hang */
	ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 60000);
	host_push(&h, 1, &s);
	host_ring(&h, 1);
	ctrl_inject_delay(h.ctrl, false, nvme_cmd_flush, 0);
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

/*
 * A DMA window that holds the controller thread, mid-pass, on one address:
 * the test can then ring a doorbell while a pass is in progress.
 */
static struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t addr;
	bool entered, open;
} gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false, false };

static void *gate_map(const struct ucmd_dma *dma, uint64_t addr, uint64_t len)
{
	(void)dma;
	(void)len;
	pthread_mutex_lock(&gate.lock);
	if (addr == gate.addr) {
		gate.entered = true;
		pthread_cond_broadcast(&gate.cond);
		while (!gate.open)
			pthread_cond_wait(&gate.cond, &gate.lock);
	}
	pthread_mutex_unlock(&gate.lock);
	return (void *)(uintptr_t)addr;
}

static const struct ucmd_dma gate_dma = { .map = gate_map };

/* Wait (bounded) until *flag is true; returns it. */
static bool gate_wait(bool *flag)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	pthread_mutex_lock(&gate.lock);
	while (!*flag && pthread_cond_timedwait(&gate.cond, &gate.lock, &ts) == 0)
		;
	bool v = *flag;
	pthread_mutex_unlock(&gate.lock);
	return v;
}

struct ringer {
	struct host *h;
	bool rang;
};

static void *ringer_fn(void *arg)
{
	struct ringer *r = arg;

	host_ring(r->h, 2);
	pthread_mutex_lock(&gate.lock);
	r->rang = true;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	return NULL;
}

/*
 * db_trap: a doorbell written while the controller is in a pass waits for
 * the pass to end, as a trapped MMIO write waits for QEMU's big lock.
 * Posted doorbells (the default) return at once.
 */
static void trapped_doorbell(bool trap)
{
	struct ucmd_ctrl_params p;
	struct ucmd_ns_params nsp = { .nsze = 4096, .store = UCMD_NS_STORE_RAM, .attach = true };
	struct ucmd_nvme_sqe rd = { .opcode = nvme_cmd_read }, fl = { .opcode = nvme_cmd_flush };
	struct ucmd_nvme_cqe cqe;
	struct ringer r;
	struct host h;
	pthread_t t;
	uint32_t nsid;
	uint8_t *buf;
	bool rang_early;

	host_default_params(&p);
	p.mode = UCMD_CTRL_THREAD;
	p.db_trap = trap;
	host_next_dma = &gate_dma;
	nsid = host_open_ns(&h, &p, &nsp);
	assert_int_not_equal(nsid, 0);
	assert_int_equal(host_create_io_queue(&h, 2, 16, true, 2), 0);
	buf = host_alloc(&h, 4096);
	pthread_mutex_lock(&gate.lock);
	gate.addr = (uintptr_t)buf;
	gate.entered = gate.open = false;
	pthread_mutex_unlock(&gate.lock);

	rd.nsid = fl.nsid = nsid;
	rd.cdw12 = 7;
	host_set_prp(&h, &rd, buf, 4096);
	host_push(&h, 1, &rd);
	host_ring(&h, 1);
	assert_true(gate_wait(&gate.entered));	/* the thread is mid-pass, held */

	host_push(&h, 2, &fl);
	r = (struct ringer){ .h = &h };
	assert_int_equal(pthread_create(&t, NULL, ringer_fn, &r), 0);
	if (trap) {
		/* give a wrong (posting) implementation time to show itself */
		usleep(50000);
		pthread_mutex_lock(&gate.lock);
		rang_early = r.rang;
		pthread_mutex_unlock(&gate.lock);
	} else {
		rang_early = gate_wait(&r.rang);
	}
	/* open the gate before any assertion: a failure must not hang */
	pthread_mutex_lock(&gate.lock);
	gate.open = true;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(rang_early, !trap);
	assert_true(r.rang);
	assert_true(host_wait(&h, 1, &cqe));
	assert_int_equal(ucmd_nvme_cqe_status(&cqe), 0);
	assert_true(host_wait(&h, 2, &cqe));
	assert_int_equal(ucmd_nvme_cqe_status(&cqe), 0);
	pthread_mutex_lock(&gate.lock);
	gate.addr = 0;
	pthread_mutex_unlock(&gate.lock);
	host_close(&h);
}

static void test_doorbell_trap(void **state)
{
	(void)state;
	trapped_doorbell(true);
}

static void test_doorbell_posted(void **state)
{
	(void)state;
	trapped_doorbell(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_one_wakeup),
		cmocka_unit_test(test_concurrent_queues),
		cmocka_unit_test(test_delay_and_abort),
		cmocka_unit_test(test_cq_full_wakes),
		cmocka_unit_test(test_doorbell_trap),
		cmocka_unit_test(test_doorbell_posted),
		cmocka_unit_test(test_poll_window),
		cmocka_unit_test(test_no_poll),
		cmocka_unit_test(test_stop_while_polling),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
