/* SPDX-License-Identifier: MIT */
/*
 * Submission: fetch SQEs from the shared ring, snapshot each one, check the
 * fields common to all opcodes once (seed 008), build link chains, and issue;
 * and io_uring_enter(2) itself (native_enter), which submits, then waits.
 */
#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "block/blk.h"
#include "core/core.h"
#include "core/uring_cmd_fast.h"
#include "lib/cpu.h"
#include "lib/clock.h"
#include "security/hooks.h"

#define SQE_REQ_FLAGS                                                                    \
	(IOSQE_FIXED_FILE | IOSQE_IO_DRAIN | IOSQE_IO_LINK | IOSQE_IO_HARDLINK |         \
	 IOSQE_ASYNC | IOSQE_CQE_SKIP_SUCCESS)
_Static_assert(REQ_F_FIXED_FILE == IOSQE_FIXED_FILE && REQ_F_IO_DRAIN == IOSQE_IO_DRAIN &&
		       REQ_F_LINK == IOSQE_IO_LINK && REQ_F_HARDLINK == IOSQE_IO_HARDLINK &&
		       REQ_F_FORCE_ASYNC == IOSQE_ASYNC && REQ_F_CQE_SKIP == IOSQE_CQE_SKIP_SUCCESS,
	       "REQ_F_ SQE-flag bits must equal the IOSQE_ bits");

/* A new request for ctx's cache, not counted in nr_reqs; NULL without memory. */
static __attribute__((noinline)) struct ucmd_kiocb *io_new_req(struct ucmd_ctx *ctx)
{
	/* cache-line aligned: which lines a request touches is then fixed */
	struct ucmd_kiocb *req = aligned_alloc(64, sizeof(*req));

	if (req) {
		/* the ring's own cache: a request never serves another ring */
		req->ctx = ctx;
		req->cqe_flags = 0;
		req->big_cqe[1] = 0;
		req->issuing = false;
	}
	return req;
}

static struct ucmd_kiocb *io_alloc_req(struct ucmd_ctx *ctx)
{
	struct ucmd_kiocb *req = ctx->free_reqs;

	if (req)
		ctx->free_reqs = req->next;
	else
		req = io_new_req(ctx);
	if (req)
		ctx->nr_reqs++;
	return req;
}

/*
 * The request the next SQE will use, left at the head of the free list:
 * the common uring_cmd that completes inline (io_submit_uring_cmd) leaves
 * it there, and only a request that lives on is taken off it
 * (io_req_take_peeked). NULL without memory.
 */
static inline struct ucmd_kiocb *io_peek_req(struct ucmd_ctx *ctx)
{
	struct ucmd_kiocb *req = ctx->free_reqs;

	if (__builtin_expect(!req, 0)) {
		req = io_new_req(ctx);
		if (req) {
			req->next = NULL;
			ctx->free_reqs = req;
		}
	}
	return req;
}

/*
 * Take the peeked req off the free list: at its head unless a provider
 * freed requests meanwhile (completions it posted during the issue).
 */
static inline void io_req_take_peeked(struct ucmd_ctx *ctx, struct ucmd_kiocb *req)
{
	struct ucmd_kiocb **pp = &ctx->free_reqs;

	while (__builtin_expect(*pp != req, 0))
		pp = &(*pp)->next;
	*pp = req->next;
	ctx->nr_reqs++;
}

/* A request taken off the free list goes back (it held nothing). */
static inline void io_req_put(struct ucmd_ctx *ctx, struct ucmd_kiocb *req)
{
	req->next = ctx->free_reqs;
	ctx->free_reqs = req;
	ctx->nr_reqs--;
}

/* The submission's file cache goes (its reference with it): at the end of every submission. */
static inline void io_fcache_drop(struct ucmd_ctx *ctx)
{
	struct ucmd_file *f = ctx->fcache.file;

	if (f) {
		ctx->fcache.file = NULL;
		fput(f);
	}
}

/* The cache missed: the table's lookup, whose file the cache keeps (a reference of its own). */
static __attribute__((noinline)) struct ucmd_file *
io_fcache_fill(struct ucmd_ctx *ctx, struct files_struct *files, int fd)
{
	struct ucmd_file *f;
	unsigned gen;

	io_fcache_drop(ctx);
	f = files_fget_gen(files, fd, &gen);
	if (f) {
		get_file(f);
		ctx->fcache.file = f;
		ctx->fcache.files = files;
		ctx->fcache.fd = fd;
		ctx->fcache.gen = gen;
	}
	return f;
}

/*
 * io_file_get within a submission: the same fd as the SQE before it, and
 * no number of the table closed or replaced since that lookup (its gen,
 * read after the SQE was: a close that returned before the client
 * published this SQE is seen), is that file again with one reference
 * more and no lock. Anything else is a lookup.
 */
static inline struct ucmd_file *io_file_get_cached(struct ucmd_ctx *ctx, int fd)
{
	struct files_struct *files = task_files(ctx->engine, ctx->task);
	struct ucmd_file *f = ctx->fcache.file;

	if (f && ctx->fcache.fd == fd && ctx->fcache.files == files &&
	    files_gen(files) == ctx->fcache.gen) {
		get_file(f);
		return f;
	}
	return io_fcache_fill(ctx, files, fd);
}

static inline __attribute__((always_inline)) int
io_assign_file(struct ucmd_ctx *ctx, struct ucmd_kiocb *req, int fd)
{
	if (req->flags & REQ_F_FIXED_FILE) {
		if ((unsigned)fd >= ctx->nr_fixed_files || !ctx->fixed_files[fd])
			return -EBADF;
		/* No reference: unregistering quiesces the ring first, as Linux does. */
		req->file = ctx->fixed_files[fd];
		return 0;
	}
	req->file = io_file_get_cached(ctx, fd);
	return req->file ? 0 : -EBADF;
}

