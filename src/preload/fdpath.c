/* SPDX-License-Identifier: MIT */
/*
 * Paths that name an open descriptor: /dev/fd/N, /proc/self/fd/N,
 * /proc/thread-self/fd/N, /proc/<own pid>/fd/N and /dev/stdin, stdout,
 * stderr (links to 0, 1, 2). On Linux, opening one whose descriptor is a
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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/preload.h"

/* the descriptor number that path names, or -1 */
static int named_fd(const char *path, const char **rest)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout", "/dev/stderr" };
	const char *p;
	char *end;
	long n;

	for (int i = 0; i < 3; i++) {
		size_t n = strlen(std[i]);

		if (!strncmp(path, std[i], n) && (!path[n] || path[n] == '/')) {
			*rest = path + n;
			return i;
		}
	}
	if (!strncmp(path, "/dev/fd/", 8)) {
		p = path + 8;
	} else if (!strncmp(path, "/proc/", 6)) {
		p = path + 6;
		if (!strncmp(p, "self/", 5))
			p += 5;
		else if (!strncmp(p, "thread-self/", 12))
			p += 12;
		else if (*p >= '1' && *p <= '9' && strtol(p, &end, 10) == getpid() && *end == '/')
			p = end + 1;
		else
			return -1;
		if (strncmp(p, "fd/", 3))
			return -1;
		p += 3;
	} else {
		return -1;
	}
	if (*p < '0' || *p > '9' || (*p == '0' && p[1] >= '0' && p[1] <= '9'))
		return -1;
	n = strtol(p, &end, 10);
	if (n < 0 || n > INT_MAX || (*end && *end != '/'))
		return -1;
	*rest = end;
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
