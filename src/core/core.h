/* SPDX-License-Identifier: MIT */
/*
 * Engine internals: the ring context (the kernel's io_ring_ctx) and the
 * request (io_kiocb). Only src/core and src/ring include this.
 */
#ifndef UCMD_CORE_CORE_H
#define UCMD_CORE_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "ucmd/ucmd.h"
#include "core/backend.h"
#include "core/cred.h"
#include "core/fdtable.h"
#include "core/file.h"
#include "core/iov_iter.h"
#include "core/task.h"
#include "lib/futex.h"
#include "lib/mutex.h"
#include "lib/tid.h"
#include "core/uring_cmd.h"
#include "ring/ring.h"

struct ucmd_security_chain;
struct security_setup;
struct ucmd_engine;

#define UCMD_MAX_FILES		4096
#define UCMD_MAX_FIXED_FILES	32768
#define UCMD_MAX_FIXED_BUFS	16384
#define UCMD_MAX_PERSONALITIES	64
#define UCMD_MAX_BUF_LEN	(1ull << 30)

struct ucmd_engine {
	const struct ucmd_backend *ops;	/* what runs it (core/backend.h) */
	void *priv;			/* the backend's own state */
	/* The rest is the native backend's; other backends leave it empty. */
	pthread_mutex_t lock;		/* devices */
	struct ucmd_device *devices;
	/* the table of every task that has none of its own (core/task.h) */
	struct files_struct files;
	/* files open in every table: at most UCMD_MAX_FILES (-ENFILE) */
	atomic_uint nr_files;
	_Atomic(struct ucmd_security_chain *) security;
	struct ucmd_security_chain *retired;	/* freed with the engine */
	/* What ucmd_security_setup() installed (security/security.c) */
	struct security_setup *setup;
};

/* The table t's numbers index: its own, else the engine's. */
static inline struct files_struct *task_files(struct ucmd_engine *e, const struct ucmd_task *t)
{
	return t->files ? t->files : &e->files;
}

/* Task work: a callback run by the ring's owner. */
struct ucmd_tw_node {
	struct ucmd_tw_node *next;
	void (*func)(struct ucmd_tw_node *node);
	/*
	 * Items on the remote list up to and including this one (Linux's
	 * nr_tw). Atomic because an adder reads the head it saw, which the
	 * owner may already have run and another adder reused.
	 */
	_Atomic unsigned nr_tw;
};

/* REQ_F_* */
enum {
	REQ_F_FIXED_FILE   = 1u << 0,
	REQ_F_IO_DRAIN     = 1u << 1,
	REQ_F_LINK         = 1u << 2,
	REQ_F_HARDLINK     = 1u << 3,
	REQ_F_FORCE_ASYNC  = 1u << 4,
	REQ_F_CQE_SKIP     = 1u << 6,
	REQ_F_FAIL         = 1u << 8,
	REQ_F_IOPOLL_DONE  = 1u << 9,
	REQ_F_INFLIGHT     = 1u << 10,	/* counted in ctx->inflight */
	REQ_F_NEED_CLEANUP = 1u << 12,	/* prep succeeded: def->cleanup owes a release */
	REQ_F_DRAIN_USER   = 1u << 13,	/* a chain member asked for the drain */
	REQ_F_CMD_SNAP     = 1u << 14,	/* cmd.snap holds a provider's snapshot */
	REQ_F_ARM_LTIMEOUT = 1u << 15,	/* link is a LINK_TIMEOUT to arm at issue */
	REQ_F_LTIMEOUT_ACTIVE = 1u << 16, /* that LINK_TIMEOUT is armed: disarm at completion */
	REQ_F_WAIT_SRC     = 1u << 17,	/* counted in ctx->wsrc_nr */
};

/*
 * IORING_OP_TIMEOUT and IORING_OP_LINK_TIMEOUT (timeout.c). An armed one is
 * on its ring's timer list (struct io_timer, under its lock) until the timer
 * fires it or the owner takes it off; whoever takes it off completes it.
 */
