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
 * fstatat*, fopen, freopen*, stat, lstat, faccessat, scandir, readlinkat,
 * canonicalize_file_name). glibc's own calls inside those (fopen's open,
 * scandir's opendir) do not come through here, hence the outer ones. glibc
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
#include <unistd.h>

#include "preload.h"

/* sys_open's verdict as libc's: -1 and errno, or 0. */
static int sys_open_ok(const struct pl_where *w, int flags)
{
	int ret = pl_where_open(w, flags);

	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/*
 * Where does the program's path lead (where.c): relative paths against
 * the working directory or dirfd, as the kernel names it.
 */
static void classify(int dirfd, const char *path, struct pl_where *w)
{
	char base[PATH_MAX];

	w->kind = PL_WHERE_NONE;
	w->host = false;
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
static int open_judged(int dirfd, const char *path, int flags, mode_t mode)
{
	char copy[PATH_MAX];
	struct pl_where w;
	size_t len;
	long fd;

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
	classify(dirfd, copy, &w);
	if (w.kind == PL_WHERE_DEV)
		return pl_dev_open(w.dev, flags);
	if (sys_open_ok(&w, flags))
		return -1;
	fd = pl_open_judged(dirfd, w.kind == PL_WHERE_SYS ? w.path : copy, flags, needs_mode(flags) ? mode : 0);
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
	return open_judged(AT_FDCWD, path, flags, mode);
}

PL_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return open_judged(AT_FDCWD, path, flags, mode);
}

PL_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return open_judged(dirfd, path, flags, mode);
}

