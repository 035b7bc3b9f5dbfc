/* SPDX-License-Identifier: MIT */
/*
 * The controller directory. It is opened once (O_DIRECTORY|O_NOFOLLOW) and
 * everything in it is reached relative to that descriptor with O_NOFOLLOW,
 * under fixed names (ctrl.json, nsN.img): nothing named in the state file is
 * ever opened in it, and a path swapped above the directory after the open
 * changes nothing. The directory and the files ucmd opens in it must belong
 * to the caller's euid or to root and must not be writable by group or
 * others; otherwise ucmd refuses, saying why, so that root running ucmd in a
 * directory another user controls cannot be made to write where that user
 * points it (docs/security.md, "The controller directory").
 *
 * The flock on the directory descriptor is the concurrency model: one writer
 * (exclusive) or any number of read-only controllers (shared), never both.
 * A writer records its pid in ctrl.pid so that others can say who holds it.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctrl_int.h"
#include "lib/error.h"

#define PID_NAME	"ctrl.pid"
#define TMP_MARK	".tmp."
#define TMP_RAND	8

int ctrl_ctrl_why(struct ucmd_ctrl *c, int err, const char *fmt, ...)
{
	char why[LAST_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	last_error_set(err, "%s", why);
	if (c->p.errbuf && c->p.errbuf_len)
		snprintf(c->p.errbuf, c->p.errbuf_len, "%s", why);
	return err;
}

/*
 * The owner rule: the caller's euid or root, and no write bit for others.
 * name is a file of the directory, or NULL for the directory itself.
 */
static int check_owner(struct ucmd_ctrl *c, const struct stat *sb, const char *name)
{
	uid_t me = geteuid();
	const char *sep = name ? "/" : "";

	name = name ? name : "";
	if (sb->st_uid != me && sb->st_uid != 0)
		return ctrl_ctrl_why(c, -EPERM,
				      "%s%s%s is owned by uid %u, not by you (uid %u) or root: "
				     "refusing to use another user's controller directory",
				     c->dir, sep, name, (unsigned)sb->st_uid, (unsigned)me);
	if (sb->st_mode & (S_IWGRP | S_IWOTH))
		return ctrl_ctrl_why(c, -EPERM,
				      "%s%s%s is writable by group or others (mode %04o): "
				     "refusing it; chmod go-w it if that is safe",
				     c->dir, sep, name, (unsigned)(sb->st_mode & 07777));
	return 0;
}

/* A file of the directory, already opened O_NOFOLLOW: regular, one link, owner rule. */
static int check_file(struct ucmd_ctrl *c, int fd, const char *name)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return ctrl_ctrl_why(c, -errno, "%s/%s: fstat: %s", c->dir, name, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return ctrl_ctrl_why(c, -EPERM, "%s/%s is not a regular file", c->dir, name);
	if (sb.st_nlink != 1)
		return ctrl_ctrl_why(c, -EPERM, "%s/%s has %u hard links: refusing it",
				      c->dir, name, (unsigned)sb.st_nlink);
	return check_owner(c, &sb, name);
}

static int open_error(struct ucmd_ctrl *c, int err, const char *name)
{
	if (err == -ELOOP)
		return ctrl_ctrl_why(c, err, "%s/%s is a symbolic link: refusing to follow it",
				      c->dir, name);
	return ctrl_ctrl_why(c, err, "%s/%s: %s", c->dir, name, strerror(-err));
}

/* Who holds the lock, as far as ctrl.pid says. */
static int busy(struct ucmd_ctrl *c)
{
	char buf[24] = { 0 };
	long pid = 0;
	int fd = openat(c->dirfd, PID_NAME, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) > 0)
			pid = strtol(buf, NULL, 10);
		close(fd);
	}
	/* a writer that was killed leaves its pid file: only a live pid is named */
	if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM))
		return ctrl_ctrl_why(c, -EBUSY, "controller %s in use by pid %ld", c->dir, pid);
	return ctrl_ctrl_why(c, -EBUSY, "controller %s in use by another process", c->dir);
}

