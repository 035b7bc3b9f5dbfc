/* SPDX-License-Identifier: MIT */
/*
 * The interposers define libc's own names (fstat and fstat64, fcntl and
 * fcntl64 as two symbols): without this, glibc's headers would rename the
 * first of each pair to the second. On 64-bit Linux both are one ABI.
 */
#undef _FILE_OFFSET_BITS
/*
 * io_uring_setup/enter/register for the program, on the daemon's rings.
 *
 * io_uring_setup makes a ring in ucmdd (the daemon backend's
 * dc_queue_init) and gives the program a descriptor of its own on the
 * ring's memfd. The memfd holds the rings at offset 0 (SQ and CQ in one
 * region, IORING_FEAT_SINGLE_MMAP) and the SQEs on a page of their own:
 * the program's mmap(IORING_OFF_SQ_RING) is a plain mmap of offset 0 and
 * needs nothing of ours; mmap(IORING_OFF_CQ_RING) and mmap(IORING_OFF_SQES)
 * name offsets the memfd does not have, so they are caught (seccomp.c) and
 * mapped here at where the CQ and the SQEs really are. The program then
 * fills SQEs and moves the SQ tail itself, exactly as on Linux: without
 * SQPOLL in an SQ of its own in the memfd, which its io_uring_enter copies
 * into the one the daemon's proxy polls (UCMDD_QI_SUBMIT_COPY), with
 * SQPOLL in that one directly.
 *
 * Every ring made here is ucmd's: its device requests reach the daemon
 * (the fds in its SQEs are the program's numbers, which the daemon mirrors
 * for device fds); a request on the program's own files, pipes, sockets
 * runs on a kernel ring of ours (uring_own.c), found by the scan each
 * submitting enter makes of the SQEs anyway (docs/compat.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/io_uring.h>

#include "client/client.h"
#include "core/backend.h"
#include "preload/preload.h"
#include "preload/uring_own.h"

#define PL_MAX_RING_FD 1024
#define PL_MAX_REG_RINGS 16u	/* IORING_REGISTER_RING_FDS slots, as Linux's */

struct pl_ring {
	struct ucmd_ring ring;	/* the daemon backend's view: its own mapping */
	int fd;			/* the program's descriptor */
	pid_t pid;		/* the process that made it: a forked child's copy is not usable */
	size_t rings_len;	/* offset 0..rings_len: SQ and CQ rings */
	size_t sqes_off, sqes_len;
	struct pl_own *own;	/* the kernel ring for own fds (uring_own.c), or NULL */
	struct pl_own_bufs bufs;	/* the registered buffers, for that ring */
	pthread_mutex_t reg_lock;	/* bufs */
	/*
	 * The last submission's look found own SQEs: the next takes the two
	 * steps at once (the single walk would stop at its first SQE). A hint,
	 * either answer submits the same.
	 */
	bool own_last;
	/* a forked child's: its submits on this inherited ring (uring_relay.c) */
	struct pl_relay *_Atomic relay;
};

static struct pl_ring *_Atomic rings[PL_MAX_RING_FD];
static struct pl_ring *_Atomic reg_rings[PL_MAX_REG_RINGS];
/*
 * This process has used io_uring itself (made a ring, submitted on one,
 * registered ring fds): Linux's io_uring_task, which holds the registered
 * ring indexes and which a forked child does not inherit.
 */
static atomic_bool has_tctx;

void pl_uring_forked(void)
{
	for (unsigned i = 0; i < PL_MAX_RING_FD; i++) {
		struct pl_ring *r = atomic_load(&rings[i]);

		/* the parent's relay thread is not here; a thread's lock may have been held */
		if (r) {
			atomic_store(&r->relay, NULL);
			dc_ring_forked(&r->ring);
		}
	}
	for (unsigned i = 0; i < PL_MAX_REG_RINGS; i++)
		atomic_store(&reg_rings[i], NULL);
	atomic_store(&has_tctx, false);
}

static struct pl_ring *ring_get(int fd)
{
	if (fd < 0 || fd >= PL_MAX_RING_FD)
		return NULL;
	return atomic_load_explicit(&rings[fd], memory_order_acquire);
}