/* Checks every opcode shares, then the opcode's own prep. */
/* always inlined, as io_submit_sqe: the common SQE is checked in one test on the hot path */
static inline __attribute__((always_inline)) int
io_init_req(struct ucmd_ctx *ctx, struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	const struct io_issue_def *def;
	uint8_t sqe_flags = sqe->flags;
	int ret;

	/*
	 * Only what every path reads is set here: ctx is set when the request
	 * is allocated, cqe_res and big_cqe[0] are always set by
	 * io_req_set_res() before completion, and cqe_flags and big_cqe[1]
	 * never change from the zeros io_alloc_req() gave them.
	 */
	req->opcode = sqe->opcode;
	req->flags = 0;
	req->user_data = sqe->user_data;
	req->file = NULL;
	req->creds = ctx->sub_creds;
	req->buf_index = 0;
	req->issuing = false;
	req->link = NULL;

	/*
	 * The REQ_F_ bits for SQE flags are the IOSQE_ bits themselves (as in
	 * Linux), so one mask replaces a branch per flag on the hot path; a
	 * hard link is also a link. Taken before any check, as Linux does: an
	 * SQE rejected for its opcode or flags still keeps its place in a chain.
	 */
	req->flags = sqe_flags & SQE_REQ_FLAGS;
	/*
	 * The common SQE (a known opcode, no flag but a fixed file or a
	 * skipped success, no priority, no personality, a ring without
	 * IOPOLL) passes the checks below without a branch taken: one test
	 * says so, and only an SQE that fails it takes them one by one.
	 */
	if (__builtin_expect(!((sqe->opcode >= IORING_OP_LAST) |
			       (sqe_flags & ~(IOSQE_FIXED_FILE | IOSQE_CQE_SKIP_SUCCESS)) |
			       sqe->ioprio | sqe->personality |
			       (ctx->flags & IORING_SETUP_IOPOLL)), 1)) {
		def = &io_issue_defs[req->opcode];
		goto checked;
	}
	if (sqe_flags & IOSQE_IO_HARDLINK)
		req->flags |= REQ_F_LINK;

	if (sqe->opcode >= IORING_OP_LAST) {
		req->opcode = IORING_OP_NOP;
		return -EINVAL;
	}
	def = &io_issue_defs[req->opcode];
	if (__builtin_expect(sqe_flags & (~SQE_VALID_FLAGS | IOSQE_BUFFER_SELECT), 0)) {
		if (sqe_flags & ~SQE_VALID_FLAGS)
			return -EINVAL;
		return -EOPNOTSUPP;	/* no ucmd opcode selects buffers */
	}

	/* The rare cases share one branch: the common SQE takes none of them. */
	if (__builtin_expect((sqe->ioprio && !def->ioprio) ||
			     (!def->iopoll && (ctx->flags & IORING_SETUP_IOPOLL)), 0))
		return -EINVAL;
	if (__builtin_expect(sqe->personality, 0)) {
		unsigned id = sqe->personality;
		if (id >= UCMD_MAX_PERSONALITIES || !ctx->personalities[id])
			return -EINVAL;
		ret = security_uring_override_creds(ctx->engine, ctx->sub_creds,
						    ctx->personalities[id]);
		if (ret)
			return ret;
		req->creds = ctx->personalities[id];
	}
checked:
	if (def->needs_file) {
		ret = io_assign_file(ctx, req, sqe->fd);
		if (ret)
			return ret;
	}
	/* Linux fails an unsupported opcode in its prep, after the common checks. */
	if (__builtin_expect(!def->implemented, 0))
		return -EOPNOTSUPP;
	ret = def->prep(req, sqe);
	/*
	 * Only a prepared request has per-op state to release: one that failed
	 * before or in prep holds whatever the union had from its last use.
	 */
	if (!ret && def->cleanup)
		req->flags |= REQ_F_NEED_CLEANUP;
	return ret;
}

/*
 * A request that failed its checks: it still completes (with its error) and
 * takes the chain it belongs to down with it, as Linux does. Returns ret
 * when the chain is finished, which stops this submission.
 */
static int io_submit_fail_init(struct ucmd_ctx *ctx, struct ucmd_kiocb *req, int ret)
{
	io_req_set_res(req, ret, 0);
	if (ctx->link_head && !(ctx->link_head->flags & REQ_F_FAIL))
		io_req_set_res(ctx->link_head, -ECANCELED, 0);
	if (!(req->flags & REQ_F_LINK)) {
		struct ucmd_kiocb *head = req;
		if (ctx->link_head) {
			ctx->link_last->link = req;
			head = ctx->link_head;
			ctx->link_head = NULL;
		}
		io_queue_or_defer(head);
		return ret;
	}
	if (ctx->link_head)
		ctx->link_last->link = req;
	else
		ctx->link_head = req;
	ctx->link_last = req;
	return 0;
}

static inline __attribute__((always_inline)) void __io_req_issue(struct ucmd_kiocb *req,
								 const struct io_issue_def *def);

/* No IOPOLL (a simple ring has none), no chain or drain open. */
static inline bool io_submit_plain(const struct ucmd_ctx *ctx, bool simple)
{
	return !((!simple && (ctx->flags & IORING_SETUP_IOPOLL)) || ctx->link_head ||
		 ctx->defer_head || ctx->drain_next);
}

