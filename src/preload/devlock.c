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
 * as the daemon connection: pl_fd_move_high), but an exec keeps those
 * whose locks Linux keeps (pl_devlock_exec): the process's POSIX locks on
 * a device none of whose fds is close-on-exec (Linux's exec closes those,
 * and any close drops them), and a description's OFD locks and flock
 * when one of its fds survives. The new image finds them again at its
 * start (pl_devlock_recover) by their path, the lock file's position
 * saying whose they are: 0 the process's, N + 1 fd N's description's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * The kernel drops a process's POSIX locks on an inode at any close of a
 * file of it by the process, and lockfile_open's move of a new lock
 * description to 900+ closes one: Linux's locks on the device would not
 * go. So the process's successful POSIX set-ops since its locks on a
 * device last all went are kept here, and made again (F_SETLK) on its
 * POSIX descriptor after such a move; another process may take a range in
 * between (docs/compat.md). An unlock of the whole file empties a device's.
 */
#define PL_POSIX_LOG 256u

struct posix_op {
	const struct pl_devinfo *dev;
	struct flock fl;
};

static struct posix_op plog[PL_POSIX_LOG];
static unsigned nr_plog;

/* a fork copies the table whole: never in the middle of a change */
static void devlock_prepare(void) { pthread_mutex_lock(&lock_mu); }
static void devlock_after(void) { pthread_mutex_unlock(&lock_mu); }
/* a child holds none of its parent's POSIX locks */
static void devlock_child(void)
{
	nr_plog = 0;
	pthread_mutex_unlock(&lock_mu);
}
static void devlock_init(void) { pthread_atfork(devlock_prepare, devlock_after, devlock_child); }

static void plog_forget(const struct pl_devinfo *d)
{
	unsigned k = 0;

	for (unsigned i = 0; i < nr_plog; i++)
		if (plog[i].dev != d)
			plog[k++] = plog[i];
	nr_plog = k;
}

/* a POSIX set-op on d succeeded: kept (under lock_mu) */
static void plog_add(const struct pl_devinfo *d, const struct flock *fl)
{
	if (fl->l_type == F_UNLCK && fl->l_whence == SEEK_SET && !fl->l_start && !fl->l_len) {
		plog_forget(d);
		return;
	}
	if (nr_plog == PL_POSIX_LOG) {
		pl_trace("more than %u POSIX lock changes on devices: a lock may be lost later",
			 PL_POSIX_LOG);
		return;
	}
	plog[nr_plog++] = (struct posix_op){ .dev = d, .fl = *fl };
}

/* d's POSIX locks went with a close of ours: made again on lfd (under lock_mu) */
static void plog_replay(const struct pl_devinfo *d, int lfd)
{
	for (unsigned i = 0; i < nr_plog; i++) {
		struct flock fl = plog[i].fl;

		if (plog[i].dev == d && fcntl(lfd, F_SETLK, &fl) < 0)
			pl_trace("a POSIX lock on %s went when a lock file was moved, and cannot be "
				 "taken again: %s", d->name, strerror(errno));
	}
}

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
		/* its move to 900+ closed a file of the lock file: the process's POSIX locks went */
		for (unsigned i = 0; ret >= 0 && ofd && i < nr_locks; i++)
			if (locks[i].dev == d && locks[i].rep < 0)
				plog_replay(d, locks[i].fd);
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

static void posix_done(const struct pl_devinfo *d, const struct flock *fl)
{
	pthread_mutex_lock(&lock_mu);
	plog_add(d, fl);
	pthread_mutex_unlock(&lock_mu);
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
		else if (!ofd)
			posix_done(f->dev, &c);
		return 0;
	}
	if (fcntl(lfd, cmd, fl) < 0)
		return -1;
	if (set && !ofd)
		posix_done(f->dev, fl);
	return 0;
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
			plog_forget(d);
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

#define PL_DEVLOCK_FDS 1024	/* fdmap.c's PL_MAX_FD: device fds lie below it */

/* d's fds: 1 one is close-on-exec, 0 none is, -1 there is none */
static int dev_cloexec(const struct pl_devinfo *d)
{
	int any = -1;

	for (int i = 0; i < PL_DEVLOCK_FDS; i++) {
		struct pl_file *f = pl_fd(i);

		if (!f || f->dev != d)
			continue;
		if (pl_raw_syscall(__NR_fcntl, i, F_GETFD, 0, 0, 0, 0) & FD_CLOEXEC)
			return 1;
		any = 0;
	}
	return any;
}

