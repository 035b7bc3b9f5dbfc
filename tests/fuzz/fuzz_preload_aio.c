/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: libucmd-preload's native aio (src/preload/aio.c) on
 * hostile iocbs, iocb pointer arrays and call arguments, as a program under
 * `ucmd exec` may pass them to io_submit/io_getevents/io_cancel/io_destroy.
 *
 * aio.c is compiled in with its preload neighbours replaced by models: user
 * memory is one arena (a pointer outside it is EFAULT, as uaccess says);
 * fds 100..103 are ucmd devices whose kind and open flags come from the
 * input, every other fd is the kernel's; the kernel's aio is a counter;
 * fd 50 is the one eventfd.
 *
 * Invariants: a device read/write reaches pl_dev_rw only on a block
 * namespace opened with the access it needs, at an offset >= 0, with at
 * most IOV_MAX iovecs and only RWF flags Linux's aio takes; fsync only on a
 * block namespace; the eventfd is signalled only once checked, once per
 * event; io_submit returns at most nr; every device event io_getevents
 * returns is one accepted iocb's (its obj, its data, the result
 * pl_dev_rw/pl_dev_fsync gave), returned once, never more than nr or fewer
 * than min_nr while enough are queued; no device event is lost (each run
 * drains the context and counts them).
 *
 * Input: a sequence of ops, each an opcode byte and its bytes (see
 * run_op). Seeds: corpus/preload_aio/.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
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
#define ARENA_SIZE	(64u << 10)
#define NR_DEV		4
#define DEV_FD0		100
#define EVENTFD		50
#define MAX_CBS		64	/* iocbs per io_submit the harness builds */
#define CTX_EVENTS	32	/* the one context's nr_events */

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "invariant broken: %s\n", what);
		abort();
	}
}

/* ---- the models of aio.c's neighbours ---- */

static uint8_t *arena;
static struct pl_devinfo devinfo[NR_DEV];
static struct pl_file files[NR_DEV];
static long kern_inflight;	/* iocbs the modelled kernel holds */
static long kern_submit_ret;	/* what its io_submit answers next (1: taken) */
static unsigned eventfd_writes;
static long next_res;		/* what the next device read/write/fsync returns */
static long res_log[MAX_CBS * 4];	/* what each device call of one io_submit returned */
static unsigned nr_res;

/* Results the models gave, by iocb address in the arena: for the check of events */
struct sent {
	const void *cb;
	uint64_t data;
	long res;
	int resfd;
	bool returned;
};
static struct sent sent[4096];
static unsigned nr_sent;
static unsigned pending_resfd;	/* RESFD events queued since the last write */

static bool in_arena(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, b = (uintptr_t)arena;

	return a >= b && len <= ARENA_SIZE && a - b <= ARENA_SIZE - len;
}

pid_t pl_pid(void)
{
	return getpid();
}

