/* SPDX-License-Identifier: MIT */
/*
 * Whose /dev and /sys a path call reaches: ours (the tree's, where.c), or
 * the calling thread's own. ucmd's /dev and /sys stand in for the
 * directories of the supervisor's root and mount namespace, the program's
 * at its start. A thread that has changed either since (chroot,
 * unshare(CLONE_NEWNS), setns) names files from its own root: on Linux a
 * chrooted program sees ucmd's /dev only if its root holds that /dev (a
 * bind mount of it), and "/dev/ng0n1" in a root without /dev is ENOENT.
 * So for such a thread the path is read as the thread reads it (an
 * absolute one from its root; a relative one from its cwd or dirfd, named
 * inside its root), and it is ours only when its first component, /dev or
 * /sys, is looked up in the thread's root (openat2 RESOLVE_IN_ROOT under
 * /proc/TID/root, which is also the thread's mount namespace) to the very
 * directory ours is (device and inode). Otherwise the file is the
 * thread's own, and the kernel (or an open made as the thread) answers.
 * A thread with our root and mounts is answered as before, at the cost of
 * two stats (none for an absolute path outside /dev and /sys, which is
 * never the tree's). The verdict itself is view.c's, the preload's too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "preload/preload.h"
#include "preload/sv.h"
#include "preload/sv_openat2.h"

bool sv_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* Is top ("/dev" or "/sys"), looked up in tid's root and mounts, our own top? */
static bool top_is_ours(pid_t tid, const char *top)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT };
	struct stat theirs, ours;
	char link[64];
	int rootfd, fd;
	bool same;

	snprintf(link, sizeof(link), "/proc/%d/root", (int)tid);
	rootfd = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return false;
	/* a link of their root climbing by "..", a rename anywhere meanwhile: no EAGAIN (sv_openat2.c) */
	fd = sv_openat2(rootfd, top + 1, &how);
	close(rootfd);
	if (fd < 0)
		return false;
	same = !fstat(fd, &theirs) && !stat(top, &ours) && theirs.st_dev == ours.st_dev &&
	       theirs.st_ino == ours.st_ino;
	close(fd);
	return same;
}

static bool top_cb(const char *top, void *arg)
{
	return top_is_ours(*(pid_t *)arg, top);
}

int sv_thread_base(pid_t tid, int dirfd, const char *path, char *base, size_t len)
{
	char proc[64], root[PATH_MAX], whole[2 * PATH_MAX + 2], folded[2 * PATH_MAX + 4];
	bool same_root, same_mnt;
	const char *in = base;
	ssize_t n;
	size_t rl;
	int ret;

	base[0] = '\0';
	if (path[0] == '/') {
		/* nothing of the tree (most opens): the same answer whoever asks, no look */
		pl_path_fold(folded, path);
		if (!pl_path_under(folded, "/dev") && !pl_path_under(folded, "/sys"))
			return 0;
	} else {
		ret = sv_base_of(tid, dirfd, base, len);
		if (ret)
			return ret;
	}
	snprintf(proc, sizeof(proc), "/proc/%d/root", (int)tid);
	same_root = sv_same_file(proc, "/proc/self/root");
	snprintf(proc, sizeof(proc), "/proc/%d/ns/mnt", (int)tid);
	same_mnt = sv_same_file(proc, "/proc/self/ns/mnt");
	if (same_root && same_mnt)
		return 0;	/* our view: the tree's wherever where.c says */
	if (path[0] != '/') {
		/* the directory as the thread names it: our name less its root's */
		snprintf(proc, sizeof(proc), "/proc/%d/root", (int)tid);
		n = readlink(proc, root, sizeof(root) - 1);
		if (n <= 0)
			return 1;
		root[n] = '\0';
		rl = strcmp(root, "/") ? (size_t)n : 0;
		if (rl && strncmp(base, root, rl))
			/* a dirfd outside its root (opened before the chroot): named as ours */
			return same_mnt ? 0 : 1;
		if (rl && base[rl] && base[rl] != '/')
			return same_mnt ? 0 : 1;
		in = base + rl;
		memmove(base, in[0] ? in : "/", strlen(in[0] ? in : "/") + 1);
		snprintf(whole, sizeof(whole), "%s/%s", base, path);
	} else {
		snprintf(whole, sizeof(whole), "%s", path);
	}
	pl_path_fold(folded, whole);
	/* view.c's verdict, the preload's too; we reach the tree through any root ourselves */
	return pl_view_of(folded, false, top_cb, &tid) == PL_VIEW_OWN ? 1 : 0;
}
