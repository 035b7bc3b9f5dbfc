/* SPDX-License-Identifier: MIT */
/*
 * io-wq's role: requests that could not be issued without blocking
 * (-EAGAIN under NONBLOCK) or were marked IOSQE_ASYNC are issued again from
 * a worker thread in blocking mode. The request already holds its SQE
 * snapshot, so the retry sees exactly the bytes the first try saw, whatever
 * the application has written to its SQ since. Results go back to the
 * ring's owner as task work.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "core/core.h"
#include "lib/clock.h"
#include "core/provider_done.h"

#define IOWQ_MAX_WORKERS 4

struct ucmd_iowq {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ucmd_kiocb *head, *tail;
	/* what each worker issues now, for cancel's -EALREADY; under lock */
	struct ucmd_kiocb *running[IOWQ_MAX_WORKERS];
	pthread_t threads[IOWQ_MAX_WORKERS];
	unsigned nr_workers, nr_idle;
	bool stop;
};

/* The owner puts a request the worker issued on an IOPOLL ring on its list. */
static void iowq_iopoll_issued_tw(struct ucmd_tw_node *node)
{
	struct ucmd_kiocb *req = (struct ucmd_kiocb *)((char *)node - offsetof(struct ucmd_kiocb, tw));
	struct ucmd_ctx *ctx = req->ctx;

	req->next = ctx->iopoll_list;
	ctx->iopoll_list = req;
	ctx->nr_iopoll++;
	if (ctx->flags & IORING_SETUP_HYBRID_IOPOLL)
		req->iopoll_start = ktime_get_ns();
}

static void iowq_run_one(struct ucmd_iowq *wq, struct ucmd_kiocb *req, int slot)
{
	/* req may be completed and reused once handed back: keep what we need */
	struct ucmd_ctx *ctx = req->ctx;
	int ret;

	for (;;) {
		ret = io_req_issue_blocking(req);
		if (ret != -EAGAIN)
			break;
		/* Blocking mode never leaks -EAGAIN: wait for resources to free. */
		struct timespec ts = { 0, 50 * 1000 };
		nanosleep(&ts, NULL);
	}
	/* no longer ours to be found by a cancel before it is handed back */
	if (slot >= 0) {
		pthread_mutex_lock(&wq->lock);
		wq->running[slot] = NULL;
		pthread_mutex_unlock(&wq->lock);
	}
	if (ctx->flags & IORING_SETUP_IOPOLL) {
		/*
		 * On a polled ring only the poller completes requests, and only
		 * those on its list: put it there whether it finished here (marked
		 * done) or is still with the provider.
		 */
		if (ret != -EIOCBQUEUED)
			io_req_provider_done(req);
		io_req_task_work_add(req, iowq_iopoll_issued_tw);
	} else if (ret != -EIOCBQUEUED) {
		io_req_provider_done(req);
	}
	atomic_fetch_sub(&ctx->async_inflight, 1);
}

static void *iowq_worker(void *arg)
{
	struct ucmd_iowq *wq = arg;
	int slot = -1;

	pthread_mutex_lock(&wq->lock);
	for (int i = 0; i < IOWQ_MAX_WORKERS && slot < 0; i++)
		if (i < (int)wq->nr_workers && pthread_equal(wq->threads[i], pthread_self()))
			slot = i;
	for (;;) {
		while (!wq->head && !wq->stop) {
			wq->nr_idle++;
			pthread_cond_wait(&wq->cond, &wq->lock);
			wq->nr_idle--;
		}
		if (!wq->head && wq->stop)
			break;
		struct ucmd_kiocb *req = wq->head;
		wq->head = req->next;
		if (!wq->head)
			wq->tail = NULL;
		req->next = NULL;
		if (slot >= 0)
			wq->running[slot] = req;
		pthread_mutex_unlock(&wq->lock);
		iowq_run_one(wq, req, slot);
		pthread_mutex_lock(&wq->lock);
	}
	pthread_mutex_unlock(&wq->lock);
	return NULL;
}

int io_wq_create(struct ucmd_ctx *ctx)
{
	struct ucmd_iowq *wq = calloc(1, sizeof(*wq));

	if (!wq)
		return -ENOMEM;
	pthread_mutex_init(&wq->lock, NULL);
	pthread_cond_init(&wq->cond, NULL);
	ctx->iowq = wq;
	return 0;
}

void io_wq_destroy(struct ucmd_ctx *ctx)
{
	struct ucmd_iowq *wq = ctx->iowq;

	if (!wq)
		return;
	pthread_mutex_lock(&wq->lock);
	wq->stop = true;
	pthread_cond_broadcast(&wq->cond);
	pthread_mutex_unlock(&wq->lock);
	for (unsigned i = 0; i < wq->nr_workers; i++)
		pthread_join(wq->threads[i], NULL);
	pthread_cond_destroy(&wq->cond);
	pthread_mutex_destroy(&wq->lock);
	free(wq);
	ctx->iowq = NULL;
}

void io_queue_iowq(struct ucmd_kiocb *req)
{
	struct ucmd_iowq *wq = req->ctx->iowq;

	atomic_fetch_add(&req->ctx->async_inflight, 1);
	req->next = NULL;
	pthread_mutex_lock(&wq->lock);
	if (wq->tail)
		wq->tail->next = req;
	else
		wq->head = req;
	wq->tail = req;
	/* Workers are created on demand, like io-wq's. */
	if (!wq->nr_idle && wq->nr_workers < IOWQ_MAX_WORKERS &&
	    pthread_create(&wq->threads[wq->nr_workers], NULL, iowq_worker, wq) == 0)
		wq->nr_workers++;
	bool no_worker = wq->nr_workers == 0;
	if (no_worker) {
		/* No thread could be started: do the blocking issue right here. */
		wq->head = wq->tail = NULL;
	}
	pthread_cond_signal(&wq->cond);
	pthread_mutex_unlock(&wq->lock);
	if (no_worker)
		iowq_run_one(wq, req, -1);
}

int io_wq_cancel(struct ucmd_ctx *ctx, bool (*match)(struct ucmd_kiocb *, void *), void *data,
		 bool all, struct ucmd_kiocb **taken, bool *running)
{
	struct ucmd_iowq *wq = ctx->iowq;
	struct ucmd_kiocb **pp, **tail = taken;
	int nr = 0;

	*taken = NULL;
	*running = false;
	if (!wq)
		return 0;
	pthread_mutex_lock(&wq->lock);
	wq->tail = NULL;
	for (pp = &wq->head; *pp && (all || !nr);) {
		struct ucmd_kiocb *req = *pp;

		if (!match(req, data)) {
			wq->tail = req;
			pp = &req->next;
			continue;
		}
		*pp = req->next;
		req->next = NULL;
		*tail = req;
		tail = &req->next;
		nr++;
	}
	/* the queue's tail is the last one left */
	while (*pp) {
		wq->tail = *pp;
		pp = &(*pp)->next;
	}
	for (int i = 0; i < IOWQ_MAX_WORKERS && (all || !nr); i++)
		if (wq->running[i] && match(wq->running[i], data))
			*running = true;
	pthread_mutex_unlock(&wq->lock);
	for (struct ucmd_kiocb *r = *taken; r; r = r->next)
		atomic_fetch_sub(&ctx->async_inflight, 1);
	return nr;
}
