/* SPDX-License-Identifier: MIT */
/*
 * The workers that serve every ring of the daemon (ring_pool.c): one per
 * CPU, each taking whichever ring has work, instead of a thread per ring.
 */
#ifndef UCMD_SERVER_RING_POOL_H
#define UCMD_SERVER_RING_POOL_H

#include "server/ring.h"

/* A pass stuck this long (a client's memory that does not answer) no longer counts as a worker. */
#define SRV_STALL_MS	20u

/*
 * Serve r from now on; the workers start with the daemon's first ring.
 * 0, -ENOMEM or -EAGAIN (no thread).
 */
int srv_pool_add(struct srv_daemon *d, struct srv_ring *r);
/*
 * Serve r no more: on return no worker is in a pass of r or will start
 * one, and none polls its eventfds. The workers stop with the last ring.
 */
void srv_pool_remove(struct srv_daemon *d, struct srv_ring *r);
/*
 * For tests only (NULL in the daemon): called at these points of a
 * worker's way to sleep and back, with its own eventfd, so that a test can
 * pause workers there and replay an interleaving.
 */
enum srv_pool_at {
	SRV_POOL_AT_LOOKED,	/* its look before sleeping made a pass of r, r's lock still held */
	SRV_POOL_AT_SLEEP,	/* about to poll */
	SRV_POOL_AT_WOKEN,	/* back from poll, not yet counted awake */
	SRV_POOL_AT_AWAKE,	/* counted awake, NEED_WAKEUP cleared on every ring */
};
typedef void srv_pool_hook_fn(enum srv_pool_at at, struct srv_ring *r, int efd);
extern _Atomic(srv_pool_hook_fn *) srv_pool_test_hook;
/* Statistics for tests: workers started so far (spares included), of the pool serving r. */
unsigned srv_pool_nr_workers(struct srv_daemon *d);
/* Statistics for tests, of the pool now serving d's rings (all 0 without one). */
struct srv_pool_stats {
	unsigned long helper_wakes;	/* a sleeping worker woken for rings with SQEs waiting */
	unsigned long empty_polls;	/* loops that found nothing and looked again (poll after work) */
	unsigned long crowded_sleeps;	/* busy polls cut short: the machine was crowded */
};
void srv_pool_stats(struct srv_daemon *d, struct srv_pool_stats *st);

#endif /* UCMD_SERVER_RING_POOL_H */
