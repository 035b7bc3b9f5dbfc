/* SPDX-License-Identifier: MIT */
/*
 * A scoped openat2 (RESOLVE_BENEATH, RESOLVE_IN_ROOT) that a rename or a
 * mount elsewhere on the machine cannot fail.
 *
 * fs/namei.c's handle_dots refuses a ".." step of a scoped lookup with
 * EAGAIN whenever the system-wide rename or mount sequence moved since the
 * lookup began: it cannot then prove the ".." stayed beneath the root. Any
 * rename anywhere counts (another exec's tree being synced, a compiler's
 * atomic write), and the tree's links ("class/nvme/nvme0" ->
 * "../../devices/...") all climb by "..", so a stat or access of
 * /sys/class/nvme/nvme0/model on a busy machine came back EAGAIN, an answer
 * Linux never gives for it (openat2(2): "the caller may choose to retry").
 * The lookup is made again, from the start, until the kernel answers
 * otherwise. It ends: each EAGAIN means a rename or mount completed during
 * a walk of a few microseconds; a walk that ran between two of them is
 * answered. Only a machine renaming without pause could keep one walk
 * going, and then the answer is late, never wrong.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/sv_openat2.h"

int sv_openat2(int dfd, const char *path, const struct open_how *how)
{
	long fd;

	do
		fd = syscall(SYS_openat2, dfd, path, how, sizeof(*how));
	while (fd < 0 && errno == EAGAIN);
	return fd < 0 ? -errno : (int)fd;
}
