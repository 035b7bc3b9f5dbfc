/* SPDX-License-Identifier: MIT */
/*
 * A forked child's relay ring (UCMDD_QI_RELAY): libucmd-preload runs the
 * SQEs the child takes from a ring it inherited on a ring of its own
 * connection, in its memory, and copies each CQE into the shared ring's CQ
 * itself. A child that dies with requests in flight (a signal, a raw
 * exit_group the preload never sees) copies nothing more: its ring ends as
 * any dead client's (what can be is cancelled, the rest completes), and the
 * CQEs it holds then are posted here into the shared ring, as Linux posts a
 * dead task's requests' CQEs into the ring they were submitted on; SQEs it
 * submitted that its ring never took (it held all it may while its CQEs
 * waited) end -ECANCELED, as Linux cancels what a dying task had not
 * started. The
 * shared ring is named by its memfd, which the child sent (it holds the
 * ring), and found again at the end: it may be gone by then (nothing to
 * post to, as on Linux once the last holder closed it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <linux/io_uring.h>

#include "daemon/proto.h"
#include "server/ring.h"
#include "server/server.h"

/* The live ring with this memfd, under d->lock and its client's lock (held on return). */
static struct srv_ring *find_locked(struct srv_daemon *d, dev_t dev, ino_t ino,
				    struct srv_client **holder)
{
	for (struct srv_client *c = d->clients; c; c = c->next) {
		pthread_mutex_lock(&c->lock);
		for (unsigned i = 0; i < SRV_MAX_RINGS; i++) {
			struct srv_ring *r = c->rings[i];

			if (r && !r->relay && r->mem_dev == dev && r->mem_ino == ino) {
				*holder = c;
				return r;
			}
		}
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

int srv_relay_target(struct srv_daemon *d, int fd, dev_t *dev, ino_t *ino)
{
	struct srv_client *c;
	struct stat st;
	bool found;

	if (fstat(fd, &st) < 0)
		return -EBADF;
	pthread_mutex_lock(&d->lock);
	found = find_locked(d, st.st_dev, st.st_ino, &c) != NULL;
	if (found)
		pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&d->lock);
	if (!found)
		return -EBADF;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* One CQE of r's to post, unless it is the client's own. */
static void keep(struct io_uring_cqe *out, uint64_t (*extra)[2], unsigned *n,
		 const struct io_uring_cqe *cqe, const uint64_t *words)
{
	if (cqe->user_data == UCMDD_RELAY_OWN_UD)
		return;
	out[*n] = *cqe;
	extra[*n][0] = words ? words[0] : 0;
	extra[*n][1] = words ? words[1] : 0;
	(*n)++;
}

void srv_relay_leftovers(struct srv_ring *r)
{
	struct ucmd_ctx *ctx = r->ctx;
	struct io_rings *m = &ctx->rings;
	unsigned tail = __atomic_load_n(m->cq_tail, __ATOMIC_ACQUIRE);
	/* the client's head, bounded by what the CQ holds: a client's lie posts no more */
	unsigned head = __atomic_load_n(m->cq_head, __ATOMIC_ACQUIRE);
	/* the SQ as the ring left it: the end takes no SQE */
	unsigned sq_head = ctx->cached_sq_head, untaken = io_sqring_pending(ctx);
	unsigned nr = 0, n = 0;
	struct io_uring_cqe *cqes;
	uint64_t(*extra)[2];
	struct srv_client *c;
	struct srv_ring *t;

	if (tail - head > m->cq_entries)
		head = tail - m->cq_entries;
	nr = tail - head + untaken;
	for (struct ucmd_ocqe *o = ctx->ocq_head; o; o = o->next)
		nr++;
	if (!nr)
		return;
	cqes = calloc(nr, sizeof(*cqes));
	extra = calloc(nr, sizeof(*extra));
	if (!cqes || !extra)
		goto out;	/* out of memory: lost, as the engine loses a CQE then */
	for (unsigned i = head; i != tail; i++) {
		const struct io_uring_cqe *cqe = io_rings_cqe(m, i);

		keep(cqes, extra, &n, cqe, m->cqe_shift ? (const uint64_t *)cqe->big_cqe : NULL);
	}
	for (struct ucmd_ocqe *o = ctx->ocq_head; o; o = o->next)
		keep(cqes, extra, &n, &o->cqe, o->extra);
	/*
	 * Submitted, never taken (the ring held all it may while its CQEs
	 * waited): Linux had taken them at the submit, and cancels what a
	 * dying task has not started.
	 */
	for (unsigned i = 0; i < untaken; i++) {
		unsigned pos = (sq_head + i) & m->sq_mask;
		unsigned idx = m->sq_array ? __atomic_load_n(&m->sq_array[pos], __ATOMIC_RELAXED) : pos;
		struct io_uring_cqe cqe = { .res = -ECANCELED };

		if (idx >= m->sq_entries)
			continue;	/* dropped, as Linux drops it */
		cqe.user_data = io_rings_sqe(m, idx)->user_data;
		keep(cqes, extra, &n, &cqe, NULL);
	}
	if (!n)
		goto out;
	pthread_mutex_lock(&r->c->d->lock);
	t = find_locked(r->c->d, r->relay_dev, r->relay_ino, &c);
	if (t) {
		srv_ring_post(t, cqes, (const uint64_t(*)[2])extra, n);
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_unlock(&r->c->d->lock);
out:
	free(cqes);
	free(extra);
}

/*
 * A forked child's io_uring_register on a ring it inherited
 * (UCMDD_REG_SHARED): Linux's registrations are the ring's, whoever makes
 * them. What needs nothing of the caller's memory or file table is made on
 * the ring itself: the probe, and the eventfd (sent, the child's own,
 * signalled for every CQE of the ring as it is on Linux). The rest would
 * name the child's buffers or descriptors, which the ring, acting in its
 * maker's memory and file table, cannot reach: -EOPNOTSUPP, before
 * anything is looked at.
 */
int srv_relay_register(struct srv_client *c, const struct ucmdd_register *req, int ring_fd,
		       int fd_in, void **payload, size_t *payload_len)
{
	struct srv_daemon *d = c->d;
	struct srv_client *holder;
	struct srv_ring *t;
	struct stat st;
	int ret;

	*payload = NULL;
	*payload_len = 0;
	switch (req->opcode) {
	case IORING_REGISTER_PROBE:
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC:
	case IORING_UNREGISTER_EVENTFD:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (fstat(ring_fd, &st) < 0)
		return -EBADF;
	pthread_mutex_lock(&d->lock);
	t = find_locked(d, st.st_dev, st.st_ino, &holder);
	if (t) {
		ret = srv_ring_register_on(t, req, fd_in, payload, payload_len);
		pthread_mutex_unlock(&holder->lock);
	} else {
		ret = -EBADF;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}
