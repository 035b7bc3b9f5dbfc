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
#include "core/provider_done.h"

#define IOWQ_MAX_WORKERS 4

struct ucmd_iowq {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ucmd_kiocb *head, *tail;
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
}

static void iowq_run_one(struct ucmd_kiocb *req)
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

	pthread_mutex_lock(&wq->lock);
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
		pthread_mutex_unlock(&wq->lock);
		iowq_run_one(req);
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
		iowq_run_one(req);
}
