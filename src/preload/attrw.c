// SPDX-License-Identifier: MIT
/*
 * Writes to the tree's 0644 attributes (DEVICE_ATTR_RW: the block queue's
 * tunables, uevent, a PCI function's enable...), as Linux's stores answer
 * them, for what ucmd can answer truly:
 *
 *   - the open for writing is root's alone (the files are root's 0644 on
 *     Linux; EACCES for another user, as the mode check says: where.c's
 *     pl_where_open, PL_OPEN_ATTRW), and is made
 *     as an open of the tree's file O_RDONLY | O_APPEND: the tree, shared
 *     by the exec's processes, is never written, and the flags mark the
 *     descriptor, dups and forks included, as an attribute opened for
 *     writing;
 *   - a write through the interposers (write, pwrite, writev..., and the
 *     stdio streams fdopen makes on such a descriptor: stdio.c) of the
 *     attribute's current value succeeds, as Linux's store of the value
 *     already set: the trailing newline echo adds counts for nothing, the
 *     value shown "[none]" (the scheduler's selection) is "none", and
 *     numbers compare as numbers;
 *   - any other value is EINVAL (the store's answer to a value it does not
 *     take): a block queue ucmd does not have can take no tunable, and a
 *     write that seemed taken would be a lie; but a uevent's actions
 *     ("change", "add"... as kobject_synth_uevent takes them), which ask
 *     for an event to udev, and no udev watches ucmd's devices;
 *   - a write the interposers do not see (glibc's own, as bash's echo
 *     through stdout makes it) on 1 or 2 traps once the process opened an
 *     attribute for writing (pl_seccomp_trap_std_writes: a filter that
 *     sends those writes to the SIGSYS handler, pl_attrw_trapped) and is
 *     judged the same; on another number (a raw syscall, a stream of
 *     glibc's own) it meets the read-only descriptor: EBADF, a refusal,
 *     never a write taken.
 *
 * The judgement itself is attrval.c's, which ucmd-supervise shares for a
 * static program's writes (sv_attrw.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload.h"

#define ATTR_MAX 4096	/* a sysfs store gets at most a page */

/*
 * Is fd an attribute opened for writing (pl_attrw_open)? Then its tree
 * path in path. Asked only once the kernel refused the write (EBADF), so
 * no other write pays for it.
 */
static bool attr_fd(int fd, char *path, size_t len)
{
	const char *root = pl_root();
	char link[64];
	long fl, n;
	size_t r;

	fl = pl_raw_syscall(__NR_fcntl, fd, F_GETFL, 0, 0, 0, 0);
	if (fl < 0 || (fl & O_ACCMODE) != O_RDONLY || !(fl & O_APPEND) || !root)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = pl_raw_syscall(__NR_readlinkat, AT_FDCWD, (long)link, (long)path, (long)len - 1, 0, 0);
	if (n <= 0)
		return false;
	path[n] = '\0';
	r = strlen(root);
	return !strncmp(path, root, r) && !strncmp(path + r, "/sys/", 5);
}

bool pl_attrw(int fd, const struct iovec *iov, int cnt, ssize_t *ret)
{
	static __thread char cur[ATTR_MAX + 1], val[ATTR_MAX + 1];
	char path[PATH_MAX];
	size_t n = 0;
	long got;
	int r;

	if (!attr_fd(fd, path, sizeof(path)))
		return false;
	/* the program's memory as the kernel's copy_from_user reads it: EFAULT, no crash */
	r = cnt < 0 || cnt > 1024 ? -EINVAL : 0;
	for (int i = 0; !r && i < cnt; i++) {
		struct iovec v;

		r = pl_copy_in(&v, &iov[i], sizeof(v));
		if (!r && v.iov_len > ATTR_MAX - n)
			r = -EINVAL;	/* more than a store takes */
		if (!r && v.iov_len)
			r = pl_copy_in(val + n, v.iov_base, v.iov_len);
		n += r ? 0 : v.iov_len;
	}
	got = pl_raw_syscall(__NR_pread64, fd, (long)cur, ATTR_MAX, 0, 0, 0);
	if (r || got < 0) {
		r = r ? r : (int)got;
	} else {
		cur[got] = '\0';
		val[n] = '\0';
		/* a NUL inside is no value a store parses */
		r = strlen(val) != n ? -EINVAL : pl_attr_judge(path, cur, val);
	}
	if (r) {
		errno = -r;
		*ret = -1;
	} else {
		*ret = (ssize_t)n;
	}
	return true;
}

long pl_attrw_trapped(long nr, const long a[6])
{
	struct iovec one = { (void *)a[1], (size_t)a[2] };
	const struct iovec *iov = &one;
	long ret = pl_raw_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	int cnt = 1, saved = errno;
	ssize_t r;

	if (ret != -EBADF)
		return ret;
	if (nr == __NR_writev || nr == __NR_pwritev || nr == __NR_pwritev2) {
		iov = (const struct iovec *)a[1];
		cnt = (int)a[2];
	}
	if (!pl_attrw((int)a[0], iov, cnt, &r))
		return ret;
	ret = r < 0 ? -errno : r;
	errno = saved;
	return ret;
}

bool pl_attrw_fd(int fd)
{
	char path[PATH_MAX];

	return attr_fd(fd, path, sizeof(path));
}
