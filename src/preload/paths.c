// SPDX-License-Identifier: MIT
/*
 * The path interposers (preload.h, paths.c). A path that names one of
 * ucmd's devices, /dev/nvme0, /dev/ng0n1, /dev/nvme0n1, opens the device
 * (fdmap.c) and stats as the device; a path into the parts of /sys that
 * describe NVMe devices is the same path in the generated tree (sysfs.c).
 * Every other path goes to libc untouched.
 *
 * Which functions: those Debian 12's nvme-cli 2.3, libnvme 1.3 and fio 3.33
 * import (nm -D): open64, __open64_2, fopen64, stat64, lstat64, statx,
 * access, opendir, scandir64, readlink, realpath, __realpath_chk, and their
 * other spellings for programs built otherwise (open, openat*, creat*,
 * fstatat*, stat, lstat, faccessat, scandir, readlinkat,
 * canonicalize_file_name); fopen and freopen are fopen.c's. glibc's own
 * calls inside those (scandir's opendir) do not come through here, hence
 * the outer ones. glibc
 * 2.33+ programs call stat64 and friends, not __xstat: the old entry points
 * are left alone (docs/compat.md).
 *
 * Relative paths are resolved against the working directory or dirfd, and
 * "//" and "/./" are folded; ".." is not (a path that climbs out of /dev
 * or /sys to come back is left to the kernel).
 */
/*
 * The build sets _FILE_OFFSET_BITS=64, with which glibc's headers rename
 * open to open64, stat to stat64...: the interposers define both names
 * themselves, so this file sees the functions under their own names.
 */
#undef _FILE_OFFSET_BITS

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "preload.h"
#include "sv.h"

/* sys_open's verdict as libc's: -1 and errno, or 0. */
int pl_sys_open_ok(const struct pl_where *w, int flags)
{
	int ret = pl_where_open(w, flags);

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/*
 * The looks (stat, access, readlink) are made here once the path is
 * judged, from the trampoline, which ucmd-supervise's filter lets through
 * (sv_filter.c): the supervisor serves only the program's own instruction
 * and libc's inner calls, and the common look costs no notification.
 * Return values as libc's: -1 and errno.
 */
static long looked(long r)
{
	if (r < 0) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

/*
 * Should the call go to ucmd-supervise (svcall.c)? What this thread cannot
 * reach of ucmd's (PL_WHERE_SV), or an EACCES on the tree's own path
 * (the thread dropped to another user after where.c looked): the
 * supervisor's answer is Linux's for the thread's ids, EACCES included.
 */
static bool to_sv(const struct pl_where *w, long r)
{
	return w->kind == PL_WHERE_SV || (r == -EACCES && w->kind != PL_WHERE_NONE && !w->host);
}

/* The call as the program made it, answered by the supervisor: as libc's, -1 and errno. */
static long sv_looked(long nr, long a0, long a1, long a2, long a3, long a4)
{
	return looked(pl_sv_call(nr, a0, a1, a2, a3, a4));
}

/*
 * A thread that changed its root or mounts (view.c) names /dev and /sys
 * in its own root: where its /dev or /sys is not ours, the file is its
 * own (NONE: the kernel answers); where it is ours (a bind mount of it),
 * the tree and the placeholders are out of our reach from that root, and
 * ucmd-supervise, which follows the thread's root (sv_tview.c: the same
 * verdict), answers (SV), but for a device's open, which stays ours
 * (through: the daemon's connection does not go through the root). Decided
 * before where.c, whose looks at the tree would fail from that root. True
 * if decided; false: our view, where.c judges.
 */
static bool view_moved(const char *base, const char *path, struct pl_where *w)
{
	char abs[2 * PATH_MAX + 2], folded[2 * PATH_MAX + 4];
	enum pl_view v;

	/* the common case, the program never left our view: not a byte looked at */
	if (!pl_view_left() || (path[0] != '/' && !base))
		return false;
	snprintf(abs, sizeof(abs), "%s%s%s", path[0] == '/' ? "" : base, path[0] == '/' ? "" : "/",
		 path);
	pl_path_fold(folded, abs);
	v = pl_view_here(folded);
	if (v == PL_VIEW_OURS)
		return false;
	if (v == PL_VIEW_THROUGH) {
		if (strlen(folded) >= sizeof(w->norm))
			return true;	/* NONE: the kernel's ENAMETOOLONG */
		snprintf(w->norm, sizeof(w->norm), "%s", folded);
		snprintf(w->path, sizeof(w->path), "%s", folded);
		w->kind = PL_WHERE_SV;
		w->through = true;
		w->dev = !strncmp(folded, "/dev/", 5) && pl_path_dev_name(folded + 5) ?
			 pl_devinfo(folded + 5) : NULL;
	}
	return true;
}

/*
 * Where does the program's path lead (where.c): relative paths against
 * the working directory or dirfd, as the kernel names it.
 */
void pl_classify(int dirfd, const char *path, struct pl_where *w)
{
	char base[PATH_MAX];

	w->kind = PL_WHERE_NONE;
	w->host = false;
	w->through = false;
	if (!path || !*path)
		return;
	if (path[0] != '/') {
		ssize_t n;

		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof(base)))
				return;
		} else {
			char proc[64];

			/* from the trampoline: no notification for a look of our own (sv_filter.c) */
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
			n = pl_raw_syscall(__NR_readlinkat, AT_FDCWD, (long)proc, (long)base,
					   sizeof(base) - 1, 0, 0);
			if (n <= 0)
				return;
			base[n] = '\0';
		}
	}
	if (view_moved(path[0] == '/' ? NULL : base, path, w))
		return;
	pl_where(path[0] == '/' ? NULL : base, path, w);
}

