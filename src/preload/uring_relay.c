/* SPDX-License-Identifier: MIT */
/*
 * A forked child's submit on a ring it inherited (one without SQPOLL or
 * SINGLE_ISSUER, with the program's own SQ). On Linux any task holding the
 * ring submits on it, the SQEs read in the submitter's memory and file
 * table, and their CQEs land in the CQ both share. The daemon's ring acts
 * in its maker's memory (its connection's): a child's SQEs run there would
 * read and write the parent's pages. So the child takes its SQEs from the
 * program's SQ (under the lock every holder takes, dc_psq_take) into a
 * ring of its own on its own connection, run in its memory with its
 * descriptors, and a thread of its relays each CQE into the shared ring as
 * a NOP with Linux's nop_flags INJECT_RESULT/CQE32 (dc_inject_cqe): the
 * parent reaps the child's CQEs in the CQ as on Linux.
 *
 * What cannot be relayed so is refused before anything is taken, EBADF
 * (docs/compat.md): SQEs naming the shared ring's registered files,
 * buffers, provided buffers or personalities, which are the maker's.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/io_uring.h>

#include "client/client.h"
#include "preload/preload.h"

struct pl_relay {
	struct ucmd_ring *shared;	/* the maker's ring, which the CQEs go to */
	struct ucmd_ring own;		/* ours, on our connection: our memory, our fds */
	pthread_mutex_t lock;		/* our threads' submits to own */
	size_t sqe_sz, cqe_sz;
};

/* what names the shared ring's registered resources, the maker's: EBADF */
static int relay_check(const struct io_uring_sqe *sqe, void *ctx)
{
	(void)ctx;
	if ((sqe->flags & (IOSQE_FIXED_FILE | IOSQE_BUFFER_SELECT)) || sqe->personality)
		return -EBADF;
	if (sqe->opcode == IORING_OP_READ_FIXED || sqe->opcode == IORING_OP_WRITE_FIXED)
		return -EBADF;
	if (sqe->opcode == IORING_OP_URING_CMD && (sqe->uring_cmd_flags & IORING_URING_CMD_FIXED))
		return -EBADF;
	return 0;
}

static int relay_take(const struct io_uring_sqe *sqe, void *ctx)
{
	struct pl_relay *rl = ctx;
	struct io_uring_sqe *d = ucmd_get_sqe(&rl->own);

	if (!d)
		return 1;	/* our SQ is full: the rest stay published */
	memcpy(d, sqe, rl->sqe_sz);
	return 0;
}

/* Each CQE of our ring, into the shared one, until either is gone. */
static void *relay_main(void *arg)
{
	struct pl_relay *rl = arg;
	const struct timespec ms = { 0, 1000000 };

	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t c[4];
		int ret = ucmd_wait_cqe(&rl->own, &cqe);

		if (ret == -EINTR || ret == -ETIME || ret == -EAGAIN)
			continue;
		if (ret)
			return NULL;
		memcpy(c, cqe, rl->cqe_sz);
		ucmd_cqe_seen(&rl->own, cqe);
		/* EAGAIN: the shared SQ stays full until the program reaps */
		while ((ret = dc_inject_cqe(rl->shared, (const struct io_uring_cqe *)c)) == -EAGAIN)
			nanosleep(&ms, NULL);
		if (ret)
			return NULL;
	}
}

static struct pl_relay *relay_new(struct ucmd_ring *shared, int *err)
{
	struct io_uring_params p = { .flags = shared->flags & (IORING_SETUP_SQE128 |
							       IORING_SETUP_CQE32) };
	struct ucmd_engine *e = pl_engine();
	struct pl_relay *rl;
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t thr;
	int ret;

	if (!e) {
		*err = -errno;
		return NULL;
	}
	rl = calloc(1, sizeof(*rl));
	if (!rl) {
		*err = -ENOMEM;
		return NULL;
	}
	rl->shared = shared;
	rl->sqe_sz = (p.flags & IORING_SETUP_SQE128) ? 128 : 64;
	rl->cqe_sz = (p.flags & IORING_SETUP_CQE32) ? 32 : 16;
	pthread_mutex_init(&rl->lock, NULL);
	ret = dc_queue_init(e, shared->sq.ring_entries, &rl->own, &p);
	if (ret) {
		free(rl);
		*err = ret;
		return NULL;
	}
	/* the program's handlers never run on our thread; SIGSYS and faults stay deliverable */
	sigfillset(&all);
	sigdelset(&all, SIGSYS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&thr, &at, relay_main, rl);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		ucmd_queue_exit(&rl->own);
		free(rl);
		*err = -ret;
		return NULL;
	}
	return rl;
}

long pl_relay_submit(struct ucmd_ring *shared, struct pl_relay *_Atomic *slot, unsigned to_submit)
{
	struct pl_relay *rl = atomic_load(slot), *none = NULL;
	int n, ret;

	if (!rl) {
		rl = relay_new(shared, &ret);
		if (!rl)
			return ret;
		/* two threads made one each: the loser's stays idle (its thread waits on it) */
		if (!atomic_compare_exchange_strong(slot, &none, rl))
			rl = none;
	}
	pthread_mutex_lock(&rl->lock);
	n = dc_psq_take(shared, to_submit, relay_check, relay_take, rl);
	if (n > 0) {
		ret = ucmd_submit(&rl->own);
		if (ret < 0)
			n = ret;
	}
	pthread_mutex_unlock(&rl->lock);
	return n;
}