bool pl_uring_is_ring(int fd)
{
	return ring_get(fd) != NULL;
}

long pl_io_uring_setup(unsigned entries, struct io_uring_params *up)
{
	struct io_uring_params p;
	struct ucmd_engine *e;
	struct pl_ring *r;
	unsigned cqe_sz;
	int ret, fd;

	ret = pl_copy_in(&p, up, sizeof(p));
	if (ret)
		return ret;
	/* what the kernel refuses before it looks further */
	for (unsigned i = 0; i < sizeof(p.resv) / sizeof(p.resv[0]); i++)
		if (p.resv[i])
			return -EINVAL;
	e = pl_engine();
	if (!e)
		return -errno;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->reg_lock, NULL);
	/*
	 * The program fills an SQ of its own, copied into the daemon's at
	 * each enter, so that its submit need not wait for ucmdd to take
	 * them (docs/daemon.md); a ring without an SQ array too, its head and
	 * tail where it maps them (proto.h's UCMDD_PSQ_NOARRAY_OFF). A SQPOLL
	 * ring is taken without an enter.
	 */
	ret = dc_queue_init_psq(e, entries, &r->ring, &p);
	if (ret) {
		free(r);
		return ret;
	}
	/* Linux's ring descriptors are close-on-exec */
	fd = fcntl(r->ring.ring_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0 || fd >= PL_MAX_RING_FD) {
		ret = fd < 0 ? -errno : -EMFILE;
		goto fail;
	}
	r->fd = fd;
	r->pid = pl_pid();
	cqe_sz = (p.flags & IORING_SETUP_CQE32) ? 32 : 16;
	r->rings_len = p.cq_off.cqes + (size_t)p.cq_entries * cqe_sz;
	if (p.sq_off.array + (size_t)p.sq_entries * 4 > r->rings_len)
		r->rings_len = p.sq_off.array + (size_t)p.sq_entries * 4;
	r->sqes_off = p.sq_off.resv2;
	r->sqes_len = (size_t)p.sq_entries * ((p.flags & IORING_SETUP_SQE128) ? 128 : 64);
	/* the layout's private fields are the daemon backend's, not Linux's ABI */
	p.sq_off.resv2 = 0;
	p.cq_off.resv2 = 0;
	ret = pl_copy_out(up, &p, sizeof(p));
	if (ret)
		goto fail;
	atomic_store_explicit(&rings[fd], r, memory_order_release);
	atomic_store(&has_tctx, true);
	/* its poller takes SQEs without an enter to mirror the supervisor's descriptors at */
	if (p.flags & IORING_SETUP_SQPOLL)
		pl_svtab_watch();
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	ucmd_queue_exit(&r->ring);
	free(r);
	return ret;
}

/* The program closed its ring fd (through libc; fdmap.c's close). */
void pl_uring_close(int fd)
{
	struct pl_ring *r;

	if (fd < 0 || fd >= PL_MAX_RING_FD)
		return;
	r = atomic_exchange(&rings[fd], NULL);
	if (!r)
		return;
	/*
	 * The ring itself stays until the process ends (the daemon frees it
	 * then): another thread may be inside enter on it, and the program's
	 * mappings of it stay valid after close as on Linux. So do its
	 * IORING_REGISTER_RING_FDS indexes, which hold the ring in Linux
	 * (liburing's io_uring_close_ring_fd registers, then closes the fd).
	 */
	if (r->pid == pl_pid())
		pl_trace("ring fd %d closed; the daemon keeps its ring until exit", fd);
}

long pl_uring_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	struct pl_ring *r = ring_get(fd);
	off_t real;
	void *p;

	if (!r)
		return -EBADF;
	if (!len)
		return -EINVAL;
	switch (off) {
	case IORING_OFF_SQ_RING:
	case IORING_OFF_CQ_RING:
		if (len > ((r->rings_len + 4095) & ~(size_t)4095))
			return -EINVAL;
		real = 0;
		break;
	case IORING_OFF_SQES:
		if (len > ((r->sqes_len + 4095) & ~(size_t)4095))
			return -EINVAL;
		real = (off_t)r->sqes_off;
		break;
	default:
		return -EINVAL;
	}
	p = mmap(addr, len, prot, flags, fd, real);
	return p == MAP_FAILED ? -errno : (long)(uintptr_t)p;
}

