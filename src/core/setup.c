/* SPDX-License-Identifier: MIT */
/*
 * io_uring_setup(2) and io_uring_register(2): creating a ring context on an
 * engine, mapping the ring memory for the application, registered files,
 * buffers and personalities.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "uaccess/uaccess.h"
#include "security/hooks.h"

#define SETUP_FLAGS_SUPPORTED                                                         \
	(IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL | IORING_SETUP_SQ_AFF |             \
	 IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP | IORING_SETUP_SUBMIT_ALL |          \
	 IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_SQE128 | \
	 IORING_SETUP_CQE32 | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |   \
	 IORING_SETUP_NO_SQARRAY | IORING_SETUP_HYBRID_IOPOLL)

static void ctx_free(struct ucmd_ctx *ctx)
{
	while (ctx->free_reqs) {
		struct ucmd_kiocb *r = ctx->free_reqs;
		ctx->free_reqs = r->next;
		free(r);
	}
	while (ctx->ocq_head) {
		struct ucmd_ocqe *o = ctx->ocq_head;
		ctx->ocq_head = o->next;
		free(o);
	}
	for (unsigned i = 0; i < UCMD_MAX_PERSONALITIES; i++)
		free(ctx->personalities[i]);
	if (ctx->sub_creds && ctx->sub_creds != &ctx->creds)
		free((void *)ctx->sub_creds);
	while (ctx->retired_creds) {
		struct ucmd_cred *c = ctx->retired_creds;
		ctx->retired_creds = c->retired_next;
		free(c);
	}
	if (ctx->wait_efd >= 0)
		close(ctx->wait_efd);
	io_rings_destroy(&ctx->rings);
	free(ctx);
}

int io_validate_params(const struct io_uring_params *p)
{
	if (p->flags & ~SETUP_FLAGS_SUPPORTED)
		return -EINVAL;
	for (unsigned i = 0; i < 3; i++)
		if (p->resv[i])
			return -EINVAL;
	/* Linux's combination rules */
	if ((p->flags & IORING_SETUP_SQ_AFF) && !(p->flags & IORING_SETUP_SQPOLL))
		return -EINVAL;
	/*
	 * Linux's io_uring_create: no task-run mode for a SQPOLL ring (its
	 * thread is the one that runs), and TASKRUN_FLAG only with a mode that
	 * defers task work (COOP_TASKRUN or DEFER_TASKRUN), which it reports on.
	 */
	if ((p->flags & IORING_SETUP_SQPOLL) &&
	    (p->flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG |
			 IORING_SETUP_DEFER_TASKRUN)))
		return -EINVAL;
	if ((p->flags & IORING_SETUP_TASKRUN_FLAG) &&
	    !(p->flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN)))
		return -EINVAL;
	if ((p->flags & IORING_SETUP_DEFER_TASKRUN) &&
	    !(p->flags & IORING_SETUP_SINGLE_ISSUER))
		return -EINVAL;
	/* hybrid polling is a way of polling: IOPOLL's only */
	if ((p->flags & IORING_SETUP_HYBRID_IOPOLL) && !(p->flags & IORING_SETUP_IOPOLL))
		return -EINVAL;
	return 0;
}

/*
 * The application's view of the ring memory, found by offsets as liburing
 * finds it. It is the engine's own mapping. Linux maps the pages twice, at
 * the kernel's address and the user's, and ucmd used to mmap its memfd a
 * second time to match. But a CPU matches loads to in-flight stores by
 * virtual address: each SQE the application stored and the engine loaded
 * through the other mapping (and each CQE the other way) was an alias the
 * CPU had to catch and replay. One mapping made a batch-1 null uring_cmd
 * about 25% faster. ring_fd still lets an application map the memory itself.
 */
