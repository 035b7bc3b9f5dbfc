/* SPDX-License-Identifier: MIT */
/*
 * The program's own descriptors on ucmd's rings.
 *
 * A ring made under `ucmd exec` is the daemon's (uring.c), which knows
 * only ucmd's devices. An SQE naming anything else of the program's (a
 * regular file, a pipe, a socket, an eventfd) runs on Linux, so here on a
 * kernel io_uring of the preload's (the shadow), made with the real system
 * call at the first such SQE: the SQE goes there unchanged (user_data,
 * flags, links within it), and a thread of ours waits on the shadow's CQ
 * and posts each CQE into the program's ring through the daemon (a NOP
 * that posts user_data, res and flags: dc_post_cqes), in the order the
 * kernel completed them.
 *
 * Nothing here runs for a submission that names only devices: uring.c's
 * scan of the SQEs (which it makes anyway) asks pl_own_sqe() of each and
 * takes the usual path unless one is the program's own.
 *
 * A chain that links device SQEs and own ones cannot keep Linux's order
 * across the two rings: its first SQE completes with -EINVAL and the
 * others with -ECANCELED, none of it run (docs/compat.md). Fileless SQEs
 * (NOP, TIMEOUT, LINK_TIMEOUT, ASYNC_CANCEL) go with their chain, and to
 * the daemon alone. But an ASYNC_CANCEL or TIMEOUT_REMOVE of its own (in
 * no chain) once the kernel ring is made looks in both rings, as Linux's
 * looks in its one: the kernel ring first, synchronously, then the
 * daemon's (xcancel below).
 *
 * Registered files: the kernel ring holds the own descriptors of the
 * program's table at the same indexes (-1 at the devices'), the daemon's
 * -1 at the own ones'; an IOSQE_FIXED_FILE SQE goes where its index is.
 * Registered buffers are registered on the kernel ring too, at the same
 * indexes, so READ_FIXED/WRITE_FIXED on own files work. Personalities
 * too, by the same call (their ids differ: an own SQE's is translated).
 * A chain left open at the end of a submission ends there on the kernel
 * ring, as Linux ends it: nothing queued after it joins it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/backend.h"
#include "preload/preload.h"
#include "preload/svtab.h"
#include "preload/uring_own.h"

#define OWN_CQ_BATCH 64u
#define OWN_MIN_ENTRIES 64u
/* the daemon's personality ids are below its UCMD_MAX_PERSONALITIES (64) */
#define OWN_MAX_PERS 64u
#define OWN_TIMEOUTS 64u

struct pl_own {
	int fd;				/* the kernel ring */
	struct ucmd_ring *ring;		/* the program's, where the CQEs go */
	pthread_mutex_t lock;		/* our side of the kernel SQ */
	void *rings;
	size_t rings_len;
	struct io_uring_sqe *sqes;
	size_t sqes_len;
	unsigned *sq_head, *sq_tail, *sq_array, sq_mask, sq_entries;
	unsigned *cq_head, *cq_tail, cq_mask;
	struct io_uring_cqe *cqes;
	unsigned local_tail;		/* SQEs we queued, submitted or not */
	unsigned pending;		/* queued, not yet submitted */
	/*
	 * Registered files: which indexes hold an own descriptor. One
	 * allocation, swapped whole, so that a submitter reading it without a
	 * lock sees one table, old or new; each look counts itself in
	 * slot_readers around it, and a swap frees the old table once none is
	 * counted (swap_slots).
	 */
	struct own_slots *_Atomic slots;
	atomic_uint slot_readers;
	/*
	 * IORING_REGISTER_PERSONALITY: the kernel ring's id for each of the
	 * daemon's (0: none), registered on both by the same call, so that an
	 * own SQE naming one runs as the credentials it names, as on Linux.
	 * Under the ring's reg_lock (uring.c), as every submission here.
	 */
	uint16_t pers[OWN_MAX_PERS];
	/*
	 * The user_data of the last TIMEOUTs and LINK_TIMEOUTs queued here
	 * (under lock), for a timeout update to find the ring they are on: one
	 * long done, or pushed out, is the kernel's -ENOENT, as Linux's is
	 * once it fired.
	 */
	uint64_t tmo[OWN_TIMEOUTS];
	unsigned tmo_next, tmo_n;
};

struct own_slots {
	unsigned nr;
	bool own[];
};

/* no files registered: never freed */
static struct own_slots no_slots = { .nr = 0 };

static long sys_uring_setup(unsigned entries, struct io_uring_params *p)
{
	return pl_raw_syscall(SYS_io_uring_setup, entries, (long)p, 0, 0, 0, 0);
}