PL_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;

	OPEN_MODE(flags, mode);
	return open_judged(dirfd, path, flags, mode);
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
	return open_judged(dirfd, path, flags, 0);
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
	return open_judged(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

PL_EXPORT int creat64(const char *path, mode_t mode)
{
	return open_judged(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

/*
 * fopen(3)'s mode string as glibc 2.36's fopen reads it: the first letter
 * r, w or a, then at most six more, each taken or ignored ('+' O_RDWR,
 * 'x' O_EXCL, 'e' O_CLOEXEC, 'm' a read-only stream read through mmap,
 * 'c' a stream whose calls are no cancellation points, anything else
 * nothing), and ",ccs=" anywhere after the last of '+', 'x', 'b'.
 * fdopen takes the rest: its mode is the first letter and '+' (or 'm').
 */
struct fmode {
	int flags;		/* open(2)'s */
	int flags2;		/* glibc's FILE._flags2 bits for 'm', 'c', 'e' */
	bool ccs;
	char fd_mode[3];	/* fdopen's */
};

/* glibc's libio.h values (stable since 2.x; FILE._flags2 is in the public struct_FILE.h) */
#define PL_IO_FLAGS2_MMAP 1
#define PL_IO_FLAGS2_NOTCANCEL 2
#define PL_IO_FLAGS2_CLOEXEC 64

static int fopen_mode(const char *mode, struct fmode *m)
{
	const char *last = mode;
	bool plus = false;

	memset(m, 0, sizeof(*m));
	switch (mode[0]) {
	case 'r': m->flags = O_RDONLY; break;
	case 'w': m->flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case 'a': m->flags = O_WRONLY | O_CREAT | O_APPEND; break;
	default: return -EINVAL;
	}
	for (int i = 1; i < 7 && mode[i]; i++) {
		switch (mode[i]) {
		case '+':
			m->flags = (m->flags & ~O_ACCMODE) | O_RDWR;
			plus = true;
			last = mode + i;
			break;
		case 'x':
			m->flags |= O_EXCL;
			last = mode + i;
			break;
		case 'b':
			last = mode + i;
			break;
		case 'm':
			m->flags2 |= PL_IO_FLAGS2_MMAP;
			break;
		case 'c':
			m->flags2 |= PL_IO_FLAGS2_NOTCANCEL;
			break;
		case 'e':
			m->flags |= O_CLOEXEC;
			m->flags2 |= PL_IO_FLAGS2_CLOEXEC;
			break;
		}
	}
	m->ccs = strstr(last + 1, ",ccs=") != NULL;
	m->fd_mode[0] = mode[0];
	if (plus)
		m->fd_mode[1] = '+';
	else if (m->flags2 & PL_IO_FLAGS2_MMAP)
		m->fd_mode[1] = 'm';
	return 0;
}

/* fdopen, or the descriptor closed again keeping fdopen's errno. */
static FILE *fdopen_or_close(int fd, const char *mode)
{
	FILE *f = fdopen(fd, mode);

	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

/*
 * ",ccs=": only glibc's fopen gives a stream its conversion (fdopen reads
 * no ",ccs=", and no interface sets one on a FILE made otherwise), so the
 * open is glibc's own, which ucmd-supervise makes (docs/compat.md); one of
 * ucmd's devices is a byte stream as in any mode (stdio.c).
 */
static FILE *fopen_ccs(const char *sym, const char *path, const char *mode,
		       const struct fmode *m)
{
	FILE *(*real)(const char *, const char *) = pl_next(sym);
	struct pl_where w;
	struct stat st;
	FILE *f;

	classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_DEV) {
		int fd = pl_dev_open(w.dev, m->flags);

		return fd < 0 ? NULL : fdopen_or_close(fd, m->fd_mode);
	}
	if (w.kind == PL_WHERE_SYS && sys_open_ok(&w, m->flags))
		return NULL;
	f = real(w.kind == PL_WHERE_SYS ? w.path : path, mode);
	if (f && !pl_raw_syscall(__NR_fstat, fileno(f), (long)&st, 0, 0, 0, 0) &&
	    pl_host_nvme_rdev(&st)) {
		fclose(f);	/* nothing was read or written: stdio buffers until then */
		errno = ENXIO;
		return NULL;
	}
	return f;
}

/*
 * fopen as glibc makes it, its open made by open_judged: glibc's flags,
 * its mode 0666, its seek to the end for "a", then fdopen, with the
 * stream's flags glibc's fopen sets and fdopen does not ('c', 'e', 'm').
 */
static FILE *do_fopen(const char *sym, const char *path, const char *mode)
{
	struct fmode m;
	FILE *f;
	int fd;

	if (!mode) {
		FILE *(*real)(const char *, const char *) = pl_next(sym);

		return real(path, mode);	/* glibc's own answer to no mode */
	}
	if (fopen_mode(mode, &m)) {
		errno = EINVAL;
		return NULL;
	}
	if (m.ccs)
		return fopen_ccs(sym, path, mode, &m);
	fd = open_judged(AT_FDCWD, path, m.flags, 0666);
	if (fd < 0)
		return NULL;
	if ((m.flags & (O_ACCMODE | O_APPEND)) == (O_WRONLY | O_APPEND) &&
	    lseek(fd, 0, SEEK_END) < 0 && errno != ESPIPE) {
		int e = errno;

		close(fd);
		errno = e;
		return NULL;
	}
	f = fdopen_or_close(fd, m.fd_mode);
	if (f)
		f->_flags2 |= m.flags2;
	return f;
}

PL_EXPORT FILE *fopen(const char *path, const char *mode)
{
	return do_fopen("fopen", path, mode);
}

PL_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	return do_fopen("fopen64", path, mode);
}

/*
 * freopen as glibc 2.36's (libio/freopen.c), its open made by open_judged.
 * glibc re-makes the FILE in place around an open of its own, and no
 * public interface hands it a descriptor instead; its exported libio
 * functions do the rest as its freopen does: close the stream but not its
 * descriptor (_IO_FLAGS2_NOCLOSE, _IO_file_close_it), open, set the
 * stream's read/write/append flags as _IO_file_open does, put it back on
 * glibc's list of streams (_IO_link_in), then dup3 the new file onto the
 * old number (O_CLOEXEC if the stream ever had 'e', as glibc's). Streams
 * this cannot re-make exactly go to glibc's own freopen (its open the
 * supervisor's): one not on glibc's plain file operations (wide, mmap, a
 * cookie: ucmd's devices), a mode it rejects or with ",ccs=", 'm' now or
 * before, a path to one of ucmd's devices.
 */
#define PL_IO_NO_READS 0x0004
#define PL_IO_NO_WRITES 0x0008
#define PL_IO_IS_APPENDING 0x1000
#define PL_IO_IS_FILEBUF 0x2000
#define PL_IO_FLAGS2_NOCLOSE 32

struct _IO_jump_t;
extern const struct _IO_jump_t _IO_file_jumps;
int _IO_file_close_it(FILE *fp);
void _IO_link_in(void *fp);

/* The FILE's vtable: the word after it in glibc's struct _IO_FILE_plus. */
static const struct _IO_jump_t *vtable_of(FILE *fp)
{
	return *(const struct _IO_jump_t *const *)(const void *)((const char *)fp + sizeof(FILE));
}

static bool freopen_ours(const char *path, const struct fmode *m, FILE *fp)
{
	struct pl_where w;

	/* glibc keeps a stream's 'm' (and 'e') across freopen: its mmap reads too */
	if (m->ccs || ((m->flags2 | fp->_flags2) & PL_IO_FLAGS2_MMAP) ||
	    !(fp->_flags & PL_IO_IS_FILEBUF) ||
	    vtable_of(fp) != &_IO_file_jumps || fp->_fileno < 0 || pl_fd(fp->_fileno))
		return false;
	classify(AT_FDCWD, path, &w);
	return w.kind != PL_WHERE_DEV;
}

static FILE *do_freopen(const char *sym, const char *path, const char *mode, FILE *fp)
{
	FILE *(*real)(const char *, const char *, FILE *) = pl_next(sym);
	char copy[PATH_MAX];
	struct fmode m;
	int fd, oldfd, rw, e;

	if (!mode || !fp || fopen_mode(mode, &m))
		return real(path, mode, fp);
	if (path) {
		size_t len = strnlen(path, sizeof(copy));

		if (len == sizeof(copy))
			return real(path, mode, fp);	/* glibc's ENAMETOOLONG */
		memcpy(copy, path, len + 1);
	} else {
		/* the same file again, as glibc names it */
		snprintf(copy, sizeof(copy), "/proc/self/fd/%d", fp->_fileno);
	}
	flockfile(fp);
	if (!freopen_ours(copy, &m, fp)) {
		funlockfile(fp);
		return real(path, mode, fp);
	}
	fflush_unlocked(fp);
	oldfd = fp->_fileno;
	fp->_flags2 |= PL_IO_FLAGS2_NOCLOSE;
	_IO_file_close_it(fp);
	fp->_flags2 |= m.flags2;
	fd = open_judged(AT_FDCWD, copy, m.flags, 0666);
	fp->_flags2 &= ~PL_IO_FLAGS2_NOCLOSE;
	rw = m.fd_mode[0] == 'r' ? PL_IO_NO_WRITES :
	     m.fd_mode[0] == 'w' ? PL_IO_NO_READS : PL_IO_NO_READS | PL_IO_IS_APPENDING;
	if (m.fd_mode[1] == '+')
		rw &= PL_IO_IS_APPENDING;
	if (fd >= 0 && (rw & (PL_IO_IS_APPENDING | PL_IO_NO_READS)) ==
	    (PL_IO_IS_APPENDING | PL_IO_NO_READS) && lseek(fd, 0, SEEK_END) < 0 && errno != ESPIPE) {
		e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	if (fd < 0)
		goto fail;
	fp->_fileno = fd;
	fp->_flags = (fp->_flags & ~(PL_IO_NO_READS | PL_IO_NO_WRITES | PL_IO_IS_APPENDING)) | rw;
	_IO_link_in(fp);
	fp->_mode = 0;
	if (fd != oldfd) {
		if (dup3(fd, oldfd, (fp->_flags2 & PL_IO_FLAGS2_CLOEXEC) ? O_CLOEXEC : 0) < 0) {
			e = errno;
			_IO_file_close_it(fp);
			errno = e;
			funlockfile(fp);
			return NULL;
		}
		close(fd);
		fp->_fileno = oldfd;
	}
	funlockfile(fp);
	return fp;
fail:
	e = errno;
	close(oldfd);
	errno = e;
	funlockfile(fp);
	return NULL;
}

PL_EXPORT FILE *freopen(const char *path, const char *mode, FILE *fp)
{
	return do_freopen("freopen", path, mode, fp);
}

PL_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *fp)
{
	return do_freopen("freopen64", path, mode, fp);
}

/* ---- the stat family: a device stats as the device (its placeholder, fixed) ---- */

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
		/* before Linux 5.8: glibc's own emulation of the flags */
		int (*real)(int, const char *, int, int) = raw_faccessat;

		return real(dirfd, p, amode, flags);
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
	classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(dirfd, path, st, flags);
	ret = real(AT_FDCWD, w.path, st, flags);
	if (!ret && w.kind == PL_WHERE_DEV)
		pl_stat_fix(w.dev, st);
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

	classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return raw_fstatat(AT_FDCWD, path, st, flags);
	ret = raw_fstatat(AT_FDCWD, w.path, st, flags);
	if (!ret && w.kind == PL_WHERE_DEV)
		pl_stat_fix(w.dev, st);
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
	classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(dirfd, path, flags, mask, stx);
	ret = real(AT_FDCWD, w.path, flags, mask, stx);
	if (!ret && w.kind == PL_WHERE_DEV)
		pl_statx_fix(w.dev, stx);
	return ret;
}

const char *pl_path_for(const char *path, char buf[PATH_MAX])
{
	struct pl_where w;

	classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return path;
	memcpy(buf, w.path, strlen(w.path) + 1);
	return buf;
}

/* ---- access: the placeholder's mode is the device node's (0600, the user's) ---- */

PL_EXPORT int access(const char *path, int amode)
{
	struct pl_where w;

	classify(AT_FDCWD, path, &w);
	return raw_faccessat(AT_FDCWD, w.kind == PL_WHERE_NONE ? path : w.path, amode, 0);
}

PL_EXPORT int faccessat(int dirfd, const char *path, int amode, int flags)
{
	int (*real)(int, const char *, int, int) = raw_faccessat;
	struct pl_where w;

	classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(dirfd, path, amode, flags);
	return real(AT_FDCWD, w.path, amode, flags);
}

/* ---- directories and links of the tree ---- */

PL_EXPORT DIR *opendir(const char *path)
{
	DIR *(*real)(const char *) = pl_next("opendir");
	struct pl_where w;

	DIR *d;

	classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_DEV) {
		errno = ENOTDIR;
		return NULL;
	}
	d = real(w.kind == PL_WHERE_SYS ? w.path : path);
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

	classify(AT_FDCWD, path, &w);
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
	return real(w.kind == PL_WHERE_SYS ? w.path : path, list, filter, compar);
}