struct io_timeout {
	struct ucmd_kiocb *tnext, **tpprev;	/* timer list, under io_timer.lock */
	uint64_t deadline_ns;		/* CLOCK_MONOTONIC */
	uint32_t off;			/* TIMEOUT: CQEs to wait for (0: none) */
	uint32_t target_seq;		/* TIMEOUT: the CQ sequence that completes it */
	unsigned flags;			/* IORING_TIMEOUT_* */
	struct __kernel_timespec ts;	/* as read at prep */
	bool queued;			/* on the timer list */
	bool fired;			/* the timer took it off */
	struct ucmd_kiocb *head;	/* LINK_TIMEOUT: the request it bounds, until severed */
};

/* IORING_OP_ASYNC_CANCEL (cancel.c) */
struct io_cancel {
	uint64_t addr;			/* user_data to match */
	unsigned flags;			/* IORING_ASYNC_CANCEL_* */
	int fd;
};

/* IORING_OP_FSYNC (fsync.c) */
struct io_fsync {
	unsigned flags;			/* IORING_FSYNC_DATASYNC */
};

struct ucmd_kiocb {
	struct ucmd_ctx *ctx;
	uint8_t opcode;
	uint32_t flags;			/* REQ_F_* */
	struct ucmd_file *file;
	const struct ucmd_cred *creds;
	/*
	 * The CQE as it will be posted, laid out as struct io_uring_cqe and
	 * a CQE32's big_cqe: a batch's flush copies it into the CQ whole.
	 */
	uint64_t user_data;
	int32_t cqe_res;
	uint32_t cqe_flags;
	uint64_t big_cqe[2];
	uint64_t iopoll_start;		/* HYBRID_IOPOLL: when it went on iopoll_list */
	uint16_t buf_index;
	bool issuing;			/* ->issue on the owner's stack (provider_done.c) */
	uint32_t sq_pos;		/* the SQ head count it was taken at */
	struct ucmd_kiocb *link;	/* next request of the chain */
	struct ucmd_kiocb *next;	/* free list, defer list, iopoll list */
	struct ucmd_tw_node tw;
	/*
	 * The SQE as it was at prep: 64 or 128 bytes. Before the op union so
	 * that a uring_cmd touches the header, the snapshot and its small
	 * struct io_uring_cmd on adjacent cache lines, not the far end of
	 * the READ/WRITE state.
	 */
	struct io_uring_sqe sqe[2];
	union {
		struct io_uring_cmd cmd;
		struct ucmd_kiocb_rw rw;
		struct io_timeout timeout;
		struct io_cancel cancel;
		struct io_fsync fsync;
	};
} __attribute__((aligned(64)));

_Static_assert(offsetof(struct ucmd_kiocb, cqe_res) - offsetof(struct ucmd_kiocb, user_data) ==
			       offsetof(struct io_uring_cqe, res) &&
		       offsetof(struct ucmd_kiocb, cqe_flags) - offsetof(struct ucmd_kiocb, user_data) ==
			       offsetof(struct io_uring_cqe, flags) &&
		       offsetof(struct ucmd_kiocb, big_cqe) - offsetof(struct ucmd_kiocb, user_data) ==
			       offsetof(struct io_uring_cqe, big_cqe),
	       "a request's CQE fields must be a struct io_uring_cqe (and CQE32's extra)");

struct ucmd_ctx {
	/*
	 * Held by whoever submits / runs task work. First: every enter takes
	 * it, and at offset 0 its address is the ctx's own.
	 */
	struct mutex uring_lock;
	struct ucmd_engine *engine;
	/* whose memory the SQEs' addresses name, and who acts (core/task.h) */
	const struct ucmd_task *task;
	unsigned flags;			/* IORING_SETUP_* */
	unsigned issue_flags;		/* IO_URING_F_* implied by flags */
	struct io_rings rings;	/* the engine's view of the shared memory */
	struct ucmd_cred creds;		/* the ring creator's (SQPOLL acts as them) */
	/*
	 * Who submits (Linux checks the submitting task's credentials on a
	 * ring without SQPOLL): &creds until the process's credentials
	 * change, then a fresh read at the next submission; immutable, the
	 * old ones retired with the ring (requests in flight point at them).
	 */
	const struct ucmd_cred *sub_creds;
	unsigned long creds_gen;	/* cred_generation() sub_creds was read at */

