/* SPDX-License-Identifier: MIT */
/*
 * The path calls that look without opening: stat, lstat, newfstatat,
 * statx, access, faccessat, faccessat2, readlink, readlinkat, every one a
 * static program makes (it has no preload), and a dynamic one's (--dirs)
 * not made from the preload's trampoline (Go's os.Stat, os.Readlink,
 * filepath.EvalSymlinks never call libc). A path that leads to one of
 * ucmd's devices or into the tree (where.c: the preload's judgement, on
 * the preload's tree) is answered here, by the call made on the file the
 * preload's libc call would reach (the placeholder, fixed to the device's
 * kind and numbers; the tree's file), on our copy of the path: the
 * program changing its memory after our read changes nothing of the
 * answer; access for the calling thread's ids (sv_access.c); a followed
 * stat of /dev/fd/N, /proc/self/fd/N, /dev/stdin... naming a device fd is
 * the device's, as Linux follows the link (fd_path_stat). A thread that
 * changed its root or mount namespace is answered so only where its own
 * root reaches our /dev or /sys (sv_tview.c). Every other path
 * goes on to the kernel (SECCOMP_USER_NOTIF_FLAG_CONTINUE), which reads the
 * path again: a program that rewrites it between the two reads can stat
 * the host's /dev/nvme0n1 or read a link in the host's /sys, which is
 * metadata only, as it could have with the calls no filter sends
 * (getxattr, statfs, utimensat...); no data of the host's drives is
 * reached, as every open is still made here (docs/security.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"
#include "preload/sv.h"

/* Does the call follow the path's last link? */
static bool follows(const struct seccomp_notif *req)
{
	const __u64 *g = req->data.args;

	switch (req->data.nr) {
	case __NR_lstat:
	case __NR_readlink:
	case __NR_readlinkat:
		return false;
	case __NR_newfstatat:
		return !((int)g[3] & AT_SYMLINK_NOFOLLOW);
	case __NR_statx:
		return !((int)g[2] & AT_SYMLINK_NOFOLLOW);
	case __NR_faccessat2:
		return !((int)g[3] & AT_SYMLINK_NOFOLLOW);
	}
	return true;
}

/*
 * The call on our path p relative to dfd ("": dfd itself), as the
 * preload's libc call would make it: the result or -errno.
 */
static long call_on(const struct seccomp_notif *req, const struct pl_where *w, int dfd,
		    const char *p)
{
	const __u64 *g = req->data.args;
	pid_t tid = (pid_t)req->pid;
	int empty = p[0] ? 0 : AT_EMPTY_PATH;
	long ret;

	switch (req->data.nr) {
	case __NR_stat:
	case __NR_lstat:
	case __NR_newfstatat: {
		struct stat st;
		int flags = req->data.nr == __NR_newfstatat ? (int)g[3] :
			    req->data.nr == __NR_lstat ? AT_SYMLINK_NOFOLLOW : 0;
		uint64_t buf = req->data.nr == __NR_newfstatat ? g[2] : g[1];

		if (syscall(SYS_newfstatat, dfd, p, &st, flags | empty))
			return -errno;
		if (w->kind == PL_WHERE_DEV)
			pl_stat_fix(w->dev, &st);
		else if (w->kind == PL_WHERE_SYS)
			pl_stat_tree(&st);
		return sv_mem_out(tid, buf, &st, sizeof(st));
	}
	case __NR_statx: {
		struct statx stx;

		if (syscall(SYS_statx, dfd, p, (int)g[2] | empty, (unsigned)g[3], &stx))
			return -errno;
		if (w->kind == PL_WHERE_DEV)
			pl_statx_fix(w->dev, &stx);
		else if (w->kind == PL_WHERE_SYS)
			pl_statx_tree(&stx);
		return sv_mem_out(tid, g[4], &stx, sizeof(stx));
	}
	case __NR_access:
	case __NR_faccessat:
	case __NR_faccessat2: {
		/*
		 * for the thread's ids as they are now, not ours; a file of the
		 * tree on the owner it stats as, root's (sv_access.c)
		 */
		int mode = (int)g[req->data.nr == __NR_access ? 1 : 2];
		int flags = req->data.nr == __NR_faccessat2 ? (int)g[3] : 0;

		return w->kind == PL_WHERE_SYS ? sv_access_shown(tid, dfd, p, mode, flags)
					       : sv_access_as(tid, dfd, p, mode, flags);
	}
	case __NR_readlink:
	case __NR_readlinkat: {
		bool at = req->data.nr == __NR_readlinkat;
		int size = (int)g[at ? 3 : 2];
		char target[PATH_MAX];
		ssize_t n;

		if (size <= 0)
			return -EINVAL;
		if (!p[0]) {
			struct stat st;

			/* readlinkat(fd, "") of what is no link is ENOENT; readlink's answer is EINVAL */
			if (fstat(dfd, &st))
				return -errno;
			if (!S_ISLNK(st.st_mode))
				return -EINVAL;
		}
		n = readlinkat(dfd, p, target, sizeof(target));
		if (n < 0)
			return -errno;
		if (n > size)
			n = size;
		ret = sv_mem_out(tid, g[at ? 2 : 1], target, (size_t)n);
		return ret ? ret : n;
	}
	}
	return -ENOSYS;
}

