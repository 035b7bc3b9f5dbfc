// SPDX-License-Identifier: MIT
/*
 * The getdents64 call on a directory that the host and the tree both have
 * (/dev, /sys/devices/pci0000:00...), made by the program through libc's
 * getdents64() or syscall(SYS_getdents64, ...) (seccomp.c): the same merged
 * listing dirs.c gives readdir, in the kernel's struct linux_dirent64
 * records; and x86-64's old getdents through syscall(SYS_getdents, ...)
 * (glibc has no function for it), the same listing in its struct
 * linux_dirent records (d_type the record's last byte).
 *
 * The system call made with the program's own instruction (Go's runtime,
 * hand-written assembly) is not caught here: a SIGSYS trap on every
 * getdents64 of every process of the tree (it outlives exec) would cost a
 * signal per call, and kill an image that lists a directory before our
 * constructor put our handler in place. ucmd-supervise --dirs, which `ucmd exec`
 * runs the program under, takes those with a user notification instead
 * and serves /dev (sv_dirs.c); /sys is the host's there (docs/compat.md).
 *
 * The position is the kernel's: after each call the directory's file
 * offset is set to the index of the next entry (devtmpfs and sysfs take
 * any offset), so lseek/rewinddir, dup'ed descriptors and a new open of
 * the same directory (offset 0: the listing is made again, as Linux reads
 * the directory again) behave as on Linux. A listing is kept per
 * descriptor number, checked against the directory's inode at each call.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

#define RAW_DIRS 16

struct raw_dir {
	int fd;			/* -1: free */
	dev_t dev;
	ino_t ino;
	struct pl_dirent *e;
	unsigned n;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct raw_dir tab[RAW_DIRS] = { [0 ... RAW_DIRS - 1] = { .fd = -1 } };
static unsigned next_evict;

/* The entry of fd for the directory (dev, ino), made again at offset 0. */
static struct raw_dir *entry_locked(int fd, const char *dir, const struct stat *st, long pos,
				    int *err)
{
	struct raw_dir *r = NULL;
	struct pl_dirent *e;
	unsigned n;

	for (unsigned i = 0; i < RAW_DIRS && !r; i++)
		if (tab[i].fd == fd)
			r = &tab[i];
	if (r && r->dev == st->st_dev && r->ino == st->st_ino && pos)
		return r;
	*err = pl_dir_listing(dir, &e, &n);
	if (*err)
		return NULL;
	if (!r) {
		for (unsigned i = 0; i < RAW_DIRS && !r; i++)
			if (tab[i].fd < 0)
				r = &tab[i];
		if (!r)
			r = &tab[next_evict++ % RAW_DIRS];
	}
	free(r->e);
	*r = (struct raw_dir){ .fd = fd, .dev = st->st_dev, .ino = st->st_ino, .e = e, .n = n };
	return r;
}

static bool merged_getdents(int fd, void *buf, size_t count, bool old, long *ret)
{
	char proc[64], dir[PATH_MAX];
	char out[4096];
	struct raw_dir *r;
	struct stat st;
	size_t used = 0, total = 0;
	long pos, flushed, n;
	bool more;
	int err = 0;

	if (pl_dir_merging())
		return false;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = pl_raw_syscall(__NR_readlink, (long)proc, (long)dir, sizeof(dir) - 1, 0, 0, 0);
	if (n <= 0)
		return false;
	dir[n] = '\0';
	if (strcmp(dir, "/dev") && !pl_path_under(dir, "/sys"))
		return false;
	if (pl_raw_syscall(__NR_fstat, fd, (long)&st, 0, 0, 0, 0) || !S_ISDIR(st.st_mode))
		return false;
	pos = pl_raw_syscall(__NR_lseek, fd, 0, SEEK_CUR, 0, 0, 0);
	if (pos < 0)
		return false;
	pthread_mutex_lock(&lock);
	r = entry_locked(fd, dir, &st, pos, &err);
	if (!r) {
		pthread_mutex_unlock(&lock);
		if (err == -ENOENT)
			return false;	/* not a directory the tree has: the host's */
		*ret = err;
		return true;
	}
	/* records, written to the program's buffer a block at a time */
	flushed = pos;
	while ((unsigned long)pos < r->n && !err) {
		const struct pl_dirent *e = &r->e[pos];
		size_t reclen = pl_dirent_rec_len(old, e->name);

		if (total + used + reclen > count)
			break;
		if (used + reclen > sizeof(out)) {
			err = pl_copy_out((char *)buf + total, out, used);
			if (err)
				break;
			total += used;
			used = 0;
			flushed = pos;
		}
		pl_dirent_rec_put(old, out + used, reclen, e->ino, pos + 1, e->type, e->name);
		used += reclen;
		pos++;
	}
	if (!err && used) {
		err = pl_copy_out((char *)buf + total, out, used);
		if (!err) {
			total += used;
			flushed = pos;
		}
	}
	more = (unsigned long)flushed < r->n;
	pthread_mutex_unlock(&lock);
	if (!total) {
		/* a bad buffer; or the first record did not fit: "result buffer too small" */
		*ret = err ? err : more ? -EINVAL : 0;
		return true;
	}
	pos = flushed;
	pl_raw_syscall(__NR_lseek, fd, pos, SEEK_SET, 0, 0, 0);
	*ret = (long)total;
	return true;
}

bool pl_dir_getdents64(int fd, void *buf, size_t count, long *ret)
{
	return merged_getdents(fd, buf, count, false, ret);
}

bool pl_dir_getdents(int fd, void *buf, size_t count, long *ret)
{
	return merged_getdents(fd, buf, count, true, ret);
}

PL_EXPORT ssize_t getdents64(int fd, void *buf, size_t count)
{
	long ret;

	if (!pl_dir_getdents64(fd, buf, count, &ret))
		ret = pl_raw_syscall(__NR_getdents64, fd, (long)buf, (long)count, 0, 0, 0);
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