/* The ring enter names, or NULL and *err: as io_uring_enter(2) finds it. */
static struct pl_ring *enter_ring(int fd, unsigned flags, int *err)
{
	*err = -EBADF;
	if (flags & IORING_ENTER_REGISTERED_RING) {
		/* no io_uring_task (a forked child that used none yet), or no such index */
		if (!atomic_load(&has_tctx) || fd < 0 || (unsigned)fd >= PL_MAX_REG_RINGS) {
			*err = -EINVAL;
			return NULL;
		}
		return atomic_load(&reg_rings[fd]);
	}
	return ring_get(fd);
}

static long enter_ring_args(struct pl_ring *r, unsigned to_submit, unsigned min_complete,
			    unsigned flags, const void *arg, size_t argsz, struct dc_plain *plain);

/*
 * io_uring_enter on a ring inherited through fork, which is its maker's:
 * the daemon runs its requests in the maker's memory. 0 when this enter is
 * served on it, else the answer.
 *
 * An SQPOLL ring's requests are its maker's on Linux too (its poller is a
 * thread of the maker's): the child's SQEs are taken as the maker's, and
 * its enter (a wake-up, a wait for CQEs, all in the shared mappings and
 * eventfds) is served. Any other ring's enter that submits nothing (a wait
 * for CQEs, a look) is served as Linux serves it, in the shared CQ, but
 * for a IORING_SETUP_DEFER_TASKRUN ring, whose waiter must be its
 * submitter (io_cqring_wait: EEXIST; an IOPOLL ring's wait polls instead). A submission from the child would run
 * in the wrong memory: EEXIST for a IORING_SETUP_SINGLE_ISSUER ring (Linux's
 * own answer to any task but the maker), EBADF for the others (Linux would
 * submit them in the child's memory, which the daemon's ring cannot act in
 * beside the maker's). Once the maker is gone the daemon has ended the ring:
 * EOWNERDEAD, Linux's answer when an SQPOLL ring's poller is gone.
 */
static long inherited_check(const struct pl_ring *r, unsigned to_submit, unsigned flags)
{
	unsigned setup = r->ring.flags;

	if (setup & IORING_SETUP_SQPOLL)
		return 0;
	if (to_submit && (setup & IORING_SETUP_SINGLE_ISSUER))
		return -EEXIST;
	if ((flags & IORING_ENTER_GETEVENTS) && (setup & IORING_SETUP_DEFER_TASKRUN) &&
	    !(setup & IORING_SETUP_IOPOLL))
		return -EEXIST;
	return 0;
}

#define PL_ENTER_UNKNOWN 8	/* numbers looked at per enter, at most */

struct unknown_fds {
	int fd[PL_ENTER_UNKNOWN];
	unsigned n;
	const struct pl_own *own;
	bool any_own;		/* an SQE that is the program's own (or may be) */
};

/*
 * Linux's answer to an SQE on a device whose PCI function was removed
 * (pl_dev_gone), or 0 for one the daemon serves: a passthrough command
 * ENODEV (nvme_uring_cmd_io's request on the dying queue, as the ioctls),
 * a disk's reads, writes and flushes EIO (bios to a dead disk, as rw.c's).
 */
static int gone_res_of(const struct io_uring_sqe *sqe, const struct pl_file *f)
{
	if (!pl_dev_gone(f->dev) || !pl_uring_dev_op(sqe->opcode))
		return 0;
	if (sqe->opcode == IORING_OP_URING_CMD)
		return -ENODEV;
	return f->dev->kind == PL_DEV_NS_BLK ? -EIO : 0;
}

static int gone_res(const struct io_uring_sqe *sqe)
{
	struct pl_file *f;

	if ((sqe->flags & IOSQE_FIXED_FILE) || sqe->fd < 0 || !(f = pl_fd(sqe->fd)))
		return 0;
	return gone_res_of(sqe, f);
}