/*
 * The device whose placeholder the program's descriptor fd of process pid
 * is (a device fd we gave, 960.., or a copy of one the program made below:
 * its link names the same directory): its name in name, else false. The
 * link's text is checked against our placeholders' directory and the
 * file it leads to against that placeholder (device and inode), so a
 * directory of the program's that merely has such a name is not taken.
 */
bool sv_fd_device(const struct sv *s, pid_t pid, int fd, char *name, size_t len)
{
	char link[64], target[PATH_MAX], ph[PATH_MAX];
	size_t plen = s->phdir ? strlen(s->phdir) : 0;
	ssize_t n;

	if (!plen)
		return false;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= (ssize_t)plen || strncmp(target, s->phdir, plen) || target[plen] != '/')
		return false;
	target[n] = '\0';
	if (strchr(target + plen + 1, '/') || strlen(target + plen + 1) >= len)
		return false;
	snprintf(ph, sizeof(ph), "%s", target);
	if (!sv_same_file(link, ph))
		return false;
	strcpy(name, target + plen + 1);
	return true;
}

/*
 * A followed stat (stat, newfstatat and statx without AT_SYMLINK_NOFOLLOW)
 * of /dev/fd/N, /proc/self/fd/N, /dev/stdin... (fdname.c, the preload's
 * reading) whose descriptor is a device of ours: Linux follows the magic
 * link to the device, so the answer is the device's, the one fstat of it
 * gives (sv_tree_dev_stat, as sv_dev.c's), not the placeholder directory
 * the kernel would reach; a path below it is ENOTDIR (the device is no
 * directory). Only for a thread with our root and mounts (any other reads
 * the path in its own /dev or /proc: the kernel's answer). True if
 * answered.
 */
static bool fd_path_stat(struct sv *s, const struct seccomp_notif *req, const char *path,
			 struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	pid_t tid = (pid_t)req->pid, tg;
	char name[32], proc[64];
	const char *rest;
	int fd;
	long ret;

	if ((req->data.nr != __NR_stat && req->data.nr != __NR_newfstatat &&
	     req->data.nr != __NR_statx) || !follows(req) || path[0] != '/')
		return false;
	tg = sv_tgid_of(s, tid);
	fd = tg > 0 ? pl_fd_named(path, tg, &rest) : -1;
	if (fd < 0 || !sv_fd_device(s, tg, fd, name, sizeof(name)))
		return false;
	snprintf(proc, sizeof(proc), "/proc/%d/root", (int)tid);
	if (!sv_same_file(proc, "/proc/self/root"))
		return false;
	snprintf(proc, sizeof(proc), "/proc/%d/ns/mnt", (int)tid);
	if (!sv_same_file(proc, "/proc/self/ns/mnt"))
		return false;
	if (!sv_id_valid(s, req->id)) {
		a->error = -ENOENT;	/* the call is gone: nothing of ours answers it */
		return true;
	}
	if (*rest) {
		ret = -ENOTDIR;
	} else if (req->data.nr == __NR_statx) {
		struct statx stx;

		ret = sv_tree_dev_stat(name, NULL, &stx) ? sv_mem_out(tid, g[4], &stx, sizeof(stx))
							 : -ENOENT;
	} else {
		struct stat st;

		ret = sv_tree_dev_stat(name, &st, NULL)
			      ? sv_mem_out(tid, req->data.nr == __NR_stat ? g[1] : g[2], &st, sizeof(st))
			      : -ENOENT;
	}
	sv_trace(s, "%s: fd %d, %s: %ld", path, fd, name, ret);
	if (ret < 0)
		a->error = (int)ret;
	return true;
}