/* An SQE's first four bytes: its opcode, its flags and its ioprio. */
struct sqe_head {
	uint8_t opcode, flags;
	uint16_t ioprio;
};
_Static_assert(offsetof(struct io_uring_sqe, ioprio) == 2 &&
		       offsetof(struct io_uring_sqe, personality) ==
			       offsetof(struct io_uring_sqe, buf_index) + 2,
	       "the SQE's words read whole below");

static inline uint32_t sqe_word(const void *p)
{
	uint32_t w;

	memcpy(&w, p, sizeof(w));
	return w;
}

static inline uint32_t sqe_head_word(uint8_t opcode, uint8_t flags)
{
	const struct sqe_head h = { opcode, flags, 0 };

	return sqe_word(&h);
}

/*
 * The common uring_cmd from its SQE to its CQE, in one piece: a fixed
 * file, no other SQE flag, nothing reserved or optional set, a ring
 * without IOPOLL and no chain or drain open, a provider every security
 * module lets anyone use. It is what io_init_req, io_uring_cmd_prep,
 * io_uring_cmd_issue and the batched flush do for such an SQE, without
 * their table lookups, indirect calls and second pass: the opcode's prep
 * and issue are known, and a result returned at once is posted at once
 * (once nothing is waiting to be posted before it, so that CQEs keep
 * their order). Returns IO_CMD_DECLINED (0), having changed nothing,
 * for any other SQE: the general path then takes it from the start, so
 * every error is the general path's. IO_CMD_POSTED: its CQE is in the
 * CQ and nothing else was posted or collected since io_post_inline
 * checked. IO_CMD_TAKEN: it lives on, or completed some other way.
 */
enum { IO_CMD_DECLINED, IO_CMD_POSTED, IO_CMD_TAKEN };

static inline __attribute__((always_inline)) int
io_submit_uring_cmd(struct ucmd_ctx *ctx, struct ucmd_kiocb *req, const struct io_uring_sqe *sqe,
		    bool peeked)
{
	unsigned fd = (unsigned)sqe->fd;
	int (*uring_cmd)(struct io_uring_cmd *, unsigned);
	struct ucmd_file *file;
	int ret;

	/* opcode, flags and ioprio in one word: any other opcode goes at once */
	if (sqe_word(sqe) != sqe_head_word(IORING_OP_URING_CMD, IOSQE_FIXED_FILE))
		return IO_CMD_DECLINED;
	/* reserved, command flags, buf_index and personality in three */
	if (sqe->__pad1 | sqe->uring_cmd_flags | sqe_word(&sqe->buf_index))
		return IO_CMD_DECLINED;
	if (fd >= ctx->nr_fixed_files || !(file = ctx->fixed_files[fd]))
		return IO_CMD_DECLINED;
	uring_cmd = io_uring_cmd_direct(file, ctx->sub_creds);
	if (!uring_cmd)
		return IO_CMD_DECLINED;

	req->opcode = IORING_OP_URING_CMD;
	/* counted in ctx->inflight only if it outlives its issue */
	req->flags = REQ_F_FIXED_FILE | REQ_F_INFLIGHT;
	req->user_data = sqe->user_data;
	req->file = file;
	req->creds = ctx->sub_creds;
	req->buf_index = 0;
	req->link = NULL;
	io_uring_cmd_prep_fields(&req->cmd, file, sqe, 0);

	req->issuing = true;
	ret = uring_cmd(&req->cmd, ctx->issue_flags | IO_URING_F_NONBLOCK);
	/* a result (>= 0 the common one) other than "later" and "retry blocking" */
	if (__builtin_expect(ret >= 0 || (ret != -EAGAIN && ret != -EIOCBQUEUED), 1) &&
	    __builtin_expect(io_post_inline(ctx, req, ret), 1)) {
		/*
		 * Done: a peeked request is still on the free list, nothing to
		 * free (and its issuing flag is set again before its next issue)
		 */
		if (!peeked)
			io_req_put(ctx, req);
		return IO_CMD_POSTED;
	}
	req->issuing = false;
	/* it lives on: off the free list, in flight */
	if (peeked)
		io_req_take_peeked(ctx, req);
	ctx->inflight++;
	if (ret == -EAGAIN) {
		io_queue_iowq(req);
	} else if (ret != -EIOCBQUEUED) {
		io_req_set_res(req, ret, 0);
		io_req_complete_or_defer(req);
	}
	return IO_CMD_TAKEN;
}

/*
 * Any SQE but the common uring_cmd; inlined into both submission loops:
 * with two callers the compiler made it a call per SQE.
 */
static inline __attribute__((always_inline)) int
io_submit_sqe(struct ucmd_ctx *ctx, struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	int ret;

	ret = io_init_req(ctx, req, sqe);

	if (__builtin_expect(ret, 0))
		return io_submit_fail_init(ctx, req, ret);
	/* The common case, no chain and no drain anywhere: straight to issue. */
	if (__builtin_expect(!((req->flags & (REQ_F_LINK | REQ_F_IO_DRAIN)) || ctx->link_head ||
			       ctx->defer_head || ctx->drain_next), 1)) {
		req->flags |= REQ_F_INFLIGHT;
		ctx->inflight++;
		__io_req_issue(req, &io_issue_defs[req->opcode]);
		return 0;
	}
	if (ctx->link_head) {
		ctx->link_last->link = req;
		ctx->link_last = req;
		/* Linux: a drain anywhere in a chain drains the whole chain */
		if (req->flags & REQ_F_IO_DRAIN)
			ctx->link_head->flags |= REQ_F_IO_DRAIN | REQ_F_DRAIN_USER;
		if (req->flags & REQ_F_LINK)
			return 0;
		req = ctx->link_head;
		ctx->link_head = NULL;
	} else if (req->flags & REQ_F_LINK) {
		ctx->link_head = ctx->link_last = req;
		return 0;
	}
	io_queue_or_defer(req);
	return 0;
}

