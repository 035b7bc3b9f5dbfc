// SPDX-License-Identifier: MIT
/*
 * The looks and opens the preload cannot make for a thread that dropped to
 * another user (preload.h, pl_sv_call). The tree and the daemon's socket lie
 * in the exec's private (0700) directory: a root program that became user
 * 65534 can no longer search it, so the preload's own call on the tree's
 * path is EACCES where Linux's /dev and /sys answer. ucmd-supervise, which
 * runs every dynamic program of `ucmd exec` beside the preload (--dirs),
 * reaches the tree with the credentials the program started with and
 * answers a look for the calling thread's ids (sv_stat.c, sv_access.c) and
 * an open of the tree's file after Linux's permission check for them
 * (sv_sysfs.c): so the call is made again, as the program made it, from
 * libc's syscall instruction, which its filter sends it (only the
 * trampoline's calls go by, sv_filter.c).
 *
 * Without a supervisor (LD_PRELOAD by hand) that call would reach the
 * kernel unjudged, the host's /dev/nvme0 among what it could name: the
 * answer is then EACCES, what the preload's own call found. Whether the
 * supervisor is there is asked once per image: its PL_SV_IOC_FDINFO answers
 * ENOENT for a descriptor that is none of its devices, where a number no
 * one serves is EBADF (or the program's own file's answer, never ENOENT
 * for an ioctl this number's driver does not know).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/syscall.h>

#include "preload.h"
#include "svtab.h"

static bool supervised(void)
{
	/* 0 not asked, 1 there, 2 not: a forked child keeps its parent's filter and answer */
	static int known;
	struct pl_svfd q = { .fd = -1 };
	long r;

	if (__atomic_load_n(&known, __ATOMIC_RELAXED))
		return __atomic_load_n(&known, __ATOMIC_RELAXED) == 1;
	r = pl_raw_syscall(__NR_ioctl, PL_SV_TABLE_FD, PL_SV_IOC_FDINFO, (long)&q, 0, 0, 0);
	__atomic_store_n(&known, r == -ENOENT ? 1 : 2, __ATOMIC_RELAXED);
	return r == -ENOENT;
}

long pl_sv_call(long nr, long a0, long a1, long a2, long a3, long a4)
{
	static long (*next)(long, ...);
	long r;

	if (!supervised())
		return -EACCES;
	if (!next)
		next = pl_next("syscall");
	r = next(nr, a0, a1, a2, a3, a4, 0L);
	return r < 0 ? -errno : r;
}