	/*
	 * None of what makes the enter or the CQ commit take the long way:
	 * an SQPOLL or IOPOLL setup, bounds
	 * (io_ring_set_bounds), an eventfd, a TIMEOUT counting CQEs. Kept
	 * by io_ring_update_simple() wherever one of those changes; read
	 * under uring_lock.
	 */
	bool simple;
	pid_t submitter_tid;		/* IORING_SETUP_SINGLE_ISSUER */

	/*
	 * Submission side, under uring_lock: the SQ head and the dropped
	 * count are ours, stored to the ring and never read back (Linux's
	 * cached_sq_head), so that whatever the ring's owner writes there
	 * cannot make the engine take an SQE twice.
	 */
	unsigned cached_sq_head;
	unsigned sq_dropped;
	/*
	 * A ring whose memory an untrusted program shares (io_ring_set_bounds;
	 * all zero on any other ring): at most max_reqs requests alive, none
	 * taken while CQEs overflow, so that the overflow list never holds
	 * more than max_reqs; SQEs taken only up to *sq_limit, which that
	 * program writes; *sq_blocked stored, never read back.
	 */
	unsigned max_reqs;
	const uint32_t *sq_limit;
	uint32_t *sq_blocked;
	bool sq_blocked_val;		/* what *sq_blocked last said */

	/* Completion side, under uring_lock */
	unsigned cached_cq_tail;
	unsigned cq_room;		/* CQ slots known free (see cq_has_room) */
	struct ucmd_ocqe *ocq_head, *ocq_tail;	/* overflowed CQEs, never lost */
	struct ucmd_tw_node *local_tw;	/* task work queued by the owner itself */
	struct ucmd_tw_node **local_tw_tail;
	bool cq_dirty;
	/* NULL, or what stores the CQ tail the application is shown (io_ring_set_cq_publish) */
	void (*cq_publish)(void *data, unsigned *ktail, unsigned tail);
	void *cq_publish_data;

	/* Task work from other threads (lock-free stack) */
	_Atomic(struct ucmd_tw_node *) tw_list;
	/* Futex word: bumped whenever a waiter might have something to do */
	_Atomic uint32_t wake;
	atomic_int nr_waiters;
	/*
	 * IORING_SETUP_DEFER_TASKRUN: how many remote task work items the one
	 * waiter needs before waking it is worth it; IO_CQ_WAKE_INIT while it
	 * is not waiting. Waking it per item would cost a futex round trip
	 * for each completion of a batch it waits for whole.
	 */
	_Atomic unsigned cq_wait_nr;
	/* Threads inside io_req_task_work_add's remote path: exit waits for them */
	atomic_int tw_remote_adders;

	/* Requests */
	struct ucmd_kiocb *free_reqs;
	unsigned nr_reqs;		/* taken from free_reqs and not yet back */
	unsigned inflight;		/* issued, not yet completed (drain) */
	struct ucmd_kiocb *defer_head, *defer_tail;	/* IOSQE_IO_DRAIN */
	bool flushing_defer;		/* io_flush_defer is on the stack */
	/*
	 * Requests that completed inline during io_submit_sqes, posted and
	 * freed together at its end (Linux's submit_state.compl_reqs and
	 * io_submit_flush_completions): one pass over a batch instead of a
	 * full completion per request in the middle of issuing the next.
	 */
	struct ucmd_kiocb *compl_head, **compl_tail;
	unsigned compl_nr;		/* on that list */
	bool compl_defer;		/* io_submit_sqes is collecting */
	/*
	 * A submission's file cache (io_file_get_cached, submit.c): the last
	 * fd an SQE named and its file, with a reference of the cache's, so
	 * a batch of SQEs on one fd takes the table's lock once, not once
	 * each. Valid while the table's gen is gen (core/fdtable.h: a close
	 * or replace changes it); dropped at the end of every submission
	 * (io_fcache_drop), so no file outlives its close past it. Under
	 * uring_lock.
	 */
	struct {
		struct ucmd_file *file;
		const struct files_struct *files;
		int fd;
		unsigned gen;
	} fcache;
	bool drain_next;		/* a drained chain runs: hold the next one back */
	struct ucmd_kiocb *iopoll_list;
	unsigned nr_iopoll;
	/*
	 * IORING_SETUP_HYBRID_IOPOLL: the running mean of how long a polled
	 * request took (ns, 0 before the first), half of which a waiter
	 * sleeps before it starts polling (Linux's hybrid_poll_time).
	 */
	uint64_t hybrid_poll_time;

