/* SPDX-License-Identifier: MIT */
/*
 * The daemon backend's internals: libucmd as a client of ucmdd
 * (src/daemon/proto.h). An engine is one connection; its rings are memfds
 * the daemon created and both sides map.
 *
 *   conn.c    the control channel: one request, one reply, under a mutex
 *   engine.c  ucmd_engine_connect, the engine ops, shared buffers
 *   ring.c    queue_init/exit, enter (doorbell and completion wait), register
 */
#ifndef UCMD_CLIENT_H
#define UCMD_CLIENT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/proto.h"
#include "ucmd/ucmd.h"

/* A buffer from ucmd_buf_alloc(): a sealed memfd shared as a region. */
struct dc_buf {
	void *addr;
	size_t len;
	struct dc_buf *next;
};

/*
 * The ranges shared with the daemon (shared.c): read without a lock by
 * every submit, changed under bufs_lock. A slot with hi 0 is free.
 */
#define DC_SHARED_MAX 32
struct dc_shared {
	unsigned nr;			/* slots in use are below it */
	struct {
		uint64_t lo, hi;
	} r[DC_SHARED_MAX];
};

/* The engine's state (backend_engine_priv): the connection. */
struct dclient {
	int sock;			/* SOCK_SEQPACKET to ucmdd */
	pthread_mutex_t lock;		/* one request/reply at a time; seq */
	uint32_t seq;
	atomic_bool dead;		/* the daemon hung up or broke the protocol */
	struct ucmdd_hello hello;	/* the daemon's limits */

	pthread_mutex_t names_lock;	/* device_names' buffer */
	char *names;

	pthread_mutex_t bufs_lock;
	struct dc_buf *bufs;
	struct dc_shared shared;	/* the bufs' ranges, for the submit path */
};

/* A ring's state (ring->backend). */
struct dring {
	struct dclient *dc;
	uint32_t ring_id;
	void *mem;			/* the ring memfd, mapped */
	size_t mem_len;
	struct ucmdd_ring_ctl *ctl;
	int sq_efd;			/* doorbell: the proxy sleeps (IORING_SQ_NEED_WAKEUP) */
	int cq_efd;			/* the daemon posted CQEs while cq_waiting */
	atomic_uint waiters;		/* threads of ours waiting for CQEs */
	bool cq_futex;			/* the daemon wakes ctl->cq_futex (UCMDD_CTL_CQ_FUTEX) */
	bool sq_bell;			/* one doorbell per drain: ctl->sq_bell (UCMDD_CTL_SQ_BELL) */
	/*
	 * UCMDD_QI_SUBMIT_COPY: the program's SQ (proto.h's UCMDD_PSQ_*),
	 * copied into the ring's at submit under psq_lock (two threads may
	 * enter one ring); NULL psq_tail: none.
	 */
	pthread_mutex_t psq_lock;
	unsigned *psq_head, *psq_tail, *psq_array;
	char *psq_sqes;
	/*
	 * In the memfd (UCMDD_PSQ_XLOCK, _KHEAD): the lock a forked child
	 * sharing the ring takes too, and how far the program's SQ was
	 * copied (the program only reads its head).
	 */
	uint32_t *psq_xlock;
	unsigned *psq_khead;
	struct dc_bounce *bounce;	/* the read bounce area (bounce.c), or NULL */
};

/*
 * One request and its reply. fds (nfds, at most UCMDD_MAX_FDS_PER_MSG) go
 * with the request; the reply's payload goes to rep (at most rep_max bytes,
 * its length in *rep_len when not NULL), its fds to rfds (exactly nrfds
 * expected when the result is >= 0, else -EPROTO). Returns the reply's
 * result, or -ENOTCONN once the daemon is gone, -EPROTO for a reply that
 * breaks the protocol (the connection is then dropped: nothing after it
 * could be trusted to pair with its request).
 */
int dc_call(struct dclient *dc, uint16_t op, const void *req, size_t req_len, const int *fds,
	    unsigned nfds, void *rep, size_t rep_max, size_t *rep_len, int *rfds,
	    unsigned nrfds);
/* Mark the connection gone: every later call is -ENOTCONN. */
void dc_kill(struct dclient *dc);

/*
 * Open device `name` on daemon engine e as the client's fd number `fd`
 * (UCMDD_OPEN_FIXED), replacing what that number held: libucmd-preload
 * mirrors the program's own descriptor numbers, which SQEs name. fd or
 * -errno; -EOPNOTSUPP on an engine that is not a daemon's.
 */
int dc_open_fixed(struct ucmd_engine *e, const char *name, int flags, int fd);

/*
 * UCMDD_ADOPT: from now on the daemon acts in the memory of pidfd's
 * process (our child) for this engine. 0 or -errno.
 */
int dc_adopt(struct ucmd_engine *e, int pidfd);

extern const struct ucmd_backend daemon_backend;