/*
 * SQEs published and, on a ring with a submit limit, submitted: each
 * shared index read once here and bounded, as a tail or a limit further
 * ahead than the ring is long is the application's bug.
 */
static inline __attribute__((always_inline)) unsigned
__io_sqring_entries(const struct ucmd_ctx *ctx, bool simple)
{
	const struct io_rings *r = &ctx->rings;
	unsigned head = ctx->cached_sq_head;
	/* seq_cst (a plain load on x86): pairs with a poller's NEED_WAKEUP, then this look */
	unsigned avail = __atomic_load_n(r->sq_tail, __ATOMIC_SEQ_CST) - head;

	if (avail > r->sq_entries)
		avail = r->sq_entries;
	if (!simple && __builtin_expect(ctx->sq_limit != NULL, 0)) {
		/* seq_cst: pairs with the submitter's limit store, then its sq_blocked load */
		unsigned lim = __atomic_load_n(ctx->sq_limit, __ATOMIC_SEQ_CST) - head;

		/*
		 * Behind the head or more than a ring ahead (the submitter's
		 * bug): no bound but the tail's, as a tail that far ahead is
		 * taken a ring's worth at a time; only its own SQEs are at stake.
		 */
		if (lim < avail)
			avail = lim;
	}
	return avail;
}

static unsigned io_sqring_entries(const struct ucmd_ctx *ctx)
{
	return __io_sqring_entries(ctx, false);
}

unsigned io_sqring_pending(const struct ucmd_ctx *ctx)
{
	return io_sqring_entries(ctx);
}

/*
 * A bounded ring: how many more requests it may have alive. None while CQEs
 * overflow: every overflowed CQE then comes from a request alive when the
 * list was started, so the list never holds more than max_reqs.
 */
static unsigned io_req_room(struct ucmd_ctx *ctx)
{
	if (ctx->ocq_head && !io_flush_overflow(ctx))
		return 0;
	return ctx->nr_reqs < ctx->max_reqs ? ctx->max_reqs - ctx->nr_reqs : 0;
}

unsigned io_sqring_takeable(struct ucmd_ctx *ctx)
{
	unsigned avail = io_sqring_entries(ctx);

	if (ctx->max_reqs && avail) {
		unsigned room = io_req_room(ctx);

		if (room < avail)
			avail = room;
	}
	return avail;
}

/* Tell the submitter whether what it submitted waits for it to reap. */
static void io_sq_blocked_update(struct ucmd_ctx *ctx)
{
	bool blocked = ctx->max_reqs && (ctx->ocq_head || ctx->nr_reqs >= ctx->max_reqs) &&
		       io_sqring_entries(ctx);

	if (blocked != ctx->sq_blocked_val) {
		ctx->sq_blocked_val = blocked;
		__atomic_store_n(ctx->sq_blocked, (uint32_t)blocked, __ATOMIC_RELEASE);
	}
}

/*
 * The next SQE from SQ position *pos on, before end, as the engine's own
 * copy in a request: the snapshot hooks and providers see. Every
 * submission loop takes its SQEs here. Each SQ index is read once, here,
 * and bounded: one outside the SQE array is dropped (counted in
 * sq_dropped, as Linux) and the SQEs behind it still go, as it used its
 * place in the batch. The request is told its SQ place (every request
 * knows it: srv_bounce_wtake), and *pos moves past it. NULL at end, or
 * when no request is free (*pos left on that SQE, which stays in the
 * SQ). peek: the request stays on the free list (io_peek_req). Constant
 * sizes let the compiler inline the copy.
 */
static inline __attribute__((always_inline)) struct ucmd_kiocb *
io_next_sqe(struct ucmd_ctx *ctx, const struct io_rings *r, unsigned *pos, unsigned end, bool peek)
{
	for (unsigned p = *pos; p != end; p++) {
		unsigned idx = __atomic_load_n(&r->sq_array[p & r->sq_mask], __ATOMIC_RELAXED);
		struct ucmd_kiocb *req;

		if (__builtin_expect(idx >= r->sq_entries, 0)) {
			__atomic_store_n(r->sq_dropped, ++ctx->sq_dropped, __ATOMIC_RELEASE);
			continue;
		}
		req = peek ? io_peek_req(ctx) : io_alloc_req(ctx);
		if (!req) {
			*pos = p;
			return NULL;
		}
		if (r->sqe_shift)
			memcpy(req->sqe, io_rings_sqe(r, idx), 2 * sizeof(struct io_uring_sqe));
		else
			memcpy(req->sqe, io_rings_sqe(r, idx), sizeof(struct io_uring_sqe));
		req->sq_pos = p;
		*pos = p + 1;
		return req;
	}
	*pos = end;
	return NULL;
}

/*
 * Start the block plug, once per submission, at the first SQE of a batch
 * of several whose opcode is worth one.
 */
static inline void io_plug_start(const struct ucmd_kiocb *req, unsigned nr, struct blk_plug *plug,
				 bool *plugged)
{
	uint8_t op = req->sqe[0].opcode;

	if (!*plugged && nr > 1 && io_issue_defs[op < IORING_OP_LAST ? op : 0].plug) {
		blk_start_plug(plug);
		*plugged = true;
	}
}

/*
 * One SQE taken the general way (the common uring_cmd's path declined it,
 * having changed nothing, or *plain did not hold). Only the general path
 * changes what *plain (no IOPOLL, no chain or drain open) says, and from
 * true only for an SQE that links or drains (a chain or a drain is open,
 * or a drained request has run): *plain is read again then, or when it
 * was false. Returns what io_submit_sqe returns.
 */