void sv_path_call(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	bool at = req->data.nr != __NR_stat && req->data.nr != __NR_lstat &&
		  req->data.nr != __NR_access && req->data.nr != __NR_readlink;
	int dirfd = at ? (int)g[0] : AT_FDCWD;
	char path[PATH_MAX], base[PATH_MAX];
	struct pl_where *w;
	static struct pl_where where;	/* one call at a time: the loop's */
	long ret;

	/* an unreadable or too long path, "" (AT_EMPTY_PATH): the kernel's answer */
	if (sv_str_in((pid_t)req->pid, path, at ? g[1] : g[0], sizeof(path)) || !path[0]) {
		a->cont = true;
		return;
	}
	if (fd_path_stat(s, req, path, a))
		return;
	if (path[0] == '/' && strncmp(path, "/dev/", 5) && strncmp(path, "/sys/", 5) &&
	    strncmp(path, "//", 2)) {
		a->cont = true;	/* the common case: no look at the tree */
		return;
	}
	/*
	 * a bad dirfd: the kernel says so; a thread whose root or mounts give
	 * it another /dev or /sys (or none): its own file, the kernel's answer
	 * in its root (sv_tview.c)
	 */
	if (sv_thread_base((pid_t)req->pid, dirfd, path, base, sizeof(base))) {
		a->cont = true;
		return;
	}
	w = &where;
	pl_where(base[0] ? base : NULL, path, w);
	if (w->kind == PL_WHERE_NONE) {
		a->cont = true;
		return;
	}
	if (w->kind == PL_WHERE_SV) {
		a->error = -EACCES;	/* our own tree out of our reach: nothing to answer from */
		return;
	}
	/* what we read is the call's only while it is still pending */
	if (!sv_id_valid(s, req->id)) {
		a->error = -ENOENT;
		return;
	}
	if (w->kind == PL_WHERE_SYS && !w->host) {
		/* the tree's file, never out of its /sys (sv_tree_fd) */
		int fd = sv_tree_fd(w->path, follows(req));

		ret = fd < 0 ? fd : call_on(req, w, fd, "");
		if (fd >= 0)
			close(fd);
	} else {
		ret = call_on(req, w, AT_FDCWD, w->path);
	}
	sv_trace(s, "%s: %s: %ld", path, w->path, ret);
	if (ret < 0)
		a->error = (int)ret;
	else
		a->val = ret;
}

bool sv_tree_dev_stat(const char *name, struct stat *st, struct statx *stx)
{
	const struct pl_devinfo *d = pl_devinfo(name);
	const char *root = d ? pl_root() : NULL;
	char ph[PATH_MAX];

	if (!root || snprintf(ph, sizeof(ph), "%s/dev/%s", root, name) >= (int)sizeof(ph))
		return false;
	if (stx) {
		if (syscall(SYS_statx, AT_FDCWD, ph, 0, STATX_BASIC_STATS, stx))
			return false;
		pl_statx_fix(d, stx);
		return true;
	}
	if (stat(ph, st))
		return false;
	pl_stat_fix(d, st);
	return true;
}
