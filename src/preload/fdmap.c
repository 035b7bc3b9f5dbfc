/* SPDX-License-Identifier: MIT */
/*
 * The interposers define libc's own names (fstat and fstat64, fcntl and
 * fcntl64 as two symbols): without this, glibc's headers would rename the
 * first of each pair to the second. On 64-bit Linux both are one ABI.
 */
#undef _FILE_OFFSET_BITS
/*
 * Device fds. A program's device fd is a real descriptor on a placeholder,
 * so the kernel keeps its number, status flags, offset, dups and fork/exec
 * inheritance exactly as it keeps a device's; this table only says which
 * numbers are ucmd's and what they are, and the daemon holds the device
 * under the same number (UCMDD_OPEN_FIXED).
 *
 * The placeholder is an empty directory opened read-only,
 * <root>/dev.fd/<access mode>/<name> (the access mode, which a directory
 * cannot be opened with, is in its path), as ucmd-supervise's are: every
 * call that reaches it without being served fails with an errno (read
 * EISDIR, write EBADF, mmap ENODEV, ftruncate EINVAL...), never moves data
 * to or from a file. So a copy made with the program's own instruction
 * (pl_fd_adopt) loses nothing before its first call through libc, and a
 * call with the program's own instruction on any device fd fails. What the
 * program asks of the fd through libc (F_GETFL, fstat) is the device's.
 *
 * The table is read without a lock (one atomic load per call on any fd);
 * its entries point at interned, never-freed struct pl_file (device, open
 * flags), so a racing close cannot free what another thread just read.
 * Descriptors closed behind libc's back (a raw close system call) stay in
 * the table until the number is reused by an interposed open or dup; a
 * number reused meanwhile by something we do not see (socket(), a raw
 * open) is taken for the device until then (docs/compat.md): checking the
 * placeholder's inode on every call would cost a system call per read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "client/client.h"
#include "preload/preload.h"
#include "preload/svtab.h"

#define PL_MAX_FD 1024	/* the daemon's SRV_FD_SPACE: numbers past it cannot be mirrored */
#define PL_MAX_FILES 512u

static struct pl_file *_Atomic fd_table[PL_MAX_FD];

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_file files[PL_MAX_FILES];
static unsigned nr_files;

/* What a placeholder keeps of the program's flags: the rest is the device's business. */
#define PL_KEPT_FLAGS (O_DIRECT | O_NONBLOCK | O_SYNC | O_DSYNC | O_NOATIME | O_ACCMODE)

static struct pl_file *intern(const struct pl_devinfo *d, int oflags)
{
	struct pl_file *f = NULL;

	oflags &= PL_KEPT_FLAGS;
	pthread_mutex_lock(&intern_lock);
	for (unsigned i = 0; i < nr_files; i++) {
		if (files[i].dev == d && files[i].oflags == oflags) {
			f = &files[i];
			break;
		}
	}
	if (!f && nr_files < PL_MAX_FILES) {
		f = &files[nr_files++];
		f->dev = d;
		f->oflags = oflags;
	}
	pthread_mutex_unlock(&intern_lock);
	return f;
}

struct pl_file *pl_fd(int fd)
{
	if (fd < 0 || fd >= PL_MAX_FD)
		return NULL;
	return atomic_load_explicit(&fd_table[fd], memory_order_acquire);
}

static void set_fd(int fd, struct pl_file *f)
{
	if (fd >= 0 && fd < PL_MAX_FD)
		atomic_store_explicit(&fd_table[fd], f, memory_order_release);
}