/* an fd of rep's description (of device d) an exec keeps, or -1 */
static int kept_fd_of(int rep, const struct pl_devinfo *d)
{
	for (int i = 0; i < PL_DEVLOCK_FDS; i++) {
		struct pl_file *f = pl_fd(i);

		if (f && f->dev == d && same_file(rep, i) &&
		    !(pl_raw_syscall(__NR_fcntl, i, F_GETFD, 0, 0, 0, 0) & FD_CLOEXEC))
			return i;
	}
	return -1;
}

static int exec_kept[PL_MAX_DEVLOCKS];
static unsigned nr_exec_kept;

void pl_devlock_exec(void)
{
	/* from a SIGSYS handler too: a table held by the interrupted thread keeps nothing */
	if (pthread_mutex_trylock(&lock_mu))
		return;
	nr_exec_kept = 0;
	for (unsigned i = 0; i < nr_locks; i++) {
		const struct devlock *l = &locks[i];
		long pos = -1;

		if (l->rep < 0) {
			if (!dev_cloexec(l->dev))
				pos = 0;
		} else {
			int keep = kept_fd_of(l->rep, l->dev);

			if (keep >= 0)
				pos = keep + 1L;
		}
		if (pos < 0 || pl_raw_syscall(__NR_lseek, l->fd, pos, SEEK_SET, 0, 0, 0) != pos ||
		    pl_raw_syscall(__NR_fcntl, l->fd, F_SETFD, 0, 0, 0, 0))
			continue;
		exec_kept[nr_exec_kept++] = l->fd;
	}
	pthread_mutex_unlock(&lock_mu);
}

void pl_devlock_exec_failed(void)
{
	for (unsigned i = 0; i < nr_exec_kept; i++)
		pl_raw_syscall(__NR_fcntl, exec_kept[i], F_SETFD, FD_CLOEXEC, 0, 0, 0);
	nr_exec_kept = 0;
}

void pl_devlock_recover(void)
{
	const char *root = getenv(PL_ENV_ROOT);
	char link[64], target[PATH_MAX], prefix[PATH_MAX];
	size_t plen;

	if (!root || !*root)
		return;
	plen = (size_t)snprintf(prefix, sizeof(prefix), "%s/dev.lock/", root);
	if (plen >= sizeof(prefix))
		return;
	for (int fd = PL_HIGH_FD_MIN; fd < PL_DEVLOCK_FDS; fd++) {
		const struct pl_devinfo *d;
		struct pl_file *f;
		ssize_t n;
		long pos;
		int rep;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if ((size_t)n <= plen || strncmp(target, prefix, plen) || strchr(target + plen, '/'))
			continue;
		pos = pl_raw_syscall(__NR_lseek, fd, 0, SEEK_CUR, 0, 0, 0);
		d = pl_devinfo(target + plen);
		rep = pos > 0 && pos <= PL_DEVLOCK_FDS ? (int)(pos - 1) : -1;
		f = rep >= 0 ? pl_fd(rep) : NULL;
		/* a lock descriptor of ours whose owner is not here (kept by mistake): its locks go */
		if (!d || pos < 0 || (pos > 0 && (!f || f->dev != d)) || nr_locks == PL_MAX_DEVLOCKS) {
			pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
			continue;
		}
		pl_raw_syscall(__NR_fcntl, fd, F_SETFD, FD_CLOEXEC, 0, 0, 0);
		pl_raw_syscall(__NR_lseek, fd, 0, SEEK_SET, 0, 0, 0);
		locks[nr_locks++] = (struct devlock){ .dev = d, .rep = rep, .fd = fd };
		pl_trace("device lock descriptor %d of %s kept across exec (%s)", fd, d->name,
			 rep < 0 ? "the process's POSIX locks" : "a description's OFD locks, flock");
	}
}

PL_EXPORT int flock(int fd, int op)
{
	static int (*next)(int, int);
	struct pl_file *f = pl_fd(fd);

	if (!next)
		next = pl_next("flock");
	return f ? pl_devlock_flock(fd, f, op) : next(fd, op);
}
