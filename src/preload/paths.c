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
 * other spellings for programs built otherwise (open, openat*, fstatat*,
 * fopen, stat, lstat, faccessat, scandir, readlinkat,
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

enum kind { P_NONE, P_DEV, P_SYS };

struct where {
	enum kind kind;
	const struct pl_devinfo *dev;	/* P_DEV */
	char path[PATH_MAX];		/* P_DEV: the placeholder; P_SYS: in the tree */
	char norm[PATH_MAX];		/* the path as the program meant it, absolute */
	bool host;			/* P_SYS: path is the host's (norm), reached from the tree */
};

/* The parts of /sys that are wholly the tree's: the host's NVMe devices are not shown. */
static const char *const sys_own[] = {
	"/sys/class/nvme", "/sys/class/nvme-generic", "/sys/class/nvme-subsystem",
	"/sys/devices/virtual/nvme-subsystem",
};
/* Directories where the host's NVMe devices would be: without a tree, their NVMe names are denied. */
static const char *const sys_shared[] = {
	"/sys/block/", "/sys/class/block/", "/sys/dev/block/", "/sys/dev/char/",
};

/*
 * Does norm (under /sys) lead into the tree? What the tree has is the
 * tree's, except a directory that the host has too (/sys/block,
 * /sys/devices/pci0000:00, /sys/bus/pci/devices...): that stays the
 * host's, and a listing of it shows the tree's entries beside the host's
 * (dirs.c), as one directory.
 */
static bool in_tree(const char *root, const char *norm)
{
	char path[PATH_MAX];
	struct stat st, hst;
	int (*real_lstat)(const char *, struct stat *) = pl_next("lstat");
	int (*real_stat)(const char *, struct stat *) = pl_next("stat");

	if (snprintf(path, sizeof(path), "%s%s", root, norm) >= (int)sizeof(path))
		return false;
	if (real_lstat(path, &st))
		return false;
	return !S_ISDIR(st.st_mode) || real_stat(norm, &hst) || !S_ISDIR(hst.st_mode);
}

/*
 * Under ucmd exec (UCMD_DAEMON set) an NVMe name is ucmd's or nothing: one
 * the daemon does not have, or any while the daemon cannot be reached,
 * leads to a path that does not exist (ENOENT), never to the host's
 * /dev/nvme* or its NVMe entries in /sys.
 */
static void deny(struct where *w)
{
	if (!getenv(PL_ENV_DAEMON))
		return;
	snprintf(w->path, sizeof(w->path), "/proc/self/ucmd-exec-no-such-device");
	w->kind = P_SYS;
}

/*
 * A directory of the tree (a dirfd the program opened through /sys or
 * /dev, its working directory) is known to the program by its /sys or /dev
 * name: base becomes that, and the ".." that lead up from it are taken
 * off (base is the kernel's name of the directory, without links), so
 * that "../" from /sys/devices/pci0000:00/0000:00:04.0 is the host's
 * /sys/devices/pci0000:00 as for the program (find and fts walk back up
 * so). False if base is not in the tree.
 */
static bool from_tree(char *base, const char **path)
{
	const char *root = pl_root();
	size_t n = root ? strlen(root) : 0;

	if (!n || strncmp(base, root, n) || (base[n] != '/' && base[n]))
		return false;
	memmove(base, base + n, strlen(base + n) + 1);
	if (strncmp(base, "/dev", 4) && strncmp(base, "/sys", 4))
		return false;	/* the root's own files */
	while (!strcmp(*path, "..") || !strncmp(*path, "../", 3)) {
		char *slash = strrchr(base, '/');

		if (slash == base)
			return false;	/* up to / itself: not ucmd's business */
		*slash = '\0';
		*path += (*path)[2] ? 3 : 2;
	}
	return true;
}

/*
 * Where does the program's path lead: one of ucmd's devices, the tree, or
 * not ucmd's business (P_NONE, also when there is no daemon or no tree).
 */
static void classify_in(int dirfd, const char *path, struct where *w, bool *moved)
{
	char abs[PATH_MAX];
	const char *root;

	if (!path || !*path)
		return;
	if (path[0] == '/') {
		if (strncmp(path, "/dev/", 5) && strncmp(path, "/sys/", 5) &&
		    strncmp(path, "//", 2))
			return; /* the common case, decided without a system call */
		if (strlen(path) >= sizeof(abs))
			return;
		strcpy(abs, path);
	} else {
		char base[PATH_MAX];
		ssize_t n;

		if (dirfd == AT_FDCWD) {
			if (!getcwd(base, sizeof(base)))
				return;
			n = (ssize_t)strlen(base);
		} else {
			char proc[64];
			ssize_t (*real_readlink)(const char *, char *, size_t) =
				pl_next("readlink");

			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
			n = real_readlink(proc, base, sizeof(base) - 1);
			if (n <= 0)
				return;
			base[n] = '\0';
		}
		base[n] = '\0';
		if (strncmp(base, "/dev", 4) && strncmp(base, "/sys", 4)) {
			if (!from_tree(base, &path))
				return;
			*moved = true;
		}
		if (snprintf(abs, sizeof(abs), "%s/%s", base, path) >= (int)sizeof(abs))
			return;
	}
	pl_path_fold(w->norm, abs);

	if (!strncmp(w->norm, "/dev/", 5)) {
		const char *name = w->norm + 5;

		if (!pl_path_dev_name(name))
			return;
		w->dev = pl_devinfo(name);
		root = w->dev ? pl_root() : NULL;
		if (!root || snprintf(w->path, sizeof(w->path), "%s/dev/%s", root, name) >=
				     (int)sizeof(w->path)) {
			deny(w);
			return;
		}
		w->kind = P_DEV;
		return;
	}
	bool own = false;
	size_t shared = 0;

	if (strncmp(w->norm, "/sys/", 5))
		return;
	for (size_t i = 0; i < sizeof(sys_own) / sizeof(sys_own[0]); i++)
		own |= pl_path_under(w->norm, sys_own[i]);
	for (size_t i = 0; !own && i < sizeof(sys_shared) / sizeof(sys_shared[0]); i++)
		if (!strncmp(w->norm, sys_shared[i], strlen(sys_shared[i])))
			shared = strlen(sys_shared[i]);
	root = pl_root();
	if (!root) {
		if (own || (shared && (!strncmp(w->norm + shared, "nvme", 4) ||
				       !strncmp(w->norm + shared, "ng", 2))))
			deny(w);
		return;
	}
	if (!own && !in_tree(root, w->norm))
		return;
	if (snprintf(w->path, sizeof(w->path), "%s%s", root, w->norm) >= (int)sizeof(w->path))
		return;
	w->kind = P_SYS;
}

/*
 * An open of a file of the tree, before it is made: sysfs's attributes
 * are read-only (EACCES for writing or creating, as kernfs answers for an
 * attribute without a store), except the rescans, which are taken: the
 * device list is read again and the tree brought up to date (Linux scans
 * the bus, or the controller's namespaces). A PCI function's resource0 is
 * written again with the controller's registers as they are now.
 */
static int sys_open(const struct where *w, int flags)
{
	const char *root = pl_root(), *base = strrchr(w->path, '/');
	size_t n = root ? strlen(root) : 0;
	bool writing = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
	int ret;

	if (!n || strncmp(w->path, root, n) || w->path[n] != '/' || !base)
		return 0;	/* the denied path: ENOENT from the kernel */
	base++;
	if (writing) {
		if (strcmp(base, "rescan") && strcmp(base, "rescan_controller"))
			return -EACCES;
		ret = pl_devinfo_reload();
		return ret ? ret : pl_sysfs_sync(root);
	}
	if (!strcmp(base, "resource0")) {
		ret = pl_sysfs_regs(w->path);
		/* the daemon's refusal is the open's; a file not a function's is left alone */
		return ret == -ENOENT ? 0 : ret;
	}
	return 0;
}

/* sys_open's verdict as libc's: -1 and errno, or 0. */
static int sys_open_ok(const struct where *w, int flags)
{
	int ret = w->kind == P_SYS ? sys_open(w, flags) : 0;

	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

static void classify(int dirfd, const char *path, struct where *w)
{
	bool moved = false;

	w->kind = P_NONE;
	w->host = false;
	classify_in(dirfd, path, w, &moved);
	if (moved && w->kind == P_NONE) {
		/* relative to a tree directory, yet the host's: by its absolute name */
		snprintf(w->path, sizeof(w->path), "%s", w->norm);
		w->kind = P_SYS;
		w->host = true;
	}
}

static bool needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* An open of the tree's resource0 made fd: its reads are the registers at each read (res0.c). */
static int res0_opened(const struct where *w, int fd)
{
	const char *base = strrchr(w->path, '/');

	if (fd >= 0 && w->kind == P_SYS && !w->host && base && !strcmp(base, "/resource0")) {
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
	struct where w;
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
	if (w.kind == P_DEV)
		return pl_dev_open(w.dev, flags);
	if (sys_open_ok(&w, flags))
		return -1;
	fd = pl_open_judged(dirfd, w.kind == P_SYS ? w.path : copy, flags, needs_mode(flags) ? mode : 0);
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

/* fopen(3)'s mode string as open(2) flags (glibc's letters: r w a + e x). */
static int fopen_flags(const char *mode)
{
	int flags;

	switch (mode[0]) {
	case 'r': flags = O_RDONLY; break;
	case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
	case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
	default: return -1;
	}
	for (const char *m = mode + 1; *m && *m != ','; m++) {
		if (*m == '+')
			flags = (flags & ~O_ACCMODE) | O_RDWR;
		else if (*m == 'e')
			flags |= O_CLOEXEC;
		else if (*m == 'x')
			flags |= O_EXCL;
	}
	return flags;
}

/*
 * fopen as open_judged and fdopen, for the modes both read alike (glibc's
 * r, w, a, +, b, e, x): x and e are the open's flags, the rest fdopen's.
 * Others (",ccs=", 'm', 'c') go to glibc's fopen, whose own open
 * ucmd-supervise makes. NULL with *done false: not taken.
 */
static FILE *fopen_judged(const char *path, const char *mode, bool *done)
{
	char fmode[8];
	size_t n = 0;
	FILE *f;
	int fd;

	*done = false;
	if (!mode || fopen_flags(mode) < 0)
		return NULL;
	for (const char *m = mode; *m; m++) {
		if (!strchr("rwa+bex", *m) || n + 1 >= sizeof(fmode))
			return NULL;
		if (*m != 'x' && *m != 'e')
			fmode[n++] = *m;
	}
	fmode[n] = '\0';
	*done = true;
	fd = open_judged(AT_FDCWD, path, fopen_flags(mode), 0666);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, fmode);
	if (!f) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return f;
}

static FILE *do_fopen(const char *sym, const char *path, const char *mode)
{
	struct where w;
	bool done;
	FILE *fast = fopen_judged(path, mode, &done);

	if (done)
		return fast;
	classify(AT_FDCWD, path, &w);
	if (w.kind == P_DEV) {
		int flags = fopen_flags(mode), fd;
		FILE *f;

		if (flags < 0) {
			errno = EINVAL;
			return NULL;
		}
		fd = pl_dev_open(w.dev, flags);
		if (fd < 0)
			return NULL;
		f = fdopen(fd, mode);
		if (!f) {
			int e = errno;

			close(fd);
			errno = e;
		}
		return f;
	}
	if (w.kind == P_SYS && fopen_flags(mode) >= 0 && sys_open_ok(&w, fopen_flags(mode)))
		return NULL;
	FILE *(*real)(const char *, const char *) = pl_next(sym);
	FILE *f = real(w.kind == P_SYS ? w.path : path, mode);
	struct stat st;

	if (f && !pl_raw_syscall(__NR_fstat, fileno(f), (long)&st, 0, 0, 0, 0) &&
	    pl_host_nvme_rdev(&st)) {
		fclose(f);	/* nothing was read or written: stdio buffers until then */
		errno = ENXIO;
		return NULL;
	}
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

/* ---- the stat family: a device stats as the device (its placeholder, fixed) ---- */

/* An AT_EMPTY_PATH path: "" (or NULL, which Linux 6.11 takes too). */
static bool empty(const char *path)
{
	return !path || !*path;
}

static int do_fstatat(const char *sym, int dirfd, const char *path, struct stat *st, int flags)
{
	int (*real)(int, const char *, struct stat *, int) = pl_next(sym);
	struct pl_file *f;
	struct where w;
	int ret;

	if ((flags & AT_EMPTY_PATH) && empty(path) && (f = pl_fd(dirfd))) {
		ret = real(dirfd, path, st, flags);
		if (!ret)
			pl_stat_fix(f->dev, st);
		return ret;
	}
	classify(dirfd, path, &w);
	if (w.kind == P_NONE)
		return real(dirfd, path, st, flags);
	ret = real(AT_FDCWD, w.path, st, flags);
	if (!ret && w.kind == P_DEV)
		pl_stat_fix(w.dev, st);
	return ret;
}

PL_EXPORT int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return do_fstatat("fstatat", dirfd, path, st, flags);
}

PL_EXPORT int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	/* one layout on 64-bit Linux: struct stat64 is struct stat */
	_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "stat64 is stat");
	return do_fstatat("fstatat64", dirfd, path, (struct stat *)st, flags);
}

static int do_stat(const char *sym, const char *path, struct stat *st)
{
	int (*real)(const char *, struct stat *) = pl_next(sym);
	struct where w;
	int ret;

	classify(AT_FDCWD, path, &w);
	if (w.kind == P_NONE)
		return real(path, st);
	ret = real(w.path, st);
	if (!ret && w.kind == P_DEV)
		pl_stat_fix(w.dev, st);
	return ret;
}

PL_EXPORT int stat(const char *path, struct stat *st)
{
	return do_stat("stat", path, st);
}

PL_EXPORT int stat64(const char *path, struct stat64 *st)
{
	return do_stat("stat64", path, (struct stat *)st);
}

PL_EXPORT int lstat(const char *path, struct stat *st)
{
	return do_stat("lstat", path, st);
}

PL_EXPORT int lstat64(const char *path, struct stat64 *st)
{
	return do_stat("lstat64", path, (struct stat *)st);
}

PL_EXPORT int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *stx)
{
	int (*real)(int, const char *, int, unsigned, struct statx *) = pl_next("statx");
	struct pl_file *f;
	struct where w;
	int ret;

	if ((flags & AT_EMPTY_PATH) && empty(path) && (f = pl_fd(dirfd))) {
		ret = real(dirfd, path, flags, mask, stx);
		if (!ret)
			pl_statx_fix(f->dev, stx);
		return ret;
	}
	classify(dirfd, path, &w);
	if (w.kind == P_NONE)
		return real(dirfd, path, flags, mask, stx);
	ret = real(AT_FDCWD, w.path, flags, mask, stx);
	if (!ret && w.kind == P_DEV)
		pl_statx_fix(w.dev, stx);
	return ret;
}

