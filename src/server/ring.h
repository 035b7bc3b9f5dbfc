/* SPDX-License-Identifier: MIT */
/*
 * A client ring's insides, shared by ring.c (the shared memory, the proxy
 * thread) and xlate.c (one client SQE -> one engine SQE), and by their
 * tests. A client's SQE is translated into an SQE of the daemon's own engine
 * ring, which belongs to the client's task: its fd through the client's fd
 * table, its registered files and buffers through the ring's tables, every
 * other address left the client's (the engine reaches it through the
 * task's mm). Each engine request holds a pending slot (user_data = the
 * slot's index) that remembers the client's user_data and what a
 * registered buffer's shadow gets back.
 */
#ifndef UCMD_SERVER_RING_H
#define UCMD_SERVER_RING_H

#include "core/core.h"
#include "ring/ring.h"
#include "server/server.h"

/* A registered buffer: the client's range, and the daemon memory behind it. */
struct srv_rbuf {
	uint64_t caddr;
	size_t len;
	void *daddr;		/* what the engine's table holds; NULL: an empty (sparse) slot */
	void *shadow;		/* our copy when the range is in no region, else NULL */
	size_t shadow_len;	/* counted in the client's shadow_bytes */
};

/* What a completion copies back to the client. */
enum srv_out {
	SRV_OUT_NONE,		/* nothing: the device only read */
	SRV_OUT_RES,		/* READ family: res bytes, when res > 0 */
	SRV_OUT_NVME,		/* NVMe read direction: data_len and metadata, when res == 0 */
};

struct srv_slot {
	uint64_t user_data;	/* the client's */
	bool busy;
	bool internal;		/* the proxy's own request (the exit cancel): no client CQE */
	bool skip_success;	/* IOSQE_CQE_SKIP_SUCCESS, applied here (the engine posts all) */
	bool fixed;		/* uses a registered buffer: unregistering waits for it */
	uint8_t out;		/* enum srv_out */
	int cfd, efd;		/* a non-fixed fd as translated (cfd -1: none), re-checked at submit */
	uint32_t cgen;		/* c->fd_gen[cfd] then: the number still names that file */
	/* a registered buffer's shadow range that a read fills */
	uint64_t fix_caddr;
	void *fix_daddr;
	size_t fix_len;
	unsigned next_free;
};

/* What translation needs: the client, the ring's tables, the pending slots. */
struct srv_xl {
	struct srv_client *c;
	bool sqe128;
	int *ftab;		/* registered files: engine fds (-1 empty), at the client's indexes */
	uint8_t *fkind;		/* their kinds (enum srv_dev_kind), taken at registration */
	unsigned nr_ftab;
	struct srv_rbuf *btab;	/* registered buffers, at the client's indexes */
	unsigned nr_btab;
	struct srv_slot *slots;	/* for ASYNC_CANCEL by the client's user_data */
	unsigned nr_slots;
};

/* An ASYNC_CANCEL target no engine request has (slots are numbered from 0). */
#define SRV_UD_NONE UINT64_MAX

/*
 * Translate the snapshot csqe (64 or 128 bytes as the ring's SQEs are) into
 * esqe (same size) for the engine, filling s (its user_data and busy flag
 * are the caller's). 0, or the -errno the client's CQE carries, after which
 * s holds nothing (srv_xlate_release need not be called). The engine never
 * gets a client address: an opcode or a uring_cmd whose memory the daemon
 * does not know fails here.
 */
int srv_xlate(struct srv_xl *x, const struct io_uring_sqe *csqe, struct io_uring_sqe *esqe,
	      struct srv_slot *s);
/*
 * The engine completed s's request with res: copy back what the device
 * wrote into a registered buffer's shadow (unless the client is dead).
 * Returns the res for the client's CQE: res, or -EFAULT when that copy
 * failed. Every other buffer the engine itself copied back, before res.
 */
int32_t srv_xlate_complete(struct srv_xl *x, struct srv_slot *s, int32_t res);
/* The request never reached the engine: release s's memory, copying nothing. */
void srv_xlate_release(struct srv_xl *x, struct srv_slot *s);

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
/* Under r->lock: wait until no request in flight uses a registered buffer, posting CQEs. */
void srv_ring_quiesce_bufs(struct srv_ring *r);

#endif /* UCMD_SERVER_RING_H */