/*
 * The daemon's ring does not know the exec's removals: an SQE on a
 * removed device becomes, before the enter submits it, a NOP that posts
 * Linux's answer (Linux's nop_flags INJECT_RESULT), its user_data and
 * link flags kept. The SQE lies in memory the program gave up to the
 * submission (its own SQ, or the ring's before sq_limit).
 */
static void fail_gone_sqe(const struct io_uring_sqe *csqe)
{
	struct io_uring_sqe *sqe = (struct io_uring_sqe *)csqe;
	int res = gone_res(csqe);
	uint64_t user_data;
	uint8_t flags;

	if (!res)
		return;
	user_data = sqe->user_data;
	flags = sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK | IOSQE_IO_DRAIN |
			      IOSQE_CQE_SKIP_SUCCESS);
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_NOP;
	sqe->flags = flags;
	sqe->fd = -1;
	sqe->rw_flags = UCMD_NOP_INJECT_RESULT;
	sqe->len = (unsigned)res;
	sqe->user_data = user_data;
}

/*
 * An SQE's fd that is none of ours: kept (once) to be looked at after the
 * scan; and whether the SQE may be the program's own (uring_own.c).
 */
static void note_unknown(const struct io_uring_sqe *sqe, unsigned pos, void *ctx)
{
	struct unknown_fds *u = ctx;
	int fd;

	(void)pos;
	fail_gone_sqe(sqe);
	fd = sqe->fd;
	if (!u->any_own && pl_own_sqe(u->own, sqe))
		u->any_own = true;
	if ((sqe->flags & IOSQE_FIXED_FILE) || fd < 0 || pl_fd(fd) || ring_get(fd) ||
	    u->n == PL_ENTER_UNKNOWN)
		return;
	for (unsigned i = 0; i < u->n; i++)
		if (u->fd[i] == fd)
			return;
	u->fd[u->n++] = fd;
}

/*
 * SQEs about to be submitted may name a device copied with the program's
 * own instruction (a raw dup) before any call through libc found it: the
 * daemon would not know the number (EBADF). Each number none of ours is
 * asked about as a failed call's would be (pl_fd_adopt: an fstat, a readlink for a directory; the
 * daemon opens a copy at its number). Any ring without SQPOLL (the
 * program's own SQ, or the ring's from a daemon without it: the proxy takes
 * nothing past what an enter submits); an SQPOLL ring's poller takes SQEs
 * without an enter.
 */
static bool adopt_sqe_fds(struct pl_ring *r, unsigned to_submit)
{
	struct unknown_fds u = { .n = 0, .own = __atomic_load_n(&r->own, __ATOMIC_ACQUIRE) };

	if (!to_submit)
		return false;
	dc_psq_each_sqe(&r->ring, to_submit, note_unknown, &u);
	for (unsigned i = 0; i < u.n; i++)
		pl_fd_adopt(u.fd[i], EBADF);
	/* own SQEs are diverted only from the program's own SQ (dc_enter_divert) */
	return u.any_own && dc_psq_own(&r->ring);
}

/*
 * A submission naming the program's own files: submitted apart
 * (uring_own.c), then the wait as any enter's. What was submitted wins
 * over the wait's result, as io_uring_enter(2).
 */
static long enter_own(struct pl_ring *r, unsigned to_submit, unsigned min_complete, unsigned flags,
		      const void *arg, size_t argsz)
{
	unsigned sflags = flags & (IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT);
	long sub, ret;

	if (flags & ~(IORING_ENTER_GETEVENTS | IORING_ENTER_SQ_WAKEUP | IORING_ENTER_SQ_WAIT |
		      IORING_ENTER_EXT_ARG | IORING_ENTER_REGISTERED_RING))
		return -EINVAL;
	pthread_mutex_lock(&r->reg_lock);
	sub = pl_own_submit(&r->own, &r->ring, &r->bufs, to_submit, sflags);
	pthread_mutex_unlock(&r->reg_lock);
	if (sub < 0 || !(flags & IORING_ENTER_GETEVENTS))
		return sub;
	ret = enter_ring_args(r, 0, min_complete, flags & ~(sflags | IORING_ENTER_REGISTERED_RING),
			      arg, argsz, NULL);
	return sub ? sub : ret;
}

