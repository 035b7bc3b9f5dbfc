/* SPDX-License-Identifier: MIT */
/*
 * Is a descriptor the program holds one of the tree's /sys files (opened
 * by path there, inherited, duplicated)? Its fstat then shows the owner
 * the path's stat shows, root's (pl_stat_tree), not the exec user's who
 * owns the file on disk. No table of opens: a descriptor may come from
 * anywhere (dup, a parent, SCM_RIGHTS), so the file itself is asked. The
 * cheap tests first, from the fstat already made: a file already root's
 * needs nothing, and one on another file system than the tree's is not
 * the tree's; only then the kernel's name for the descriptor
 * (/proc/self/fd/N) against <root>/sys. A tree moved or unlinked while
 * held (its name " (deleted)") is no longer under it: shown as it is.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

/* <root>/sys's file system, once known (0: not yet, or no tree) */
static _Atomic unsigned long long tree_dev;

static const char *tree_sys(char buf[PATH_MAX])
{
	const char *root = pl_root();
	struct stat st;

	if (!root || snprintf(buf, PATH_MAX, "%s/sys", root) >= PATH_MAX)
		return NULL;
	if (!atomic_load_explicit(&tree_dev, memory_order_relaxed)) {
		if (pl_raw_syscall(__NR_newfstatat, AT_FDCWD, (long)buf, (long)&st, 0, 0, 0))
			return NULL;
		atomic_store_explicit(&tree_dev, (unsigned long long)st.st_dev + 1,
				      memory_order_relaxed);
	}
	return buf;
}

bool pl_fd_in_tree(int fd, unsigned long long dev, unsigned uid)
{
	char sys[PATH_MAX], link[32], name[PATH_MAX];
	unsigned long long d;
	size_t n;
	long len;

	int saved = errno;	/* after the program's fstat that succeeded: left as it was */
	const char *t;

	if (uid == 0 || fd < 0)
		return false;
	t = tree_sys(sys);
	errno = saved;
	if (!t)
		return false;
	d = atomic_load_explicit(&tree_dev, memory_order_relaxed);
	if (d != dev + 1)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = pl_raw_syscall(__NR_readlinkat, AT_FDCWD, (long)link, (long)name, sizeof(name) - 1, 0,
			     0);
	if (len <= 0)
		return false;
	name[len] = '\0';
	n = strlen(sys);
	return !strncmp(name, sys, n) && (name[n] == '\0' || name[n] == '/');
}
