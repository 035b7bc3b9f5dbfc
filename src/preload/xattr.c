/* SPDX-License-Identifier: MIT */
/*
 * Extended attributes named by path: a path in /sys or one of ucmd's /dev
 * nodes reaches the tree or the placeholder, as stat does, so the answer is
 * a file system's own (no attribute: ENODATA) and never ENOENT for a path
 * that stat just found. `ls -l` asks lgetxattr("security.selinux") of every
 * name it lists and printed "No such file or directory" for each one in the
 * tree. The fd forms (fgetxattr...) need nothing: the fd is already the
 * tree's file or the placeholder.
 */
#include <limits.h>
#include <sys/types.h>
#include <sys/xattr.h>

#include "preload.h"

PL_EXPORT ssize_t getxattr(const char *path, const char *name, void *value, size_t size)
{
	ssize_t (*real)(const char *, const char *, void *, size_t) = pl_next("getxattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), name, value, size);
}

PL_EXPORT ssize_t lgetxattr(const char *path, const char *name, void *value, size_t size)
{
	ssize_t (*real)(const char *, const char *, void *, size_t) = pl_next("lgetxattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), name, value, size);
}

PL_EXPORT ssize_t listxattr(const char *path, char *list, size_t size)
{
	ssize_t (*real)(const char *, char *, size_t) = pl_next("listxattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), list, size);
}

PL_EXPORT ssize_t llistxattr(const char *path, char *list, size_t size)
{
	ssize_t (*real)(const char *, char *, size_t) = pl_next("llistxattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), list, size);
}

PL_EXPORT int setxattr(const char *path, const char *name, const void *value, size_t size,
		       int flags)
{
	int (*real)(const char *, const char *, const void *, size_t, int) = pl_next("setxattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), name, value, size, flags);
}

PL_EXPORT int lsetxattr(const char *path, const char *name, const void *value, size_t size,
			int flags)
{
	int (*real)(const char *, const char *, const void *, size_t, int) = pl_next("lsetxattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), name, value, size, flags);
}

PL_EXPORT int removexattr(const char *path, const char *name)
{
	int (*real)(const char *, const char *) = pl_next("removexattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), name);
}

PL_EXPORT int lremovexattr(const char *path, const char *name)
{
	int (*real)(const char *, const char *) = pl_next("lremovexattr");
	char buf[PATH_MAX];

	return real(pl_path_for(path, buf), name);
}
