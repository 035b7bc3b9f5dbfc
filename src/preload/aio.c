/* SPDX-License-Identifier: MIT */
/*
 * Linux's native aio (io_setup, io_submit, io_getevents, io_pgetevents,
 * io_cancel, io_destroy: what libaio and fio's libaio engine call) on
 * ucmd's device fds. Without this, an iocb naming a device fd would reach
 * the kernel, which would refuse the placeholder behind the fd (an empty
 * directory: EINVAL) where the device serves it. libaio makes these calls through libc's syscall()
 * (interposed, seccomp.c) and a program may make them inline (caught by
 * the seccomp filter): both land here.
 *
 * Every context is made here, because io_setup names no file: ours is a
 * page of our own (its address is the context number, as Linux's is the
 * address of its ring; the page is zero, so libaio's user-space peek at
 * the ring, which checks AIO_RING_MAGIC, always falls back to the system
 * call) with a kernel context behind it. An iocb on a ucmd device is
 * executed at once, as the block device's read_iter/write_iter/fsync do
 * on Linux (rw.c), and its event queued here; any other iocb goes to the
 * kernel context. io_getevents takes our events first, then the kernel's
 * (waiting there for what is still missing, with the caller's timeout and
 * signal mask). Errors follow fs/aio.c: those Linux finds before the I/O
 * starts (bad opcode, bad flags, a file opened without the access, a char
 * device without read_iter/fsync, an unreadable iovec) fail io_submit;
 * those of the I/O itself (O_DIRECT alignment, ENOSPC, EIO) are the
 * event's res. IOCB_FLAG_RESFD signals the eventfd when the event is
 * queued. A context is not inherited by fork (Linux's ring is not
 * mapped in the child); its number is then EINVAL there, as on Linux.
 *
 * Not done: IOCB_CMD_POLL on a device fd (EINVAL); io_cancel of a
 * device iocb is EINVAL (it has completed already, as a block device's
 * iocbs cannot be cancelled on Linux either).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/aio_abi.h>
#include <linux/fs.h>

#include "preload/preload.h"

#define AIO_RWF_OK (RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT | RWF_APPEND | RWF_NOAPPEND)
#define AIO_PAGE 4096ul

struct aio_ctx {
	unsigned long id;		/* the number the program holds: our page's address */
	aio_context_t kern;		/* the kernel's, for the files that are not ucmd's */
	unsigned cap;			/* our events queued at most */
	unsigned head, count;		/* queued events: done[head .. head + count) mod cap */
	long kern_inflight;		/* iocbs the kernel has and we have not reaped */
	bool dead;
	pid_t pid;
	pthread_mutex_t lock;
	struct io_event *done;
	struct aio_ctx *next;
};

static pthread_mutex_t ctxs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct aio_ctx *ctxs;

/*
 * Found contexts are never freed (io_destroy marks them dead), so another
 * thread still inside a call on one cannot touch freed memory.
 */
static struct aio_ctx *ctx_find(unsigned long id)
{
	struct aio_ctx *c;

	if (!id)
		return NULL;
	pthread_mutex_lock(&ctxs_lock);
	for (c = ctxs; c; c = c->next)
		if (c->id == id && !c->dead && c->pid == pl_pid())
			break;
	pthread_mutex_unlock(&ctxs_lock);
	return c;
}

bool pl_aio_is_ctx(unsigned long ctx)
{
	return ctx_find(ctx) != NULL;
}

static long raw(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	return pl_raw_syscall(nr, a0, a1, a2, a3, a4, a5);
}