static inline __attribute__((always_inline)) int
io_submit_general(struct ucmd_ctx *ctx, bool *plain, struct ucmd_kiocb *req, bool peeked)
{
	uint8_t sqe_flags = req->sqe[0].flags;
	int ret;

	if (peeked)
		io_req_take_peeked(ctx, req);
	ret = io_submit_sqe(ctx, req, req->sqe);
	if (!*plain || (sqe_flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK | IOSQE_IO_DRAIN)))
		*plain = io_submit_plain(ctx, false);
	return ret;
}

/* One SQE taken: the common uring_cmd's path if it is one and *plain holds, else the general. */
static inline __attribute__((always_inline)) int
io_submit_one(struct ucmd_ctx *ctx, bool *plain, struct ucmd_kiocb *req, bool peeked)
{
	if (__builtin_expect(*plain, 1) &&
	    __builtin_expect(io_submit_uring_cmd(ctx, req, req->sqe, peeked), 1))
		return 0;
	return io_submit_general(ctx, plain, req, peeked);
}

/*
 * io_submit_sqes on a bounded ring, which another process fills and whose
 * submitter waits for the head on another thread: every SQE is copied
 * first, the head published, and only then is anything issued, so that
 * the submitter goes on while the requests run. Each taken SQE is
 * submitted, as with IORING_SETUP_SUBMIT_ALL (a failed one fails only its
 * chain). Returns the new head.
 */
static unsigned io_submit_sqes_bounded(struct ucmd_ctx *ctx, unsigned nr, unsigned *submitted,
				       struct blk_plug *plug, bool *plugged)
{
	struct io_rings *r = &ctx->rings;
	unsigned head = ctx->cached_sq_head, end = head + nr;
	struct ucmd_kiocb *list = NULL, **tail = &list;
	bool plain;

	/*
	 * Every SQE line is a cross-core miss, which copying them one after
	 * the other would pay in series: asking for all of them first
	 * overlaps the misses (perf on ucmdd's former proxy: 80% of a
	 * null-command pass at the copy without it). Their CQEs go to lines
	 * the other process last read: asked for writing now, so that the
	 * transfers overlap the issue.
	 */
	for (unsigned k = 0; k < nr; k++) {
		unsigned idx = __atomic_load_n(&r->sq_array[(head + k) & r->sq_mask],
					       __ATOMIC_RELAXED);

		if (idx < r->sq_entries) {
			const char *p = (const char *)io_rings_sqe(r, idx);

			__builtin_prefetch(p);
			if (r->sqe_shift)
				__builtin_prefetch(p + 64);
		}
	}
	for (unsigned k = 0; k < nr && k < r->cq_entries; k += 4u >> r->cqe_shift)
		prefetchw(io_rings_cqe(r, ctx->cached_cq_tail + k));

	for (struct ucmd_kiocb *req; (req = io_next_sqe(ctx, r, &head, end, false));) {
		*tail = req;
		tail = &req->next;
	}
	*tail = NULL;
	/* the slots are free once copied */
	__atomic_store_n(r->sq_head, head, __ATOMIC_RELEASE);
	plain = io_submit_plain(ctx, false);
	while (list) {
		struct ucmd_kiocb *req = list;

		/* issuing may put req on a list of its own through ->next */
		list = req->next;
		io_plug_start(req, nr, plug, plugged);
		(*submitted)++;
		(void)io_submit_one(ctx, &plain, req, false);
	}
	return head;
}

/*
 * SQEs from head up to end, the general way: each the common uring_cmd's
 * path if it is one and *plain holds, else io_submit_sqe; a failed one
 * stops the submission unless IORING_SETUP_SUBMIT_ALL. Then the end of a
 * submission: the head published, a chain still open queued as it is,
 * the plug finished. Out of line, so that the frames of the common path
 * carry none of the general path's registers. Returns how many SQEs it
 * took.
 */
static __attribute__((noinline)) unsigned io_submit_loop(struct ucmd_ctx *ctx, bool plain,
							 unsigned head, unsigned end, unsigned nr,
							 struct blk_plug *plug, bool plugged)
{
	const struct io_rings *r = &ctx->rings;
	unsigned submitted = 0;

	for (struct ucmd_kiocb *req; (req = io_next_sqe(ctx, r, &head, end, true));) {
		io_plug_start(req, nr, plug, &plugged);
		submitted++;
		if (io_submit_one(ctx, &plain, req, true) && !(ctx->flags & IORING_SETUP_SUBMIT_ALL))
			break;
	}
	ctx->cached_sq_head = head;
	__atomic_store_n(r->sq_head, head, __ATOMIC_RELEASE);
	/* A chain still open at the end of a submission goes as it is. */
	if (ctx->link_head) {
		struct ucmd_kiocb *h = ctx->link_head;
		ctx->link_head = NULL;
		io_queue_or_defer(h);
	}
	if (plugged)
		blk_finish_plug(plug);
	return submitted;
}

/*
 * The rest of a simple ring's submission (io_enter_simple) once an SQE is
 * not the common uring_cmd: req, peeked, holds that SQE's snapshot (its
 * index was read once, as every index, and it was counted and the plug
 * decided for it), and it and the SQEs up to end go the general way, as
 * in io_submit_sqes. Out of line, as io_submit_loop. Returns how many
 * more SQEs it took.
 */