static long sys_uring_enter(int fd, unsigned to_submit, unsigned min, unsigned flags)
{
	return pl_raw_syscall(SYS_io_uring_enter, fd, to_submit, min, flags, 0, 0);
}

static long sys_uring_register(int fd, unsigned op, const void *arg, unsigned nr)
{
	return pl_raw_syscall(SYS_io_uring_register, fd, op, (long)arg, nr, 0, 0);
}

static void *sys_mmap(size_t len, int fd, off_t off)
{
	long p = pl_raw_syscall(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_POPULATE, fd, off);

	return (p < 0 && p > -4096) ? NULL : (void *)p;
}

/* ---- classification ---- */

/*
 * C_LOCAL: an SQE the preload runs itself, through its own interposers, so
 * that a path names what the program's libc calls would (ucmd's devices
 * under /dev): OPENAT, STATX, CLOSE.
 */
enum { C_NEUTRAL, C_DEV, C_OWN, C_LOCAL, C_XCANCEL };

/*
 * Not a device, a ring of ucmd's, or nothing. The numbers ucmd-supervise
 * gives devices are never the program's own (a dup onto one is EBADF),
 * known to the preload or not yet (svtab.h).
 */
static bool own_fd(int fd)
{
	return fd >= 0 && (unsigned)fd - PL_SV_FD_BASE >= PL_SV_FD_NR && !pl_fd(fd) &&
	       !pl_uring_is_ring(fd);
}

/* Whether registered file i is an own descriptor, on the kernel ring's table. */
static bool own_slot(const struct pl_own *o, unsigned i)
{
	/* the count is the only thing a look writes */
	atomic_uint *readers = (atomic_uint *)&o->slot_readers;
	const struct own_slots *t;
	bool own;

	/*
	 * seq_cst, the count before the load: a swap that the load did
	 * not see yet reads the count after it (swap_slots), and so
	 * waits for this look to end before it frees what it loaded.
	 */
	atomic_fetch_add(readers, 1);
	t = atomic_load(&o->slots);
	own = t && i < t->nr && t->own[i];
	atomic_fetch_sub_explicit(readers, 1, memory_order_release);
	return own;
}

static int sqe_class(const struct pl_own *o, const struct io_uring_sqe *sqe)
{
	switch (sqe->opcode) {
	case IORING_OP_ASYNC_CANCEL:
	case IORING_OP_TIMEOUT_REMOVE:
		/* what it looks for may be on the kernel ring, once there is one */
		return o ? C_XCANCEL : C_NEUTRAL;
	case IORING_OP_NOP:
	case IORING_OP_TIMEOUT:
	case IORING_OP_LINK_TIMEOUT:
	case IORING_OP_FILES_UPDATE:	/* the daemon's table (EOPNOTSUPP there) */
		return C_NEUTRAL;
	case IORING_OP_PROVIDE_BUFFERS:	/* fd is a count: the buffers of own RECVs */
	case IORING_OP_REMOVE_BUFFERS:
		return C_OWN;
	case IORING_OP_OPENAT:
	case IORING_OP_STATX:
		return C_LOCAL;
	case IORING_OP_CLOSE:
		/*
		 * An own descriptor's close is the kernel's (in a chain with its
		 * I/O), a device's ours; a fixed slot's is the table's, the
		 * kernel ring's for an own one.
		 */
		if (!sqe->file_index && !own_fd(sqe->fd))
			return C_LOCAL;
		break;
	case IORING_OP_OPENAT2:	/* openat2 is ENOSYS under exec: the daemon's EOPNOTSUPP */
	case IORING_OP_RENAMEAT:	/* paths the kernel would take as the host's, not */
	case IORING_OP_UNLINKAT:	/* ucmd's view: the daemon's EOPNOTSUPP, as before */
	case IORING_OP_MKDIRAT:
	case IORING_OP_SYMLINKAT:
	case IORING_OP_LINKAT:
	case IORING_OP_SETXATTR:
	case IORING_OP_GETXATTR:
		return C_DEV;
	default:
		break;
	}
	if (sqe->flags & IOSQE_FIXED_FILE)
		return o && own_slot(o, (unsigned)sqe->fd) ? C_OWN : C_DEV;
	/* the daemon's opcodes: its answer (EBADF) for no descriptor */
	if (pl_uring_dev_op(sqe->opcode))
		return own_fd(sqe->fd) ? C_OWN : C_DEV;
	/* the kernel's alone (OPENAT, STATX at AT_FDCWD...), unless on a device */
	return sqe->fd < 0 || own_fd(sqe->fd) ? C_OWN : C_DEV;
}