const char *pl_path_for(const char *path, char buf[PATH_MAX])
{
	struct where w;

	classify(AT_FDCWD, path, &w);
	if (w.kind == P_NONE)
		return path;
	memcpy(buf, w.path, strlen(w.path) + 1);
	return buf;
}

/* ---- access: the placeholder's mode is the device node's (0600, the user's) ---- */

PL_EXPORT int access(const char *path, int amode)
{
	int (*real)(const char *, int) = pl_next("access");
	struct where w;

	classify(AT_FDCWD, path, &w);
	return real(w.kind == P_NONE ? path : w.path, amode);
}

PL_EXPORT int faccessat(int dirfd, const char *path, int amode, int flags)
{
	int (*real)(int, const char *, int, int) = pl_next("faccessat");
	struct where w;

	classify(dirfd, path, &w);
	if (w.kind == P_NONE)
		return real(dirfd, path, amode, flags);
	return real(AT_FDCWD, w.path, amode, flags);
}

/* ---- directories and links of the tree ---- */

PL_EXPORT DIR *opendir(const char *path)
{
	DIR *(*real)(const char *) = pl_next("opendir");
	struct where w;

	DIR *d;

	classify(AT_FDCWD, path, &w);
	if (w.kind == P_DEV) {
		errno = ENOTDIR;
		return NULL;
	}
	d = real(w.kind == P_SYS ? w.path : path);
	if (d && (w.kind == P_NONE || w.host))	/* one the tree has too lists both (dirs.c) */
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
	struct where w;

	classify(AT_FDCWD, path, &w);
	if (w.kind == P_DEV) {
		errno = ENOTDIR;
		return -1;
	}
	if (w.kind == P_NONE) {
		int n = pl_dir_scandir(path, (struct dirent64 ***)list, (filter64_fn)filter,
				       (compar64_fn)compar);

		if (n != -2)
			return n;
	}
	return real(w.kind == P_SYS ? w.path : path, list, filter, compar);
}

