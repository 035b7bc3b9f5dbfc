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
 * answer; access for the calling thread's ids (sv_access.c). A thread that
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
		return sv_mem_out(tid, buf, &st, sizeof(st));
	}
	case __NR_statx: {
		struct statx stx;

		if (syscall(SYS_statx, dfd, p, (int)g[2] | empty, (unsigned)g[3], &stx))
			return -errno;
		if (w->kind == PL_WHERE_DEV)
			pl_statx_fix(w->dev, &stx);
		return sv_mem_out(tid, g[4], &stx, sizeof(stx));
	}
	case __NR_access:
		/* for the thread's ids as they are now, not ours (sv_access.c) */
		return sv_access_as(tid, dfd, p, (int)g[1], 0);
	case __NR_faccessat:
	case __NR_faccessat2:
		return sv_access_as(tid, dfd, p, (int)g[2],
				    req->data.nr == __NR_faccessat2 ? (int)g[3] : 0);
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