/*
 * A forked child's submitting enter on an inherited ring without SQPOLL:
 * its SQEs run in its own memory on a ring of its connection, their CQEs
 * relayed into the shared CQ (uring_relay.c); then the wait, if any, on the
 * shared CQ. EOWNERDEAD once the maker's ring is gone, as a wait's.
 */
static long inherited_submit(struct pl_ring *r, unsigned to_submit, unsigned min_complete,
			     unsigned flags, const void *arg, size_t argsz)
{
	long n, ret;

	/* nothing to submit and no wait: -ENOTCONN from a ring the daemon ended */
	if (dc_enter(&r->ring, 0, 0, 0) == -ENOTCONN)
		return -EOWNERDEAD;
	atomic_store(&has_tctx, true);
	/* the numbers the SQEs name are ours: the connection mirrors them */
	if (!pl_engine())
		return -errno;
	pl_svtab_sync();
	adopt_sqe_fds(r, to_submit);
	n = pl_relay_submit(&r->ring, &r->relay, to_submit);
	if (n < 0)
		return n;
	ret = enter_ring_args(r, 0, min_complete, flags, arg, argsz, NULL);
	if (ret == -ENOTCONN)
		ret = -EOWNERDEAD;
	/* as io_uring_enter(2): what was submitted wins over the wait's result */
	return n ? n : ret;
}

/*
 * A submission as it was before the single walk: the SQEs looked at first
 * (raw dups adopted, own ones found), then submitted, the own path's
 * planned and diverted.
 */
static long enter_two_step(struct pl_ring *r, unsigned to_submit, unsigned min_complete,
			   unsigned flags, const void *arg, size_t argsz)
{
	bool own = adopt_sqe_fds(r, to_submit);

	__atomic_store_n(&r->own_last, own, __ATOMIC_RELAXED);
	if (own)
		return enter_own(r, to_submit, min_complete, flags, arg, argsz);
	return enter_ring_args(r, to_submit, min_complete, flags, arg, argsz, NULL);
}

/*
 * An SQE the daemon's ring can take as it is, with no look first: one
 * adopt_sqe_fds would pass by (a fixed file, no descriptor, one of ours)
 * and not the program's own (uring_own.c). Under the ring's submit lock.
 */
static bool plain_sqe(const struct io_uring_sqe *sqe, void *ctx)
{
	int fd = sqe->fd;
	struct pl_file *f;

	if (pl_own_sqe(ctx, sqe))
		return false;
	if ((sqe->flags & IOSQE_FIXED_FILE) || fd < 0)
		return true;
	/* a removed device's: the two steps post Linux's answer in its place (fail_gone_sqe) */
	if ((f = pl_fd(fd)))
		return !gone_res_of(sqe, f);
	return ring_get(fd) != NULL;
}

/*
 * A submitting enter on a ring with the program's own SQ: the SQEs are
 * copied as they are classified, in one walk under one lock (the common
 * case: every one a device's or a fixed file's). At the first chain holding
 * one that is not, the copy stops and that chain and the rest take the two
 * steps (its adoption and the own path's lookahead need them whole); what
 * was submitted first wins over their error, as io_uring_enter(2). An error
 * before the copy (the arguments, the flags, a daemon gone) submitted
 * nothing: the two steps give the answer they gave.
 */
static long enter_plain(struct pl_ring *r, unsigned to_submit, unsigned min_complete,
			unsigned flags, const void *arg, size_t argsz)
{
	struct dc_plain pl = { .fn = plain_sqe,
			       .ctx = (void *)__atomic_load_n(&r->own, __ATOMIC_ACQUIRE) };
	long n, rest;

	n = enter_ring_args(r, to_submit, min_complete, flags, arg, argsz, &pl);
	if (n < 0 && !pl.walked)
		return enter_two_step(r, to_submit, min_complete, flags, arg, argsz);
	if (n < 0 || !pl.left)
		return n;
	rest = enter_two_step(r, pl.left, min_complete, flags, arg, argsz);
	if (rest < 0)
		return n ? n : rest;
	return n + rest;
}