static bool needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* An open of the tree's resource0 made fd: its reads are the registers at each read (res0.c). */
static int res0_opened(const struct pl_where *w, int fd)
{
	const char *base = strrchr(w->path, '/');

	if (fd >= 0 && w->kind == PL_WHERE_SYS && !w->host && base && !strcmp(base, "/resource0")) {
		int saved = errno;

		pl_res0_opened(fd, w->path);
		errno = saved;
	}
	return fd;
}

/*
 * A file the kernel opened for the program: one of the host's NVMe devices
 * by its numbers (a node made elsewhere with mknod, a bind mount: the name
 * said nothing) is closed again, ENXIO (hostnvme.c).
 */
static int judged(int fd)
{
	struct stat st;

	if (fd < 0 || pl_raw_syscall(__NR_fstat, fd, (long)&st, 0, 0, 0, 0) ||
	    !pl_host_nvme_rdev(&st))
		return fd;
	pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	errno = ENXIO;
	return -1;
}

/*
 * The open itself, once judged: with a copy of the path in our memory (a
 * second thread rewriting the program's buffer between our look and the
 * kernel's would open what we did not judge), through the preload's openat
 * stub, which ucmd-supervise lets through (pl_open_judged; docs/security.md,
 * "The preload's opens"), then judged again by what was opened.
 */