	/* Submission-time link state */
	struct ucmd_kiocb *link_head, *link_last;

	/* Registered resources */
	struct ucmd_file **fixed_files;
	unsigned nr_fixed_files;
	struct iovec *bufs;
	unsigned nr_bufs;
	struct ucmd_cred *personalities[UCMD_MAX_PERSONALITIES];
	struct ucmd_cred *retired_creds;

	/* io-wq: the worker pool for blocking retries and IOSQE_ASYNC */
	struct ucmd_iowq *iowq;
	atomic_int async_inflight;

	/* SQPOLL */
	struct ucmd_sqpoll *sqd;

	/* Timeouts (timeout.c); the counters are the owner's, under uring_lock */
	_Atomic(struct io_timer *) timer;	/* created by the first timeout's prep */
	unsigned cq_timeouts;		/* timeout CQEs posted: not counted as events */
	unsigned cq_last_tm_flush;	/* sequence at the last count check */
	bool off_timeout_used;		/* a TIMEOUT with a count was armed */

	/* register.c */
	int evfd;			/* registered eventfd (our dup), -1: none; under uring_lock */
	/*
	 * ucmdd's proxy thread owns this ring and sleeps in poll(): written
	 * whenever the owner is woken (io_wake_waiters), as Linux's
	 * TWA_SIGNAL task work interrupts its owner's poll. -1: none.
	 */
	int owner_efd;
	/*
	 * A wait source (io_uring_cmd_set_wait_src): the provider whose
	 * completions the waiter reads itself instead of sleeping until
	 * another thread posts them. Valid while wsrc_nr, the requests in
	 * flight that named it, is not 0; under uring_lock. A waiter sleeping
	 * on it (counted in nr_fd_waiters) is woken through wait_efd by
	 * whatever else wakes the ring (io_wake_waiters).
	 */
	const struct io_wait_src_ops *wsrc_ops;
	void *wsrc_arg;
	unsigned wsrc_nr;
	int wait_efd;			/* eventfd, created with the first wait source; -1 */
	atomic_int nr_fd_waiters;
	bool ring_fd_registered;
	struct ucmd_file **retired_files;	/* replaced by files_update, dropped when idle */
	unsigned nr_retired_files;
};

/* Overflowed CQE, kept in order until the CQ has room. */
struct ucmd_ocqe {
	struct ucmd_ocqe *next;
	struct io_uring_cqe cqe;
	uint64_t extra[2];
};

/* ---- opdef.c ------------------------------------------------------------- */
struct io_issue_def {
	const char *name;
	unsigned needs_file : 1;
	unsigned plug : 1;		/* worth a block plug when batched */
	unsigned iopoll : 1;		/* allowed on an IOPOLL ring */
	unsigned ioprio : 1;		/* sqe->ioprio is meaningful */
	unsigned implemented : 1;	/* Linux has it; ucmd does too */
	unsigned short async_size;	/* state kept across an -EAGAIN retry */
	int (*prep)(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
	int (*issue)(struct ucmd_kiocb *req, unsigned issue_flags);
	void (*cleanup)(struct ucmd_kiocb *req);
	/* IOPOLL: poll the provider for this request; returns completions */
	int (*iopoll_fn)(struct ucmd_kiocb *req);
};
const char *io_uring_get_opcode(uint8_t opcode);
/* Sanity of io_issue_defs, checked once per process; 0 or -EINVAL. */
int io_uring_optable_init(void);
extern const struct io_issue_def io_issue_defs[IORING_OP_LAST];

/* ---- per-op handlers ---------------------------------------------------- */
int io_nop_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
int io_nop(struct ucmd_kiocb *req, unsigned issue_flags);
void io_nop_cleanup(struct ucmd_kiocb *req);
int io_rw_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
int io_read(struct ucmd_kiocb *req, unsigned issue_flags);
int io_write(struct ucmd_kiocb *req, unsigned issue_flags);
void io_rw_cleanup(struct ucmd_kiocb *req);
int io_rw_iopoll(struct ucmd_kiocb *req);
int io_import_fixed(struct ucmd_ctx *ctx, int rw, unsigned index, uint64_t addr, size_t len,
		    struct iov_iter *iter);
/* A user iovec array whose segments all lie in registered buffer index (Linux 6.15) */
int io_import_fixed_vec(struct ucmd_ctx *ctx, int rw, unsigned index, uint64_t uvec, unsigned nr,
			struct iov_iter *iter);
int io_uring_cmd_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
int io_uring_cmd_issue(struct ucmd_kiocb *req, unsigned issue_flags);
int io_uring_cmd_iopoll(struct ucmd_kiocb *req);
int io_fsync_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
int io_fsync(struct ucmd_kiocb *req, unsigned issue_flags);
int io_timeout_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
int io_timeout(struct ucmd_kiocb *req, unsigned issue_flags);
int io_link_timeout_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
int io_link_timeout(struct ucmd_kiocb *req, unsigned issue_flags);
int io_async_cancel_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe);
int io_async_cancel(struct ucmd_kiocb *req, unsigned issue_flags);