bool pl_own_sqe(const struct pl_own *o, const struct io_uring_sqe *sqe)
{
	int c = sqe_class(o, sqe);

	return c == C_OWN || c == C_LOCAL || c == C_XCANCEL;
}

/* ---- the kernel ring ---- */

/* post the kernel's CQEs into the program's ring, in order, until either ring is gone */
static void *reaper(void *arg)
{
	struct pl_own *o = arg;
	struct io_uring_cqe batch[OWN_CQ_BATCH];

	for (;;) {
		unsigned head = *o->cq_head, tail, n = 0;
		long ret;

		tail = __atomic_load_n(o->cq_tail, __ATOMIC_ACQUIRE);
		if (head == tail) {
			ret = sys_uring_enter(o->fd, 0, 1, IORING_ENTER_GETEVENTS);
			if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY &&
			    ret != -ETIME)
				break;
			continue;
		}
		while (head != tail && n < OWN_CQ_BATCH)
			batch[n++] = o->cqes[head++ & o->cq_mask];
		__atomic_store_n(o->cq_head, head, __ATOMIC_RELEASE);
		for (unsigned done = 0; done < n;) {
			int put = dc_post_cqes(o->ring, batch + done, n - done);

			if (put < 0) {
				pl_trace("kernel ring %d: its completions have nowhere to go (%d)", o->fd,
					 put);
				return NULL;
			}
			done += (unsigned)put;
			if (done < n) {
				/* the program's SQ is full until it reaps: wait for it */
				struct timespec ts = { 0, 50000 };

				nanosleep(&ts, NULL);
			}
		}
	}
	pl_trace("kernel ring %d: reaper ends (%s)", o->fd, "enter failed");
	return NULL;
}

static void own_free(struct pl_own *o)
{
	if (o->sqes)
		munmap(o->sqes, o->sqes_len);
	if (o->rings)
		munmap(o->rings, o->rings_len);
	if (o->fd >= 0)
		close(o->fd);
	free(o);
}

static struct pl_own *own_make(struct ucmd_ring *ring, const struct pl_own_bufs *b)
{
	struct io_uring_params p;
	struct pl_own *o;
	unsigned entries = ring->sq.ring_entries;
	long ret;
	char *m;

	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->fd = -1;
	o->ring = ring;
	pthread_mutex_init(&o->lock, NULL);
	memset(&p, 0, sizeof(p));
	/* completions wait in the kernel's CQ for the reaper: room for a full SQ twice over */
	p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_CLAMP;
	if (entries < OWN_MIN_ENTRIES)
		entries = OWN_MIN_ENTRIES;
	p.cq_entries = entries * 4;
	ret = sys_uring_setup(entries, &p);
	if (ret < 0 || !(p.features & IORING_FEAT_SINGLE_MMAP)) {
		pl_trace("no kernel ring for the program's own descriptors: %ld", ret);
		if (ret >= 0)
			close((int)ret);
		free(o);
		return NULL;
	}
	/* out of the program's numbers: a number it just closed names no ring of ours */
	o->fd = pl_fd_move_high((int)ret);
	o->rings_len = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	if (p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe) > o->rings_len)
		o->rings_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	o->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	o->rings = sys_mmap(o->rings_len, o->fd, IORING_OFF_SQ_RING);
	o->sqes = sys_mmap(o->sqes_len, o->fd, IORING_OFF_SQES);
	if (!o->rings || !o->sqes) {
		own_free(o);
		return NULL;
	}
	m = o->rings;
	o->sq_head = (unsigned *)(m + p.sq_off.head);
	o->sq_tail = (unsigned *)(m + p.sq_off.tail);
	o->sq_array = (unsigned *)(m + p.sq_off.array);
	o->sq_mask = *(unsigned *)(m + p.sq_off.ring_mask);
	o->sq_entries = p.sq_entries;
	o->cq_head = (unsigned *)(m + p.cq_off.head);
	o->cq_tail = (unsigned *)(m + p.cq_off.tail);
	o->cq_mask = *(unsigned *)(m + p.cq_off.ring_mask);
	o->cqes = (struct io_uring_cqe *)(m + p.cq_off.cqes);
	o->local_tail = *o->sq_tail;
	if (b && b->nr)
		pl_own_buffers(o, b);
	ret = pl_thread_start(reaper, o);
	if (ret) {
		pl_trace("no thread to reap the kernel ring: %s", strerror((int)-ret));
		own_free(o);
		return NULL;
	}
	pl_trace("kernel ring %d for the program's own descriptors", o->fd);
	return o;
}