int pl_open_path(int dirfd, const char *path, int flags, mode_t mode)
{
	const struct pl_devinfo *dev;
	char copy[PATH_MAX];
	struct pl_where w;
	size_t len;
	long fd;
	int ret;

	if (!path) {
		errno = EFAULT;
		return -1;
	}
	len = strnlen(path, sizeof(copy));
	if (len == sizeof(copy)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(copy, path, len + 1);
	ret = pl_fd_path_dev(copy, &dev);
	/*
	 * a removed function's device: the link's inode stays, its driver is
	 * gone (chrdev_open finds no cdev, blkdev_open a dead disk): ENXIO
	 */
	if (!ret && dev && pl_dev_gone(dev))
		ret = -ENXIO;
	if (ret || dev) {
		if (!ret)
			return pl_dev_open(dev, flags);
		errno = -ret;
		return -1;
	}
	pl_classify(dirfd, copy, &w);
	if (w.kind == PL_WHERE_DEV || (w.through && w.dev))
		return pl_dev_open(w.dev, flags);
	if (w.kind == PL_WHERE_SV)
		return judged((int)sv_looked(__NR_openat, dirfd, (long)copy, flags,
					     needs_mode(flags) ? mode : 0, 0));
	ret = pl_sys_open_ok(&w, flags);
	if (ret < 0)
		return -1;
	if (ret == PL_OPEN_ATTRW) {
		flags = pl_attrw_flags(flags);
		/* a shell's builtin echo writes it as 1 through glibc's own write: that traps */
		pl_seccomp_trap_std_writes();
	}
	fd = pl_open_judged(dirfd, w.kind == PL_WHERE_SYS ? w.path : copy, flags, needs_mode(flags) ? mode : 0);
	pl_ctl_done();
	if (to_sv(&w, fd))
		return judged((int)sv_looked(__NR_openat, dirfd, (long)copy, flags,
					     needs_mode(flags) ? mode : 0, 0));
	if (fd < 0) {
		errno = (int)-fd;
		return -1;
	}
	return res0_opened(&w, judged((int)fd));
}

#define OPEN_MODE(flags, mode) do {			\
	if (needs_mode(flags)) {			\
		va_list ap;				\
		va_start(ap, flags);			\
		mode = va_arg(ap, mode_t);		\
		va_end(ap);				\
	}						\
} while (0)

PL_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return pl_open_path(AT_FDCWD, path, flags, mode);
}

PL_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return pl_open_path(AT_FDCWD, path, flags, mode);
}

PL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return pl_open_path(dirfd, path, flags, mode);
}

PL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return pl_open_path(dirfd, path, flags, mode);
}

/*
 * _FORTIFY_SOURCE's open without a mode: O_CREAT or O_TMPFILE there is
 * glibc's own abort (its message), so those go to glibc.
 */
static int open_2(const char *sym, bool at, int dirfd, const char *path, int flags)
{
	if (needs_mode(flags)) {
		if (!at) {
			int (*real)(const char *, int) = pl_next(sym);

			return real(path, flags);
		}
		int (*real)(int, const char *, int) = pl_next(sym);

		return real(dirfd, path, flags);
	}
	return pl_open_path(dirfd, path, flags, 0);
}

PL_EXPORT int __open_2(const char *path, int flags)
{
	return open_2("__open_2", false, AT_FDCWD, path, flags);
}

PL_EXPORT int __open64_2(const char *path, int flags)
{
	return open_2("__open64_2", false, AT_FDCWD, path, flags);
}

PL_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	return open_2("__openat_2", true, dirfd, path, flags);
}

PL_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	return open_2("__openat64_2", true, dirfd, path, flags);
}