/* <root>/dev.fd/<acc>/<name>: the placeholder of name opened for acc (O_ACCMODE) */
static int placeholder_path(const struct pl_devinfo *d, int acc, char *buf, size_t len)
{
	const char *root = pl_root();
	int n;

	if (!root)
		return -errno;
	n = snprintf(buf, len, "%s/dev.fd/%d/%s", root, acc & O_ACCMODE, d->name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const struct pl_devinfo *pl_placeholder_dev(const char *path, int *acc)
{
	const char *root = pl_root();
	size_t n;

	if (!root)
		return NULL;
	n = strlen(root);
	if (strncmp(path, root, n) || strncmp(path + n, "/dev.fd/", 8) || path[n + 8] < '0' ||
	    path[n + 8] > '3' || path[n + 9] != '/')
		return NULL;
	*acc = path[n + 8] - '0';
	return pl_devinfo(path + n + 10);
}

/*
 * Open flags the placeholder keeps for the kernel: the status flags
 * (O_NONBLOCK, O_SYNC, O_APPEND... F_GETFL's and F_SETFL's), O_CLOEXEC;
 * not the access mode (a directory is read-only), O_DIRECT (ours,
 * pl_file), nor what means nothing for a device.
 */
#define PL_DIR_DROP (O_ACCMODE | O_DIRECT | O_CREAT | O_TRUNC | O_EXCL | O_TMPFILE | O_PATH | \
		     O_DIRECTORY | O_NOFOLLOW | O_NOCTTY)

/*
 * The placeholder opened (fd, or -1 and errno). O_NOATIME marks it (the
 * kernel keeps it in the status flags, and programs hardly ask for it), so
 * that an F_GETFL through libc of a copy made without libc is found at the
 * cost of a readlink for the few other files so opened; a process that no
 * longer owns the tree (it changed its uid) opens it unmarked.
 */
static int placeholder_open(int (*next_open)(const char *, int, ...), const char *path, int flags)
{
	int fd = next_open(path, (flags & ~PL_DIR_DROP) | O_RDONLY | O_NOATIME);

	if (fd < 0 && errno == EPERM)
		fd = next_open(path, (flags & ~PL_DIR_DROP) | O_RDONLY);
	return fd;
}

int pl_dev_open(const struct pl_devinfo *d, int flags)
{
	static int (*next_open)(const char *, int, ...);
	struct ucmd_engine *e;
	struct pl_file *f;
	char path[PATH_MAX];
	int fd, ret, saved = errno;

	if (!next_open)
		next_open = pl_next("open");
	flags &= ~(O_CREAT | O_TRUNC | O_EXCL | O_TMPFILE | O_PATH | O_DIRECTORY | O_NOFOLLOW);
	ret = placeholder_path(d, flags, path, sizeof(path));
	if (ret) {
		errno = -ret;
		return -1;
	}
	e = pl_engine();
	if (!e)
		return -1;
	fd = placeholder_open(next_open, path, flags);
	if (fd < 0 && errno == ENOENT) {
		ret = pl_sysfs_mkdirs(path);
		if (ret) {
			errno = -ret;
			return -1;
		}
		fd = placeholder_open(next_open, path, flags);
	}
	if (fd < 0)
		return -1;
	if (fd >= PL_MAX_FD) {
		close(fd);
		errno = EMFILE;
		return -1;
	}
	f = intern(d, flags);
	ret = f ? dc_open_fixed(e, d->name, flags & O_ACCMODE, fd) : -ENFILE;
	if (ret < 0) {
		close(fd);
		errno = -ret;
		return -1;
	}
	set_fd(fd, f);
	/* a success leaves errno as it was (the placeholder's first open fails, ENOENT) */
	errno = saved;
	return fd;
}

/* ---- the daemon's side of inherited descriptors ---- */

void pl_fdmap_reopen(struct ucmd_engine *e)
{
	for (int fd = 0; fd < PL_MAX_FD; fd++) {
		struct pl_file *f = pl_fd(fd);
		int ret;

		if (!f)
			continue;
		ret = dc_open_fixed(e, f->dev->name, f->oflags & O_ACCMODE, fd);
		if (ret < 0) {
			/* the policy may judge this process otherwise: the fd is then unusable */
			pl_trace("fd %d (%s) inherited but not reopened: %s", fd, f->dev->name,
				 strerror(-ret));
			set_fd(fd, NULL);
		}
	}
}

/*
 * A copy of a device descriptor of ucmd-supervise's (a placeholder of its
 * private directory, .../ucmd-supervise.XXXXXX/dev/NAME) at a number its
 * filter does not judge: the program's own dup, kept across the exec that
 * started this image (a Go program's device given to a child as its
 * stdin). The supervisor says which device and open flags it is (kcmp
 * against the files it gave: the path alone proves nothing); it becomes
 * ours. Its own numbers (960..) stay its.
 */
static const struct pl_devinfo *sv_copy_dev(int fd, const char *target, int *flags)
{
	struct pl_svfd q = { .fd = fd };
	const struct pl_devinfo *d;
	const char *dev = strstr(target, "/ucmd-supervise.");

	*flags = -1;
	if (!dev || !(dev = strstr(dev, "/dev/")) || (unsigned)fd - PL_SV_FD_BASE < PL_SV_FD_NR)
		return NULL;
	if (pl_raw_syscall(__NR_ioctl, PL_SV_TABLE_FD, PL_SV_IOC_FDINFO, (long)&q, 0, 0, 0))
		return NULL;
	q.name[sizeof(q.name) - 1] = '\0';
	d = pl_devinfo(q.name);
	if (d)
		*flags = q.flags;
	return d;
}

/* the target of fd's /proc link, made from the trampoline (no user notification): 0 or -errno */
static int fd_target(int fd, char *target, size_t len)
{
	char link[64];
	long n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = pl_raw_syscall(__NR_readlink, (long)link, (long)target, (long)len - 1, 0, 0, 0);
	if (n <= 0)
		return n ? (int)n : -ENOENT;
	target[n] = '\0';
	return 0;
}

/*
 * Could fd be a placeholder (a directory, ours or the supervisor's)? A
 * file, socket or pipe is answered by one fstat, which costs less than the
 * readlink of its /proc link (a closed number is none either), and stays
 * right whatever the program does to the number meanwhile (no cache).
 */
static bool is_dir(int fd)
{
	struct stat st;

	return !pl_raw_syscall(__NR_fstat, fd, (long)&st, 0, 0, 0, 0) && S_ISDIR(st.st_mode);
}

/*
 * The device whose placeholder fd is (target: its /proc link), ours or the
 * supervisor's, and the program's open flags for it (*flags); NULL if none.
 */
static const struct pl_devinfo *copy_dev(int fd, const char *target, int *flags)
{
	const struct pl_devinfo *d;
	int acc;

	d = pl_placeholder_dev(target, &acc);
	if (!d)
		return sv_copy_dev(fd, target, flags);
	/* the kernel's status flags; the access mode the placeholder's path names */
	*flags = (int)pl_raw_syscall(__NR_fcntl, fd, F_GETFL, 0, 0, 0, 0);
	if (*flags >= 0)
		*flags = (*flags & ~(O_ACCMODE | O_NOATIME)) | acc;
	return d;
}

/*
 * Placeholders, the supervisor's and ours (empty directories opened
 * read-only), answer calls as no device does: EISDIR to reads, EBADF to
 * writes and fallocate, ENODEV or EACCES to mmap, EINVAL to ftruncate,
 * sendfile and splice, ENOTTY to the NVMe and block ioctls, a directory to
 * fstat; fsync succeeds doing nothing (err 0). So a copy that the program
 * made with its own dup, dup2, dup3 or fcntl(F_DUPFD) system call (Go's
 * syscall.Dup), which no interposer sees, is found at its first call
 * through libc that answers so, and becomes ours as a copy made through
 * libc does: the daemon opens it at its number (for the rings too). Every
 * other such answer costs an fstat, and a readlink for a directory.
 */
struct pl_file *pl_fd_adopt(int fd, int err)
{
	char target[PATH_MAX];
	const struct pl_devinfo *d;
	struct ucmd_engine *e;
	struct pl_file *f;
	int saved = errno, fl;

	if ((err && err != ENOTTY && err != EISDIR && err != EBADF && err != EINVAL &&
	     err != ENODEV && err != EACCES) || fd < 0 ||
	    fd >= PL_MAX_FD || (unsigned)fd - PL_SV_FD_BASE < PL_SV_FD_NR ||
	    !getenv(PL_ENV_DAEMON) || !is_dir(fd) || fd_target(fd, target, sizeof(target)))
		goto none;
	d = copy_dev(fd, target, &fl);
	if (!d || fl < 0 || !(f = intern(d, fl)) || !(e = pl_engine()))
		goto none;
	if (dc_open_fixed(e, d->name, fl & O_ACCMODE, fd) < 0)
		goto none;
	set_fd(fd, f);
	pl_trace("fd %d: a copy of %s made without libc, served from its first call", fd, d->name);
	errno = saved;
	return f;
none:
	errno = saved;
	return NULL;
}

void pl_fdmap_recover(void)
{
	char link[64], target[PATH_MAX];
	struct dirent *de;
	bool found = false;
	DIR *dir;

	if (!getenv(PL_ENV_ROOT))
		return;		/* no tree yet: nothing can have been inherited */
	dir = opendir("/proc/self/fd");
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		const struct pl_devinfo *d;
		int fd = atoi(de->d_name), fl;
		ssize_t n;

		if (de->d_name[0] < '0' || de->d_name[0] > '9' || fd >= PL_MAX_FD || fd == dirfd(dir))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		d = copy_dev(fd, target, &fl);
		if (!d || fl < 0)
			continue;
		set_fd(fd, intern(d, fl));
		found = true;
	}
	closedir(dir);
	if (found) {
		struct ucmd_engine *e = pl_engine();

		/* pl_engine() may have connected while the table was half filled */
		if (e)
			pl_fdmap_reopen(e);
	}
}

