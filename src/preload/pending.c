/* SPDX-License-Identifier: MIT */
/* Until rw.c and sysfs.c are merged (issue 15 helpers): removed then. */
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#include "preload/preload.h"

__attribute__((weak)) int pl_blk_ioctl(struct pl_file *f, int fd, unsigned long req, void *arg)
{
	(void)f, (void)fd, (void)req, (void)arg;
	return -2;
}

__attribute__((weak)) int pl_sysfs_build(const char *root)
{
	(void)root;
	return 0;
}

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

__attribute__((weak, visibility("default"))) int open(const char *path, int flags, ...)
{
	static int (*next)(const char *, int, ...);
	const struct pl_devinfo *d;
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	if (!strncmp(path, "/dev/", 5) && getenv(PL_ENV_DAEMON) && (d = pl_devinfo(path + 5)))
		return pl_dev_open(d, flags);
	if (!next)
		next = pl_next("open");
	return next(path, flags, mode);
}

#include <sys/stat.h>

__attribute__((weak, visibility("default"))) int stat64(const char *path, struct stat64 *st)
{
	static int (*next)(const char *, struct stat64 *);
	const struct pl_devinfo *d;
	char buf[4096];

	if (!next)
		next = pl_next("stat64");
	if (!strncmp(path, "/dev/", 5) && getenv(PL_ENV_DAEMON) && (d = pl_devinfo(path + 5)) &&
	    pl_root()) {
		int ret;

		snprintf(buf, sizeof(buf), "%s/dev/%s", pl_root(), d->name);
		close(open(path, O_RDONLY));
		ret = next(buf, st);
		if (!ret)
			pl_stat_fix(d, (struct stat *)(void *)st);
		return ret;
	}
	return next(path, st);
}

__attribute__((weak, visibility("default"))) int open64(const char *path, int flags, ...)
{
	static int (*next)(const char *, int, ...);
	const struct pl_devinfo *d;
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = va_arg(ap, mode_t);
	va_end(ap);
	if (!strncmp(path, "/dev/", 5) && getenv(PL_ENV_DAEMON) && (d = pl_devinfo(path + 5)))
		return pl_dev_open(d, flags);
	if (!next)
		next = pl_next("open64");
	return next(path, flags, mode);
}