/* The kernel ring, made at the first need; NULL if it cannot be made. */
static struct pl_own *own_get(struct pl_own **op, struct ucmd_ring *ring,
			      const struct pl_own_bufs *b)
{
	static pthread_mutex_t make_lock = PTHREAD_MUTEX_INITIALIZER;
	struct pl_own *o = __atomic_load_n(op, __ATOMIC_ACQUIRE);

	if (o)
		return o;
	pthread_mutex_lock(&make_lock);
	o = *op;
	if (!o) {
		o = own_make(ring, b);
		if (o)
			__atomic_store_n(op, o, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&make_lock);
	return o;
}

/* Queue one SQE on the kernel ring (o->lock held); false when its SQ is full. */
static bool own_queue(struct pl_own *o, const struct io_uring_sqe *sqe)
{
	unsigned head = __atomic_load_n(o->sq_head, __ATOMIC_ACQUIRE);
	unsigned slot = o->local_tail & o->sq_mask;

	if (o->local_tail - head >= o->sq_entries)
		return false;
	memcpy(&o->sqes[slot], sqe, sizeof(*sqe));
	o->sq_array[slot] = slot;
	o->local_tail++;
	o->pending++;
	return true;
}

/*
 * A completion with this result, through the kernel ring (a NOP that
 * injects it), so that it comes in order with the kernel's own.
 */
static void own_queue_fail(struct pl_own *o, uint64_t user_data, int res)
{
	struct io_uring_sqe nop;

	memset(&nop, 0, sizeof(nop));
	nop.opcode = IORING_OP_NOP;
	nop.fd = -1;
	nop.rw_flags = UCMD_NOP_INJECT_RESULT;	/* Linux's IORING_NOP_INJECT_RESULT */
	nop.len = (unsigned)res;
	nop.user_data = user_data;
	if (!own_queue(o, &nop))
		pl_trace("kernel ring full: the CQE of %llx (%d) is lost",
			 (unsigned long long)user_data, res);
}

/* Submit what is queued (o->lock held). */
static void own_flush(struct pl_own *o)
{
	__atomic_store_n(o->sq_tail, o->local_tail, __ATOMIC_RELEASE);
	while (o->pending) {
		long ret = sys_uring_enter(o->fd, o->pending, 0, 0);

		if (ret == -EINTR)
			continue;
		if (ret <= 0) {
			/* out of resources: they stay queued for the next submission */
			pl_trace("kernel ring %d: submit %u: %ld", o->fd, o->pending, ret);
			break;
		}
		o->pending -= (unsigned)ret;
	}
}

/* ---- a submission ---- */

enum { V_DEV, V_OWN, V_LOCAL, V_EINVAL, V_ECANCELED, V_XCANCEL };

struct plan {
	struct pl_own *o;
	unsigned base, n;
	bool started;
	unsigned char *v;		/* verdict per SQ position - base */
	unsigned chain;			/* first of the chain being read */
	bool in_chain, has_own, has_dev, has_local, has_x;
	struct io_uring_sqe *local;	/* the V_LOCAL SQEs, copied, in order */
	unsigned nlocal;
	unsigned last;			/* the last SQE read */
	bool dangling;			/* it links to nothing: its chain ends with the submission */
	int bad;			/* the chain's SQE with an unknown personality, or -1 */
	struct io_uring_sqe *follow;	/* cancels for the daemon's ring after the submission */
	unsigned nfollow;
};

/*
 * A chain runs where its SQEs go: on the daemon's ring, the kernel's, or
 * here (one SQE alone). A chain that would need two of them is refused.
 */
static void resolve(struct plan *pl, unsigned end)
{
	unsigned places = pl->has_own + pl->has_dev + pl->has_local;
	bool mixed = places > 1 || (pl->has_local && end > pl->chain);

	for (unsigned k = pl->chain; k <= end; k++) {
		if (pl->bad >= 0 && !mixed)
			/* as Linux's failed io_init_req: it -EINVAL, its chain cancelled */
			pl->v[k] = (int)k == pl->bad ? V_EINVAL : V_ECANCELED;
		else if (mixed)
			pl->v[k] = k == pl->chain ? V_EINVAL : V_ECANCELED;
		else if (places == 0 && pl->has_x && end == pl->chain)
			pl->v[k] = V_XCANCEL;	/* a cancel in no chain: both rings */
		else
			pl->v[k] = pl->has_own ? V_OWN : pl->has_local ? V_LOCAL : V_DEV;
	}
	pl->in_chain = false;
}

static void plan_note(const struct io_uring_sqe *sqe, unsigned pos, void *ctx)
{
	struct plan *pl = ctx;
	unsigned k;
	int c;

	if (!pl->started) {
		pl->base = pos;
		pl->started = true;
	}
	k = pos - pl->base;
	if (k >= pl->n)
		return;
	c = sqe_class(pl->o, sqe);
	pl->last = k;
	if (!pl->in_chain) {
		pl->chain = k;
		pl->in_chain = true;
		pl->has_own = pl->has_dev = pl->has_local = pl->has_x = false;
		pl->bad = -1;
	}
	/* a personality neither ring knows: the kernel ring's ids are not the program's */
	if (c == C_OWN && sqe->personality && pl->bad < 0 &&
	    (sqe->personality >= OWN_MAX_PERS || !pl->o->pers[sqe->personality]))
		pl->bad = (int)k;
	pl->has_own |= c == C_OWN;
	pl->has_dev |= c == C_DEV;
	pl->has_local |= c == C_LOCAL;
	pl->has_x |= c == C_XCANCEL;
	if (!(sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)))
		resolve(pl, k);
}