long pl_io_uring_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags,
		       const void *arg, size_t argsz)
{
	struct pl_ring *r;
	int ret;

	r = enter_ring(fd, flags, &ret);
	if (!r)
		return ret;
	if (r->pid != pl_pid()) {
		ret = (int)inherited_check(r, to_submit, flags);
		if (ret)
			return ret;
		if (to_submit && !(r->ring.flags & IORING_SETUP_SQPOLL))
			return inherited_submit(r, to_submit, min_complete, flags, arg, argsz);
		ret = (int)enter_ring_args(r, to_submit, min_complete, flags, arg, argsz, NULL);
		return ret == -ENOTCONN ? -EOWNERDEAD : ret;
	}
	if (to_submit && !(r->ring.flags & IORING_SETUP_SQPOLL))
		atomic_store(&has_tctx, true);
	/* SQEs may name a device fd the supervisor gave (the program's own open) */
	pl_svtab_sync();
	if (!to_submit)	/* nothing to look at: a wait, a look */
		return enter_ring_args(r, 0, min_complete, flags, arg, argsz, NULL);
	if (dc_psq_own(&r->ring) && !__atomic_load_n(&r->own_last, __ATOMIC_RELAXED))
		return enter_plain(r, to_submit, min_complete, flags, arg, argsz);
	return enter_two_step(r, to_submit, min_complete, flags, arg, argsz);
}

static int enter_plain_or(struct pl_ring *r, unsigned to_submit, unsigned min_complete,
			  unsigned flags, struct dc_plain *plain)
{
	return plain ? dc_enter_plain(&r->ring, to_submit, min_complete, flags, plain)
		     : dc_enter(&r->ring, to_submit, min_complete, flags);
}

/* io_uring_enter on r, its arguments read from the program; plain: dc_enter_plain's */
static long enter_ring_args(struct pl_ring *r, unsigned to_submit, unsigned min_complete,
			    unsigned flags, const void *arg, size_t argsz, struct dc_plain *plain)
{
	struct io_uring_getevents_arg ga;
	sigset_t mask;
	int ret;

	flags &= ~IORING_ENTER_REGISTERED_RING;
	if (flags & IORING_ENTER_EXT_ARG) {
		struct __kernel_timespec ts;

		if (argsz != sizeof(ga))
			return -EINVAL;
		ret = pl_copy_in(&ga, arg, sizeof(ga));
		if (ret)
			return ret;
		if (ga.sigmask) {
			ret = pl_copy_in(&mask, (void *)(uintptr_t)ga.sigmask,
				      ga.sigmask_sz < sizeof(mask) ? ga.sigmask_sz : sizeof(mask));
			if (ret)
				return ret;
		}
		flags &= ~IORING_ENTER_EXT_ARG;
		if (!ga.ts)
			return enter_plain_or(r, to_submit, min_complete, flags, plain);
		ret = pl_copy_in(&ts, (void *)(uintptr_t)ga.ts, sizeof(ts));
		if (ret)
			return ret;
		return dc_enter_timeout_plain(&r->ring, to_submit, min_complete, flags, &ts,
					      ga.sigmask ? &mask : NULL, plain);
	}
	/* the sigmask form without a timeout: the wait is ours, not interruptible by it */
	return enter_plain_or(r, to_submit, min_complete, flags, plain);
}