int pl_copy_in(void *dst, const void *src, size_t len)
{
	if (!len)
		return 0;
	if (!in_arena(src, len))
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

int pl_copy_out(void *dst, const void *src, size_t len)
{
	if (!len)
		return 0;
	if (!in_arena(dst, len))
		return -EFAULT;
	memcpy(dst, src, len);
	return 0;
}

struct pl_file *pl_fd(int fd)
{
	if (fd >= DEV_FD0 && fd < DEV_FD0 + NR_DEV)
		return &files[fd - DEV_FD0];
	return NULL;
}

/* no number is a raw copy of a device here: only the model's device fds are */
struct pl_file *pl_fd_adopt(int fd, int err)
{
	(void)fd;
	(void)err;
	return NULL;
}

ssize_t pl_dev_rw(struct pl_file *f, int fd, const struct iovec *iov, int cnt, bool user_iov,
		  off_t off, bool use_pos, bool write, int rwf)
{
	int acc = f->oflags & O_ACCMODE;

	check(f == pl_fd(fd), "the file of the fd");
	check(f->dev->kind == PL_DEV_NS_BLK, "read/write only on a block namespace");
	check(!(f->oflags & O_PATH), "not on an O_PATH fd");
	check(write ? acc != O_RDONLY : acc != O_WRONLY, "the access the fd was opened with");
	check(!use_pos && off >= 0, "an explicit offset, not negative");
	check(cnt >= 0 && cnt <= IOV_MAX, "at most IOV_MAX iovecs");
	check(!((unsigned)rwf & ~(unsigned)AIO_RWF_OK), "RWF flags aio takes");
	/* the real one copies a program's array in: EFAULT for a bad one (below) */
	if (!user_iov)
		check(cnt == 1, "one iovec of aio.c's own");
	check(nr_res < sizeof(res_log) / sizeof(res_log[0]), "one device call per iocb");
	res_log[nr_res] = next_res;
	for (int i = 0; user_iov && i < cnt && res_log[nr_res] != -EFAULT; i++) {
		struct iovec v;

		if (pl_copy_in(&v, iov + i, sizeof(v)))
			res_log[nr_res] = -EFAULT;
	}
	return res_log[nr_res++];
}

int pl_dev_fsync(struct pl_file *f, int fd, bool datasync)
{
	(void)datasync;
	check(f == pl_fd(fd), "the file of the fd");
	check(f->dev->kind == PL_DEV_NS_BLK, "fsync only on a block namespace");
	check(nr_res < sizeof(res_log) / sizeof(res_log[0]), "one device call per iocb");
	res_log[nr_res] = (int)next_res;
	return (int)res_log[nr_res++];
}

long pl_raw_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	(void)a3; (void)a4; (void)a5;
	switch (nr) {
	case __NR_io_setup:
		if (a0 <= 0)
			return -EINVAL;
		*(aio_context_t *)a1 = 0x1000;
		return 0;
	case __NR_io_destroy:
		return 0;
	case __NR_munmap:
		return munmap((void *)a0, (size_t)a1) ? -errno : 0;
	case __NR_mmap:
		return (long)mmap((void *)a0, (size_t)a1, (int)a2, (int)a3, (int)a4, (off_t)a5);
	case __NR_io_submit:
		check(a1 == 1, "kernel iocbs go one at a time");
		if (kern_submit_ret == 1)
			kern_inflight++;
		return kern_submit_ret;
	case __NR_io_cancel:
		return -EINVAL;
	case __NR_io_getevents:
	case __NR_io_pgetevents: {
		long n = kern_inflight < a2 ? kern_inflight : a2;

		check(a1 >= 0 && a1 <= a2, "the kernel's min_nr within nr");
		if (!n)
			return 0;	/* the timeout (zero here) passed */
		if (!in_arena((void *)a3, (size_t)n * sizeof(struct io_event)))
			return -EFAULT;
		memset((void *)a3, 0, (size_t)n * sizeof(struct io_event));
		kern_inflight -= n;
		return n;
	}
	case __NR_readlinkat: {
		char want[64];
		const char *link = "anon_inode:[eventfd]";

		snprintf(want, sizeof(want), "/proc/self/fd/%u", EVENTFD);
		if (strcmp((const char *)a1, want))
			return -EBADF;
		memcpy((char *)a2, link, strlen(link));
		return (long)strlen(link);
	}
	case __NR_write:
		check(a0 == EVENTFD, "only the checked eventfd is signalled");
		check(a2 == 8 && *(const uint64_t *)a1 == 1, "one event per write");
		check(pending_resfd > 0, "a write per queued RESFD event");
		pending_resfd--;
		eventfd_writes++;
		return 8;
	}
	check(0, "a system call aio.c has no business making");
	return -ENOSYS;
}

/* ---- the program's side ---- */

#include "../../src/preload/aio.c"

static unsigned long ctx;	/* the one context, kept across runs (contexts are never freed) */

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, size_t len)
{
	uint64_t v = 0;

	len = len < in->n ? len : in->n;
	memcpy(&v, in->p, len);
	in->p += len;
	in->n -= len;
	return v;
}

/* An iocb from the input, in the arena at slot i (its buffers point into the arena) */
static struct iocb *make_iocb(struct in *in, unsigned i)
{
	struct iocb *cb = (struct iocb *)(arena + 4096 + i * sizeof(struct iocb));
	uint8_t sel = (uint8_t)take(in, 1);

	memset(cb, 0, sizeof(*cb));
	cb->aio_data = take(in, 2);
	cb->aio_lio_opcode = (uint16_t)(take(in, 1) % 10);
	/* mostly a device fd, sometimes the kernel's or a negative one */
	cb->aio_fildes = sel < 200 ? DEV_FD0 + sel % NR_DEV : sel < 240 ? 3 : (uint32_t)-1;
	if (sel & 1)
		cb->aio_rw_flags = (int)take(in, 1) << (sel >> 5);
	/* the buffer: in the arena (iovecs there too), or any value */
	switch (take(in, 1) % 4) {
	case 0: cb->aio_buf = (uintptr_t)(arena + 32768); break;
	case 1: cb->aio_buf = (uintptr_t)(arena + ARENA_SIZE - 16); break;
	case 2: cb->aio_buf = take(in, 8); break;
	default: cb->aio_buf = 0;
	}
	cb->aio_nbytes = take(in, 1) % 2 ? take(in, 2) : take(in, 8);
	cb->aio_offset = (int64_t)(take(in, 1) % 2 ? take(in, 2) : take(in, 8));
	if (take(in, 1) % 4 == 0) {
		cb->aio_flags = IOCB_FLAG_RESFD | (uint32_t)(take(in, 1) % 4 == 0 ? 2 : 0);
		cb->aio_resfd = take(in, 1) % 2 ? EVENTFD : (uint32_t)take(in, 1);
	}
	if (take(in, 1) % 16 == 0)
		cb->aio_reserved2 = take(in, 8);
	return cb;
}

