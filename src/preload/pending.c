/* SPDX-License-Identifier: MIT */
/* Until rw.c and sysfs.c are merged (issue 15 helpers): removed then. */
#undef _FILE_OFFSET_BITS
#include <errno.h>
#include <stdlib.h>

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
