/* SPDX-License-Identifier: MIT */
/*
 * A client ring's insides, shared by ring.c (set-up, the passes, teardown),
 * ring_pool.c (the workers that make the passes), ring_reg.c
 * (registration), and by their tests. The ring is an engine ring whose
 * memory is the memfd the client maps: the engine takes the client's SQEs
 * from it and posts the client's CQEs into it itself, for the client's
 * task (its fds, its mm, its credentials).
 */
#ifndef UCMD_SERVER_RING_H
#define UCMD_SERVER_RING_H

#include <sys/types.h>

#include "core/core.h"
#include "ring/ring.h"
#include "server/server.h"

struct srv_ring {
	struct srv_client *c;
	uint32_t id;
	unsigned flags;			/* the client's IORING_SETUP_* */
	struct ucmd_ring er;		/* the engine ring, in the shared memory */
	struct ucmd_ctx *ctx;		/* its context (er's) */
	bool er_live;
	struct ucmdd_ring_ctl *ctl;	/* in the shared memory, after the SQEs */
	int sq_efd, cq_efd, owner_efd;
	int user_efd;			/* IORING_REGISTER_EVENTFD's, -1: none */
	unsigned idle_ms;
	bool spin;			/* polls idle_ms after work: SQPOLL, within the uid's budget */
	bool charged;			/* counted against the uid's rings */
	atomic_bool stop;
	/*
	 * Held by a worker for a pass and by registration: tables change
	 * between passes. Workers only try it: a ring another worker serves
	 * (or one stuck in a pass) is skipped, never waited for.
	 */
	pthread_mutex_t lock;
	/* the poll after work (ring_pool.c), under lock: until when, since when */
	uint64_t idle_until, last_work;
	const void *last_worker;	/* the worker that did its last work: it polls on */
	/*
	 * A worker's look before it sleeps found the ring locked: whoever
	 * holds it looks again after its pass (ring_pool.c serve).
	 */
	atomic_bool relook;
	/* what the last pass found, under lock */
	unsigned nr_reqs, nr_iopoll;
	unsigned sq_taken;		/* the SQ head after the last pass (srv_ring_pending) */
	/*
	 * How far the client submitted: the SQ tail, or for a ring whose
	 * client submits by moving sq_limit (no SQPOLL, no UCMDD_QI_SUBMIT_COPY)
	 * that limit. What a polling worker compares sq_taken with.
	 */
	const unsigned *sq_sub;
	unsigned cq_told;		/* the CQ tail the client was last woken for */
	bool overflowing;
	/* the read bounce area (bounce_area.c), set under lock; NULL: none */
	struct srv_bounce *bounce;
	unsigned bounce_told;		/* its records the client was last woken for */
	bool bounce_waiting;		/* records wait for the client */
	bool taskrun;			/* IORING_SQ_TASKRUN is set (a TASKRUN_FLAG ring's) */
	bool exiting;			/* ring_exit: the client's records are copied at once */
	/*
	 * The last pass did nothing and left nothing that could need one:
	 * no request alive, no overflow, no record waiting. Until the client
	 * publishes SQEs (srv_ring_pending) or another thread pokes it
	 * (srv_ring_unlock), a polling worker only looks at the SQ tail
	 * (srv_ring_quiet). Written under lock, read without.
	 */
	bool quiet;
	atomic_bool poked;
	unsigned long passes;		/* full passes made (statistics, tests), under lock */
	/* the memfd's identity: a relay ring names the ring it serves by it */
	dev_t mem_dev;
	ino_t mem_ino;
	/* UCMDD_QI_RELAY: the shared ring its leftover CQEs go to (ring_relay.c) */
	bool relay;
	dev_t relay_dev;
	ino_t relay_ino;
};

/* What a ring asks of a worker that found nothing to do in it (srv_ring_idle). */
enum srv_idle {
	/* in the order a worker serving several rings heeds them: the most wins */
	SRV_IDLE_SLEEP,		/* nothing: sleep unless another ring asks more */
	SRV_IDLE_NAP,		/* SQPOLL poll, CQEs unreaped: look again after a nap */
	SRV_IDLE_BUSY,		/* within SRV_BUSY_POLL_US after work: look again soon, unless crowded */
	SRV_IDLE_POLL,		/* SQPOLL within its budget: look again soon */
	SRV_IDLE_IOPOLL,	/* polled requests in flight: complete only by looking */
};

/*
 * For the workers (ring_pool.c). srv_ring_serve: one pass under r->lock
 * (the caller's), acting as the ring's client; how much it did.
 * srv_ring_idle: what the ring asks when it had nothing to do.
 * srv_ring_woken: a worker woke from a sleep (a SQPOLL ring polls again).
 * srv_ring_need_wakeup: IORING_SQ_NEED_WAKEUP on or off.
 * srv_ring_sleep_ms: how long a worker may sleep for this ring (-1: until
 * a wake-up). srv_ring_done: the ring stops (its client or the daemon).
 * srv_ring_pending: SQEs published and not yet taken (a hint, no lock).
 * srv_ring_quiet: a pass would find nothing to do unless the client
 * published SQEs since the last (no lock; stale only towards a pass).
 * srv_ring_unlock: for a thread other than a worker that held r->lock (a
 * worker going to sleep skips a ring it finds locked): wakes a sleeping
 * worker to look at the ring.
 */
unsigned srv_ring_serve(struct srv_ring *r, uint64_t now_us);
enum srv_idle srv_ring_idle(const struct srv_ring *r, uint64_t now_us);
void srv_ring_woken(struct srv_ring *r, uint64_t now_us);
void srv_ring_need_wakeup(struct srv_ring *r, bool on);
int srv_ring_sleep_ms(const struct srv_ring *r);
bool srv_ring_done(const struct srv_ring *r);
bool srv_ring_pending(const struct srv_ring *r);
bool srv_ring_quiet(const struct srv_ring *r);
void srv_ring_unlock(struct srv_ring *r);
uint64_t srv_now_us(void);

/*
 * The ring with this id, or NULL. The control thread (the only one that
 * registers and destroys a client's rings) may use it until it destroys it.
 */
struct srv_ring *srv_ring_get(struct srv_client *c, uint32_t id);

/*
 * ring_relay.c. srv_relay_target: whether a live ring of the daemon's has
 * the memfd fd (0, or -EBADF), its identity in *dev, *ino.
 * srv_relay_leftovers: a relay ring's end, once nothing is in flight: the
 * CQEs it holds (unreaped, overflowed) posted into the ring it serves.
 * srv_ring_post (ring.c): CQEs made elsewhere posted into r and its client
 * woken, as a pass posts them; the caller keeps r alive.
 */
int srv_relay_target(struct srv_daemon *d, int fd, dev_t *dev, ino_t *ino);
/* UCMDD_REGISTER's opcode on r, under r's lock, the caller keeping r alive (ring_reg.c) */
int srv_ring_register_on(struct srv_ring *r, const struct ucmdd_register *req, int fd_in,
			 void **payload, size_t *payload_len);
void srv_relay_leftovers(struct srv_ring *r);
void srv_ring_post(struct srv_ring *r, const struct io_uring_cqe *cqes, const uint64_t (*extra)[2],
		   unsigned nr);

#endif /* UCMD_SERVER_RING_H */
