/* SPDX-License-Identifier: MIT */
/*
 * The block layer on its own (src/block/blk.h) with a fake multi-queue
 * driver that records how requests reach it: plug batching through
 * ->queue_rqs, multi-queue flushes, early flushes, direct dispatch, tags and
 * timeouts. Then the same batching seen from the engine, through a provider
 * whose uring_cmd sends a block request.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "block/blk.h"
#include "core/core.h"

enum { R_QUEUE_RQ, R_QUEUE_RQS, R_COMMIT };

struct rec {
	int kind;
	unsigned hctx;
	bool last;
	unsigned n;		/* R_QUEUE_RQS: requests on the list */
	struct request *rq;
};

#define MAX_RECS 4096
static struct rec recs[MAX_RECS];
static unsigned nrec;
static unsigned rqs_take = ~0u;		/* queue_rqs takes at most this many */
static bool complete_in_driver = true;
static bool fail_last;			/* queue_rq refuses a request with last=true */
static atomic_int nr_timeouts;
static struct request *timed_out;

static void reset(void)
{
	nrec = 0;
	rqs_take = ~0u;
	complete_in_driver = true;
	fail_last = false;
	atomic_store(&nr_timeouts, 0);
	timed_out = NULL;
}

static void record(int kind, unsigned hctx, bool last, unsigned n, struct request *rq)
{
	assert_true(nrec < MAX_RECS);
	recs[nrec++] = (struct rec){ kind, hctx, last, n, rq };
}

static void finish(struct request *rq)
{
	if (complete_in_driver && blk_mq_complete_request_claim(rq))
		blk_mq_end_request(rq, BLK_STS_OK);
}

static blk_status_t fake_queue_rq(struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd)
{
	record(R_QUEUE_RQ, hctx->queue_num, bd->last, 1, bd->rq);
	if (fail_last && bd->last)
		return -EIO;
	finish(bd->rq);
	return BLK_STS_OK;
}

static void fake_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	record(R_COMMIT, hctx->queue_num, true, 0, NULL);
}

static void fake_queue_rqs(struct request **rqlist)
{
	unsigned n = 0, taken = 0;

	for (struct request *rq = *rqlist; rq; rq = rq->rq_next)
		n++;
	record(R_QUEUE_RQS, (*rqlist)->hctx->queue_num, true, n, NULL);
	while (*rqlist && taken < rqs_take) {
		struct request *rq = *rqlist;
		*rqlist = rq->rq_next;
		rq->rq_next = NULL;
		taken++;
		finish(rq);
	}
}

static enum blk_eh_timer_return fake_timeout(struct request *rq)
{
	timed_out = rq;
	atomic_fetch_add(&nr_timeouts, 1);
	return BLK_EH_DONE;
}

static const struct blk_mq_ops fake_ops = {
	.queue_rq = fake_queue_rq,
	.commit_rqs = fake_commit_rqs,
	.queue_rqs = fake_queue_rqs,
	.timeout = fake_timeout,
};

static const struct blk_mq_ops fake_ops_no_rqs = {
	.queue_rq = fake_queue_rq,
	.commit_rqs = fake_commit_rqs,
};

struct fx {
	struct blk_mq_tag_set set;
	struct request_queue q;
};

static struct fx *fx_new(const struct blk_mq_ops *ops, unsigned nr_hw, unsigned depth)
{
	struct fx *f = calloc(1, sizeof(*f));

	reset();
	f->set.ops = ops;
	f->set.nr_hw_queues = nr_hw;
	f->set.queue_depth = depth;
	f->set.cmd_size = 16;
	assert_int_equal(blk_mq_alloc_tag_set(&f->set), 0);
	blk_mq_init_queue(&f->q, &f->set, f);
	return f;
}

static void fx_free(struct fx *f)
{
	blk_mq_free_tag_set(&f->set);
	free(f);
}

static struct request *rq_on(struct fx *f, unsigned hctx, uint32_t len)
{
	int err = 0;
	struct request *rq = blk_mq_alloc_request_hctx(&f->q, REQ_OP_DRV_OUT,
						       BLK_MQ_REQ_NOWAIT, hctx, &err);

	assert_non_null(rq);
	rq->data_len = len;
	return rq;
}

static unsigned count(int kind)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nrec; i++)
		n += recs[i].kind == kind;
	return n;
}

static unsigned dispatched(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nrec; i++)
		n += recs[i].kind == R_QUEUE_RQ ? 1 : recs[i].kind == R_QUEUE_RQS ? recs[i].n : 0;
	return n;
}