/* ---- timeout.c: the engine side ------------------------------------------ */
struct io_timer;
/* req (its link is a LINK_TIMEOUT) is being issued: start that timer. */
void io_arm_ltimeout(struct ucmd_kiocb *req);
/* req completes: the LINK_TIMEOUT to complete with -ECANCELED, or NULL. */
struct ucmd_kiocb *io_disarm_ltimeout(struct ucmd_kiocb *req);
/* Owner, CQEs were posted: complete TIMEOUTs whose count is reached. */
void io_flush_timeouts(struct ucmd_ctx *ctx);
/* Cancel matching TIMEOUTs (-ECANCELED); returns how many. */
int io_timeout_cancel(struct ucmd_ctx *ctx, bool (*match)(struct ucmd_kiocb *, void *),
		      void *data, bool all);
/* Ring exit: TIMEOUTs complete with -ECANCELED; later the timer thread goes. */
void io_timeouts_kill(struct ucmd_ctx *ctx);
void io_timer_destroy(struct ucmd_ctx *ctx);

/* ---- register.c -------------------------------------------------------- */
/* CQEs were posted: signal the registered eventfd unless the CQ flags disable it. */
void io_eventfd_signal(struct ucmd_ctx *ctx);
/* Ring exit: drop the eventfd and the files update retired. */
void io_register_exit(struct ucmd_ctx *ctx);

/* ---- cancel.c ------------------------------------------------------------ */
/* Complete req (not ours, found on a list) with res from the owner. */
void io_req_complete_cancelled(struct ucmd_kiocb *req, int res);
/*
 * Cancel what matches: 0 (or the count with all), -EALREADY (running),
 * -ENOENT (none). skip_timeouts: do not look at TIMEOUTs (cancel by fd).
 */
int io_try_cancel(struct ucmd_ctx *ctx, bool (*match)(struct ucmd_kiocb *, void *), void *data,
		  bool all, bool skip_timeouts);

/* ---- iowq.c: cancel ------------------------------------------------------ */
/*
 * Take queued requests that match off the worker queue (they are then the
 * caller's to complete); *running tells whether one that matches is being
 * issued by a worker. Returns how many were taken (at most one unless all).
 */
int io_wq_cancel(struct ucmd_ctx *ctx, bool (*match)(struct ucmd_kiocb *, void *), void *data,
		 bool all, struct ucmd_kiocb **taken, bool *running);

/* ---- submit.c / complete.c ---------------------------------------------- */
int io_submit_sqes(struct ucmd_ctx *ctx, unsigned nr);
void io_queue_chain(struct ucmd_kiocb *head);
void io_queue_or_defer(struct ucmd_kiocb *head);
void io_req_issue(struct ucmd_kiocb *req);
int io_req_issue_blocking(struct ucmd_kiocb *req);
unsigned io_issue_flags(const struct ucmd_ctx *ctx);
/* Finish req with res (and res2): posts or overflows its CQE, runs links. */
void io_req_complete(struct ucmd_kiocb *req);
/*
 * The same from the owner, who may be collecting completions to post
 * together (submission, task work): req joins them if it can wait.
 */
