/* SPDX-License-Identifier: MIT */
/*
 * A static program's writes to the tree's 0644 attributes (queue/scheduler,
 * read_ahead_kb, uevent...), answered as the preload answers a dynamic
 * one's (attrw.c; the judgement is attrval.c's, shared): the open for
 * writing, root's alone as Linux's mode says (where.c), is made as the
 * preload makes it, the tree's file O_RDONLY | O_APPEND (the tree is never
 * written), and installed at one of our numbers (960..1023, an SV_ATTR
 * slot), the only numbers whose write family the filter sends us; a write
 * there of the attribute's current value succeeds, another is EINVAL.
 * Everything else on it (read, lseek, fstat, mmap, close) is the kernel's
 * on that read-only file. A copy below 960 (dup) is the read-only file
 * only: its writes are the kernel's EBADF, a refusal, never a write taken.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/preload.h"
#include "preload/sv.h"

#define ATTR_MAX 4096	/* a sysfs store gets at most a page (attrw.c's bound too) */
#define IOV_MAX_NR 1024	/* UIO_MAXIOV */

void sv_attr_open(struct sv *s, const struct seccomp_notif *req, const char *path, int flags,
		  struct sv_ans *a)
{
	struct sv_fd *f;
	int i, file, ret;

	i = sv_slot_free(s);
	if (i < 0) {
		a->error = -EMFILE;
		return;
	}
	file = open(path, pl_attrw_flags(flags) | O_CLOEXEC);
	if (file < 0) {
		a->error = -errno;
		return;
	}
	f = &s->fds[i];
	memset(f, 0, sizeof(*f));
	f->kind = SV_ATTR;
	f->oflags = flags;
	f->own_fd = -1;
	ret = sv_desc_new(s, f, file);
	if (ret) {
		close(file);
		memset(f, 0, sizeof(*f));
		a->error = ret;
		return;
	}
	sv_trace(s, "%s for writing: fd %u (its writes judged here)", path, SV_FD_BASE + i);
	sv_addfd_send(s, req, file, (int)SV_FD_BASE + i, flags & O_CLOEXEC, a);
	close(file);
	if (!a->sent) {
		sv_desc_put(s, f);
		memset(f, 0, sizeof(*f));
	}
}

/* The program's segments of the write: into val (at most ATTR_MAX bytes), their length or -errno. */
static long gather(pid_t tid, const struct seccomp_notif *req, char *val)
{
	const __u64 *g = req->data.args;
	struct iovec iov[16];
	uint64_t base;
	size_t n = 0;
	long cnt;

	if (req->data.nr == __NR_write || req->data.nr == __NR_pwrite64) {
		if (g[2] > ATTR_MAX)
			return -EINVAL;	/* more than a store takes */
		return g[2] && sv_mem_in(tid, val, g[1], g[2]) ? -EFAULT : (long)g[2];
	}
	/* writev, pwritev, pwritev2: the array, a piece at a time */
	cnt = (long)(int)g[2];
	if (cnt < 0 || cnt > IOV_MAX_NR)
		return -EINVAL;
	base = g[1];
	for (long done = 0; done < cnt;) {
		long k = cnt - done > 16 ? 16 : cnt - done;

		if (sv_mem_in(tid, iov, base + (uint64_t)done * sizeof(iov[0]), (size_t)k * sizeof(iov[0])))
			return -EFAULT;
		for (long j = 0; j < k; j++) {
			if (iov[j].iov_len > ATTR_MAX - n)
				return -EINVAL;
			if (iov[j].iov_len &&
			    sv_mem_in(tid, val + n, (uint64_t)(uintptr_t)iov[j].iov_base, iov[j].iov_len))
				return -EFAULT;
			n += iov[j].iov_len;
		}
		done += k;
	}
	return (long)n;
}

int64_t sv_attr_call(struct sv *s, const struct seccomp_notif *req, struct sv_fd *f, bool *cont)
{
	static char cur[ATTR_MAX + 1], val[ATTR_MAX + 1];	/* one call at a time: the loop's */
	char link[64], path[PATH_MAX];
	long n, got;
	ssize_t len;

	(void)s;
	switch (req->data.nr) {
	case __NR_write:
	case __NR_pwrite64:
	case __NR_writev:
	case __NR_pwritev:
	case __NR_pwritev2:
		break;
	default:
		*cont = true;	/* the read-only file's own answer */
		return 0;
	}
	/* pwritev2's flags are no store's business: sysfs takes any offset, as the preload does */
	n = gather((pid_t)req->pid, req, val);
	if (n < 0)
		return n;
	val[n] = '\0';
	if (strlen(val) != (size_t)n)
		return -EINVAL;	/* a NUL inside is no value a store parses */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", f->desc->file);
	len = readlink(link, path, sizeof(path) - 1);
	got = pread(f->desc->file, cur, ATTR_MAX, 0);
	if (len <= 0 || got < 0)
		return -EIO;
	path[len] = '\0';
	cur[got] = '\0';
	return pl_attr_judge(path, cur, val) ?: n;
}