void backend_ring_map(struct ucmd_ring *ring, const struct io_uring_params *p, char *b,
		      size_t size, size_t sqes_off)
{
	ring->sq.ring_ptr = b;
	ring->sq.ring_sz = size;
	ring->cq.ring_ptr = b;
	ring->cq.ring_sz = size;
	ring->sq.khead = (unsigned *)(b + p->sq_off.head);
	ring->sq.ktail = (unsigned *)(b + p->sq_off.tail);
	ring->sq.kring_mask = (unsigned *)(b + p->sq_off.ring_mask);
	ring->sq.kring_entries = (unsigned *)(b + p->sq_off.ring_entries);
	ring->sq.kflags = (unsigned *)(b + p->sq_off.flags);
	ring->sq.kdropped = (unsigned *)(b + p->sq_off.dropped);
	/* IORING_SETUP_NO_SQARRAY: no array to find; the ring's own stays the identity */
	ring->sq.array = (p->flags & IORING_SETUP_NO_SQARRAY) ? NULL :
			 (unsigned *)(b + p->sq_off.array);
	ring->sq.sqes = (struct io_uring_sqe *)(b + sqes_off);
	/* the sizes the layout was made or checked for, not a re-read of shared memory */
	ring->sq.ring_entries = p->sq_entries;
	ring->sq.ring_mask = p->sq_entries - 1;
	ring->cq.khead = (unsigned *)(b + p->cq_off.head);
	ring->cq.ktail = (unsigned *)(b + p->cq_off.tail);
	ring->cq.kring_mask = (unsigned *)(b + p->cq_off.ring_mask);
	ring->cq.kring_entries = (unsigned *)(b + p->cq_off.ring_entries);
	ring->cq.kflags = (unsigned *)(b + p->cq_off.flags);
	ring->cq.koverflow = (unsigned *)(b + p->cq_off.overflow);
	ring->cq.cqes = (struct io_uring_cqe *)(b + p->cq_off.cqes);
	ring->cq.ring_entries = p->cq_entries;
	ring->cq.ring_mask = p->cq_entries - 1;
	/* liburing keeps the SQ index array as the identity; so do we. */
	for (unsigned i = 0; ring->sq.array && i < ring->sq.ring_entries; i++)
		ring->sq.array[i] = i;
	ring->sq.sqe_head = ring->sq.sqe_tail = __atomic_load_n(ring->sq.ktail, __ATOMIC_ACQUIRE);
}

static int queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p, size_t tail, size_t sqes_at)
{
	struct ucmd_ctx *ctx;
	int ret;

	memset(ring, 0, sizeof(*ring));
	ring->ring_fd = -1;
	ret = io_validate_params(p);
	if (ret)
		return ret;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->engine = e;
	ctx->task = &init_task;
	ctx->evfd = -1;
	ctx->owner_efd = -1;
	ctx->wait_efd = -1;
	ctx->flags = p->flags;
	ctx->issue_flags = io_issue_flags(ctx);
	io_ring_update_simple(ctx);
	atomic_init(&ctx->uring_lock.v, 0);
	ctx->local_tw_tail = &ctx->local_tw;
	ctx->compl_tail = &ctx->compl_head;
	/* the generation first: a change after it makes the first submission read again */
	ctx->creds_gen = cred_generation();
	current_cred(&ctx->creds);
	ctx->sub_creds = &ctx->creds;
	ret = io_rings_create_at(&ctx->rings, entries, p, tail, sqes_at);
	if (ret) {
		ctx_free(ctx);
		return ret;
	}
	if (p->flags & IORING_SETUP_SINGLE_ISSUER)
		ctx->submitter_tid = current_tid();
	atomic_init(&ctx->cq_wait_nr, IO_CQ_WAKE_INIT);
	p->features = IORING_FEAT_SINGLE_MMAP | IORING_FEAT_NODROP | IORING_FEAT_SUBMIT_STABLE |
		      IORING_FEAT_CUR_PERSONALITY | IORING_FEAT_CQE_SKIP;
	ret = io_wq_create(ctx);
	if (ret) {
		ctx_free(ctx);
		return ret;
	}
	if (p->flags & IORING_SETUP_SQPOLL) {
		ret = security_uring_sqpoll(e, &ctx->creds);
		if (!ret)
			ret = io_sq_thread_create(ctx, p);
		if (ret) {
			io_wq_destroy(ctx);
			ctx_free(ctx);
			return ret;
		}
	}
	ring->flags = p->flags;
	ring->features = p->features;
	ring->engine = e;
	ring->ops = &native_backend;
	ring->backend = ctx;
	ring->ring_fd = dup(ctx->rings.memfd);
	if (ring->ring_fd < 0) {
		ret = -errno;
		native_queue_exit(ring);
		return ret;
	}
	ring->enter_ring_fd = ring->ring_fd;
	backend_ring_map(ring, p, ctx->rings.mem, ctx->rings.size, p->sq_off.resv2);
	return 0;
}

int native_queue_init(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
		      struct io_uring_params *p)
{
	return queue_init(e, entries, ring, p, 0, 0);
}

int io_queue_init_shared(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			 struct io_uring_params *p, size_t tail, size_t sqes_at)
{
	/* its owner polls it: a thread of the engine's own would be a second submitter */
	if (p->flags & (IORING_SETUP_SQPOLL | IORING_SETUP_DEFER_TASKRUN))
		return -EINVAL;
	return queue_init(e, entries, ring, p, tail, sqes_at);
}