static bool is_temp_name(const char *n)
{
	const char *m = strstr(n, TMP_MARK);
	size_t tail;

	if (n[0] != '.' || !m)
		return false;
	tail = strlen(m + strlen(TMP_MARK));
	return tail == TMP_RAND;
}

/* Temp files a killed writer left behind; we hold the exclusive lock. */
static void remove_stale_temps(struct ucmd_ctrl *c)
{
	int fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (is_temp_name(e->d_name))
			unlinkat(c->dirfd, e->d_name, 0);
	closedir(d);
}

static void write_pid(struct ucmd_ctrl *c)
{
	char tmp[64], buf[24];
	int fd, n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());

	if (ctrl_dir_temp(c, PID_NAME, tmp, sizeof(tmp), &fd))
		return;	/* only a courtesy for the in-use message */
	if (write(fd, buf, (size_t)n) == n && !renameat(c->dirfd, tmp, c->dirfd, PID_NAME))
		c->wrote_pid = true;
	else
		unlinkat(c->dirfd, tmp, 0);
	close(fd);
}

static int open_dir(struct ucmd_ctrl *c)
{
	struct stat sb;

	/* A new directory is private: namespace data is the caller's alone. */
	if (!c->p.read_only && mkdir(c->dir, 0700) && errno != EEXIST)
		return ctrl_ctrl_why(c, -errno, "%s: mkdir: %s", c->dir, strerror(errno));
	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (c->dirfd < 0) {
		int err = -errno;

		if ((err == -ENOTDIR || err == -ELOOP) && !lstat(c->dir, &sb) && S_ISLNK(sb.st_mode))
			return ctrl_ctrl_why(c, -ELOOP, "%s is a symbolic link: refusing to follow it",
					      c->dir);
		return ctrl_ctrl_why(c, err, "%s: %s", c->dir, strerror(-err));
	}
	if (fstat(c->dirfd, &sb) < 0)
		return ctrl_ctrl_why(c, -errno, "%s: fstat: %s", c->dir, strerror(errno));
	c->dir_uid = sb.st_uid;
	return check_owner(c, &sb, NULL);
}