PL_EXPORT int creat(const char *path, mode_t mode)
{
	return pl_open_path(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

PL_EXPORT int creat64(const char *path, mode_t mode)
{
	return pl_open_path(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/* ---- the stat family: a device stats as the device (its placeholder, fixed) ---- */

static int raw_fstatat(int dirfd, const char *p, struct stat *st, int flags)
{
	return (int)looked(pl_raw_syscall(__NR_newfstatat, dirfd, (long)p, (long)st, flags, 0, 0));
}

static int raw_statx(int dirfd, const char *p, int flags, unsigned mask, struct statx *stx)
{
	return (int)looked(pl_raw_syscall(__NR_statx, dirfd, (long)p, flags, mask, (long)stx, 0));
}

static int raw_faccessat(int dirfd, const char *p, int amode, int flags)
{
	long r = flags ? pl_raw_syscall(__NR_faccessat2, dirfd, (long)p, amode, flags, 0, 0)
		       : pl_raw_syscall(__NR_faccessat, dirfd, (long)p, amode, 0, 0, 0);

	if (r == -ENOSYS && flags) {
		/*
		 * No faccessat2 (before Linux 5.8, or a filter of the program's
		 * own): glibc's faccessat emulates the flags from a stat. Its
		 * own, the next definition: ours would come back here.
		 */
		static int (*next_faccessat)(int, const char *, int, int);

		if (!next_faccessat)
			next_faccessat = pl_next("faccessat");
		return next_faccessat(dirfd, p, amode, flags);
	}
	return (int)looked(r);
}

static ssize_t raw_readlinkat(int dirfd, const char *p, char *buf, size_t size)
{
	return looked(pl_raw_syscall(__NR_readlinkat, dirfd, (long)p, (long)buf, (long)size, 0, 0));
}

/* An AT_EMPTY_PATH path: "" (or NULL, which Linux 6.11 takes too). */
static bool empty(const char *path)
{
	return !path || !*path;
}

/*
 * A followed stat of /dev/fd/N, /proc/self/fd/N, /dev/stdin... that names
 * a device fd: Linux follows the link to the device, so the answer is the
 * descriptor's (as fstat's of it), not the placeholder's the kernel would
 * reach. True if answered (*ret: 0, or -1 and errno).
 */
static bool fd_path_stat(const char *path, int flags, struct stat *st, struct statx *stx,
			 unsigned mask, int *ret)
{
	const struct pl_devinfo *d;
	int fd, r;

	if ((flags & AT_SYMLINK_NOFOLLOW) || !path || path[0] != '/')
		return false;
	r = pl_fd_path_fd(path, &d, &fd);
	if (!r && !d)
		return false;
	if (!r)
		r = stx ? (int)pl_raw_syscall(__NR_statx, fd, (long)"", AT_EMPTY_PATH | flags, mask,
					      (long)stx, 0)
			: (int)pl_raw_syscall(__NR_newfstatat, fd, (long)"", (long)st,
					      AT_EMPTY_PATH | flags, 0, 0);
	if (r) {
		errno = -r;
		*ret = -1;
		return true;
	}
	if (stx)
		pl_statx_fix(d, stx);
	else
		pl_stat_fix(d, st);
	*ret = 0;
	return true;
}

static int do_fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	int (*real)(int, const char *, struct stat *, int) = raw_fstatat;
	struct pl_file *f;
	struct pl_where w;
	int ret;

	if ((flags & AT_EMPTY_PATH) && empty(path) && (f = pl_fd(dirfd))) {
		ret = real(dirfd, path, st, flags);
		if (!ret)
			pl_stat_fix(f->dev, st);
		return ret;
	}
	if (fd_path_stat(path, flags, st, NULL, 0, &ret))
		return ret;
	pl_classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE) {
		ret = real(dirfd, path, st, flags);
		/* a directory may be a device's placeholder copied without libc (fdmap.c) */
		if (!ret && (flags & AT_EMPTY_PATH) && empty(path) && S_ISDIR(st->st_mode) &&
		    (f = pl_fd_adopt(dirfd, EISDIR)))
			pl_stat_fix(f->dev, st);
		else if (!ret && (flags & AT_EMPTY_PATH) && empty(path) &&
			 pl_fd_in_tree(dirfd, st->st_dev, st->st_uid))
			pl_stat_tree(st);	/* fstat of a descriptor of the tree's (treefd.c) */
		return ret;
	}
	ret = w.kind == PL_WHERE_SV ? -1 : real(AT_FDCWD, w.path, st, flags);
	if (to_sv(&w, ret ? -errno : 0))
		return (int)sv_looked(__NR_newfstatat, dirfd, (long)path, (long)st, flags, 0);
	if (!ret && w.kind == PL_WHERE_DEV)
		pl_stat_fix(w.dev, st);
	else if (!ret && w.kind == PL_WHERE_SYS)
		pl_stat_tree(st);
	return ret;
}

PL_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return do_fstatat(dirfd, path, st, flags);
}

PL_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	/* one layout on 64-bit Linux: struct stat64 is struct stat */
	_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "stat64 is stat");
	return do_fstatat(dirfd, path, (struct stat *)st, flags);
}