/* Wait for every request to finish, so that nothing refers to the ctx. */
static void ctx_quiesce(struct ucmd_ctx *ctx)
{
	for (;;) {
		mutex_lock(&ctx->uring_lock);
		current_ctx = ctx;
		io_owner_reap(ctx);
		bool idle = !ctx->inflight && !ctx->defer_head && !ctx->link_head &&
			    !atomic_load(&ctx->async_inflight) && !atomic_load(&ctx->tw_list);
		if (ctx->link_head) {
			/* an unterminated chain at exit is dropped, as Linux does */
			struct ucmd_kiocb *r = ctx->link_head;
			ctx->link_head = NULL;
			while (r) {
				struct ucmd_kiocb *n = r->link;
				r->link = NULL;
				io_req_set_res(r, -ECANCELED, 0);
				r->flags |= REQ_F_CQE_SKIP;
				io_req_complete(r);
				r = n;
			}
		}
		current_ctx = NULL;
		uint32_t seq = atomic_load(&ctx->wake);
		mutex_unlock(&ctx->uring_lock);
		if (idle)
			return;
		if (!ctx->nr_iopoll)
			io_wait_for_tw(ctx, seq, 1, 10);
	}
}

void native_queue_exit(struct ucmd_ring *ring)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);

	/* ring->sq.ring_ptr is the engine's mapping: ctx_free unmaps it */
	if (ring->ring_fd >= 0)
		close(ring->ring_fd);
	if (ctx) {
		io_sq_thread_stop(ctx);
		/* pending TIMEOUTs end with -ECANCELED, as at Linux's ring exit */
		mutex_lock(&ctx->uring_lock);
		current_ctx = ctx;
		io_timeouts_kill(ctx);
		io_commit_cqring(ctx);
		current_ctx = NULL;
		mutex_unlock(&ctx->uring_lock);
		ctx_quiesce(ctx);
		io_timer_destroy(ctx);
		io_wq_destroy(ctx);
		native_unregister_files(ring);
		native_unregister_buffers(ring);
		io_register_exit(ctx);
		/* A completing thread may still be waking us after its CQE was reaped. */
		while (atomic_load_explicit(&ctx->tw_remote_adders, memory_order_acquire))
			sched_yield();
		ctx_free(ctx);
	}
	memset(ring, 0, sizeof(*ring));
	ring->ring_fd = -1;
}

/* Registration changes the ring's tables: done under uring_lock, quiesced. */
int native_register_files(struct ucmd_ring *ring, const int *files, unsigned nr_files)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct ucmd_file **tab;
	int ret = 0;

	if (!files)
		return -EFAULT;
	if (!nr_files || nr_files > UCMD_MAX_FIXED_FILES)
		return -EINVAL;
	tab = calloc(nr_files, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (unsigned i = 0; i < nr_files; i++) {
		int fd;

		if (copy_from_user(&fd, &files[i], sizeof(fd))) {
			ret = -EFAULT;
			break;
		}
		if (fd == -1)
			continue;	/* a sparse slot */
		tab[i] = io_file_get(ctx, fd);
		if (!tab[i]) {
			ret = -EBADF;
			break;
		}
	}
	mutex_lock(&ctx->uring_lock);
	if (!ret && ctx->fixed_files)
		ret = -EBUSY;
	if (!ret) {
		ctx->fixed_files = tab;
		ctx->nr_fixed_files = nr_files;
	}
	mutex_unlock(&ctx->uring_lock);
	if (ret) {
		for (unsigned i = 0; i < nr_files; i++)
			if (tab[i])
				fput(tab[i]);
		free(tab);
	}
	return ret;
}

int native_unregister_files(struct ucmd_ring *ring)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct ucmd_file **tab;
	unsigned nr;

	/* Requests borrow the table's references: let them all finish. */
	ctx_quiesce(ctx);
	mutex_lock(&ctx->uring_lock);
	tab = ctx->fixed_files;
	nr = ctx->nr_fixed_files;
	ctx->fixed_files = NULL;
	ctx->nr_fixed_files = 0;
	mutex_unlock(&ctx->uring_lock);
	if (!tab)
		return -ENXIO;
	for (unsigned i = 0; i < nr; i++)
		if (tab[i])
			fput(tab[i]);
	free(tab);
	return 0;
}