int ctrl_dir_open(struct ucmd_ctrl *c)
{
	int ret;

	c->dir_uid = geteuid();
	if (!c->dir)
		return 0;
	ret = open_dir(c);
	if (ret)
		return ret;
	if (flock(c->dirfd, (c->p.read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? busy(c)
					    : ctrl_ctrl_why(c, -errno, "%s: flock: %s", c->dir,
							     strerror(errno));
	if (!c->p.read_only) {
		remove_stale_temps(c);
		write_pid(c);
	}
	return 0;
}

void ctrl_dir_close(struct ucmd_ctrl *c)
{
	if (c->dirfd < 0)
		return;
	if (c->wrote_pid)
		unlinkat(c->dirfd, PID_NAME, 0);
	close(c->dirfd);	/* releases the lock */
	c->dirfd = -1;
}

int ctrl_dir_open_file(struct ucmd_ctrl *c, const char *name, int flags, int *fd)
{
	int ret;

	*fd = openat(c->dirfd, name, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (*fd < 0)
		return errno == ENOENT ? -ENOENT : open_error(c, -errno, name);
	/* A new name must survive a crash with what is written to it. */
	if ((flags & O_CREAT) && fsync(c->dirfd)) {
		ret = -errno;
		close(*fd);
		*fd = -1;
		return ret;
	}
	ret = check_file(c, *fd, name);
	if (ret) {
		close(*fd);
		*fd = -1;
	}
	return ret;
}

int ctrl_dir_temp(struct ucmd_ctrl *c, const char *name, char *tmp, size_t len, int *fd)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	for (int tries = 0; tries < 16; tries++) {
		unsigned char r[TMP_RAND];
		char sfx[TMP_RAND + 1];

		if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
			uint64_t t = ktime_get_ns() ^ ((uint64_t)getpid() << 32);

			memcpy(r, &t, sizeof(r));
		}
		for (int i = 0; i < TMP_RAND; i++)
			sfx[i] = set[r[i] % (sizeof(set) - 1)];
		sfx[TMP_RAND] = 0;
		if (snprintf(tmp, len, ".%s%s%s", name, TMP_MARK, sfx) >= (int)len)
			return -ENAMETOOLONG;
		*fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (*fd >= 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void image_name(uint32_t nsid, char *buf, size_t len)
{
	snprintf(buf, len, "ns%u.img", nsid);
}

int ctrl_dir_image_open(struct ucmd_ctrl *c, uint32_t nsid, uint64_t size, bool create,
			 struct store **st)
{
	/* O_NONBLOCK: a FIFO named nsN.img is refused below, never waited on */
	int oflags = O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, fd, ret;
	unsigned sflags = 0;
	char name[32];

	image_name(nsid, name, sizeof(name));
	if (create && c->p.read_only)
		return ctrl_ctrl_why(c, -EROFS, "%s is open read-only: cannot create %s", c->dir, name);
	oflags |= c->p.read_only ? O_RDONLY : O_RDWR;
	sflags |= c->p.read_only ? UCMD_STORE_RDONLY : 0;
	if (create) {
		oflags |= O_CREAT | O_EXCL;
		sflags |= UCMD_STORE_CREATE;
	}
	fd = openat(c->dirfd, name, oflags, 0600);
	if (fd < 0) {
		if (errno == EEXIST)
			return ctrl_ctrl_why(c, -EEXIST,
					      "%s/%s already exists: a new namespace never takes over "
					     "or deletes an existing image; restore the ctrl.json that "
					     "lists it, or remove it yourself", c->dir, name);
		if (errno == ENOENT)
			return ctrl_ctrl_why(c, -ENOENT, "%s/%s: missing; namespace %u needs an "
					      "image of %llu bytes (restore it, or remove namespace %u "
					      "from ctrl.json)", c->dir, name, nsid,
					      (unsigned long long)size, nsid);
		return open_error(c, -errno, name);
	}
	ret = check_file(c, fd, name);
	if (!ret) {
		ret = store_file_open_fd(fd, create ? size : 0, sflags, st);
		if (ret)
			ctrl_ctrl_why(c, ret, "%s/%s: %s", c->dir, name, strerror(-ret));
		else
			fd = -1;	/* the store owns it now */
	}
	/* An existing image is used at exactly its size, never resized to fit. */
	if (!ret && (*st)->size != size) {
		ret = ctrl_ctrl_why(c, -EUCLEAN,
				     "%s/%s is %llu bytes, namespace %u needs %llu: refusing to "
				    "resize it", c->dir, name, (unsigned long long)(*st)->size, nsid,
				    (unsigned long long)size);
		store_close(*st);
		*st = NULL;
	}
	if (ret) {
		if (fd >= 0)
			close(fd);
		if (create)
			unlinkat(c->dirfd, name, 0);	/* ours: O_EXCL created it just now */
	}
	return ret;
}

void ctrl_dir_image_remove(struct ucmd_ctrl *c, uint32_t nsid)
{
	char name[32];

	image_name(nsid, name, sizeof(name));
	if (c->dirfd >= 0 && !c->p.read_only)
		unlinkat(c->dirfd, name, 0);
}

static bool is_image_name(const char *n)
{
	const char *p = n + 2;

	if (strncmp(n, "ns", 2) || !isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return !strcmp(p, ".img");
}

bool ctrl_dir_find_image(struct ucmd_ctrl *c, char *buf, size_t len)
{
	int fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	bool found = false;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!found && (e = readdir(d)) != NULL) {
		if (is_image_name(e->d_name)) {
			snprintf(buf, len, "%s", e->d_name);
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* Absolute, and no "." or ".." component: what realpath() gives. */
static bool canonical(const char *path)
{
	if (path[0] != '/')
		return false;
	for (const char *p = path; *p; p++) {
		if (p[0] != '/')
			continue;
		if (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || !p[2] ||
				     (p[2] == '.' && (p[3] == '/' || !p[3])))))
			return false;
	}
	return true;
}

/* No symlink anywhere in the path (openat2), else at least not the last one. */
static int open_nosymlinks(const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC),
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

/*
 * A device namespace is a block device: owned by the directory's owner or
 * root. Never a regular file, whoever owns it: with root's directory (ucmdd)
 * a path in ctrl.json could otherwise serve any root file (/etc/shadow) to
 * the namespace's readers; a file-backed namespace is nsN.img, created by
 * the controller in its own directory.
 */
static int check_device(struct ucmd_ctrl *c, const char *path, int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) < 0)
		return ctrl_ctrl_why(c, -errno, "device path %s: fstat: %s", path, strerror(errno));
	/* O_PATH|O_NOFOLLOW opens a trailing symlink itself */
	if (S_ISLNK(sb.st_mode))
		return ctrl_ctrl_why(c, -ELOOP, "device path %s is a symbolic link: refusing to "
				      "follow it", path);
	if (!S_ISBLK(sb.st_mode))
		return ctrl_ctrl_why(c, -ENOTBLK, "device path %s is not a block device: a device "
				      "namespace must be one (a file-backed namespace is the "
				      "controller's own nsN.img)", path);
	if (sb.st_uid != c->dir_uid && sb.st_uid != 0)
		return ctrl_ctrl_why(c, -EPERM, "device path %s is owned by uid %u, not by the "
				      "controller directory's owner (uid %u) or root", path,
				      (unsigned)sb.st_uid, (unsigned)c->dir_uid);
	return 0;
}

int ctrl_dir_device_open(struct ucmd_ctrl *c, const char *path, uint64_t size,
			  struct store **st)
{
	int fd, ret;

	if (!canonical(path))
		return ctrl_ctrl_why(c, -EINVAL, "device path '%s' is not absolute and canonical",
				      path);
	/*
	 * The type is judged before anything is opened for I/O (opening some
	 * character devices does something), and again on the descriptor used,
	 * opened O_NONBLOCK so that a FIFO swapped in between cannot block.
	 */
	for (int pass = 0; pass < 2; pass++) {
		fd = open_nosymlinks(path, pass ? (c->p.read_only ? O_RDONLY : O_RDWR) | O_NONBLOCK
						: O_PATH);
		if (fd < 0) {
			if (fd == -ELOOP)
				return ctrl_ctrl_why(c, fd, "device path %s goes through a symbolic "
						      "link: refusing to follow it", path);
			return ctrl_ctrl_why(c, fd, "device path %s: %s", path, strerror(-fd));
		}
		ret = check_device(c, path, fd);
		if (ret || !pass)
			close(fd);
		if (ret)
			return ret;
	}
	ret = store_device_open_fd(fd, size, c->p.read_only ? UCMD_STORE_RDONLY : 0, st);
	if (ret) {
		ctrl_ctrl_why(c, ret, "device path %s: %s%s", path, strerror(-ret),
			       ret == -ENOSPC ? " (smaller than the namespace; never extended)" : "");
		close(fd);
	}
	return ret;
}

uint16_t ctrl_store_status(int err)
{
	switch (err) {
	case 0:
		return 0;
	case -ENOSPC:
	case -EDQUOT:
	case -EFBIG:
		return UCMD_GEN(NVME_SC_CAP_EXCEEDED);
	case -EROFS:
	case -EBADF:
		return UCMD_GEN(NVME_SC_NS_WRITE_PROTECTED) | UCMD_DNR;
	case -EFAULT:
		return UCMD_GEN(NVME_SC_DATA_XFER_ERROR) | UCMD_DNR;
	default:
		return UCMD_GEN(NVME_SC_INTERNAL);
	}
}