PL_EXPORT int scandir64(const char *path, struct dirent64 ***list, filter64_fn filter,
			compar64_fn compar)
{
	int (*real)(const char *, struct dirent64 ***, filter64_fn, compar64_fn) =
		pl_next("scandir64");
	struct where w;

	classify(AT_FDCWD, path, &w);
	if (w.kind == P_DEV) {
		errno = ENOTDIR;
		return -1;
	}
	if (w.kind == P_NONE) {
		int n = pl_dir_scandir(path, (struct dirent64 ***)list, (filter64_fn)filter,
				       (compar64_fn)compar);

		if (n != -2)
			return n;
	}
	return real(w.kind == P_SYS ? w.path : path, list, filter, compar);
}

/* The tree's links are relative, as sysfs's: what they say is right as /sys's. */
PL_EXPORT ssize_t readlink(const char *path, char *buf, size_t size)
{
	ssize_t (*real)(const char *, char *, size_t) = pl_next("readlink");
	struct where w;

	classify(AT_FDCWD, path, &w);
	return real(w.kind == P_NONE ? path : w.path, buf, size);
}

PL_EXPORT ssize_t readlinkat(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t (*real)(int, const char *, char *, size_t) = pl_next("readlinkat");
	struct where w;

	classify(dirfd, path, &w);
	if (w.kind == P_NONE)
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
	struct where w;
	size_t n;

	classify(AT_FDCWD, path, &w);
	if (w.kind == P_NONE)
		return real(path, resolved);
	if (w.kind == P_DEV) {
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