static void test_plug_batches_of_32(void **state)
{
	struct fx *f = fx_new(&fake_ops, 1, 256);
	struct blk_plug plug;

	(void)state;
	blk_start_plug(&plug);
	assert_ptr_equal(blk_current_plug(), &plug);
	for (unsigned i = 0; i < 100; i++) {
		blk_execute_rq_nowait(rq_on(f, 0, 4096), false);
		/* the plug holds up to 32, then leaves as one batch */
		assert_int_equal(dispatched(), (i / 32) * 32);
	}
	blk_finish_plug(&plug);
	assert_null(blk_current_plug());
	assert_int_equal(nrec, 4);
	assert_int_equal(count(R_QUEUE_RQ), 0);
	static const unsigned sizes[] = { 32, 32, 32, 4 };
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(recs[i].kind, R_QUEUE_RQS);
		assert_int_equal(recs[i].n, sizes[i]);
	}
	assert_int_equal(plug.flushes, 3);
	fx_free(f);
}

static void test_plug_two_queues(void **state)
{
	struct fx *f = fx_new(&fake_ops, 2, 256);
	struct blk_plug plug;

	(void)state;
	blk_start_plug(&plug);
	for (unsigned i = 0; i < 64; i++)
		blk_execute_rq_nowait(rq_on(f, i % 2, 4096), false);
	assert_int_equal(nrec, 0);
	/* the 65th flushes the 64 before joining */
	blk_execute_rq_nowait(rq_on(f, 0, 4096), false);
	assert_int_equal(nrec, 64);
	assert_int_equal(count(R_QUEUE_RQS), 0);
	/*
	 * queue_rq, one run per hardware queue (blk_mq_dispatch_plug_list
	 * groups the plug's requests by hctx) with the doorbell (last) only
	 * on the run's final request.
	 */
	unsigned runs = 0, seen[2] = { 0, 0 };
	for (unsigned i = 0; i < 64; i++) {
		assert_int_equal(recs[i].kind, R_QUEUE_RQ);
		seen[recs[i].hctx]++;
		bool run_ends = i == 63 || recs[i + 1].hctx != recs[i].hctx;
		assert_int_equal(recs[i].last, run_ends);
		runs += run_ends;
	}
	assert_int_equal(seen[0], 32);
	assert_int_equal(seen[1], 32);
	assert_int_equal(runs, 2);
	blk_finish_plug(&plug);
	assert_int_equal(nrec, 65);
	assert_int_equal(recs[64].kind, R_QUEUE_RQS);
	assert_int_equal(recs[64].n, 1);
	fx_free(f);
}

/*
 * The run's final request fails in queue_rq: the ones before it went with
 * last=false and still need their doorbell, which ->commit_rqs rings.
 */
static void test_commit_rqs_after_failed_last(void **state)
{
	struct fx *f = fx_new(&fake_ops_no_rqs, 1, 64);
	struct blk_plug plug;

	(void)state;
	fail_last = true;
	blk_start_plug(&plug);
	for (unsigned i = 0; i < 4; i++)
		blk_execute_rq_nowait(rq_on(f, 0, 4096), false);
	blk_finish_plug(&plug);
	assert_int_equal(nrec, 5);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(recs[i].kind, R_QUEUE_RQ);
	assert_true(recs[3].last);
	assert_int_equal(recs[4].kind, R_COMMIT);
	fx_free(f);
}

static void test_plug_large_request_flushes(void **state)
{
	struct fx *f = fx_new(&fake_ops, 1, 256);
	struct blk_plug plug;

	(void)state;
	blk_start_plug(&plug);
	blk_execute_rq_nowait(rq_on(f, 0, BLK_PLUG_FLUSH_SIZE - 1), false);
	blk_execute_rq_nowait(rq_on(f, 0, 4096), false);
	assert_int_equal(nrec, 0);
	blk_execute_rq_nowait(rq_on(f, 0, BLK_PLUG_FLUSH_SIZE), false);
	assert_int_equal(nrec, 0);
	/* the big one was last: the next add flushes the three first */
	blk_execute_rq_nowait(rq_on(f, 0, 4096), false);
	assert_int_equal(nrec, 1);
	assert_int_equal(recs[0].kind, R_QUEUE_RQS);
	assert_int_equal(recs[0].n, 3);
	assert_int_equal(plug.flushes, 1);
	blk_finish_plug(&plug);
	assert_int_equal(nrec, 2);
	assert_int_equal(recs[1].n, 1);
	fx_free(f);
}

static void test_no_plug_direct(void **state)
{
	struct fx *f = fx_new(&fake_ops, 2, 64);

	(void)state;
	assert_null(blk_current_plug());
	for (unsigned i = 0; i < 10; i++) {
		blk_execute_rq_nowait(rq_on(f, i % 2, 4096), false);
		assert_int_equal(nrec, i + 1);
		assert_int_equal(recs[i].kind, R_QUEUE_RQ);
		assert_true(recs[i].last);
		assert_int_equal(recs[i].hctx, i % 2);
	}
	fx_free(f);
}