int native_register_buffers(struct ucmd_ring *ring, const struct iovec *iovecs, unsigned nr)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct iovec *tab;
	int ret = 0;

	if (!iovecs)
		return -EFAULT;
	if (!nr || nr > UCMD_MAX_FIXED_BUFS)
		return -EINVAL;
	tab = malloc(nr * sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	if (copy_from_user(tab, iovecs, nr * sizeof(*tab)))
		ret = -EFAULT;
	for (unsigned i = 0; i < nr && !ret; i++) {
		uint64_t a = (uint64_t)(uintptr_t)tab[i].iov_base;

		/* Linux: a buffer is non-empty, at most 1 GiB, and real memory */
		if (!a || !tab[i].iov_len || tab[i].iov_len > UCMD_MAX_BUF_LEN)
			ret = -EFAULT;
		else if (access_ok(a, tab[i].iov_len))
			ret = -EFAULT;
		/*
		 * Linux pins the pages, writeable, here; a buffer that cannot be
		 * is -EFAULT now rather than at each use. Pages unmapped later
		 * fail only the transfer that meets them (the accessor). They
		 * are the ring's task's: a ucmdd client's are reached through
		 * its mm at each use, never copied here.
		 */
		else if (user_mm_fault_in(ctx->task->mm, a, tab[i].iov_len, true))
			ret = -EFAULT;
	}
	mutex_lock(&ctx->uring_lock);
	if (!ret && ctx->bufs)
		ret = -EBUSY;
	if (!ret) {
		ctx->bufs = tab;
		ctx->nr_bufs = nr;
	}
	mutex_unlock(&ctx->uring_lock);
	if (ret)
		free(tab);
	return ret;
}

int native_unregister_buffers(struct ucmd_ring *ring)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct iovec *tab;

	mutex_lock(&ctx->uring_lock);
	tab = ctx->bufs;
	ctx->bufs = NULL;
	ctx->nr_bufs = 0;
	mutex_unlock(&ctx->uring_lock);
	if (!tab)
		return -ENXIO;
	free(tab);
	return 0;
}

/* The identity fields: what decisions read. */
static bool cred_same(const struct ucmd_cred *a, const struct ucmd_cred *b)
{
	return a->uid == b->uid && a->euid == b->euid && a->gid == b->gid &&
	       a->egid == b->egid && a->cap_sys_admin == b->cap_sys_admin &&
	       a->ngroups == b->ngroups &&
	       !memcmp(a->groups, b->groups, (size_t)a->ngroups * sizeof(a->groups[0]));
}

int io_ring_refresh_creds(struct ucmd_ctx *ctx)
{
	unsigned long gen = cred_generation();
	struct ucmd_cred *c;

	/* a task's own credentials are frozen: nothing the process does changes them */
	if (ctx->task->cred) {
		ctx->creds_gen = gen;
		return 0;
	}
	c = malloc(sizeof(*c));

	/* no stale identity on failure: the submission fails instead */
	if (!c)
		return -ENOMEM;
	current_cred(c);
	if (cred_same(c, ctx->sub_creds)) {
		free(c);
	} else {
		/* requests in flight may act as the old one: freed with the ring */
		if (ctx->sub_creds != &ctx->creds) {
			struct ucmd_cred *old = (struct ucmd_cred *)ctx->sub_creds;

			old->retired_next = ctx->retired_creds;
			ctx->retired_creds = old;
		}
		ctx->sub_creds = c;
	}
	ctx->creds_gen = gen;
	return 0;
}

int native_register_personality(struct ucmd_ring *ring)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct ucmd_cred *c;
	int id = -ENOSPC;

	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	current_cred(c);
	mutex_lock(&ctx->uring_lock);
	/* id 0 means "no personality" in an SQE */
	for (int i = 1; i < UCMD_MAX_PERSONALITIES; i++) {
		if (!ctx->personalities[i]) {
			ctx->personalities[i] = c;
			id = i;
			break;
		}
	}
	mutex_unlock(&ctx->uring_lock);
	if (id < 0)
		free(c);
	return id;
}

int native_unregister_personality(struct ucmd_ring *ring, int id)
{
	struct ucmd_ctx *ctx = ring_to_ctx(ring);
	struct ucmd_cred *c = NULL;

	if (id <= 0 || id >= UCMD_MAX_PERSONALITIES)
		return -EINVAL;
	mutex_lock(&ctx->uring_lock);
	c = ctx->personalities[id];
	ctx->personalities[id] = NULL;
	mutex_unlock(&ctx->uring_lock);
	if (!c)
		return -EINVAL;
	/* Requests in flight may still act as c: free it with the ring. */
	mutex_lock(&ctx->uring_lock);
	c->retired_next = ctx->retired_creds;
	ctx->retired_creds = c;
	mutex_unlock(&ctx->uring_lock);
	return 0;
}