int pl_fd_same_file(int fd, const struct pl_devinfo *d)
{
	pid_t pid = getpid();

	for (int g = 0; g < PL_MAX_FD; g++) {
		struct pl_file *f = pl_fd(g);

		if (g != fd && f && f->dev == d &&
		    !pl_raw_syscall(__NR_kcmp, pid, pid, KCMP_FILE, fd, g, 0))
			return g;
	}
	return -1;
}

/* ---- interposers ---- */

/* The daemon forgets fd: it was closed or replaced. */
static void forget(int fd)
{
	struct pl_file *f = pl_fd(fd);
	struct ucmd_engine *e;

	if (!f)
		return;
	pl_devlock_closing(fd, f->dev);
	set_fd(fd, NULL);
	e = pl_engine();
	if (e)
		ucmd_close(e, fd);
}

/*
 * What oldfd is: ours, or a device ucmd-supervise gave (an open made with
 * the program's own instruction, svtab.c), whose copy the program makes
 * through libc becomes ours: a number the supervisor's filter does not
 * judge (below 960), and its own in the daemon for the rings.
 */
static struct pl_file *file_of(int fd)
{
	struct pl_file *f = pl_fd(fd);
	const struct pl_devinfo *d;
	char name[32];
	int flags;

	if (f || (unsigned)fd - PL_SV_FD_BASE >= PL_SV_FD_NR || !pl_svtab_dev(fd, name, &flags))
		return f;
	d = pl_devinfo(name);
	return d ? intern(d, flags) : NULL;
}