static __attribute__((noinline)) unsigned
io_submit_rest(struct ucmd_ctx *ctx, struct ucmd_kiocb *req, unsigned head, unsigned end,
	       unsigned nr, struct blk_plug *plug, bool plugged)
{
	/* held at the start: the fast path required it */
	bool plain = true;

	if (io_submit_general(ctx, &plain, req, true) && !(ctx->flags & IORING_SETUP_SUBMIT_ALL))
		end = head;
	return io_submit_loop(ctx, plain, head, end, nr, plug, plugged);
}

/*
 * Take up to nr published SQEs and submit them (Linux's io_submit_sqes),
 * under uring_lock; returns how many were taken. The system call's common
 * case, a simple ring's uring_cmds, takes io_enter_simple instead.
 */
int io_submit_sqes(struct ucmd_ctx *ctx, unsigned nr)
{
	unsigned head = ctx->cached_sq_head;
	unsigned avail = __io_sqring_entries(ctx, false);
	unsigned submitted = 0;
	struct blk_plug plug;
	bool plugged = false;

	if (nr > avail)
		nr = avail;
	if (__builtin_expect(ctx->max_reqs != 0, 0) && nr) {
		unsigned room = io_req_room(ctx);

		if (nr > room)
			nr = room;
	}

	/*
	 * What completes inline and is not posted at once is posted at the
	 * end, in one pass (Linux's compl_reqs).
	 */
	ctx->compl_defer = true;
	if (__builtin_expect(ctx->max_reqs != 0, 0)) {
		head = io_submit_sqes_bounded(ctx, nr, &submitted, &plug, &plugged);
		/* everything taken was issued: the rest of io_submit_loop, with no SQE */
		submitted += io_submit_loop(ctx, true, head, head, nr, &plug, plugged);
	} else {
		submitted = io_submit_loop(ctx, io_submit_plain(ctx, false), head, head + nr, nr,
					   &plug, false);
	}
	ctx->compl_defer = false;
	io_fcache_drop(ctx);
	if (ctx->compl_head)
		io_submit_flush_completions(ctx);
	if (__builtin_expect(ctx->sq_blocked != NULL, 0))
		io_sq_blocked_update(ctx);
	return (int)submitted;
}

/* ---- io_uring_enter(2) ---------------------------------------------------- */

#define ENTER_FLAGS (IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT)

/* An SQPOLL ring: its thread submits; the caller may wake it, wait for SQ room. */
static __attribute__((noinline)) int io_sqpoll_enter(struct ucmd_ctx *ctx, unsigned to_submit,
						     unsigned min_complete, unsigned flags)
{
	if (flags & IORING_ENTER_SQ_WAKEUP)
		io_wake_waiters(ctx);
	if (flags & IORING_ENTER_SQ_WAIT) {
		while (__atomic_load_n(ctx->rings.sq_tail, __ATOMIC_ACQUIRE) -
			       __atomic_load_n(ctx->rings.sq_head, __ATOMIC_ACQUIRE) >=
		       ctx->rings.sq_entries)
			sched_yield();
	}
	if (flags & IORING_ENTER_GETEVENTS) {
		int ret = io_cqring_wait(ctx, min_complete);
		if (ret < 0 && !to_submit)
			return ret;
	}
	return (int)to_submit;
}

/*
 * io_uring_enter's submission under uring_lock, the general way: the
 * credentials read again if they changed, the SQEs submitted, task work
 * run, the CQ committed. Returns how many SQEs it took, or the error of
 * the credentials' read (current_ctx not set then).
 */
static __attribute__((noinline)) int io_enter_submit(struct ucmd_ctx *ctx, unsigned to_submit)
{
	int submitted;

	/*
	 * Requests act as whoever submits them now: one load tells whether
	 * the process's credentials changed since last read.
	 */
	if (__builtin_expect(cred_generation() != ctx->creds_gen, 0)) {
		int ret = io_ring_refresh_creds(ctx);

		if (ret)
			return ret;
	}
	current_ctx = ctx;
	submitted = io_submit_sqes(ctx, to_submit);
	io_run_task_work(ctx);
	io_commit_cqring(ctx);
	return submitted;
}

/*
 * A simple ring's SQEs from head on, nr of them (not 1: see
 * io_enter_simple), the common uring_cmd's path taken for each until one
 * is anything else, which goes, with all behind it, to io_submit_rest.
 * Publishes the head and finishes the plug; returns how many SQEs it took.
 */
static __attribute__((noinline)) unsigned io_submit_simple(struct ucmd_ctx *ctx, unsigned head,
							   unsigned nr)
{
	const struct io_rings *r = &ctx->rings;
	unsigned end, submitted = 0;
	struct blk_plug plug;
	bool plugged = false;

	end = head + nr;
	for (struct ucmd_kiocb *req; (req = io_next_sqe(ctx, r, &head, end, true));) {
		io_plug_start(req, nr, &plug, &plugged);
		submitted++;
		if (__builtin_expect(!io_submit_uring_cmd(ctx, req, req->sqe, true), 0))
			return submitted + io_submit_rest(ctx, req, head, end, nr, &plug, plugged);
	}
	ctx->cached_sq_head = head;
	__atomic_store_n(r->sq_head, head, __ATOMIC_RELEASE);
	if (plugged)
		blk_finish_plug(&plug);
	return submitted;
}

/*
 * Whether the call's submission may take io_enter_simple: a simple ring
 * (no SQPOLL or IOPOLL, bounds, eventfd or counted TIMEOUT), the same
 * credentials as last time, no drain pending. Each a word or a byte,
 * tested together: the common call takes no branch. No chain is open
 * here: every submission closes the one it leaves open.
 */