PL_EXPORT int scandir64(const char *path, struct dirent64 ***list, filter64_fn filter,
			compar64_fn compar)
{
	int (*real)(const char *, struct dirent64 ***, filter64_fn, compar64_fn) =
		pl_next("scandir64");
	struct pl_where w;

	classify(AT_FDCWD, path, &w);
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
	return real(w.kind == PL_WHERE_SYS ? w.path : path, list, filter, compar);
}

/* The tree's links are relative, as sysfs's: what they say is right as /sys's. */
PL_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
	struct pl_where w;

	classify(AT_FDCWD, path, &w);
	return raw_readlinkat(AT_FDCWD, w.kind == PL_WHERE_NONE ? path : w.path, buf, size);
}

PL_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t (*real)(int, const char *, char *, size_t) = raw_readlinkat;
	struct pl_where w;

	classify(dirfd, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(dirfd, path, buf, size);
	return real(AT_FDCWD, w.path, buf, size);
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

	classify(AT_FDCWD, path, &w);
	if (w.kind == PL_WHERE_NONE)
		return real(path, resolved);
	if (w.kind == PL_WHERE_DEV) {
		if (resolved) {
			strcpy(resolved, w.norm);
			return resolved;
		}
		return strdup(w.norm);
	}
	r = real(w.path, tmp);
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
