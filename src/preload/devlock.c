/* SPDX-License-Identifier: MIT */
#undef _FILE_OFFSET_BITS
/*
 * Locks on device fds: fcntl's record locks (F_SETLK, F_SETLKW, F_GETLK and
 * their OFD forms) and flock. The placeholder behind a device fd cannot
 * hold them as a device does: it is a directory opened read-only (a write
 * lock would be EBADF) and there is one per access mode (an O_RDONLY and
 * an O_RDWR open of one device would not exclude each other). So the
 * locks are taken on a per-device lock file of the tree,
 * <root>/dev.lock/<name>, a regular file every process of the exec opens
 * read-write; the kernel then decides conflicts, waits, F_GETLK's holder
 * and deadlocks (EDEADLK) between all of them as it would on the device's
 * inode. Owners are mapped to the kernel's own:
 *
 * - POSIX locks belong to the process (its files table) on the inode: one
 *   lock descriptor per device per process carries them, and any close of
 *   one of the process's fds of that device drops them all (F_UNLCK of the
 *   whole file), as Linux's close does. A forked child does not inherit
 *   them (the kernel sees another files table), threads share them.
 * - OFD locks and flock belong to the open file description: one lock
 *   description per device description (the placeholder's, which dup and
 *   fork share), found with kcmp(KCMP_FILE); it is closed when the last of
 *   the process's fds of that description is closed, and a forked child
 *   holds a copy of it exactly as it holds one of the placeholder, so the
 *   locks go when the last reference anywhere does, as Linux's.
 *
 * The access mode is the device fd's, checked here (F_WRLCK needs it
 * writable, F_RDLCK readable: EBADF), since the lock file is open
 * read-write. Lock descriptors are close-on-exec (and at 900 or above,
 * as the daemon connection: pl_fd_move_high): an exec drops the
 * process's locks on its devices (Linux keeps those of fds that survive
 * the exec; docs/compat.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

#define PL_MAX_DEVLOCKS 64u

/* a lock descriptor: a device's POSIX one (rep -1), or the OFD one of rep's description */
struct devlock {
	const struct pl_devinfo *dev;
	int rep;	/* a device fd of the description (-1: the process's POSIX locks) */
	int fd;		/* the lock file, read-write */
};

static pthread_mutex_t lock_mu = PTHREAD_MUTEX_INITIALIZER;
static struct devlock locks[PL_MAX_DEVLOCKS];
static unsigned nr_locks;

/* a fork copies the table whole: never in the middle of a change */
static void devlock_prepare(void) { pthread_mutex_lock(&lock_mu); }
static void devlock_after(void) { pthread_mutex_unlock(&lock_mu); }
static void devlock_init(void) { pthread_atfork(devlock_prepare, devlock_after, devlock_after); }

static int lockfile_open(const struct pl_devinfo *d)
{
	static int (*next_open)(const char *, int, ...);
	const int fl = O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW;
	const char *root = pl_root();
	char path[PATH_MAX];
	int n, fd, ret;

	if (!next_open)
		next_open = pl_next("open");
	if (!root)
		return -errno;
	n = snprintf(path, sizeof(path), "%s/dev.lock/%s", root, d->name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	fd = next_open(path, fl, 0600);
	if (fd < 0 && errno == ENOENT) {
		path[n - strlen(d->name) - 1] = '\0';
		ret = pl_sysfs_mkdirs(path);
		if (ret)
			return ret;
		path[n - strlen(d->name) - 1] = '/';
		fd = next_open(path, fl, 0600);
	}
	/* high, so that a program's dup2 onto a number it believes free spares it */
	return fd < 0 ? -errno : pl_fd_move_high(fd);
}

static bool same_file(int a, int b)
{
	pid_t pid = getpid();

	return a == b || !pl_raw_syscall(__NR_kcmp, pid, pid, KCMP_FILE, a, b, 0);
}

/* The lock descriptor for fd (ofd: its description's, else the process's), made if none: fd or -errno */
static int lock_fd(int fd, const struct pl_devinfo *d, bool ofd)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	int ret = -ENOLCK;

	pthread_once(&once, devlock_init);
	pthread_mutex_lock(&lock_mu);
	for (unsigned i = 0; i < nr_locks; i++) {
		if (locks[i].dev == d && (ofd ? locks[i].rep >= 0 && same_file(locks[i].rep, fd) :
					    locks[i].rep < 0)) {
			ret = locks[i].fd;
			goto out;
		}
	}
	if (nr_locks < PL_MAX_DEVLOCKS) {
		ret = lockfile_open(d);
		if (ret >= 0)
			locks[nr_locks++] = (struct devlock){ .dev = d, .rep = ofd ? fd : -1, .fd = ret };
	}
out:
	pthread_mutex_unlock(&lock_mu);
	return ret;
}

