/* SPDX-License-Identifier: MIT */
/*
 * Paths that name an open descriptor: /dev/fd/N, /proc/self/fd/N,
 * /proc/thread-self/fd/N, /proc/<own pid>/fd/N, /proc/.../task/<own
 * thread>/fd/N and /dev/stdin, stdout, stderr (links to 0, 1, 2), in any
 * spelling the kernel walks to the same components ("//", "/./"). On Linux, opening one whose descriptor is a
 * device opens the device afresh, with the new open's flags (a new open
 * file description, judged as any open of the device node). The kernel
 * would follow the link to the placeholder (a read-only directory:
 * EISDIR for writing, a directory for reading), so such an open of a
 * device fd is made here as an open of its device; a stat that follows
 * the link (stat, fstatat and statx without AT_SYMLINK_NOFOLLOW) is the
 * descriptor's, as fstat's of it (paths.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

/*
 * The next component of the path at *p, which is left at its start: its
 * length, 0 at the end. Empty components and "." (the kernel's "//" and
 * "/./") are passed over as the kernel's walk passes them: /dev//fd/3 and
 * /proc/self/fd/./3 name what /dev/fd/3 names. ".." is a component like
 * any other here: it matches no name below, so such a path is not taken
 * for a descriptor's (docs/compat.md).
 */
static size_t next_comp(const char **p)
{
	for (;;) {
		while (**p == '/')
			(*p)++;
		if ((*p)[0] != '.' || ((*p)[1] && (*p)[1] != '/'))
			return strcspn(*p, "/");
		(*p)++;
	}
}

/* Does the next component of *p spell word? Then *p is past it. */
static bool comp_is(const char **p, const char *word)
{
	const char *q = *p;
	size_t n = next_comp(&q);

	if (n != strlen(word) || strncmp(q, word, n))
		return false;
	*p = q + n;
	return true;
}

/*
 * The next component as /proc writes a number (name_to_int: digits, no
 * leading zero but "0" itself), at most max; then *p is past it. -1 if not.
 */
static long comp_num(const char **p, long max)
{
	const char *q = *p;
	size_t n = next_comp(&q);
	long v = 0;

	if (!n || n > 10 || (q[0] == '0' && n > 1))
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (q[i] < '0' || q[i] > '9')
			return -1;
		v = v * 10 + (q[i] - '0');
	}
	if (v > max)
		return -1;
	*p = q + n;
	return v;
}

/* Is n a thread of this process (/proc/<n> and /proc/<pid>/task/<n> are ours)? */
static bool own_thread(long n)
{
	pid_t pid = getpid();

	return n == pid || (n > 0 && !syscall(SYS_tgkill, pid, (pid_t)n, 0));
}

/* the descriptor number that path names, or -1; *rest: what follows its component */
static int named_fd(const char *path, const char **rest)
{
	static const char *const std[] = { "stdin", "stdout", "stderr" };
	const char *p = path;
	long n;

	if (*p != '/')
		return -1;
	if (comp_is(&p, "dev")) {
		for (int i = 0; i < 3; i++) {
			if (comp_is(&p, std[i])) {
				*rest = p;
				return i;
			}
		}
		if (!comp_is(&p, "fd"))
			return -1;
	} else if (comp_is(&p, "proc")) {
		/* thread-self (a task's own), or self or one of our ids, then task/<ours> */
		if (!comp_is(&p, "thread-self")) {
			if (!comp_is(&p, "self")) {
				n = comp_num(&p, INT_MAX);
				if (n < 0 || !own_thread(n))
					return -1;
			}
			if (comp_is(&p, "task")) {
				n = comp_num(&p, INT_MAX);
				if (n < 0 || !own_thread(n))
					return -1;
			}
		}
		if (!comp_is(&p, "fd"))
			return -1;
	} else {
		return -1;
	}
	n = comp_num(&p, INT_MAX);
	if (n < 0)
		return -1;
	*rest = p;
	return (int)n;
}

int pl_fd_path_dev(const char *path, const struct pl_devinfo **d)
{
	int fd;

	return pl_fd_path_fd(path, d, &fd);
}

int pl_fd_path_fd(const char *path, const struct pl_devinfo **d, int *fdp)
{
	const char *rest;
	struct pl_file *f;
	int fd = named_fd(path, &rest);

	*d = NULL;
	*fdp = fd;
	if (fd < 0)
		return 0;
	f = pl_fd(fd);
	if (!f) {
		/* a device copied with the program's own dup: its link names a placeholder */
		f = pl_fd_adopt(fd, 0);
		if (!f)
			return 0;
	}
	/* "/dev/fd/3/": the device is not a directory */
	if (*rest)
		return -ENOTDIR;
	*d = f->dev;
	return 0;
}