long pl_io_setup(unsigned nr_events, unsigned long *ctxp)
{
	aio_context_t kern = 0, old;
	struct aio_ctx *c;
	void *page;
	long ret;

	if (pl_copy_in(&old, ctxp, sizeof(old)))
		return -EFAULT;
	/* the kernel's checks first: a nonzero *ctxp, nr_events 0 or past aio-max-nr */
	ret = raw(__NR_io_setup, nr_events, (long)&kern, 0, 0, 0, 0);
	if (ret < 0)
		return ret;
	if (old) {
		raw(__NR_io_destroy, (long)kern, 0, 0, 0, 0, 0);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	c->cap = nr_events > INT_MAX / 2 - 64 ? INT_MAX / 2 : nr_events * 2 + 64;
	c->done = calloc(c->cap, sizeof(*c->done));
	page = (void *)raw(__NR_mmap, 0, AIO_PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!c->done || (unsigned long)page > -4096ul) {
		free(c->done);
		free(c);
		goto nomem;
	}
	c->id = (unsigned long)page;
	c->kern = kern;
	c->pid = pl_pid();
	pthread_mutex_init(&c->lock, NULL);
	if (pl_copy_out(ctxp, &c->id, sizeof(c->id))) {
		raw(__NR_munmap, (long)page, AIO_PAGE, 0, 0, 0, 0);
		raw(__NR_io_destroy, (long)kern, 0, 0, 0, 0, 0);
		free(c->done);
		free(c);
		return -EFAULT;
	}
	pthread_mutex_lock(&ctxs_lock);
	c->next = ctxs;
	ctxs = c;
	pthread_mutex_unlock(&ctxs_lock);
	return 0;
nomem:
	free(c);
	raw(__NR_io_destroy, (long)kern, 0, 0, 0, 0, 0);
	return -EAGAIN;	/* ioctx_alloc's answer when it cannot have its memory */
}

long pl_io_destroy(unsigned long id)
{
	struct aio_ctx *c = ctx_find(id);

	if (!c)
		return -EINVAL;
	pthread_mutex_lock(&ctxs_lock);
	c->dead = true;
	pthread_mutex_unlock(&ctxs_lock);
	/* the kernel waits for its own iocbs; ours have completed */
	raw(__NR_io_destroy, (long)c->kern, 0, 0, 0, 0, 0);
	raw(__NR_munmap, (long)c->id, AIO_PAGE, 0, 0, 0, 0);
	return 0;
}

/* The event of a device iocb, queued; and its eventfd told. */
static void complete(struct aio_ctx *c, const struct iocb *cb, const void *user_cb, long res)
{
	struct io_event ev = {
		.data = cb->aio_data,
		.obj = (uint64_t)(uintptr_t)user_cb,
		.res = res,
	};

	pthread_mutex_lock(&c->lock);
	c->done[(c->head + c->count) % c->cap] = ev;
	c->count++;
	pthread_mutex_unlock(&c->lock);
	if (cb->aio_flags & IOCB_FLAG_RESFD) {
		uint64_t one = 1;

		raw(__NR_write, (long)cb->aio_resfd, (long)&one, sizeof(one), 0, 0, 0);
	}
}

/* Is fd an eventfd (what eventfd_ctx_fdget takes)? 0, -EBADF or -EINVAL. */
static int check_eventfd(unsigned fd)
{
	char path[64], link[64];
	long n;

	snprintf(path, sizeof(path), "/proc/self/fd/%u", fd);
	n = raw(__NR_readlinkat, AT_FDCWD, (long)path, (long)link, sizeof(link) - 1, 0, 0);
	if (n < 0)
		return -EBADF;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") ? -EINVAL : 0;
}

static bool may(const struct pl_file *f, bool write)
{
	int acc = f->oflags & O_ACCMODE;

	if (f->oflags & O_PATH)
		return false;
	return write ? acc != O_RDONLY : acc != O_WRONLY;
}

/*
 * One iocb on device file f (fs/aio.c's __io_submit_one for a block
 * device): 0 once its event is queued, or the -errno io_submit reports.
 */
static long submit_dev(struct aio_ctx *c, struct pl_file *f, const struct iocb *cb,
		       const void *user_cb)
{
	bool write = false, vec = false;
	struct iovec one;
	long res, ret;

	pthread_mutex_lock(&c->lock);
	ret = c->count + (unsigned long)c->kern_inflight >= c->cap ? -EAGAIN : 0;
	pthread_mutex_unlock(&c->lock);
	if (ret)
		return ret;
	if (cb->aio_flags & IOCB_FLAG_RESFD) {
		ret = check_eventfd(cb->aio_resfd);
		if (ret)
			return ret;
	}
	switch (cb->aio_lio_opcode) {
	case IOCB_CMD_PWRITEV:
		vec = true;
		/* fallthrough */
	case IOCB_CMD_PWRITE:
		write = true;
		break;
	case IOCB_CMD_PREADV:
		vec = true;
		break;
	case IOCB_CMD_PREAD:
		break;
	case IOCB_CMD_FSYNC:
	case IOCB_CMD_FDSYNC:
		/* aio_prep_fsync */
		if (cb->aio_buf || cb->aio_offset || cb->aio_nbytes || cb->aio_rw_flags)
			return -EINVAL;
		if (f->dev->kind != PL_DEV_NS_BLK)
			return -EINVAL;	/* the char devices have no fsync */
		res = pl_dev_fsync(f, (int)cb->aio_fildes, cb->aio_lio_opcode == IOCB_CMD_FDSYNC);
		complete(c, cb, user_cb, res);
		return 0;
	default:
		return -EINVAL;	/* IOCB_CMD_POLL and unknown opcodes */
	}
	/* aio_prep_rw, then aio_read/aio_write's checks before read_iter/write_iter */
	if (cb->aio_rw_flags & ~AIO_RWF_OK)
		return -EOPNOTSUPP;
	if (!may(f, write))
		return -EBADF;
	if (f->dev->kind != PL_DEV_NS_BLK)
		return -EINVAL;	/* nvme_dev_fops / nvme_ns_chr_fops: no read_iter/write_iter */
	if (vec) {
		struct iovec probe;

		if (cb->aio_nbytes > IOV_MAX)
			return -EINVAL;
		if (cb->aio_nbytes &&
		    pl_copy_in(&probe, (const void *)(uintptr_t)cb->aio_buf, sizeof(probe)))
			return -EFAULT;
	}
	if (cb->aio_offset < 0)
		return -EINVAL;	/* rw_verify_area */
	if (vec) {
		res = pl_dev_rw(f, (int)cb->aio_fildes, (const struct iovec *)(uintptr_t)cb->aio_buf,
				(int)cb->aio_nbytes, true, (off_t)cb->aio_offset, false, write,
				(int)cb->aio_rw_flags);
	} else {
		one.iov_base = (void *)(uintptr_t)cb->aio_buf;
		one.iov_len = (size_t)cb->aio_nbytes;
		res = pl_dev_rw(f, (int)cb->aio_fildes, &one, 1, false, (off_t)cb->aio_offset,
				false, write, (int)cb->aio_rw_flags);
	}
	complete(c, cb, user_cb, res);
	return 0;
}

/* io_submit_one: copy, check, then ours or the kernel's. 0 or -errno. */
static long submit_one(struct aio_ctx *c, void *user_cb)
{
	struct iocb cb;
	struct pl_file *f;
	long ret;

	if (pl_copy_in(&cb, user_cb, sizeof(cb)))
		return -EFAULT;
	if (cb.aio_reserved2)
		return -EINVAL;
	if ((ssize_t)cb.aio_nbytes < 0)
		return -EINVAL;
	f = pl_fd((int)cb.aio_fildes);
	/*
	 * A copy made with the program's own dup (pl_fd_adopt) is a
	 * placeholder, an empty directory opened read-only, until found: the
	 * kernel's fsync of it succeeds doing nothing, so an fsync is asked
	 * about first (an fstat for another file, as libc's fsync); its reads
	 * and writes the kernel refuses at once (EINVAL: no read_iter; EBADF:
	 * not open for writing), and are asked about then.
	 */
	if (!f && (int)cb.aio_fildes >= 0 &&
	    (cb.aio_lio_opcode == IOCB_CMD_FSYNC || cb.aio_lio_opcode == IOCB_CMD_FDSYNC))
		f = pl_fd_adopt((int)cb.aio_fildes, 0);
	if (f && (int)cb.aio_fildes >= 0)
		return submit_dev(c, f, &cb, user_cb);
	ret = raw(__NR_io_submit, (long)c->kern, 1, (long)&user_cb, 0, 0, 0);
	if ((ret == -EINVAL || ret == -EBADF) && (int)cb.aio_fildes >= 0 &&
	    (f = pl_fd_adopt((int)cb.aio_fildes, (int)-ret)))
		return submit_dev(c, f, &cb, user_cb);
	if (ret == 1) {
		pthread_mutex_lock(&c->lock);
		c->kern_inflight++;
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	return ret < 0 ? ret : -EAGAIN;
}

long pl_io_submit(unsigned long id, long nr, void *iocbpp)
{
	struct aio_ctx *c = ctx_find(id);
	long i;

	if (!c)
		return -EINVAL;
	if (nr < 0)
		return -EINVAL;
	if ((unsigned long)nr > c->cap)
		nr = c->cap;
	for (i = 0; i < nr; i++) {
		void *user_cb;
		long ret;

		/* the program's array, as a number: NULL or anything is EFAULT there */
		if (pl_copy_in(&user_cb, (void *)((uintptr_t)iocbpp + (uintptr_t)i * sizeof(void *)),
			       sizeof(user_cb)))
			ret = -EFAULT;
		else
			ret = submit_one(c, user_cb);
		if (ret)
			return i ? i : ret;
	}
	return nr;
}

long pl_io_cancel(unsigned long id, void *iocb, void *result)
{
	struct aio_ctx *c = ctx_find(id);

	if (!c)
		return -EINVAL;
	/* a device iocb has completed already: the kernel does not know it, EINVAL */
	return raw(__NR_io_cancel, (long)c->kern, (long)iocb, (long)result, 0, 0, 0);
}

long pl_io_getevents(unsigned long id, long min_nr, long nr, void *events, void *timeout,
		     const void *usig, bool pgetevents)
{
	struct aio_ctx *c = ctx_find(id);
	/* the program's address, as a number: it may be NULL or anything */
	uintptr_t out = (uintptr_t)events;
	long n = 0, kern_inflight, ret;
	struct timespec zero = { 0, 0 };

	if (!c)
		return -EINVAL;
	if (min_nr < 0 || nr < 0 || min_nr > nr)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	while (n < nr && c->count) {
		if (pl_copy_out((void *)(out + n * sizeof(struct io_event)), &c->done[c->head],
				sizeof(struct io_event))) {
			pthread_mutex_unlock(&c->lock);
			return n ? n : -EFAULT;
		}
		c->head = (c->head + 1) % c->cap;
		c->count--;
		n++;
	}
	kern_inflight = c->kern_inflight;
	pthread_mutex_unlock(&c->lock);
	if (n == nr || (n >= min_nr && !kern_inflight))
		return n;
	/*
	 * The kernel's events, waiting (as the caller asked) only for what
	 * ours did not make up; with none of its iocbs out this is the wait
	 * for the timeout that Linux would do too.
	 */
	long kmin = n >= min_nr ? 0 : min_nr - n;
	void *tmo = kmin ? timeout : &zero;

	if (pgetevents)
		ret = raw(__NR_io_pgetevents, (long)c->kern, kmin, nr - n,
			  (long)(out + n * sizeof(struct io_event)), (long)tmo,
			  (long)usig);
	else
		ret = raw(__NR_io_getevents, (long)c->kern, kmin, nr - n,
			  (long)(out + n * sizeof(struct io_event)), (long)tmo, 0);
	if (ret > 0) {
		pthread_mutex_lock(&c->lock);
		c->kern_inflight -= ret;
		pthread_mutex_unlock(&c->lock);
		return n + ret;
	}
	return n ? n : ret;
}

/* A forked child has no aio context of its parent's (Linux's are per mm). */
static void aio_atfork_child(void)
{
	pthread_mutex_init(&ctxs_lock, NULL);
	/* the parent's entries stay (never freed) but no longer match: pid differs */
}

__attribute__((constructor)) static void aio_init(void)
{
	pthread_atfork(NULL, NULL, aio_atfork_child);
}