static void test_queue_rqs_leftovers(void **state)
{
	struct fx *f = fx_new(&fake_ops, 1, 64);
	struct blk_plug plug;

	(void)state;
	rqs_take = 3;
	blk_start_plug(&plug);
	for (unsigned i = 0; i < 10; i++)
		blk_execute_rq_nowait(rq_on(f, 0, 4096), false);
	blk_finish_plug(&plug);
	assert_int_equal(recs[0].kind, R_QUEUE_RQS);
	assert_int_equal(recs[0].n, 10);
	/* the 7 it left go one by one, one doorbell at the end */
	assert_int_equal(nrec, 8);
	for (unsigned i = 1; i < 8; i++) {
		assert_int_equal(recs[i].kind, R_QUEUE_RQ);
		assert_int_equal(recs[i].last, i == 7);
	}
	/* every tag came back */
	for (unsigned i = 0; i < 64; i++)
		rq_on(f, 0, 0);
	fx_free(f);
}

static void test_no_queue_rqs(void **state)
{
	struct fx *f = fx_new(&fake_ops_no_rqs, 1, 64);
	struct blk_plug plug;

	(void)state;
	blk_start_plug(&plug);
	for (unsigned i = 0; i < 5; i++)
		blk_execute_rq_nowait(rq_on(f, 0, 4096), false);
	assert_int_equal(nrec, 0);
	blk_finish_plug(&plug);
	assert_int_equal(nrec, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(recs[i].last, i == 4);
	fx_free(f);
}

static void test_tags_nowait(void **state)
{
	struct fx *f = fx_new(&fake_ops, 1, 8);
	struct request *rqs[8];
	int err = 0;

	(void)state;
	for (unsigned i = 0; i < 8; i++) {
		rqs[i] = blk_mq_alloc_request(&f->q, 0, BLK_MQ_REQ_NOWAIT, &err);
		assert_non_null(rqs[i]);
		for (unsigned j = 0; j < i; j++)
			assert_int_not_equal(rqs[i]->tag, rqs[j]->tag);
		assert_ptr_equal(blk_mq_tag_to_rq(rqs[i]->hctx, (unsigned)rqs[i]->tag), rqs[i]);
	}
	assert_null(blk_mq_alloc_request(&f->q, 0, BLK_MQ_REQ_NOWAIT, &err));
	assert_int_equal(err, -EAGAIN);
	blk_mq_free_request(rqs[5]);
	struct request *again = blk_mq_alloc_request(&f->q, 0, BLK_MQ_REQ_NOWAIT, &err);
	assert_ptr_equal(again, rqs[5]);
	for (unsigned i = 0; i < 8; i++)
		blk_mq_free_request(rqs[i]);
	/* a depth that is not a multiple of 64 */
	fx_free(f);
	f = fx_new(&fake_ops, 1, 70);
	for (unsigned i = 0; i < 70; i++)
		assert_non_null(blk_mq_alloc_request_hctx(&f->q, 0, BLK_MQ_REQ_NOWAIT, 0, &err));
	assert_null(blk_mq_alloc_request_hctx(&f->q, 0, BLK_MQ_REQ_NOWAIT, 0, &err));
	assert_int_equal(err, -EAGAIN);
	assert_null(blk_mq_alloc_request_hctx(&f->q, 0, BLK_MQ_REQ_NOWAIT, 1, &err));
	assert_int_equal(err, -EINVAL);
	fx_free(f);
}

struct waiter {
	struct fx *f;
	struct request *rq;
	atomic_bool done;
};

static void *blocking_alloc(void *arg)
{
	struct waiter *w = arg;
	int err = 0;

	w->rq = blk_mq_alloc_request_hctx(&w->f->q, 0, 0, 0, &err);
	atomic_store(&w->done, true);
	return NULL;
}

static void test_tags_blocking(void **state)
{
	struct fx *f = fx_new(&fake_ops, 1, 4);
	struct request *rqs[4];
	struct waiter w = { .f = f };
	pthread_t t;
	int err;

	(void)state;
	for (unsigned i = 0; i < 4; i++)
		assert_non_null(rqs[i] = blk_mq_alloc_request_hctx(&f->q, 0, BLK_MQ_REQ_NOWAIT, 0, &err));
	atomic_init(&w.done, false);
	assert_int_equal(pthread_create(&t, NULL, blocking_alloc, &w), 0);
	/* wait (bounded) until the thread is registered as a tag waiter */
	for (unsigned i = 0; i < 100000 && !atomic_load(&f->set.hctxs[0].nr_tag_waiters); i++)
		sched_yield();
	assert_true(atomic_load(&f->set.hctxs[0].nr_tag_waiters) > 0);
	assert_false(atomic_load(&w.done));
	blk_mq_free_request(rqs[2]);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(atomic_load(&w.done));
	assert_ptr_equal(w.rq, rqs[2]);
	fx_free(f);
}

static void test_timeout(void **state)
{
	struct fx *f = fx_new(&fake_ops, 1, 8);
	struct request *rq = rq_on(f, 0, 512);

	(void)state;
	complete_in_driver = false;
	rq->timeout_ms = 20;
	blk_execute_rq_nowait(rq, false);
	assert_int_equal(nrec, 1);
	/* the condition, polled with a generous bound */
	for (unsigned i = 0; i < 5000 && !atomic_load(&nr_timeouts); i++) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	assert_int_equal(atomic_load(&nr_timeouts), 1);
	assert_ptr_equal(timed_out, rq);
	/* the timer claimed it: a late completion from the driver loses */
	assert_false(blk_mq_complete_request_claim(rq));
	blk_mq_free_request(rq);
	fx_free(f);
}

/* ---- the engine: a provider whose uring_cmd sends a block request ---- */

static struct fx *eng_fx;

static enum rq_end_io_ret tblk_end_io(struct request *rq, blk_status_t err)
{
	io_uring_cmd_done(rq->end_io_data, err, 0);
	return RQ_END_IO_FREE;
}

static int tblk_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	int err = 0;
	struct request *rq = blk_mq_alloc_request(&eng_fx->q, REQ_OP_DRV_IN,
		(issue_flags & IO_URING_F_NONBLOCK) ? BLK_MQ_REQ_NOWAIT : 0, &err);

	if (!rq)
		return err;
	rq->data_len = 4096;
	rq->end_io = tblk_end_io;
	rq->end_io_data = cmd;
	blk_execute_rq_nowait(rq, false);
	return -EIOCBQUEUED;
}