/* ---- cancels: Linux finds a request wherever it is in its ring ---- */

#ifndef IORING_REGISTER_SYNC_CANCEL
#define IORING_REGISTER_SYNC_CANCEL 24
#endif
/* Linux 6.6's IORING_ASYNC_CANCEL_USERDATA and _OP: match user_data and opcode */
#define OWN_CANCEL_USERDATA (1U << 4)
#define OWN_CANCEL_OP (1U << 5)
/* the flags the daemon's ring takes (src/core/cancel.c): any other is its EINVAL */
#define OWN_CANCEL_FLAGS (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD | \
			  IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD_FIXED)

/* Linux's io_uring_sync_cancel_reg, 6.6's layout (the same 64 bytes as 6.0's) */
struct own_sync_cancel {
	uint64_t addr;
	int32_t fd;
	uint32_t flags;
	struct __kernel_timespec timeout;
	uint8_t opcode;
	uint8_t pad[7];
	uint64_t pad2[3];
};

/*
 * One look for what a cancel names on the kernel ring, cancelling it
 * (o->lock held): IORING_REGISTER_SYNC_CANCEL with a zero timeout, which
 * answers as ASYNC_CANCEL would but for a request found running, which it
 * waits for (-ETIME after no time, -EINTR at a signal): that is
 * ASYNC_CANCEL's -EALREADY.
 */
static int kernel_cancel(struct pl_own *o, uint64_t addr, int fd, unsigned flags, uint8_t opcode)
{
	struct own_sync_cancel sc;
	long ret;

	memset(&sc, 0, sizeof(sc));
	sc.addr = addr;
	sc.fd = fd;
	sc.flags = flags;
	sc.opcode = opcode;
	/* what this submission queued before the cancel is in the ring, as on Linux */
	own_flush(o);
	ret = sys_uring_register(o->fd, IORING_REGISTER_SYNC_CANCEL, &sc, 1);
	if (ret == -ETIME || ret == -EINTR)
		ret = -EALREADY;
	return (int)ret;
}

/* Whether a TIMEOUT or LINK_TIMEOUT with this user_data was queued on the kernel ring lately. */
static bool own_timeout(const struct pl_own *o, uint64_t user_data)
{
	for (unsigned i = 0; i < o->tmo_n; i++)
		if (o->tmo[i] == user_data)
			return true;
	return false;
}

/* The cancel's own CQE, through the kernel ring after the CQEs of what it cancelled there. */
static bool xcancel_answer(struct plan *pl, const struct io_uring_sqe *sqe, int res)
{
	/* as Linux: a success asked not to post, posts nothing */
	if (res < 0 || !(sqe->flags & IOSQE_CQE_SKIP_SUCCESS))
		own_queue_fail(pl->o, sqe->user_data, res);
	return true;
}

/*
 * An ASYNC_CANCEL or TIMEOUT_REMOVE in no chain, on a ring whose kernel
 * ring exists: what it names may be on either ring. The kernel ring is
 * looked in first (kernel_cancel); what it found there is the answer, here
 * (true); what it did not find is the daemon's ring's to look for, the SQE
 * going there as before (false), and so is all the daemon answers alone:
 * a cancel by a device's descriptor, flags or fields it refuses. A timeout
 * update (IORING_TIMEOUT_UPDATE, IORING_LINK_TIMEOUT_UPDATE) of a timeout
 * queued on the kernel ring goes there (the daemon's ring updates none,
 * EOPNOTSUPP). A cancel of all (IORING_ASYNC_CANCEL_ALL, _ANY) that
 * found some on the kernel ring is answered with their count and is also
 * made on the daemon's ring, its CQE not posted unless it fails
 * (IOSQE_CQE_SKIP_SUCCESS: its count is not added; docs/compat.md).
 */