static int do_stat(bool nofollow, const char *path, struct stat *st)
{
	int flags = nofollow ? AT_SYMLINK_NOFOLLOW : 0;
	struct pl_where w;
	int ret;

	if (fd_path_stat(path, flags, st, NULL, 0, &ret))
		return ret;
	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return raw_fstatat(AT_FDCWD, path, st, flags);
	ret = w.kind == PL_WHERE_SV ? -1 : raw_fstatat(AT_FDCWD, w.path, st, flags);
	if (to_sv(&w, ret ? -errno : 0))
		return (int)sv_looked(__NR_newfstatat, AT_FDCWD, (long)path, (long)st, flags, 0);
	if (!ret && w.kind == PL_WHERE_DEV)
		pl_stat_fix(w.dev, st);
	else if (!ret && w.kind == PL_WHERE_SYS)
		pl_stat_tree(st);
	return ret;
}

PL_EXPORT int stat(const char *path, struct stat *st)
{
	return do_stat(false, path, st);
}

PL_EXPORT int stat64(const char *path, struct stat64 *st)
{
	return do_stat(false, path, (struct stat *)st);
}

PL_EXPORT int lstat(const char *path, struct stat *st)
{
	return do_stat(true, path, st);
}

PL_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return do_stat(true, path, (struct stat *)st);
}

PL_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	int (*real)(int, const char *, int, unsigned, struct statx *) = raw_statx;
	struct pl_file *f;
	struct pl_where w;
	int ret;

	if ((flags & AT_EMPTY_PATH) && empty(path) && (f = pl_fd(dirfd))) {
		ret = real(dirfd, path, flags, mask, stx);
		if (!ret)
			pl_statx_fix(f->dev, stx);
		return ret;
	}
	if (fd_path_stat(path, flags, NULL, stx, mask, &ret))
		return ret;
	pl_classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE) {
		ret = real(dirfd, path, flags, mask, stx);
		if (!ret && (flags & AT_EMPTY_PATH) && empty(path) && (stx->stx_mask & STATX_TYPE) &&
		    S_ISDIR(stx->stx_mode) && (f = pl_fd_adopt(dirfd, EISDIR)))
			pl_statx_fix(f->dev, stx);
		else if (!ret && (flags & AT_EMPTY_PATH) && empty(path) &&
			 pl_fd_in_tree(dirfd, makedev(stx->stx_dev_major, stx->stx_dev_minor),
				       (stx->stx_mask & STATX_UID) ? stx->stx_uid : 0))
			pl_statx_tree(stx);	/* fstat of a descriptor of the tree's (treefd.c) */
		return ret;
	}
	ret = w.kind == PL_WHERE_SV ? -1 : real(AT_FDCWD, w.path, flags, mask, stx);
	if (to_sv(&w, ret ? -errno : 0))
		return (int)sv_looked(__NR_statx, dirfd, (long)path, flags, mask, (long)stx);
	if (!ret && w.kind == PL_WHERE_DEV)
		pl_statx_fix(w.dev, stx);
	else if (!ret && w.kind == PL_WHERE_SYS)
		pl_statx_tree(stx);
	return ret;
}

const char *pl_path_for(const char *path, char buf[PATH_MAX])
{
	struct pl_where w;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE || w.kind == PL_WHERE_SV)
		return path;
	memcpy(buf, w.path, strlen(w.path) + 1);
	return buf;
}

/* ---- access: the placeholder's mode is the device node's (0600, the user's) ---- */

/*
 * A tree's file the kernel let us reach (the exec user's on disk) answered
 * again on the owner it stats as, root's (pl_stat_tree), as Linux's sysfs
 * file answers: a 0644 attribute not writable for another user. Never more
 * than the kernel's answer (the owner's bits are the widest of the tree's
 * modes), and only an answer: what opens is decided as before (ctlfiles.c,
 * attrw.c).
 */
static int access_shown(const struct pl_where *w, int amode, int flags)
{
	int r;

	if (w->kind != PL_WHERE_SYS || !(amode & (R_OK | W_OK | X_OK)))
		return 0;
	r = sv_access_shown((pid_t)syscall(SYS_gettid), AT_FDCWD, w->path, amode, flags);
	if (!r)
		return 0;
	errno = -r;
	return -1;
}