static long register_ring_fds(struct pl_ring *r, void *arg, unsigned nr, bool reg)
{
	struct io_uring_rsrc_update up;
	unsigned done = 0;

	(void)r;
	if (reg)
		atomic_store(&has_tctx, true);	/* io_ringfd_register makes it first */
	for (; done < nr; done++) {
		struct io_uring_rsrc_update *u = (struct io_uring_rsrc_update *)arg + done;
		int ret = pl_copy_in(&up, u, sizeof(up));

		if (ret)
			return done ? (long)done : ret;
		if (reg) {
			struct pl_ring *t = ring_get((int)up.data);
			unsigned slot = up.offset;

			if (!t)
				return done ? (long)done : -EBADF;
			if (slot == -1U) {
				for (slot = 0; slot < PL_MAX_REG_RINGS; slot++)
					if (!atomic_load(&reg_rings[slot]))
						break;
				if (slot == PL_MAX_REG_RINGS)
					return done ? (long)done : -EBUSY;
			} else if (slot >= PL_MAX_REG_RINGS) {
				return done ? (long)done : -EINVAL;
			}
			atomic_store(&reg_rings[slot], t);
			up.offset = slot;
			if (pl_copy_out(u, &up, sizeof(up)))
				return done ? (long)done : -EFAULT;
		} else {
			if (up.offset >= PL_MAX_REG_RINGS)
				return done ? (long)done : -EINVAL;
			atomic_store(&reg_rings[up.offset], NULL);
		}
	}
	return (long)done;
}

/*
 * The buffers the daemon took (nr 0: none now), kept for the kernel ring
 * of own fds, which registers them too (uring_own.c).
 */
static void keep_buffers(struct pl_ring *r, const void *arg, unsigned nr)
{
	struct iovec *iov = NULL;

	if (nr) {
		iov = malloc(nr * sizeof(*iov));
		if (!iov || pl_copy_in(iov, arg, nr * sizeof(*iov))) {
			free(iov);
			iov = NULL;
			nr = 0;
		}
	}
	pthread_mutex_lock(&r->reg_lock);
	free(r->bufs.iov);
	r->bufs.iov = iov;
	r->bufs.nr = nr;
	pl_own_buffers(r->own, &r->bufs);
	pthread_mutex_unlock(&r->reg_lock);
}

/*
 * A registration that needs nothing of the caller's memory or file table
 * but what it sends (the probe, the eventfd): on a ring inherited through
 * fork, made on the maker's ring through this process's own connection,
 * naming the ring by its memfd (UCMDD_REG_SHARED); a ring the daemon ended
 * with its maker is EOWNERDEAD, as the child's enter on it.
 */
static int reg_call(struct pl_ring *r, unsigned opcode, unsigned nr, int fd, void *rep,
		    size_t rep_max, size_t *rep_len)
{
	struct ucmd_engine *e;
	int ret;

	if (r->pid == pl_pid())
		return dc_register_raw(&r->ring, opcode, NULL, nr, fd, rep, rep_max, rep_len);
	e = pl_engine();
	if (!e)
		return -errno;
	ret = dc_register_shared(e, &r->ring, opcode, NULL, nr, fd, rep, rep_max, rep_len);
	return ret == -EBADF ? -EOWNERDEAD : ret;
}

/*
 * io_uring_register on a ring inherited through fork, which is its maker's.
 * Linux's registrations belong to the ring, whoever makes them, and every
 * holder's submits see them. Made so here: ring fds (the registering
 * task's own, ours), the probe and the eventfd (reg_call). Buffers and
 * files would be the child's memory and descriptors, which the daemon's
 * ring, acting in the maker's, cannot reach: EOPNOTSUPP, before anything
 * is done (docs/compat.md). A IORING_SETUP_SINGLE_ISSUER ring's is EEXIST,
 * Linux's answer to any task but its submitter. 0: served as the maker's.
 */