static bool xcancel(struct plan *pl, const struct io_uring_sqe *in)
{
	/* read once: the program may be writing its SQ meanwhile */
	struct io_uring_sqe sqe = *in;
	unsigned flags = sqe.cancel_flags;
	bool all, own;
	int res;

	if (sqe.opcode == IORING_OP_TIMEOUT_REMOVE) {
		if (sqe.buf_index || sqe.len || sqe.splice_fd_in)
			return false;	/* the daemon's answer */
		/* an update of a timeout queued here: the kernel ring's, whose answer is Linux's */
		if (sqe.timeout_flags & IORING_TIMEOUT_UPDATE_MASK) {
			/* a personality's id is the daemon's: the daemon's answer */
			if (sqe.personality || !own_timeout(pl->o, sqe.addr))
				return false;
			sqe.flags &= (uint8_t)~(IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
			if (!own_queue(pl->o, &sqe))
				own_queue_fail(pl->o, sqe.user_data, -EBUSY);
			return true;
		}
		/* a remove Linux takes (a bad one: the daemon's) */
		if (sqe.timeout_flags)
			return false;
		/* Linux's TIMEOUT_REMOVE is a cancel of a TIMEOUT by user_data */
		res = kernel_cancel(pl->o, sqe.addr, 0, OWN_CANCEL_USERDATA | OWN_CANCEL_OP,
				    IORING_OP_TIMEOUT);
		/* -EINVAL: a kernel before 6.6, without _OP */
		if (res == -ENOENT || res == -EINVAL)
			return false;
		return xcancel_answer(pl, &sqe, res);
	}
	if ((flags & ~OWN_CANCEL_FLAGS) || sqe.off || sqe.file_index ||
	    ((flags & IORING_ASYNC_CANCEL_FD) && (flags & IORING_ASYNC_CANCEL_ANY)))
		return false;
	all = flags & (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY);
	if (flags & IORING_ASYNC_CANCEL_FD) {
		own = flags & IORING_ASYNC_CANCEL_FD_FIXED ? own_slot(pl->o, (unsigned)sqe.fd)
							   : own_fd(sqe.fd);
		/* a device's requests are the daemon's alone, an own file's the kernel's */
		if (!own)
			return false;
		return xcancel_answer(pl, &sqe, kernel_cancel(pl->o, sqe.addr, sqe.fd, flags, 0));
	}
	res = kernel_cancel(pl->o, sqe.addr, sqe.fd, flags, 0);
	if (!all)
		return res == -ENOENT ? false : xcancel_answer(pl, &sqe, res);
	if (res <= 0)
		return false;	/* none there: the daemon's count is the answer */
	pl->follow[pl->nfollow] = sqe;
	pl->follow[pl->nfollow++].flags = IOSQE_CQE_SKIP_SUCCESS;
	return xcancel_answer(pl, &sqe, res);
}

static bool plan_divert(const struct io_uring_sqe *sqe, unsigned pos, void *ctx)
{
	struct plan *pl = ctx;
	unsigned k = pos - pl->base;

	if (!pl->started || k >= pl->n)
		return false;	/* another thread's, submitted meanwhile: the daemon's */
	switch (pl->v[k]) {
	case V_OWN:
		if (sqe->opcode == IORING_OP_TIMEOUT || sqe->opcode == IORING_OP_LINK_TIMEOUT) {
			struct pl_own *o = pl->o;

			o->tmo[o->tmo_next] = sqe->user_data;
			o->tmo_next = (o->tmo_next + 1) % OWN_TIMEOUTS;
			if (o->tmo_n < OWN_TIMEOUTS)
				o->tmo_n++;
		}
		if ((pl->dangling && k == pl->last) || sqe->personality) {
			/* read once: the program may be writing its SQ meanwhile */
			struct io_uring_sqe copy = *sqe;

			/*
			 * A chain still open at the end of the submission ends
			 * there (Linux's io_submit_state_end): on the kernel ring
			 * its link flag would tie it to the CQEs queued after it
			 * (own_queue_fail) or to the next submission's SQEs.
			 */
			if (pl->dangling && k == pl->last)
				copy.flags &= (uint8_t)~(IOSQE_IO_LINK | IOSQE_IO_HARDLINK);
			/* the kernel ring's id for it (plan_note found one, unless rewritten since) */
			if (copy.personality) {
				uint16_t kid = copy.personality < OWN_MAX_PERS ?
						       pl->o->pers[copy.personality] : 0;

				if (!kid) {
					own_queue_fail(pl->o, copy.user_data, -EINVAL);
					return true;
				}
				copy.personality = kid;
			}
			if (!own_queue(pl->o, &copy))
				own_queue_fail(pl->o, copy.user_data, -EBUSY);
			return true;
		}
		if (!own_queue(pl->o, sqe))
			own_queue_fail(pl->o, sqe->user_data, -EBUSY);
		return true;
	case V_LOCAL:
		memcpy(&pl->local[pl->nlocal++], sqe, sizeof(*sqe));
		return true;
	case V_EINVAL:
		own_queue_fail(pl->o, sqe->user_data, -EINVAL);
		return true;
	case V_ECANCELED:
		own_queue_fail(pl->o, sqe->user_data, -ECANCELED);
		return true;
	case V_XCANCEL:
		return xcancel(pl, sqe);
	default:
		return false;
	}
}

/* An SQE the preload runs itself (C_LOCAL): its result, as the call's through libc. */
static int run_local(const struct io_uring_sqe *sqe)
{
	int ret;

	/*
	 * Run here, as this thread: a personality's credentials would not
	 * be the ones it runs as (docs/compat.md).
	 */
	if (sqe->personality)
		return -EOPNOTSUPP;
	switch (sqe->opcode) {
	case IORING_OP_OPENAT:
		/* a direct descriptor (file_index) would go in a table the daemon holds */
		if (sqe->file_index || sqe->buf_index || sqe->ioprio)
			return -EINVAL;
		ret = pl_open_path(sqe->fd, (const char *)(uintptr_t)sqe->addr,
				   (int)sqe->open_flags | O_LARGEFILE, (mode_t)sqe->len);
		break;
	case IORING_OP_STATX:
		if (sqe->buf_index || sqe->splice_fd_in)
			return -EINVAL;
		ret = statx(sqe->fd, (const char *)(uintptr_t)sqe->addr, (int)sqe->statx_flags,
			    sqe->len, (struct statx *)(uintptr_t)sqe->addr2);
		break;
	case IORING_OP_CLOSE:
		if (sqe->off || sqe->addr || sqe->len || sqe->rw_flags || sqe->buf_index)
			return -EINVAL;
		/* Linux's io_close refuses an io_uring fd (its own or another's) */
		if (pl_uring_is_ring(sqe->fd))
			return -EBADF;
		ret = close(sqe->fd);
		break;
	default:
		return -EINVAL;
	}
	return ret < 0 ? -errno : ret;
}

int pl_own_submit(struct pl_own **op, struct ucmd_ring *ring, const struct pl_own_bufs *b,
		  unsigned to_submit, unsigned flags)
{
	struct plan pl = { .n = to_submit };
	int ret;

	pl.o = own_get(op, ring, b);
	if (!pl.o)
		return dc_enter(ring, to_submit, 0, flags);	/* the daemon's answers, as before */
	pl.v = calloc(to_submit ? to_submit : 1, 1);
	pl.local = calloc(to_submit ? to_submit : 1, sizeof(*pl.local));
	pl.follow = calloc(to_submit ? to_submit : 1, sizeof(*pl.follow));
	if (!pl.v || !pl.local || !pl.follow) {
		free(pl.v);
		free(pl.local);
		free(pl.follow);
		return -ENOMEM;
	}
	dc_psq_each_sqe(ring, to_submit, plan_note, &pl);
	pl.dangling = pl.in_chain;
	if (pl.in_chain)
		resolve(&pl, pl.n - 1 < pl.chain ? pl.chain : pl.n - 1);
	pthread_mutex_lock(&pl.o->lock);
	ret = dc_enter_divert(ring, to_submit, 0, flags, plan_divert, &pl);
	/* after the SQ lock: an open of a device asks the daemon */
	for (unsigned i = 0; i < pl.nlocal; i++) {
		int res = run_local(&pl.local[i]);

		/* as Linux: a success asked not to post, posts nothing */
		if (res < 0 || !(pl.local[i].flags & IOSQE_CQE_SKIP_SUCCESS))
			own_queue_fail(pl.o, pl.local[i].user_data, res);
	}
	own_flush(pl.o);
	pthread_mutex_unlock(&pl.o->lock);
	/* outside the SQ lock, which dc_inject_sqe takes */
	for (unsigned i = 0; i < pl.nfollow; i++) {
		int err;

		while ((err = dc_inject_sqe(ring, &pl.follow[i])) == -EAGAIN)
			sched_yield();
		if (err)
			pl_trace("the daemon's ring: cancel %llx not made (%d)",
				 (unsigned long long)pl.follow[i].user_data, err);
	}
	free(pl.v);
	free(pl.local);
	free(pl.follow);
	return ret;
}

/* ---- registration ---- */

/*
 * Put t in place of the table and free the old one once no look holds it
 * (sqe_class counts each, a few loads long). Under the ring's reg_lock.
 */
static void swap_slots(struct pl_own *o, struct own_slots *t)
{
	struct own_slots *old = atomic_exchange(&o->slots, t);

	while (atomic_load(&o->slot_readers))
		sched_yield();
	if (old != &no_slots)
		free(old);
}

long pl_own_register_files(struct pl_own **op, struct ucmd_ring *ring,
			   const struct pl_own_bufs *b, const void *arg, unsigned nr)
{
	int *fds, *dev, *own;
	struct own_slots *slot;
	bool any = false;
	struct pl_own *o;
	long ret;

	if (!nr || nr > (1u << 20) || !arg)
		return PL_OWN_PASS;	/* the daemon's answer */
	fds = malloc(nr * sizeof(int));
	if (!fds)
		return -ENOMEM;
	if (pl_copy_in(fds, arg, nr * sizeof(int))) {
		free(fds);
		return PL_OWN_PASS;	/* the daemon's EFAULT */
	}
	for (unsigned i = 0; i < nr; i++) {
		/* a device copied with the program's own instruction: as an SQE's (uring.c) */
		if (own_fd(fds[i]))
			pl_fd_adopt(fds[i], EBADF);
		any |= own_fd(fds[i]);
	}
	if (!any) {
		free(fds);
		return PL_OWN_PASS;
	}
	o = own_get(op, ring, b);
	dev = malloc(nr * sizeof(int));
	own = malloc(nr * sizeof(int));
	slot = calloc(1, sizeof(*slot) + nr * sizeof(bool));
	if (!o || !dev || !own || !slot) {
		ret = -ENOMEM;
		goto out;
	}
	for (unsigned i = 0; i < nr; i++) {
		slot->own[i] = own_fd(fds[i]);
		dev[i] = slot->own[i] ? -1 : fds[i];
		own[i] = slot->own[i] ? fds[i] : -1;
	}
	ret = dc_register_raw(ring, IORING_REGISTER_FILES, dev, nr, -1, NULL, 0, NULL);
	if (ret < 0)
		goto out;
	ret = sys_uring_register(o->fd, IORING_REGISTER_FILES, own, nr);
	if (ret < 0) {
		dc_unregister_files(ring);
		goto out;
	}
	slot->nr = nr;
	swap_slots(o, slot);
	slot = NULL;
out:
	free(fds);
	free(dev);
	free(own);
	free(slot);
	return ret;
}

void pl_own_unregister_files(struct pl_own *o)
{
	if (!o || !atomic_load(&o->slots))
		return;
	swap_slots(o, &no_slots);
	sys_uring_register(o->fd, IORING_UNREGISTER_FILES, NULL, 0);
}

int pl_own_register_personality(struct pl_own **op, struct ucmd_ring *ring,
				const struct pl_own_bufs *b, int id)
{
	struct pl_own *o;
	long kid;

	if (id <= 0 || (unsigned)id >= OWN_MAX_PERS)
		return -EINVAL;
	o = own_get(op, ring, b);
	if (!o)
		return -ENOMEM;
	/* this thread's credentials, as the daemon took them for id */
	kid = sys_uring_register(o->fd, IORING_REGISTER_PERSONALITY, NULL, 0);
	if (kid < 0)
		return (int)kid;
	if (!kid || kid > 0xffff) {
		sys_uring_register(o->fd, IORING_UNREGISTER_PERSONALITY, NULL, (unsigned)kid);
		return -EINVAL;
	}
	o->pers[id] = (uint16_t)kid;
	return 0;
}

void pl_own_unregister_personality(struct pl_own *o, int id)
{
	if (!o || id <= 0 || (unsigned)id >= OWN_MAX_PERS || !o->pers[id])
		return;
	sys_uring_register(o->fd, IORING_UNREGISTER_PERSONALITY, NULL, o->pers[id]);
	o->pers[id] = 0;
}

void pl_own_buffers(struct pl_own *o, const struct pl_own_bufs *b)
{
	long ret;

	if (!o)
		return;
	sys_uring_register(o->fd, IORING_UNREGISTER_BUFFERS, NULL, 0);
	if (!b || !b->nr)
		return;
	/* a failure leaves own fixed-buffer requests the kernel's answer (-EFAULT) */
	ret = sys_uring_register(o->fd, IORING_REGISTER_BUFFERS, b->iov, b->nr);
	if (ret < 0)
		pl_trace("kernel ring %d: buffers not registered: %ld", o->fd, ret);
}
