/* SPDX-License-Identifier: MIT */
#ifndef UCMD_PRELOAD_SV_OPENAT2_H
#define UCMD_PRELOAD_SV_OPENAT2_H

#include <linux/openat2.h>

/*
 * openat2(dfd, path, how) for a scoped lookup (RESOLVE_BENEATH,
 * RESOLVE_IN_ROOT), made again while the kernel answers EAGAIN: the fd, or
 * -errno (never -EAGAIN)
 */
int sv_openat2(int dfd, const char *path, const struct open_how *how);

#endif