void io_req_complete_or_defer(struct ucmd_kiocb *req);
/* Post and free what io_req_issue collected (see compl_head). */
void io_submit_flush_completions(struct ucmd_ctx *ctx);
void io_req_set_res(struct ucmd_kiocb *req, int32_t res, uint64_t res2);
/* Hand req's completion to the owner from any thread. */
void io_req_task_work_add(struct ucmd_kiocb *req, void (*func)(struct ucmd_tw_node *));
/* Owner: run queued task work; returns how many items ran. */
unsigned __io_run_task_work(struct ucmd_ctx *ctx);
/* Task work queued: two loads, one test. */
static inline bool io_task_work_pending(struct ucmd_ctx *ctx)
{
	return (uintptr_t)ctx->local_tw |
	       (uintptr_t)atomic_load_explicit(&ctx->tw_list, memory_order_relaxed);
}
/* Two loads when there is none, which is what a submission usually finds. */
static inline unsigned io_run_task_work(struct ucmd_ctx *ctx)
{
	if (!io_task_work_pending(ctx))
		return 0;
	return __io_run_task_work(ctx);
}
/* Set ctx->simple from what it sums up; under uring_lock (or before the ring is used). */
void io_ring_update_simple(struct ucmd_ctx *ctx);
/* Publish the CQ tail (and wake whoever waits) if CQEs were posted. */
void __io_commit_cqring(struct ucmd_ctx *ctx);
void io_wake_waiters(struct ucmd_ctx *ctx);
/* The commit of a simple ring (ctx->simple) with CQEs posted: the tail, and a waiter woken. */
static inline void io_commit_cqring_simple(struct ucmd_ctx *ctx)
{
	ctx->cq_dirty = false;
	__atomic_store_n(ctx->rings.cq_tail, ctx->cached_cq_tail, __ATOMIC_RELEASE);
	if (atomic_load_explicit(&ctx->nr_waiters, memory_order_acquire))
		io_wake_waiters(ctx);
}
static inline void io_commit_cqring(struct ucmd_ctx *ctx)
{
	if (!ctx->cq_dirty)
		return;
	/* counted TIMEOUTs, an eventfd, a CQ publisher, an SQPOLL ring: the full path */
	if (__builtin_expect(!ctx->simple, 0)) {
		__io_commit_cqring(ctx);
		return;
	}
	io_commit_cqring_simple(ctx);
}
bool io_flush_overflow(struct ucmd_ctx *ctx);
/* SQEs published (and submitted, on a ring with a submit limit) the ring has not taken. */
unsigned io_sqring_pending(const struct ucmd_ctx *ctx);
/* Post a CQE made elsewhere (extra: a CQE32's words, or NULL); under uring_lock, then commit. */
void io_post_cqe(struct ucmd_ctx *ctx, const struct io_uring_cqe *cqe, const uint64_t *extra);
/* The CQ has a free slot: the application's head read again when none was known. */
bool io_cqring_room(struct ucmd_ctx *ctx);
/*
 * Post the CQE of req, which its provider just finished inline with res
 * (and no res2): what io_req_set_res and the batched flush would do, done
 * at once. Only for a request with nothing to release (a fixed file, no
 * other flag but REQ_F_INFLIGHT, which it is not counted in) whose CQE
 * goes straight to the CQ (nothing collected or overflowed before it,
 * room in the CQ); false, having done nothing, for any other. The request
 * itself is the caller's to free.
 */
static inline bool io_post_inline(struct ucmd_ctx *ctx, struct ucmd_kiocb *req, int32_t res)
{
	struct io_uring_cqe *cqe;

	if (__builtin_expect(ctx->compl_head || ctx->ocq_head ||
			     req->flags != (REQ_F_FIXED_FILE | REQ_F_INFLIGHT), 0))
		return false;
	if (__builtin_expect(!ctx->cq_room, 0) && !io_cqring_room(ctx))
		return false;
	cqe = io_rings_cqe(&ctx->rings, ctx->cached_cq_tail++);
	ctx->cq_room--;
	cqe->user_data = req->user_data;
	cqe->res = res;
	cqe->flags = 0;
	if (ctx->rings.cqe_shift) {
		cqe->big_cqe[0] = 0;
		cqe->big_cqe[1] = 0;
	}
	ctx->cq_dirty = true;
	return true;
}
unsigned io_cqring_events(struct ucmd_ctx *ctx);
#define SQE_VALID_FLAGS                                                                  \
	(IOSQE_FIXED_FILE | IOSQE_IO_DRAIN | IOSQE_IO_LINK | IOSQE_IO_HARDLINK |         \
	 IOSQE_ASYNC | IOSQE_BUFFER_SELECT | IOSQE_CQE_SKIP_SUCCESS)