/* newfd now refers to what oldfd refers to: mirror it in the daemon. */
static int mirror(int oldfd, int newfd)
{
	struct pl_file *f = file_of(oldfd);
	struct ucmd_engine *e;
	int ret;

	if (!f) {
		forget(newfd);
		return 0;
	}
	e = pl_engine();
	if (!e)
		return -errno;
	if (newfd >= PL_MAX_FD)
		return -EMFILE;
	ret = dc_open_fixed(e, f->dev->name, f->oflags & O_ACCMODE, newfd);
	if (ret < 0)
		return ret;
	set_fd(newfd, f);
	return 0;
}

/* After a dup that made newfd: mirror, or undo the dup and fail as the dup would. */
static int dup_done(int oldfd, int newfd)
{
	static int (*next_close)(int);
	int ret;

	if (newfd < 0 || !file_of(oldfd))
		return newfd;
	ret = mirror(oldfd, newfd);
	if (ret) {
		if (!next_close)
			next_close = pl_next("close");
		next_close(newfd);
		errno = -ret;
		return -1;
	}
	return newfd;
}

PL_EXPORT int close(int fd)
{
	static int (*next)(int);

	if (!next)
		next = pl_next("close");
	forget(fd);
	pl_uring_close(fd);
	return next(fd);
}

PL_EXPORT int dup(int fd)
{
	static int (*next)(int);

	if (!next)
		next = pl_next("dup");
	return dup_done(fd, next(fd));
}

PL_EXPORT int dup2(int oldfd, int newfd)
{
	static int (*next)(int, int);
	int ret;

	if (!next)
		next = pl_next("dup2");
	ret = next(oldfd, newfd);
	if (ret < 0 || oldfd == newfd)
		return ret;
	if (!file_of(oldfd)) {
		forget(newfd);	/* dup2 closed what newfd was */
		return ret;
	}
	return dup_done(oldfd, ret);
}

PL_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	static int (*next)(int, int, int);
	int ret;

	if (!next)
		next = pl_next("dup3");
	ret = next(oldfd, newfd, flags);
	if (ret < 0)
		return ret;
	if (!file_of(oldfd)) {
		forget(newfd);
		return ret;
	}
	return dup_done(oldfd, ret);
}

/*
 * F_SETFL on device f: the status flags are the placeholder's, but
 * O_DIRECT, which a directory refuses, is ours (setfl: the block device
 * takes it, the char devices have no direct I/O: EINVAL).
 */
static int dev_setfl(int (*next)(int, int, ...), int fd, struct pl_file *f, long arg)
{
	const int ours = O_DIRECT | O_NOATIME;
	struct pl_file *nf;
	int ret, cur;

	if ((arg & O_DIRECT) && f->dev->kind != PL_DEV_NS_BLK) {
		errno = EINVAL;
		return -1;
	}
	/* the placeholder's mark stays (pl_dev_open) */
	cur = next(fd, F_GETFL);
	if (cur < 0)
		return cur;
	ret = next(fd, F_SETFL, (void *)((arg & ~(long)ours) | (cur & O_NOATIME)));
	if (ret < 0 || (arg & ours) == (f->oflags & ours))
		return ret;
	nf = intern(f->dev, (f->oflags & ~ours) | (int)(arg & ours));
	if (nf)
		set_fd(fd, nf);
	return ret;
}