/* the device's access mode allows a lock of type (F_RDLCK, F_WRLCK, F_UNLCK)? */
static bool mode_allows(const struct pl_file *f, int type)
{
	int acc = f->oflags & O_ACCMODE;

	if (type == F_RDLCK)
		return acc == O_RDONLY || acc == O_RDWR;
	if (type == F_WRLCK)
		return acc == O_WRONLY || acc == O_RDWR;
	return true;
}

bool pl_devlock_cmd(int cmd)
{
	switch (cmd) {
	case F_GETLK: case F_SETLK: case F_SETLKW:
	case F_OFD_GETLK: case F_OFD_SETLK: case F_OFD_SETLKW:
		return true;
	default:
		return false;
	}
}

int pl_devlock_fcntl(int fd, struct pl_file *f, int cmd, struct flock *fl)
{
	bool ofd = cmd == F_OFD_GETLK || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
	bool set = cmd != F_GETLK && cmd != F_OFD_GETLK;
	int lfd;

	/* Linux's order: the argument is read (EFAULT), then the mode judged (EBADF) */
	if (!fl) {
		errno = EFAULT;
		return -1;
	}
	if (set && !mode_allows(f, fl->l_type)) {
		errno = EBADF;
		return -1;
	}
	lfd = lock_fd(fd, f->dev, ofd);
	if (lfd < 0) {
		errno = -lfd;
		return -1;
	}
	/* SEEK_CUR is the device fd's position, not the lock file's */
	if (fl->l_whence == SEEK_CUR) {
		struct flock c = *fl;
		/* the kernel's f_pos, as Linux reads it (no llseek: the char devices have none) */
		long pos = pl_raw_syscall(__NR_lseek, fd, 0, SEEK_CUR, 0, 0, 0);

		if (pos < 0) {
			errno = (int)-pos;
			return -1;
		}
		c.l_whence = SEEK_SET;
		if (__builtin_add_overflow(c.l_start, pos, &c.l_start)) {
			errno = EOVERFLOW;
			return -1;
		}
		if (fcntl(lfd, cmd, &c) < 0)
			return -1;
		if (!set)
			*fl = c;
		return 0;
	}
	return fcntl(lfd, cmd, fl);
}

int pl_devlock_flock(int fd, struct pl_file *f, int op)
{
	int lfd = lock_fd(fd, f->dev, true);

	if (lfd < 0) {
		errno = -lfd;
		return -1;
	}
	return flock(lfd, op);
}

/*
 * fd, of device d, is about to be closed (or replaced by dup2): the
 * process's POSIX locks on d go, and a description's lock descriptor is
 * handed to another fd of that description or closed with its last.
 */
void pl_devlock_closing(int fd, const struct pl_devinfo *d)
{
	static const struct flock all = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
	static int (*next_close)(int);

	if (!next_close)
		next_close = pl_next("close");

	pthread_mutex_lock(&lock_mu);
	for (unsigned i = 0; i < nr_locks; i++) {
		struct devlock *l = &locks[i];

		if (l->dev != d)
			continue;
		if (l->rep < 0) {
			fcntl(l->fd, F_SETLK, &all);
			continue;
		}
		if (!same_file(l->rep, fd))
			continue;
		l->rep = pl_fd_same_file(fd, d);
		if (l->rep >= 0)
			continue;
		next_close(l->fd);
		*l = locks[--nr_locks];
		i--;
	}
	pthread_mutex_unlock(&lock_mu);
}

PL_EXPORT int flock(int fd, int op)
{
	static int (*next)(int, int);
	struct pl_file *f = pl_fd(fd);

	if (!next)
		next = pl_next("flock");
	return f ? pl_devlock_flock(fd, f, op) : next(fd, op);
}