/*
 * A ring shared with a program that may write anything into it at any time
 * (ucmdd's client rings). Set before the ring's first request; the shared
 * words must outlive the ring. With max_reqs, a submission copies every
 * SQE it takes and publishes the head before issuing any (the submitter
 * waits for the head on another thread), and submits each one taken, as
 * with IORING_SETUP_SUBMIT_ALL.
 */
struct io_ring_bounds {
	/* requests alive at most, so also CQEs overflowed (0: no bound, as Linux) */
	unsigned max_reqs;
	/* shared: SQEs before this index were submitted (a ring without SQPOLL); NULL: all */
	const uint32_t *sq_limit;
	/* shared: 1 while submitted SQEs wait for the program to reap (NULL: not told) */
	uint32_t *sq_blocked;
};
void io_ring_set_bounds(struct ucmd_ring *ring, const struct io_ring_bounds *b);
/*
 * A native ring whose memory is laid out to be shared with another process:
 * tail bytes after the SQEs (ring->backend's rings.tail_off) and the SQEs
 * at sqes_at (0: right after the rings; see io_rings_create_at). No
 * SQPOLL or DEFER_TASKRUN (-EINVAL): the caller's thread is its owner,
 * which submits and reaps under uring_lock (ucmdd's client rings).
 */
int io_queue_init_shared(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			 struct io_uring_params *p, size_t tail, size_t sqes_at);
/*
 * SQEs the next io_submit_sqes could take now: published (and below the
 * limit), and room for them on a bounded ring. Under uring_lock.
 */
unsigned io_sqring_takeable(struct ucmd_ctx *ctx);

/*
 * The CQ tail is stored for the application by fn(data, ktail, tail)
 * (tail: the CQEs written), which may store less: the owner of a ring
 * whose completions need a step of the application's first holds their
 * CQEs back. Any time; NULL: the tail as it is.
 */
void io_ring_set_cq_publish(struct ucmd_ring *ring,
			    void (*fn)(void *data, unsigned *ktail, unsigned tail), void *data);
/* Set ctx->owner_efd (an eventfd, the caller's) before the ring's first request. */
void io_ring_set_owner_wake(struct ucmd_ring *ring, int efd);
/*
 * Give the ring to task (init_task until then) before its first
 * request; task outlives the ring. A task with a cred acts as it from now
 * on, whoever submits.
 */
void io_ring_set_task(struct ucmd_ring *ring, const struct ucmd_task *task);
/* fd in the table of the ring's task, with a reference (Linux's io_file_get_normal). */
static inline struct ucmd_file *io_file_get(struct ucmd_ctx *ctx, int fd)
{
	return files_fget(task_files(ctx->engine, ctx->task), fd);
}
/* io_uring_setup(2)'s flag checks: 0 or -EINVAL. */
int io_validate_params(const struct io_uring_params *p);
#define IO_CQ_WAKE_INIT	(~0u)
/* Sleep (bounded) until woken, unless remote task work is queued already. */
void io_wait_for_tw(struct ucmd_ctx *ctx, uint32_t seq, unsigned nr_wait, int timeout_ms);
int io_do_iopoll(struct ucmd_ctx *ctx);
unsigned io_owner_reap(struct ucmd_ctx *ctx);
int io_cqring_wait(struct ucmd_ctx *ctx, unsigned min_events);
/* The application side of ucmd_submit (enter.c): publish the SQ tail. */
unsigned app_flush_sq(struct ucmd_ring *ring);
/* ucmd_submit_and_wait for a backend without ->submit_and_wait: the flush, then ->enter. */
int app_submit_and_wait(struct ucmd_ring *ring, unsigned wait_nr);
int io_cqring_wait_deadline(struct ucmd_ctx *ctx, unsigned min_events, uint64_t deadline);