static const struct ucmd_file_ops tblk_fops = {
	.name = "tblk",
	.uring_cmd = tblk_uring_cmd,
};

static void eng_submit(struct ucmd_ring *ring, int fd, unsigned n, uint64_t base)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(ring);
		assert_non_null(sqe);
		ucmd_prep_uring_cmd(sqe, 1, fd);
		memset(sqe->cmd, 0, 16);
		sqe->user_data = base + i;
	}
}

static void eng_reap(struct ucmd_ring *ring, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe;
		assert_int_equal(ucmd_wait_cqe(ring, &cqe), 0);
		assert_int_equal(cqe->res, 0);
		ucmd_cqe_seen(ring, cqe);
	}
}

static void test_engine_plug(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring ring;
	struct io_uring_params p;

	(void)state;
	eng_fx = fx_new(&fake_ops, 1, 256);
	assert_int_equal(engine_add_device(e, "tblk", &tblk_fops, NULL), 0);
	int fd = ucmd_open(e, "tblk", O_RDWR);
	assert_true(fd >= 0);
	memset(&p, 0, sizeof(p));
	assert_int_equal(ucmd_queue_init_engine(e, 128, &ring, &p), 0);

	/* 100 in one submission: batches of at most 32 through queue_rqs */
	eng_submit(&ring, fd, 100, 0);
	assert_int_equal(ucmd_submit(&ring), 100);
	eng_reap(&ring, 100);
	assert_int_equal(count(R_QUEUE_RQ), 0);
	assert_int_equal(dispatched(), 100);
	for (unsigned i = 0; i < nrec; i++) {
		assert_int_equal(recs[i].kind, R_QUEUE_RQS);
		assert_true(recs[i].n <= BLK_MAX_REQUEST_COUNT);
	}
	assert_int_equal(recs[0].n, 32);
	assert_int_equal(nrec, 4);

	/* one at a time: each goes alone, with its doorbell */
	reset();
	for (unsigned i = 0; i < 10; i++) {
		eng_submit(&ring, fd, 1, 1000 + i);
		assert_int_equal(ucmd_submit(&ring), 1);
		eng_reap(&ring, 1);
	}
	assert_int_equal(nrec, 10);
	for (unsigned i = 0; i < nrec; i++) {
		assert_true(recs[i].kind == R_QUEUE_RQ || (recs[i].kind == R_QUEUE_RQS && recs[i].n == 1));
		assert_true(recs[i].last);
	}

	ucmd_queue_exit(&ring);
	ucmd_engine_free(e);
	fx_free(eng_fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plug_batches_of_32),
		cmocka_unit_test(test_plug_two_queues),
		cmocka_unit_test(test_plug_large_request_flushes),
		cmocka_unit_test(test_commit_rqs_after_failed_last),
		cmocka_unit_test(test_no_plug_direct),
		cmocka_unit_test(test_queue_rqs_leftovers),
		cmocka_unit_test(test_no_queue_rqs),
		cmocka_unit_test(test_tags_nowait),
		cmocka_unit_test(test_tags_blocking),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_engine_plug),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
