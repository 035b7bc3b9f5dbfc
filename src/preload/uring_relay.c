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
 * a NOP with Linux's nop_flags INJECT_RESULT/CQE32 and ucmd's CQE_FLAGS
 * (dc_inject_cqe), user_data, res, flags and extra words intact: the
 * parent reaps the child's CQEs in the CQ as on Linux.
 *
 * A child that exits (exit, _exit, _Exit, syscall(SYS_exit_group)) first
 * posts every relayed request's CQE (pl_relay_exit): Linux's ring
 * outlives the task, whose requests complete into the shared CQ or end
 * -ECANCELED (io_uring_files_cancel, its io-wq's work cancelled), never
 * vanish; ours, on the child's connection, ends with the child. So its
 * requests are cancelled (IORING_ASYNC_CANCEL_ALL: what can be, a
 * TIMEOUT, work waiting for a worker, -ECANCELED), the rest (a device
 * command) waited for, all relayed, before the exit goes on; with the
 * shared SQ full, only until all have completed: the CQEs still in our
 * ring are posted into the shared one by the daemon at our connection's
 * end (UCMDD_QI_RELAY), as they are when the child dies by a signal or
 * leaves by an exit_group of its own, which the preload never sees (the
 * daemon cancels and waits then, as at any client's end).
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
#include <unistd.h>

#include <linux/io_uring.h>

#include "client/client.h"
#include "core/backend.h"
#include "preload/preload.h"

struct pl_relay {
	struct ucmd_ring *shared;	/* the maker's ring, which the CQEs go to */
	struct ucmd_ring own;		/* ours, on our connection: our memory, our fds */
	pthread_mutex_t lock;		/* our threads' submits to own */
	size_t sqe_sz, cqe_sz;
	pid_t pid;			/* the process whose relay it is (a fork's copy is not) */
	struct pl_relay *next;		/* every relay made, for the exit */
	atomic_bool exiting;		/* the exit's cancel and drain are submitted */
	bool cancel_seen;		/* the relay thread's: the exit's cancel CQE passed */
	pthread_mutex_t done_lock;
	pthread_cond_t done_cv;
	bool done;			/* the relay thread relayed its last CQE, or is gone */
};

/*
 * The exit's two SQEs on our ring: an ASYNC_CANCEL of everything, and a
 * NOP with IOSQE_IO_DRAIN, which starts once nothing else is in flight.
 * Both carry RELAY_EXIT_UD and are not relayed; the NOP's CQE is told
 * apart by flags no Linux CQE has (bit 30 without F_BUFFER, whose buffer
 * id is the only use of the high half), the cancel's as the first CQE
 * with that user_data and no flags after the exit began (a request of the
 * program's with the very same user_data, completing then, would be taken
 * for it).
 */
#define RELAY_EXIT_UD UCMDD_RELAY_OWN_UD	/* never posted by the daemon at our end */
#define RELAY_EXIT_DONE (1u << 30)

/*
 * Our ring's SQ entries at least: while the program does not reap, the
 * CQEs it has not room for wait in our ring (the daemon holds twice its
 * entries), and our submits are taken until it is full. Linux's overflow
 * has no bound; ours, per relay, is this.
 */
#define RELAY_MIN_ENTRIES 256u

/* pushed once made, never taken off: no lock a fork could leave held */
static struct pl_relay *_Atomic relays;

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

static void *relay_done(struct pl_relay *rl)
{
	pthread_mutex_lock(&rl->done_lock);
	rl->done = true;
	pthread_cond_broadcast(&rl->done_cv);
	pthread_mutex_unlock(&rl->done_lock);
	return NULL;
}

/* Whether c is one of the exit's own CQEs (RELAY_EXIT_UD), not to relay. */
static bool relay_exit_cqe(struct pl_relay *rl, const struct io_uring_cqe *c, bool *last)
{
	*last = false;
	if (c->user_data != RELAY_EXIT_UD || !atomic_load(&rl->exiting))
		return false;
	if (c->flags == RELAY_EXIT_DONE)
		return *last = true;
	if (c->flags || rl->cancel_seen)
		return false;
	rl->cancel_seen = true;
	return true;
}

/*
 * The exit began and everything of ours has completed: the exit's drain
 * CQE is in our CQ, behind the one the shared SQ has no room for. The
 * process need not wait for the program to reap (its parent may be
 * waiting for it to exit): what is left in our CQ is posted into the
 * shared ring by the daemon when our connection ends (UCMDD_QI_RELAY).
 * One in our ring's overflow is not seen here: the exit then waits.
 */
static bool drained_behind(struct pl_relay *rl)
{
	const struct ucmd_cq *cq = &rl->own.cq;
	unsigned tail = __atomic_load_n(cq->ktail, __ATOMIC_ACQUIRE);
	unsigned shift = rl->cqe_sz == 32 ? 1 : 0;

	if (!atomic_load(&rl->exiting))
		return false;
	for (unsigned i = *cq->khead; i != tail; i++) {
		const struct io_uring_cqe *c = &cq->cqes[(size_t)(i & cq->ring_mask) << shift];

		if (c->user_data == RELAY_EXIT_UD && c->flags == RELAY_EXIT_DONE)
			return true;
	}
	return false;
}

/* Each CQE of our ring, into the shared one, until either is gone or the exit drained. */
static void *relay_main(void *arg)
{
	struct pl_relay *rl = arg;
	const struct timespec ms = { 0, 1000000 };

	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t c[4];
		bool last;
		int ret = ucmd_wait_cqe(&rl->own, &cqe);

		if (ret == -EINTR || ret == -ETIME || ret == -EAGAIN)
			continue;
		if (ret)
			return relay_done(rl);
		memcpy(c, cqe, rl->cqe_sz);
		if (relay_exit_cqe(rl, (const struct io_uring_cqe *)c, &last)) {
			ucmd_cqe_seen(&rl->own, cqe);
			if (last)
				return relay_done(rl);
			continue;
		}
		/*
		 * EAGAIN: the shared SQ stays full until the program reaps. Seen
		 * only once posted: a CQE of ours when we die is the daemon's to
		 * post (UCMDD_QI_RELAY), never lost.
		 */
		while ((ret = dc_inject_cqe(rl->shared, (const struct io_uring_cqe *)c)) == -EAGAIN) {
			if (drained_behind(rl))
				return relay_done(rl);
			nanosleep(&ms, NULL);
		}
		if (ret)
			return relay_done(rl);
		ucmd_cqe_seen(&rl->own, cqe);
	}
}

static struct pl_relay *relay_new(struct ucmd_ring *shared, int *err)
{
	/* the daemon clamps it to what it allows */
	struct io_uring_params p = { .flags = IORING_SETUP_CLAMP |
					      (shared->flags & (IORING_SETUP_SQE128 |
								IORING_SETUP_CQE32)) };
	unsigned entries = shared->sq.ring_entries > RELAY_MIN_ENTRIES ? shared->sq.ring_entries
									: RELAY_MIN_ENTRIES;
	struct ucmd_engine *e = pl_engine();
	struct pl_relay *rl;
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
	rl->pid = pl_pid();
	pthread_mutex_init(&rl->done_lock, NULL);
	pthread_cond_init(&rl->done_cv, NULL);
	rl->sqe_sz = (p.flags & IORING_SETUP_SQE128) ? 128 : 64;
	rl->cqe_sz = (p.flags & IORING_SETUP_CQE32) ? 32 : 16;
	pthread_mutex_init(&rl->lock, NULL);
	ret = dc_queue_init_relay(e, entries, &rl->own, &p, shared);
	if (ret) {
		free(rl);
		*err = ret;
		return NULL;
	}
	ret = pl_thread_start(relay_main, rl);
	if (ret) {
		ucmd_queue_exit(&rl->own);
		free(rl);
		*err = ret;
		return NULL;
	}
	rl->next = atomic_load(&relays);
	while (!atomic_compare_exchange_weak(&relays, &rl->next, rl))
		;
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

/* The exit's cancel and drain on one relay, then the wait for its thread to relay all. */
static void relay_exit(struct pl_relay *rl)
{
	struct io_uring_sqe *c, *d;
	bool go = true;

	if (atomic_exchange(&rl->exiting, true))
		return;	/* a second exit hook (an atexit handler's _exit): drained */
	/* held for good: the process is exiting, no submit of its may follow */
	pthread_mutex_lock(&rl->lock);
	c = ucmd_get_sqe(&rl->own);
	d = c ? ucmd_get_sqe(&rl->own) : NULL;
	if (!d) {
		go = false;	/* every submit took its SQEs: cannot happen */
	} else {
		memset(c, 0, rl->sqe_sz);
		c->opcode = IORING_OP_ASYNC_CANCEL;
		c->fd = -1;
		c->cancel_flags = IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY;
		c->user_data = RELAY_EXIT_UD;
		memset(d, 0, rl->sqe_sz);
		d->opcode = IORING_OP_NOP;
		d->fd = -1;
		d->flags = IOSQE_IO_DRAIN;
		d->rw_flags = UCMD_NOP_INJECT_RESULT | UCMD_NOP_CQE_FLAGS;
		d->addr3 = RELAY_EXIT_DONE;
		d->user_data = RELAY_EXIT_UD;
		go = ucmd_submit(&rl->own) == 2;
	}
	pthread_mutex_lock(&rl->done_lock);
	/* not submitted: the thread may never see an end; what is in flight is lost */
	while (go && !rl->done)
		pthread_cond_wait(&rl->done_cv, &rl->done_lock);
	pthread_mutex_unlock(&rl->done_lock);
}

void pl_relay_exit(void)
{
	/* the kernel's answer, not pl_pid's: a vfork child sharing our memory is not us */
	pid_t me = getpid();

	for (struct pl_relay *rl = atomic_load(&relays); rl; rl = rl->next)
		if (rl->pid == me)
			relay_exit(rl);
}