/*
 * The ctx whose uring_lock this thread holds (its "task context"). Set
 * and cleared on every io_uring_enter: initial-exec, so that the shared
 * library reaches it with a load from the GOT, not a call to
 * __tls_get_addr (as the uaccess guard's state).
 */
extern __thread struct ucmd_ctx *current_ctx __attribute__((tls_model("initial-exec")));
/*
 * The request whose ->issue runs on this thread's stack, from the
 * submission (not io-wq), or whose iovec array a READV/WRITEV prep reads,
 * or NULL: what a user_mm's copy is made for
 * (ucmdd's write data copied by its client, src/server/bounce_area.c).
 * Initial-exec for the same reason.
 */
extern __thread const struct ucmd_kiocb *io_issuing_req __attribute__((tls_model("initial-exec")));

static inline struct ucmd_kiocb *cmd_to_req(const struct io_uring_cmd *cmd)
{
	return (struct ucmd_kiocb *)((const char *)cmd - offsetof(struct ucmd_kiocb, cmd));
}

static inline struct ucmd_kiocb *rw_to_req(const struct ucmd_kiocb_rw *rw)
{
	return (struct ucmd_kiocb *)((const char *)rw - offsetof(struct ucmd_kiocb, rw));
}

/* Free the provider's snapshot of a uring_cmd request, if it has one. */
void io_uring_cmd_snap_release(struct ucmd_kiocb *req);

/* Read the submitter's credentials again (the generation moved); under uring_lock. */
int io_ring_refresh_creds(struct ucmd_ctx *ctx);

/* ---- iowq.c / sqpoll.c -------------------------------------------------- */
int io_wq_create(struct ucmd_ctx *ctx);
void io_wq_destroy(struct ucmd_ctx *ctx);
void io_queue_iowq(struct ucmd_kiocb *req);
int io_sq_thread_create(struct ucmd_ctx *ctx, const struct io_uring_params *p);
void io_sq_thread_stop(struct ucmd_ctx *ctx);

/*
 * ---- the native backend's operations (src/backend/native.c) -------------
 * Called only through struct ucmd_backend, which checked nothing: each
 * checks its own arguments, as the kernel's system calls do.
 */
int native_engine_init(struct ucmd_engine *e);
void native_engine_fini(struct ucmd_engine *e);
int native_open(struct ucmd_engine *e, const char *name, int flags);
int native_close(struct ucmd_engine *e, int fd);
int native_device_names(struct ucmd_engine *e, const char **names, unsigned max);
int native_disk_stat(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out);
int native_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg);
int native_regs_read(struct ucmd_engine *e, int fd, uint32_t off, void *buf, size_t len);
int native_queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p);
void native_queue_exit(struct ucmd_ring *ring);
int native_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		 unsigned flags);
int native_submit_and_wait(struct ucmd_ring *ring, unsigned wait_nr);
int native_register_files(struct ucmd_ring *ring, const int *files, unsigned nr);
int native_unregister_files(struct ucmd_ring *ring);
int native_register_buffers(struct ucmd_ring *ring, const struct iovec *iov, unsigned nr);
int native_unregister_buffers(struct ucmd_ring *ring);
int native_register_personality(struct ucmd_ring *ring);
int native_unregister_personality(struct ucmd_ring *ring, int id);
int native_register_ring_fd(struct ucmd_ring *ring);
int native_unregister_ring_fd(struct ucmd_ring *ring);
int native_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files,
				 unsigned nr);
int native_register_files_sparse(struct ucmd_ring *ring, unsigned nr);
int native_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr);
int native_register_eventfd(struct ucmd_ring *ring, int fd);
int native_unregister_eventfd(struct ucmd_ring *ring);
struct io_uring_probe *native_get_probe_ring(struct ucmd_ring *ring);
int native_enter_timeout(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
			 unsigned flags, const struct __kernel_timespec *ts,
			 const sigset_t *sigmask);
extern const struct ucmd_backend native_backend;

/* The native ring's context. */
static inline struct ucmd_ctx *ring_to_ctx(const struct ucmd_ring *ring)
{
	return (struct ucmd_ctx *)ring->backend;
}

#endif
