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
 * descriptor's, as fstat's of it (paths.c). The path's reading is
 * fdname.c's, which ucmd-supervise shares (sv_stat.c).
 */
#include <errno.h>
#include <unistd.h>

#include "preload/preload.h"

int pl_fd_path_dev(const char *path, const struct pl_devinfo **d)
{
	int fd;

	return pl_fd_path_fd(path, d, &fd);
}

int pl_fd_path_fd(const char *path, const struct pl_devinfo **d, int *fdp)
{
	const char *rest;
	struct pl_file *f;
	int fd = pl_fd_named(path, getpid(), &rest);

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