PL_EXPORT int access(const char *path, int amode)
{
	struct pl_where w;
	int ret;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return raw_faccessat(AT_FDCWD, path, amode, 0);
	ret = w.kind == PL_WHERE_SV ? -1 : raw_faccessat(AT_FDCWD, w.path, amode, 0);
	if (to_sv(&w, ret ? -errno : 0))
		return (int)sv_looked(__NR_access, (long)path, amode, 0, 0, 0);
	return ret ? ret : access_shown(&w, amode, 0);
}

PL_EXPORT int faccessat(int dirfd, const char *path, int amode, int flags)
{
	int (*real)(int, const char *, int, int) = raw_faccessat;
	struct pl_where w;

	int ret;

	pl_classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(dirfd, path, amode, flags);
	ret = w.kind == PL_WHERE_SV ? -1 : real(AT_FDCWD, w.path, amode, flags);
	if (to_sv(&w, ret ? -errno : 0))
		return (int)(flags ? sv_looked(__NR_faccessat2, dirfd, (long)path, amode, flags, 0)
				   : sv_looked(__NR_faccessat, dirfd, (long)path, amode, 0, 0));
	return ret ? ret : access_shown(&w, amode, flags);
}

/* ---- directories and links of the tree ---- */

PL_EXPORT DIR *opendir(const char *path)
{
	DIR *(*real)(const char *) = pl_next("opendir");
	struct pl_where w;

	DIR *d;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_DEV) {
		errno = ENOTDIR;
		return NULL;
	}
	d = w.kind == PL_WHERE_SV ? NULL : real(w.kind == PL_WHERE_SYS ? w.path : path);
	/*
	 * out of this thread's reach: glibc's own open of the program's path,
	 * which ucmd-supervise makes (svcall.c), and its getdents64, which it
	 * lists (sv_dirs.c)
	 */
	if (to_sv(&w, d ? 0 : -errno))
		return real(path);
	if (d && (w.kind == PL_WHERE_NONE || w.host))	/* one the tree has too lists both (dirs.c) */
		pl_dir_opened(d, w.host ? w.path : path);
	return d;
}

typedef int (*filter64_fn)(const struct dirent64 *);
typedef int (*compar64_fn)(const struct dirent64 **, const struct dirent64 **);
typedef int (*filter_fn)(const struct dirent *);
typedef int (*compar_fn)(const struct dirent **, const struct dirent **);

PL_EXPORT int scandir(const char *path, struct dirent ***list, filter_fn filter, compar_fn compar)
{
	int (*real)(const char *, struct dirent ***, filter_fn, compar_fn) = pl_next("scandir");
	struct pl_where w;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_DEV) {
		errno = ENOTDIR;
		return -1;
	}
	if (w.kind == PL_WHERE_NONE) {
		int n = pl_dir_scandir(path, (struct dirent64 ***)list, (filter64_fn)filter,
				       (compar64_fn)compar);

		if (n != -2)
			return n;
	}
	if (w.kind != PL_WHERE_SV) {
		int n = real(w.kind == PL_WHERE_SYS ? w.path : path, list, filter, compar);

		if (!to_sv(&w, n < 0 ? -errno : 0))
			return n;
	}
	/* out of this thread's reach: glibc's own open, which ucmd-supervise makes (svcall.c) */
	return real(path, list, filter, compar);
}

PL_EXPORT int scandir64(const char *path, struct dirent64 ***list, filter64_fn filter,
			compar64_fn compar)
{
	int (*real)(const char *, struct dirent64 ***, filter64_fn, compar64_fn) =
		pl_next("scandir64");
	struct pl_where w;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_DEV) {
		errno = ENOTDIR;
		return -1;
	}
	if (w.kind == PL_WHERE_NONE) {
		int n = pl_dir_scandir(path, (struct dirent64 ***)list, (filter64_fn)filter,
				       (compar64_fn)compar);

		if (n != -2)
			return n;
	}
	if (w.kind != PL_WHERE_SV) {
		int n = real(w.kind == PL_WHERE_SYS ? w.path : path, list, filter, compar);

		if (!to_sv(&w, n < 0 ? -errno : 0))
			return n;
	}
	/* out of this thread's reach: glibc's own open, which ucmd-supervise makes (svcall.c) */
	return real(path, list, filter, compar);
}