/* Was this event's iocb accepted (and not yet returned)? Marks it returned. */
static void check_event(const struct io_event *ev)
{
	for (unsigned i = 0; i < nr_sent; i++) {
		if (sent[i].returned || (uintptr_t)sent[i].cb != ev->obj)
			continue;
		check(ev->data == sent[i].data, "the event carries its iocb's data");
		check(ev->res == sent[i].res, "the event carries the device's result");
		sent[i].returned = true;
		return;
	}
	check(0, "an event of an iocb that was accepted and not yet returned");
}

static void op_submit(struct in *in)
{
	unsigned n = (unsigned)take(in, 1) % MAX_CBS;
	void **arr = (void **)arena;	/* the iocb pointer array at the arena's start */
	long nr = (long)n, ret;
	unsigned before = eventfd_writes;

	kern_submit_ret = take(in, 1) % 8 ? 1 : -(long)(take(in, 1) % 20);
	next_res = (long)(int16_t)take(in, 2);
	for (unsigned i = 0; i < n; i++)
		arr[i] = make_iocb(in, i);
	/* past n: NULL, so a large nr stops there (EFAULT) */
	memset(arr + n, 0, (CTX_EVENTS * 2 + 64 - n) * sizeof(*arr));
	if (n && take(in, 1) % 8 == 0)
		arr[take(in, 1) % n] = (void *)(uintptr_t)take(in, 8);	/* a bad pointer */
	if (take(in, 1) % 16 == 0)
		nr = (long)take(in, 8);
	/* expected results: record what each device iocb would complete with */
	unsigned base = nr_sent;
	for (unsigned i = 0; i < n && nr_sent < sizeof(sent) / sizeof(sent[0]); i++) {
		struct iocb copy, *cb = NULL;

		/* a pointer the input chose may be misaligned: read it as aio.c does */
		if (in_arena(arr[i], sizeof(copy))) {
			memcpy(&copy, arr[i], sizeof(copy));
			cb = &copy;
		}
		sent[nr_sent++] = (struct sent){
			.cb = arr[i], .data = cb ? cb->aio_data : 0, .res = next_res,
			.resfd = cb && (cb->aio_flags & IOCB_FLAG_RESFD) ? 1 : 0,
			.returned = true,	/* until accepted */
		};
	}
	pending_resfd = 0;
	for (unsigned i = 0; i < n && base + i < nr_sent; i++)
		pending_resfd += sent[base + i].resfd;
	nr_res = 0;
	ret = pl_io_submit(ctx, nr, arr);
	if (nr < 0) {
		check(ret == -EINVAL, "a negative nr is EINVAL");
		nr_sent = base;
		return;
	}
	check(ret <= nr && ret <= (long)CTX_EVENTS * 2 + 64, "io_submit returns at most nr");
	/* the accepted ones on a device fd now owe an event, with their device call's result */
	unsigned k = 0;
	for (long i = 0; ret > 0 && i < ret && base + (unsigned)i < nr_sent; i++) {
		struct iocb cb;

		check(in_arena(arr[i], sizeof(cb)), "an accepted iocb was readable");
		memcpy(&cb, arr[i], sizeof(cb));
		if (pl_fd((int)cb.aio_fildes)) {
			check(k < nr_res, "an accepted device iocb was executed");
			sent[base + i].res = res_log[k++];
			sent[base + i].returned = false;
		}
	}
	check(k == nr_res, "no device call for an iocb that was refused");
	/* eventfd writes only for accepted device iocbs with RESFD */
	unsigned owed = 0;
	for (long i = 0; ret > 0 && i < ret && base + (unsigned)i < nr_sent; i++)
		owed += !sent[base + i].returned && sent[base + i].resfd;
	check(eventfd_writes - before == owed, "one eventfd write per accepted RESFD event");
	pending_resfd = 0;
}