static int fcntl_common(int (*next)(int, int, ...), int fd, int cmd, void *arg)
{
	struct pl_file *f = pl_fd(fd);
	int ret;

	if (f && cmd == F_SETFL)
		return dev_setfl(next, fd, f, (long)arg);
	if (f && pl_devlock_cmd(cmd))
		return pl_devlock_fcntl(fd, f, cmd, arg);
	ret = next(fd, cmd, arg);
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return dup_done(fd, ret);
	case F_GETFL:
		/* a marked read-only directory: a device copied without libc? */
		if (ret >= 0 && !f && (ret & (O_NOATIME | O_ACCMODE)) == O_NOATIME)
			f = pl_fd_adopt(fd, 0);
		/* a marked read-only directory without O_DIRECT stands for the device as opened */
		if (ret >= 0 && f)
			ret = (ret & ~(O_ACCMODE | O_DIRECT | O_NOATIME)) |
			      (f->oflags & (O_ACCMODE | O_DIRECT | O_NOATIME));
		return ret;
	default:
		return ret;
	}
}

/*
 * fcntl's third argument is an int, a long or a pointer by command: read as
 * a pointer, every kind passes through unchanged (the ABI passes all three
 * in one register).
 */
PL_EXPORT int fcntl(int fd, int cmd, ...)
{
	static int (*next)(int, int, ...);
	va_list ap;
	void *arg;

	if (!next)
		next = pl_next("fcntl");
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(next, fd, cmd, arg);
}

PL_EXPORT int fcntl64(int fd, int cmd, ...)
{
	static int (*next)(int, int, ...);
	va_list ap;
	void *arg;

	if (!next)
		next = pl_next("fcntl64");
	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(next, fd, cmd, arg);
}

/* fd's device after an fstat that succeeded; a directory may be a copy of the supervisor's */
static struct pl_file *fstat_file(int fd, bool dir)
{
	struct pl_file *f = pl_fd(fd);

	return f || !dir ? f : pl_fd_adopt(fd, EISDIR);
}

PL_EXPORT int fstat(int fd, struct stat *st)
{
	static int (*next)(int, struct stat *);
	struct pl_file *f;
	int ret;

	if (!next)
		next = pl_next("fstat");
	ret = next(fd, st);
	f = ret ? NULL : fstat_file(fd, S_ISDIR(st->st_mode));
	if (f)
		pl_stat_fix(f->dev, st);
	else if (!ret && pl_fd_in_tree(fd, st->st_dev, st->st_uid))
		pl_stat_tree(st);
	return ret;
}

PL_EXPORT int fstat64(int fd, struct stat64 *st)
{
	static int (*next)(int, struct stat64 *);
	struct pl_file *f;
	int ret;

	if (!next)
		next = pl_next("fstat64");
	ret = next(fd, st);
	f = ret ? NULL : fstat_file(fd, S_ISDIR(st->st_mode));
	/* struct stat and stat64 are one layout on 64-bit Linux */
	if (f)
		pl_stat_fix(f->dev, (struct stat *)(void *)st);
	else if (!ret && pl_fd_in_tree(fd, st->st_dev, st->st_uid))
		pl_stat_tree((struct stat *)(void *)st);
	return ret;
}

/* Binaries built against glibc before 2.33 call these. */
PL_EXPORT int __fxstat(int ver, int fd, struct stat *st)
{
	static int (*next)(int, int, struct stat *);
	struct pl_file *f;
	int ret;

	if (!next)
		next = pl_next("__fxstat");
	ret = next(ver, fd, st);
	f = ret ? NULL : fstat_file(fd, S_ISDIR(st->st_mode));
	if (f)
		pl_stat_fix(f->dev, st);
	else if (!ret && pl_fd_in_tree(fd, st->st_dev, st->st_uid))
		pl_stat_tree(st);
	return ret;
}

PL_EXPORT int __fxstat64(int ver, int fd, struct stat64 *st)
{
	static int (*next)(int, int, struct stat64 *);
	struct pl_file *f;
	int ret;

	if (!next)
		next = pl_next("__fxstat64");
	ret = next(ver, fd, st);
	f = ret ? NULL : fstat_file(fd, S_ISDIR(st->st_mode));
	if (f)
		pl_stat_fix(f->dev, (struct stat *)(void *)st);
	else if (!ret && pl_fd_in_tree(fd, st->st_dev, st->st_uid))
		pl_stat_tree((struct stat *)(void *)st);
	return ret;
}
