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