/*
 * shared.c: add and del under bufs_lock (a full table keeps no more:
 * those go the recorded way); covers: [addr, addr + len) lies in one
 * range, racy but only ever slower when wrong (shared.c).
 */
void dc_shared_add(struct dc_shared *s, const void *p, size_t len);
void dc_shared_del(struct dc_shared *s, const void *p);
bool dc_shared_covers(const struct dc_shared *s, uint64_t addr, uint64_t len);

/* bounce.c: a ring's read bounce area (UCMDD_RING_BOUNCE) */
struct dc_bounce;
/* Ask the daemon for one and map it: NULL when it has none for us (reads go the old way). */
struct dc_bounce *dc_bounce_attach(struct dclient *dc, uint32_t ring_id);
void dc_bounce_detach(struct dc_bounce *b);
/*
 * Copy what the daemon completed into our buffers, say so (done), and show
 * the CQEs whose data is now in place (the CQ tail at ktail): true when
 * CQEs stay held that only the daemon can show once it sees done (it may
 * be asleep and need its doorbell).
 */
bool dc_bounce_reap(struct dc_bounce *b, unsigned *ktail);
/*
 * The SQE at SQ position pos (sqe_sz bytes) is about to be published to
 * the daemon: a write from plain memory has its data copied into the area
 * now, for the daemon to take from there, and a read into plain memory
 * that we find writeable says so (UCMDD_BOUNCE_WREC_READ); memory shared
 * with the daemon (dc_shared_covers) needs neither (linked: the SQE
 * before it in this submission links to it, it goes the old way). Callers of one ring
 * one at a time (the ring's submit lock); b may be NULL.
 */
void dc_bounce_wsubmit(struct dc_bounce *b, const struct io_uring_sqe *sqe, size_t sqe_sz,
		       unsigned pos, bool linked);

/* ring.c */
int dc_queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		  struct io_uring_params *p);
/* The same with UCMDD_QI_* flags (UCMDD_QI_SQES_AT_OFF: the supervisor's rings). */
int dc_queue_init_flags(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			struct io_uring_params *p, unsigned qi_flags);
/*
 * A forked child's ring for its submits on shared, a ring it inherited
 * (UCMDD_QI_RELAY): the CQEs it holds when it ends, its process dead with
 * requests in flight, are posted into shared's CQ by the daemon. Those with
 * user_data UCMDD_RELAY_OWN_UD are the caller's own, never posted.
 */
int dc_queue_init_relay(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			struct io_uring_params *p, const struct ucmd_ring *shared);
/*
 * A ring for a program that fills the SQ itself (libucmd-preload): with an
 * SQ of the program's own, copied at each submit (UCMDD_QI_SUBMIT_COPY),
 * unless the ring is SQPOLL or the daemon refuses the flag (-EINVAL: one
 * that predates it); else the shared SQ. p as
 * io_uring_setup(2) fills it: its sq_off is the program's SQ either way.
 */
int dc_queue_init_psq(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p);
/*
 * A ring without SQPOLL: fn(sqe, pos, ctx) for each SQE the program
 * published and has not submitted yet (to_submit at most), in the order of
 * the SQ (pos: its SQ position), whether the program's own SQ
 * (UCMDD_QI_SUBMIT_COPY; fn then runs under the ring's submit lock, so it
 * must not submit on the ring) or the ring's (a daemon that predates
 * UCMDD_QI_SUBMIT_COPY). Nothing for an SQPOLL ring.
 */
void dc_psq_each_sqe(struct ucmd_ring *ring, unsigned to_submit,
		     void (*fn)(const struct io_uring_sqe *sqe, unsigned pos, void *ctx), void *ctx);
/*
 * Asked, under the submit lock, about each SQE of the program's SQ as a
 * submission copies it (pos: its SQ position): true when the caller took
 * it, which then takes no slot of the daemon's ring.
 */
typedef bool (*dc_divert_fn)(const struct io_uring_sqe *sqe, unsigned pos, void *ctx);
/* Whether the ring copies a program's SQ of its own (UCMDD_QI_SUBMIT_COPY). */
bool dc_psq_own(struct ucmd_ring *ring);
/*
 * A forked child's submit on its maker's UCMDD_QI_SUBMIT_COPY ring, whose
 * SQEs the daemon would run in the maker's memory: the SQEs the program
 * published (to_submit at most) are taken from its SQ, which both share,
 * under the lock both take, and handed to take(sqe, ctx) to be run
 * elsewhere, in SQ order. check(sqe, ctx) sees them all first: its error
 * takes none. take returns 0 taken, 1 no room (it and the rest stay
 * published). How many were taken, -EBADF for another kind of ring.
 */
int dc_psq_take(struct ucmd_ring *ring, unsigned to_submit,
		int (*check)(const struct io_uring_sqe *sqe, void *ctx),
		int (*take)(const struct io_uring_sqe *sqe, void *ctx), void *ctx);