static void op_getevents(struct in *in)
{
	struct io_event *ev = (struct io_event *)(arena + 32768);
	long nr = (long)(take(in, 1) % 200), min_nr = (long)(take(in, 1) % 200), ret;
	unsigned queued = 0;
	struct timespec zero = { 0, 0 };

	for (unsigned i = 0; i < nr_sent; i++)
		queued += !sent[i].returned;
	if (take(in, 1) % 8 == 0)
		ev = (struct io_event *)(uintptr_t)take(in, 8);	/* a bad array */
	ret = pl_io_getevents(ctx, min_nr, nr, ev, &zero, NULL, take(in, 1) & 1);
	if (min_nr > nr) {
		check(ret == -EINVAL, "min_nr past nr is EINVAL");
		return;
	}
	if (ret < 0) {
		check(ret == -EFAULT && !in_arena(ev, sizeof(*ev)), "only a bad array fails");
		return;
	}
	check(ret <= nr, "no more than nr events");
	if (queued >= (unsigned)min_nr && in_arena(ev, (size_t)nr * sizeof(*ev)))
		check(ret >= min_nr, "min_nr events when that many are queued");
	/* the input chose the array: it may be misaligned, so read it as bytes */
	for (long i = 0; i < ret; i++) {
		struct io_event e;

		memcpy(&e, (const uint8_t *)ev + i * sizeof(e), sizeof(e));
		if (e.obj)	/* the modelled kernel's events are zeros */
			check_event(&e);
	}
}

/* Every queued device event comes back, once: nothing lost or doubled */
static void drain(void)
{
	struct io_event *ev = (struct io_event *)(arena + 32768);
	struct timespec zero = { 0, 0 };
	long ret;

	while ((ret = pl_io_getevents(ctx, 0, 64, ev, &zero, NULL, false)) > 0)
		for (long i = 0; i < ret; i++)
			if (ev[i].obj)
				check_event(&ev[i]);
	check(ret == 0, "draining ends with no event");
	for (unsigned i = 0; i < nr_sent; i++)
		check(sent[i].returned, "every accepted device iocb's event came back");
	check(kern_inflight == 0, "the kernel's iocbs were reaped too");
	nr_sent = 0;
}

static void op_other(struct in *in)
{
	unsigned long bad = take(in, 8);
	unsigned long *ctxp = (unsigned long *)(arena + 8192 + 2048);

	switch (take(in, 1) % 4) {
	case 0:	/* io_setup with *ctxp already set: EINVAL, nothing made */
		*ctxp = bad | 1;
		check(pl_io_setup(8, ctxp) == -EINVAL, "io_setup on a nonzero *ctxp");
		break;
	case 1:	/* calls on a context that is not one */
		if (bad != ctx) {
			check(pl_io_destroy(bad) == -EINVAL, "io_destroy of no context");
			check(pl_io_submit(bad, 1, arena) == -EINVAL, "io_submit on no context");
			check(!pl_aio_is_ctx(bad), "not a context");
		}
		break;
	case 2:	/* io_cancel: the modelled kernel knows no iocb */
		check(pl_io_cancel(ctx, arena + 4096, arena + 32768) == -EINVAL, "io_cancel");
		break;
	default:	/* io_setup with a bad ctxp (one in the arena would make a context) */
		if (!in_arena((void *)bad, 8))
			check(pl_io_setup(8, (unsigned long *)bad) == -EFAULT,
			      "io_setup on a bad pointer");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };

	if (!arena) {
		arena = calloc(1, ARENA_SIZE);
		unsigned long *ctxp = (unsigned long *)(arena + 8192);

		check(arena != NULL, "arena");
		check(pl_io_setup(CTX_EVENTS, ctxp) == 0 && *ctxp, "io_setup");
		ctx = *ctxp;
	}
	/* the devices: each one's kind and open flags */
	for (unsigned i = 0; i < NR_DEV; i++) {
		uint8_t b = (uint8_t)take(&in, 1);
		static const int acc[] = { O_RDONLY, O_WRONLY, O_RDWR, O_RDWR | O_PATH };

		devinfo[i].kind = (enum pl_dev_kind)(b % 3);
		files[i] = (struct pl_file){ .dev = &devinfo[i], .oflags = acc[(b >> 2) % 4] };
	}
	for (unsigned ops = 0; in.n && ops < 16; ops++) {
		switch (take(&in, 1) % 3) {
		case 0: op_submit(&in); break;
		case 1: op_getevents(&in); break;
		default: op_other(&in);
		}
	}
	drain();
	return 0;
}