static inline bool io_enter_is_simple(const struct ucmd_ctx *ctx)
{
	return !((cred_generation() ^ ctx->creds_gen) | !ctx->simple |
		 (uintptr_t)ctx->defer_head | ctx->drain_next);
}

/*
 * The common call's submission under uring_lock (io_enter_is_simple said
 * so). Its SQEs take the common uring_cmd's path (io_submit_uring_cmd)
 * one by one; the first that is anything else goes, with all behind it,
 * to io_submit_rest. It does what io_enter_submit does, without the
 * checks for what such a ring has not. One SQE (a batch of one, the
 * synchronous caller's) is taken here, without a loop and without the
 * plug, which a batch of one never takes; more go to io_submit_simple.
 */
static inline __attribute__((always_inline)) unsigned
io_enter_simple(struct ucmd_ctx *ctx, unsigned to_submit, bool *alone)
{
	const struct io_rings *r = &ctx->rings;
	unsigned head, nr, submitted;

	current_ctx = ctx;
	head = ctx->cached_sq_head;
	nr = __io_sqring_entries(ctx, true);
	if (nr > to_submit)
		nr = to_submit;
	/* what completes inline and cannot be posted at once is posted at the end */
	ctx->compl_defer = true;
	if (__builtin_expect(nr == 1, 1)) {
		struct ucmd_kiocb *req = io_next_sqe(ctx, r, &head, head + 1, true);

		/*
		 * The slot is free once copied (or dropped): published before
		 * the issue, so that the head is not kept across it.
		 */
		ctx->cached_sq_head = head;
		__atomic_store_n(r->sq_head, head, __ATOMIC_RELEASE);
		submitted = req != NULL;
		if (__builtin_expect(req != NULL, 1)) {
			int taken = io_submit_uring_cmd(ctx, req, req->sqe, true);

			/*
			 * Posted at once, and no task work queued: its CQE is
			 * all this enter posted. Nothing was collected before
			 * it or since, nothing overflowed, and nothing ran that
			 * could take the ring off simple (only an issue does,
			 * and only task work issues from here): the commit's
			 * short way, with none of the tests below.
			 */
			/* the fixed-file path alone ran: the file cache is empty */
			if (__builtin_expect(taken == IO_CMD_POSTED, 1) &&
			    __builtin_expect(!io_task_work_pending(ctx), 1)) {
				ctx->compl_defer = false;
				io_commit_cqring_simple(ctx);
				*alone = true;
				return 1;
			}
			/* nr 1: io_plug_start would not plug, the plug is never used */
			if (__builtin_expect(taken == IO_CMD_DECLINED, 0))
				submitted += io_submit_rest(ctx, req, head, head, nr, NULL, false);
		}
	} else {
		submitted = io_submit_simple(ctx, head, nr);
	}
	ctx->compl_defer = false;
	io_fcache_drop(ctx);
	if (ctx->compl_head)
		io_submit_flush_completions(ctx);
	io_run_task_work(ctx);
	io_commit_cqring(ctx);
	return submitted;
}

/*
 * io_uring_enter's submission and wait once its arguments and the ring's
 * setup are checked: inlined into native_enter and native_submit_and_wait.
 */
static inline __attribute__((always_inline)) int
io_enter_checked(struct ucmd_ctx *ctx, unsigned to_submit, unsigned min_complete, unsigned flags,
		 bool may_iopoll)
{
	int submitted = 0;
	bool alone = false;

	if (to_submit) {
		mutex_lock(&ctx->uring_lock);
		if (__builtin_expect(io_enter_is_simple(ctx), 1)) {
			submitted = (int)io_enter_simple(ctx, to_submit, &alone);
		} else {
			submitted = io_enter_submit(ctx, to_submit);
			if (submitted < 0) {
				mutex_unlock(&ctx->uring_lock);
				return submitted;
			}
		}
		/*
		 * The CQEs waited for are there already (requests that
		 * completed inline): Linux's io_cqring_wait returns at once
		 * then, so do not take the lock again and rerun task work just
		 * to find that out. The CQ tail was just published: it is
		 * cached_cq_tail. Only an IOPOLL ring has polled requests
		 * (nr_iopoll), which the wait must reap; a CQE posted alone
		 * leaves no overflow (io_enter_simple).
		 */
		if ((flags & IORING_ENTER_GETEVENTS) &&
		    (alone || !(ctx->ocq_head || (may_iopoll && ctx->nr_iopoll))) &&
		    ctx->cached_cq_tail - __atomic_load_n(ctx->rings.cq_head, __ATOMIC_ACQUIRE) >=
			    min_complete) {
			current_ctx = NULL;
			mutex_unlock(&ctx->uring_lock);
			return submitted;
		}
		current_ctx = NULL;
		mutex_unlock(&ctx->uring_lock);
	}
	if (flags & IORING_ENTER_GETEVENTS) {
		int ret = io_cqring_wait(ctx, min_complete);
		if (ret < 0 && !submitted)
			return ret;
	}
	return submitted;
}

/*
 * The system call: submit, then wait. The common call (SQEs to submit on
 * a simple ring) runs in this one frame, the common uring_cmd's path
 * inlined: a small batch is mostly this call chain.
 */