/*
 * Post cqe (its user_data, res, flags and a CQE32's extra words) into
 * ring's CQ: a NOP with Linux's nop_flags INJECT_RESULT (and CQE32) and
 * ucmd's UCMD_NOP_CQE_FLAGS put into the ring's SQ under the lock
 * dc_psq_take takes. 0, or -ENOTCONN
 * (the ring is gone), -EAGAIN (its SQ stays full).
 */
int dc_inject_cqe(struct ucmd_ring *ring, const struct io_uring_cqe *cqe);
/*
 * Put sqe (64 bytes: its own fields) into ring's SQ as dc_inject_cqe puts
 * its NOP: a request of the preload's own, after what was submitted
 * before. 0, -ENOTCONN, -EAGAIN.
 */
int dc_inject_sqe(struct ucmd_ring *ring, const struct io_uring_sqe *sqe);
/* In a forked child: the ring's thread lock may have been held by a thread that is not here. */
void dc_ring_forked(struct ucmd_ring *ring);
void dc_queue_exit(struct ucmd_ring *ring);
int dc_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete, unsigned flags);
/* dc_enter whose submission asks divert about each SQE (a ring with a program's SQ) */
int dc_enter_divert(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		    unsigned flags, dc_divert_fn divert, void *dctx);
/*
 * A submission from the program's own SQ (a UCMDD_QI_SUBMIT_COPY ring)
 * that may stop short, in the one walk that copies it: fn(sqe, ctx) says
 * whether an SQE may go to the daemon's ring as it is (libucmd-preload: it
 * names a device or a fixed file), under the ring's submit lock (it must
 * not enter the ring). The SQEs are copied in SQ order up to the first
 * chain (the SQEs that link to the next and the one they end at) holding
 * one fn says no to: that chain and the rest stay published in the
 * program's SQ, left tells how many of to_submit, and the enter returns
 * how many it copied at once, without its wait, for the caller to submit
 * the rest another way (dc_psq_each_sqe, dc_enter_divert) and wait then.
 * walked: the submission was reached (an error before it leaves it
 * false). On another ring (SQPOLL, the shared SQ) fn is never asked.
 * fn's answer must depend only on the SQE's opcode, fd, file_index and
 * IOSQE_FIXED_FILE (and what fn itself knows): a run of SQEs alike in
 * those is asked about once.
 */
struct dc_plain {
	bool (*fn)(const struct io_uring_sqe *sqe, void *ctx);
	void *ctx;
	unsigned left;		/* out */
	bool walked;		/* out */
};
int dc_enter_plain(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		   unsigned flags, struct dc_plain *plain);
int dc_enter_timeout_plain(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
			   unsigned flags, const struct __kernel_timespec *ts,
			   const sigset_t *sigmask, struct dc_plain *plain);
/* Post completions made elsewhere into the ring's CQ, in order (ring.c) */
int dc_post_cqes(struct ucmd_ring *ring, const struct io_uring_cqe *cqes, unsigned nr);
int dc_enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		     unsigned flags, const struct __kernel_timespec *ts, const sigset_t *sigmask);
/*
 * io_uring_register(2) as a program makes it (libucmd-preload): opcode,
 * arg (our address, read by the daemon), nr, an fd to pass along (eventfd)
 * or -1, and room for the daemon's payload (the probe).
 */
int dc_register_raw(struct ucmd_ring *ring, unsigned opcode, const void *arg, unsigned nr, int fd,
		    void *rep, size_t rep_max, size_t *rep_len);
/*
 * The same on shared, a ring this process inherited (its maker's, another
 * connection's), through e's connection (UCMDD_REG_SHARED): the probe and
 * the eventfd; -EOPNOTSUPP for the rest.
 */
int dc_register_shared(struct ucmd_engine *e, const struct ucmd_ring *shared, unsigned opcode,
		       const void *arg, unsigned nr, int fd, void *rep, size_t rep_max,
		       size_t *rep_len);
int dc_register_files(struct ucmd_ring *ring, const int *files, unsigned nr);
int dc_unregister_files(struct ucmd_ring *ring);
int dc_register_buffers(struct ucmd_ring *ring, const struct iovec *iov, unsigned nr);
int dc_unregister_buffers(struct ucmd_ring *ring);
int dc_register_personality(struct ucmd_ring *ring);
int dc_unregister_personality(struct ucmd_ring *ring, int id);
int dc_register_ring_fd(struct ucmd_ring *ring);
int dc_unregister_ring_fd(struct ucmd_ring *ring);
int dc_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files, unsigned nr);
int dc_register_files_sparse(struct ucmd_ring *ring, unsigned nr);
int dc_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr);
int dc_register_eventfd(struct ucmd_ring *ring, int fd);
int dc_unregister_eventfd(struct ucmd_ring *ring);
struct io_uring_probe *dc_get_probe_ring(struct ucmd_ring *ring);

#endif /* UCMD_CLIENT_H */
