/* SPDX-License-Identifier: MIT */
/*
 * A client ring's insides, shared by ring.c (the shared memory, the proxy
 * thread) and xlate.c (one client SQE -> one engine SQE), and by their
 * tests. A client's SQE is translated into an SQE of the daemon's own engine
 * ring, which belongs to the client's task: its fds and registered files
 * are the client's numbers, which the engine resolves in the task's file
 * table; its addresses and registered buffers are the client's memory,
 * which the engine reaches through the task's mm. Each engine request
 * holds a pending slot (user_data = the slot's index) that remembers the
 * client's user_data.
 */
#ifndef UCMD_SERVER_RING_H
#define UCMD_SERVER_RING_H

#include "core/core.h"
#include "ring/ring.h"
#include "server/server.h"

struct srv_slot {
	uint64_t user_data;	/* the client's */
	bool busy;
	bool internal;		/* the proxy's own request (the exit cancel): no client CQE */
	bool skip_success;	/* IOSQE_CQE_SKIP_SUCCESS, applied here (the engine posts all) */
	unsigned next_free;
};

/* What translation needs: the SQE size, the pending slots. */
struct srv_xl {
	bool sqe128;
	struct srv_slot *slots;	/* for ASYNC_CANCEL by the client's user_data */
	unsigned nr_slots;
};

/* An ASYNC_CANCEL target no engine request has (slots are numbered from 0). */
#define SRV_UD_NONE UINT64_MAX

/*
 * Translate the snapshot csqe (64 or 128 bytes as the ring's SQEs are) into
 * esqe (same size) for the engine, filling s (its user_data and busy flag
 * are the caller's). 0, or the -errno the client's CQE carries (an opcode
 * the proxy does not pass on).
 */
int srv_xlate(struct srv_xl *x, const struct io_uring_sqe *csqe, struct io_uring_sqe *esqe,
	      struct srv_slot *s);

/* ---- ring.c: the ring and its proxy ---- */

struct srv_ocqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
	uint64_t big[2];
};

/* One SQE of a pass: its slot and, when translating failed, the errno. */
struct stage {
	unsigned slot;
	int err;
	uint8_t flags;		/* the client's IOSQE_* */
};

struct srv_ring {
	struct srv_client *c;
	uint32_t id;
	unsigned flags;			/* the client's IORING_SETUP_* */
	struct io_rings mem;		/* the shared memory, the daemon's mapping */
	struct ucmdd_ring_ctl *ctl;
	int sq_efd, cq_efd, owner_efd;
	int user_efd;			/* IORING_REGISTER_EVENTFD's, -1: none */
	unsigned idle_ms;
	bool spin;			/* polls idle_ms after work: SQPOLL, within the uid's budget */
	bool charged;			/* counted against the uid's rings */
	struct ucmd_ring er;		/* the daemon's ring on the engine */
	bool er_live;
	pthread_t thread;
	atomic_bool stop;
	/* held by the proxy for a pass and by registration: tables change between passes */
	pthread_mutex_t lock;
	struct srv_xl x;
	unsigned nr_slots;		/* usable; slot nr_slots is the exit cancel's */
	unsigned free_head, nr_pending;
	uint32_t sq_blocked;		/* what ctl->sq_blocked last said */
	/* ours, stored to the shared memory, never read back */
	unsigned sq_head, cq_tail, dropped;
	unsigned cq_room;		/* CQ slots known free */
	bool cq_dirty;
	struct srv_ocqe *ocq;		/* circular, nr_slots + 1 entries */
	unsigned ocq_first, ocq_nr;
	struct stage *stage;		/* sq entries */
	struct io_uring_sqe *stage_sqe;	/* sq entries, 128 bytes each */
};

/*
 * The ring with this id, or NULL. The control thread (the only one that
 * registers and destroys a client's rings) may use it until it destroys it.
 */
struct srv_ring *srv_ring_get(struct srv_client *c, uint32_t id);

#endif /* UCMD_SERVER_RING_H */
