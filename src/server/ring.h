/* SPDX-License-Identifier: MIT */
/*
 * A client ring's insides, shared by ring.c (set-up, the polling thread,
 * teardown) and ring_reg.c (registration), and by their tests. The ring is
 * an engine ring whose memory is the memfd the client maps: the engine
 * takes the client's SQEs from it and posts the client's CQEs into it
 * itself, for the client's task (its fds, its mm, its credentials).
 */
#ifndef UCMD_SERVER_RING_H
#define UCMD_SERVER_RING_H

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
	pthread_t thread;
	atomic_bool stop;
	/* held by the poller for a pass and by registration: tables change between passes */
	pthread_mutex_t lock;
	/* what the last pass found, under lock */
	unsigned nr_reqs, nr_iopoll;
	unsigned cq_told;		/* the CQ tail the client was last woken for */
	bool overflowing;
	/* the read bounce area (bounce_area.c), set under lock; NULL: none */
	struct srv_bounce *bounce;
	unsigned bounce_told;		/* its records the client was last woken for */
	bool bounce_waiting;		/* records wait for the client */
	bool exiting;			/* ring_exit: the client's records are copied at once */
};

/*
 * The ring with this id, or NULL. The control thread (the only one that
 * registers and destroys a client's rings) may use it until it destroys it.
 */
struct srv_ring *srv_ring_get(struct srv_client *c, uint32_t id);

#endif /* UCMD_SERVER_RING_H */