/* The tree's links are relative, as sysfs's: what they say is right as /sys's. */
PL_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
	struct pl_where w;

	ssize_t ret;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return raw_readlinkat(AT_FDCWD, path, buf, size);
	ret = w.kind == PL_WHERE_SV ? -1 : raw_readlinkat(AT_FDCWD, w.path, buf, size);
	if (to_sv(&w, ret < 0 ? -errno : 0))
		return sv_looked(__NR_readlink, (long)path, (long)buf, (long)size, 0, 0);
	return ret;
}

PL_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t (*real)(int, const char *, char *, size_t) = raw_readlinkat;
	struct pl_where w;

	ssize_t ret;

	pl_classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(dirfd, path, buf, size);
	ret = w.kind == PL_WHERE_SV ? -1 : real(AT_FDCWD, w.path, buf, size);
	if (to_sv(&w, ret < 0 ? -errno : 0))
		return sv_looked(__NR_readlinkat, dirfd, (long)path, (long)buf, (long)size, 0);
	return ret;
}

/*
 * The tree's file path leads to, out of this thread's reach: the kernel's
 * name of the file the supervisor opens for it (svcall.c), in tmp; NULL and
 * errno if it may not open it.
 */
static char *sv_realpath(const char *path, char tmp[PATH_MAX])
{
	char proc[64];
	long fd = pl_sv_call(__NR_openat, AT_FDCWD, (long)path,
			     O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0, 0);
	long len;

	if (fd < 0) {
		errno = (int)-fd;
		return NULL;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%ld", fd);
	len = pl_raw_syscall(__NR_readlinkat, AT_FDCWD, (long)proc, (long)tmp, PATH_MAX - 1, 0, 0);
	pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	if (len <= 0) {
		errno = len < 0 ? (int)-len : ENOENT;
		return NULL;
	}
	tmp[len] = '\0';
	return tmp;
}

/*
 * A device's canonical name is its /dev path (the node is not a link); a
 * path in the tree resolves there and is given back as /sys's.
 */
static char *do_realpath(const char *path, char *resolved)
{
	char *(*real)(const char *, char *) = pl_next("realpath");
	char tmp[PATH_MAX], *r;
	const char *root;
	struct pl_where w;
	size_t n;

	pl_classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(path, resolved);
	if (w.kind == PL_WHERE_DEV || (w.kind == PL_WHERE_SV && !strncmp(w.norm, "/dev/", 5))) {
		if (resolved) {
			strcpy(resolved, w.norm);
			return resolved;
		}
		return strdup(w.norm);
	}
	r = w.kind == PL_WHERE_SV ? NULL : real(w.path, tmp);
	if (to_sv(&w, r ? 0 : -errno))
		r = sv_realpath(path, tmp);
	if (!r)
		return NULL;
	root = pl_root();
	n = root ? strlen(root) : 0;
	if (n && !strncmp(tmp, root, n) && tmp[n] == '/')
		memmove(tmp, tmp + n, strlen(tmp + n) + 1);
	if (resolved) {
		strcpy(resolved, tmp);
		return resolved;
	}
	return strdup(tmp);
}

PL_EXPORT char *realpath(const char *path, char *resolved)
{
	return do_realpath(path, resolved);
}

/* _FORTIFY_SOURCE's realpath: the buffer must hold PATH_MAX, as glibc checks. */
PL_EXPORT char *__realpath_chk(const char *path, char *resolved, size_t len)
{
	if (resolved && len < PATH_MAX) {
		fputs("*** buffer overflow detected ***: terminated\n", stderr);
		abort();
	}
	return do_realpath(path, resolved);
}

PL_EXPORT char *canonicalize_file_name(const char *path)
{
	return do_realpath(path, NULL);
}