int native_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete,
		 unsigned flags)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);

	if (flags & ~ENTER_FLAGS)
		return -EINVAL;
	/* The setups that check who calls, or submit on their own thread: one test for all. */
	if (__builtin_expect(ctx->flags & (IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SQPOLL |
					   IORING_SETUP_SINGLE_ISSUER), 0)) {
		/* DEFER_TASKRUN: only the submitter runs task work, so only it waits. */
		if ((ctx->flags & IORING_SETUP_DEFER_TASKRUN) && (flags & IORING_ENTER_GETEVENTS) &&
		    ctx->submitter_tid != current_tid())
			return -EEXIST;
		if (ctx->flags & IORING_SETUP_SQPOLL)
			return io_sqpoll_enter(ctx, to_submit, min_complete, flags);
		if ((ctx->flags & IORING_SETUP_SINGLE_ISSUER) && to_submit &&
		    ctx->submitter_tid != current_tid())
			return -EEXIST;
	}
	return io_enter_checked(ctx, to_submit, min_complete, flags, true);
}

/*
 * ucmd_submit_and_wait on a native ring: what app_submit_and_wait and
 * native_enter do, in one frame, for the common call: SQEs to publish on
 * a ring without SQPOLL (its poller submits), IOPOLL (every submission
 * enters to poll) or SINGLE_ISSUER (the enter checks its caller; a
 * DEFER_TASKRUN ring is always SINGLE_ISSUER too). Every SQE published is
 * submitted, as when the flush counts them from the SQ head; the enter's
 * arguments need no check. Anything else goes the generic way, and so
 * does a call with nothing new to publish, which then takes no lock
 * unless SQEs were left unsubmitted before.
 */
int native_submit_and_wait(struct ucmd_ring *ring, unsigned wait_nr)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct ucmd_sq *sq = &ring->sq;
	unsigned tail = sq->sqe_tail;
	unsigned flags = IORING_ENTER_GETEVENTS;

	if (__builtin_expect(ctx->flags & (IORING_SETUP_SQPOLL | IORING_SETUP_SINGLE_ISSUER |
					   IORING_SETUP_IOPOLL), 0) ||
	    __builtin_expect(tail == sq->sqe_head, 0))
		return app_submit_and_wait(ring, wait_nr);
	sq->sqe_head = tail;
	/*
	 * Release, not app_flush_sq's seq_cst: that pairs with an SQPOLL
	 * thread's NEED_WAKEUP, and this ring has none. Its SQ tail is read
	 * by an enter under uring_lock, this one or another thread's.
	 */
	__atomic_store_n(sq->ktail, tail, __ATOMIC_RELEASE);
	/* as app_submit_and_wait: no wait asked, but CQEs overflowed to flush */
	if (!wait_nr && !(__atomic_load_n(sq->kflags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW))
		flags = 0;
	/* no IOPOLL: nothing for the wait to reap */
	return io_enter_checked(ctx, ~0u, wait_nr, flags, false);
}

/* IO_URING_F_* bits that follow from the ring's setup, computed once. */
unsigned io_issue_flags(const struct ucmd_ctx *ctx)
{
	unsigned f = 0;

	if (ctx->flags & IORING_SETUP_SQE128)
		f |= IO_URING_F_SQE128;
	if (ctx->flags & IORING_SETUP_CQE32)
		f |= IO_URING_F_CQE32;
	if (ctx->flags & IORING_SETUP_IOPOLL)
		f |= IO_URING_F_IOPOLL;
	return f;
}

static void io_iopoll_req_issued(struct ucmd_kiocb *req)
{
	struct ucmd_ctx *ctx = req->ctx;

	req->next = ctx->iopoll_list;
	ctx->iopoll_list = req;
	ctx->nr_iopoll++;
	if (ctx->flags & IORING_SETUP_HYBRID_IOPOLL)
		req->iopoll_start = ktime_get_ns();
}

/*
 * Issue with NONBLOCK; -EAGAIN goes to the worker, which may block. Inline
 * in the submission's common path (one opcode lookup for prep and issue),
 * out of line for everyone else (io_req_issue).
 */
static inline __attribute__((always_inline)) void __io_req_issue(struct ucmd_kiocb *req,
								 const struct io_issue_def *def)
{
	struct ucmd_ctx *ctx = req->ctx;
	const struct ucmd_kiocb *outer;
	int ret;

	if (__builtin_expect(req->flags & (REQ_F_FORCE_ASYNC | REQ_F_ARM_LTIMEOUT), 0)) {
		/* a LINK_TIMEOUT behind it runs from the moment it is issued */
		if (req->flags & REQ_F_ARM_LTIMEOUT)
			io_arm_ltimeout(req);
		if (req->flags & REQ_F_FORCE_ASYNC) {
			io_queue_iowq(req);
			return;
		}
	}
	req->issuing = true;
	outer = io_issuing_req;
	io_issuing_req = req;
	ret = def->issue(req, ctx->issue_flags | IO_URING_F_NONBLOCK);
	/* still ours: anything the provider finished went to task work */
	io_issuing_req = outer;
	req->issuing = false;
	if (ret == -EAGAIN) {
		io_queue_iowq(req);
		return;
	}
	if (ret == -EIOCBQUEUED) {
		if (ctx->flags & IORING_SETUP_IOPOLL)
			io_iopoll_req_issued(req);
		return;
	}
	/* a chain's next member must start now, so a link head completes at once */
	if (ctx->compl_defer && !req->link) {
		req->next = NULL;
		*ctx->compl_tail = req;
		ctx->compl_tail = &req->next;
		ctx->compl_nr++;
		return;
	}
	io_req_complete(req);
}

void io_req_issue(struct ucmd_kiocb *req)
{
	__io_req_issue(req, &io_issue_defs[req->opcode]);
}

/* The worker's blocking issue; returns the result to complete with. */
int io_req_issue_blocking(struct ucmd_kiocb *req)
{
	const struct io_issue_def *def = &io_issue_defs[req->opcode];

	return def->issue(req, req->ctx->issue_flags | IO_URING_F_IOWQ | IO_URING_F_UNLOCKED);
}