static int inherited_register(const struct pl_ring *r, unsigned opcode)
{
	if (r->pid == pl_pid())
		return 0;
	if (r->ring.flags & IORING_SETUP_SINGLE_ISSUER)
		return -EEXIST;
	switch (opcode) {
	case IORING_REGISTER_RING_FDS:
	case IORING_UNREGISTER_RING_FDS:
	case IORING_REGISTER_PROBE:
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC:
	case IORING_UNREGISTER_EVENTFD:
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

long pl_io_uring_register(int fd, unsigned opcode, void *arg, unsigned nr_args)
{
	struct pl_ring *r;
	size_t len = 0;
	int efd = -1, ret;

	/* IORING_REGISTER_USE_REGISTERED_RING (6.3) is not in 6.1's ABI: plain fds only */
	r = ring_get(fd);
	if (!r)
		return -EBADF;
	ret = inherited_register(r, opcode);
	if (ret)
		return ret;
	switch (opcode) {
	case IORING_REGISTER_RING_FDS:
		return register_ring_fds(r, arg, nr_args, true);
	case IORING_UNREGISTER_RING_FDS:
		return register_ring_fds(r, arg, nr_args, false);
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC:
		if (nr_args != 1)
			return -EINVAL;
		ret = pl_copy_in(&efd, arg, sizeof(efd));
		if (ret)
			return ret;
		return reg_call(r, opcode, 1, efd, NULL, 0, NULL);
	case IORING_UNREGISTER_EVENTFD:
		if (arg || nr_args)
			return -EINVAL;	/* as Linux's __io_uring_register */
		return reg_call(r, opcode, 0, -1, NULL, 0, NULL);
	case IORING_REGISTER_PROBE: {
		size_t max = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
		struct io_uring_probe *p;

		if (!nr_args || nr_args > 256)
			return -EINVAL;
		p = calloc(1, max);
		if (!p)
			return -ENOMEM;
		ret = reg_call(r, opcode, nr_args, -1, p, max, &len);
		if (ret >= 0) {
			size_t want = sizeof(*p) + (size_t)nr_args * sizeof(p->ops[0]);

			/* the program's buffer holds nr_args ops; the daemon's answer fits it */
			if (len > want)
				len = want;
			if (pl_copy_out(arg, p, len))
				ret = -EFAULT;
		}
		free(p);
		return ret;
	}
	case IORING_REGISTER_FILES:
		pthread_mutex_lock(&r->reg_lock);
		ret = (int)pl_own_register_files(&r->own, &r->ring, &r->bufs, arg, nr_args);
		pthread_mutex_unlock(&r->reg_lock);
		if (ret != PL_OWN_PASS)
			return ret;
		return dc_register_raw(&r->ring, opcode, arg, nr_args, -1, NULL, 0, NULL);
	case IORING_UNREGISTER_FILES:
		/* the kernel ring's table changes as registration does: under the lock */
		pthread_mutex_lock(&r->reg_lock);
		ret = dc_register_raw(&r->ring, opcode, arg, nr_args, -1, NULL, 0, NULL);
		if (!ret)
			pl_own_unregister_files(__atomic_load_n(&r->own, __ATOMIC_ACQUIRE));
		pthread_mutex_unlock(&r->reg_lock);
		return ret;
	case IORING_REGISTER_PERSONALITY:
		/*
		 * Own SQEs run on the kernel ring: the same credentials are
		 * registered there, so that they run as the id names (Linux's
		 * semantics) rather than as the submitter.
		 */
		pthread_mutex_lock(&r->reg_lock);
		ret = dc_register_raw(&r->ring, opcode, arg, nr_args, -1, NULL, 0, NULL);
		if (ret > 0) {
			int err = pl_own_register_personality(&r->own, &r->ring, &r->bufs, ret);

			if (err) {
				dc_register_raw(&r->ring, IORING_UNREGISTER_PERSONALITY, NULL,
						(unsigned)ret, -1, NULL, 0, NULL);
				ret = err;
			}
		}
		pthread_mutex_unlock(&r->reg_lock);
		return ret;
	case IORING_UNREGISTER_PERSONALITY:
		pthread_mutex_lock(&r->reg_lock);
		ret = dc_register_raw(&r->ring, opcode, arg, nr_args, -1, NULL, 0, NULL);
		if (!ret)
			pl_own_unregister_personality(__atomic_load_n(&r->own, __ATOMIC_ACQUIRE),
						      (int)nr_args);
		pthread_mutex_unlock(&r->reg_lock);
		return ret;
	case IORING_REGISTER_BUFFERS:
	case IORING_UNREGISTER_BUFFERS:
		ret = dc_register_raw(&r->ring, opcode, arg, nr_args, -1, NULL, 0, NULL);
		if (!ret)
			keep_buffers(r, opcode == IORING_REGISTER_BUFFERS ? arg : NULL,
				     opcode == IORING_REGISTER_BUFFERS ? nr_args : 0);
		return ret;
	default:
		return dc_register_raw(&r->ring, opcode, arg, nr_args, -1, NULL, 0, NULL);
	}
}
