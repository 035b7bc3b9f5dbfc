/* SPDX-License-Identifier: MIT */
/*
 * A PCI function's resource0 (sysfs.c) read as a host's BAR0 reads: what
 * read and pread of it return are the controller's registers at that call
 * (CSTS, INTMS... move), not the copy sysfs.c wrote when the file was
 * opened. The copy stays what mmap, fopen's streams and the system calls
 * made without libc see (docs/compat.md). A descriptor is recognized by
 * its number and the file's inode, so a number reused for another file is
 * not taken for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

#define RES0_MAX 16
#define RES0_SIZE 0x4000u	/* sysfs.c's BAR0_SIZE */

struct res0 {
	int fd;			/* -1: free */
	dev_t dev;
	ino_t ino;
	const struct pl_devinfo *ctrl;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct res0 tab[RES0_MAX] = { [0 ... RES0_MAX - 1] = { .fd = -1 } };
static atomic_uint nr_open;	/* the read path's test: none tracked, nothing to do */

void pl_res0_opened(int fd, const char *path)
{
	const struct pl_devinfo *c = pl_sysfs_regs_ctrl(path);
	struct stat st;
	struct res0 *r = NULL;

	if (!c || fd < 0 || pl_raw_syscall(__NR_fstat, fd, (long)&st, 0, 0, 0, 0))
		return;
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < RES0_MAX && !r; i++)
		if (tab[i].fd == fd || tab[i].fd < 0)
			r = &tab[i];
	if (r) {
		if (r->fd < 0)
			atomic_fetch_add(&nr_open, 1);
		*r = (struct res0){ .fd = fd, .dev = st.st_dev, .ino = st.st_ino, .ctrl = c };
	} else {
		pl_trace("resource0 at fd %d: more than %d open, read as opened", fd, RES0_MAX);
	}
	pthread_mutex_unlock(&lock);
}

/* fd's controller if fd is still that file; an entry whose number moved on is dropped. */
static const struct pl_devinfo *ctrl_of(int fd)
{
	const struct pl_devinfo *c = NULL;
	struct stat st;
	bool have = !pl_raw_syscall(__NR_fstat, fd, (long)&st, 0, 0, 0, 0);

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < RES0_MAX; i++) {
		if (tab[i].fd != fd)
			continue;
		if (have && tab[i].dev == st.st_dev && tab[i].ino == st.st_ino) {
			c = tab[i].ctrl;
		} else {
			tab[i].fd = -1;
			atomic_fetch_sub(&nr_open, 1);
		}
	}
	pthread_mutex_unlock(&lock);
	return c;
}

bool pl_res0_read(int fd, void *buf, size_t n, off_t off, bool at_pos, ssize_t *ret)
{
	static _Thread_local uint8_t bar[RES0_SIZE];
	const struct pl_devinfo *c;
	size_t len;
	int err;

	if (!atomic_load_explicit(&nr_open, memory_order_relaxed) || fd < 0)
		return false;
	c = ctrl_of(fd);
	if (!c)
		return false;
	if (at_pos) {
		off = (off_t)pl_raw_syscall(__NR_lseek, fd, 0, SEEK_CUR, 0, 0, 0);
		if (off < 0) {
			*ret = off;
			return true;
		}
	}
	if (off < 0) {
		*ret = -EINVAL;
		return true;
	}
	len = (uint64_t)off >= RES0_SIZE ? 0 : RES0_SIZE - (size_t)off;
	if (len > n)
		len = n;
	if (len) {
		err = pl_regs_now(c, bar, sizeof(bar));
		if (!err)
			err = pl_copy_out(buf, bar + off, len);
		if (err) {
			*ret = err;
			return true;
		}
	}
	if (at_pos)
		pl_raw_syscall(__NR_lseek, fd, off + (off_t)len, SEEK_SET, 0, 0, 0);
	*ret = (ssize_t)len;
	return true;
}
