/* SPDX-License-Identifier: MIT */
/*
 * access, faccessat and faccessat2 of a file of the tree (a device's
 * placeholder, a sysfs attribute: sv_stat.c), answered for the thread that
 * asks, as its ids are at the call: a program that started as root and
 * dropped to a user (setuid, a service) is refused a 0600 root node as
 * Linux refuses it, however the supervisor itself was started.
 *
 * The answer is Linux's permission check (fs/namei.c's generic_permission,
 * fs/open.c's do_faccessat) on what stat of the path shows: the owner's,
 * the group's or the others' bits, whichever class the thread is in (its
 * real ids, or with AT_EACCESS its file system ids; its supplementary
 * groups), then CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE (an executable
 * bit must be set for X_OK on a file that is not a directory). Capabilities
 * count as access(2) counts them: without AT_EACCESS, a thread whose real
 * uid is 0 has its permitted set, any other none; with it, its effective
 * set. A thread in another user namespace than ours has none over our files
 * (its uids are as we see them). The directories leading to the tree's file
 * are not searched as the thread: the tree's own are 0755, as /dev and /sys
 * are, which every user may search, and above them lies the exec's private
 * 0700 directory, which stands for nothing of Linux's. sv_sysfs.c makes
 * the same check before it opens a file of the tree for such a thread.
 * A program's access of a /sys file of the tree (sv_access_shown: the
 * supervisor's answer and the preload's) is checked on the owner its stat
 * shows, root's (pl_stat_tree), as Linux's sysfs answers; the open's check
 * stays on the file as it is on disk (the exec user's), as before.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "preload/sv.h"
#include "preload/sv_ids.h"

#define ACC_CAP_DAC_OVERRIDE (1ull << 1)
#define ACC_CAP_DAC_READ_SEARCH (1ull << 2)

static bool same_userns(pid_t tid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)tid);
	return !stat(path, &a) && !stat("/proc/self/ns/user", &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

int sv_access_check(const struct stat *st, int mode, unsigned uid, unsigned gid,
		    const unsigned *groups, int ngroups, unsigned long long caps)
{
	unsigned bits;
	int mask = mode & (R_OK | W_OK | X_OK);
	bool in = gid == st->st_gid;

	if (!mask)
		return 0;	/* F_OK: the file is there */
	for (int i = 0; !in && i < ngroups; i++)
		in = groups[i] == st->st_gid;
	if (uid == st->st_uid)
		bits = (st->st_mode >> 6) & 7;
	else if (in)
		bits = (st->st_mode >> 3) & 7;
	else
		bits = st->st_mode & 7;
	/* R_OK, W_OK and X_OK are the bits' own values (4, 2, 1) */
	if (!(mask & ~(int)bits))
		return 0;
	if (S_ISDIR(st->st_mode)) {
		if (!(mask & W_OK) && (caps & ACC_CAP_DAC_READ_SEARCH))
			return 0;
		return caps & ACC_CAP_DAC_OVERRIDE ? 0 : -EACCES;
	}
	if (mask == R_OK && (caps & ACC_CAP_DAC_READ_SEARCH))
		return 0;
	if ((!(mask & X_OK) || (st->st_mode & 0111)) && (caps & ACC_CAP_DAC_OVERRIDE))
		return 0;
	return -EACCES;
}

/*
 * The check for thread tid on st (the file's stat): its ids as they are
 * now, do_faccessat's flags already checked
 */
static int access_on(pid_t tid, const struct stat *st, int mode, int flags)
{
	struct sv_ids id;
	unsigned long long caps;
	bool eaccess = flags & AT_EACCESS;
	int ret;

	if (!(mode & (R_OK | W_OK | X_OK)))
		return 0;
	ret = sv_ids_of(tid, &id);
	if (ret)
		return ret;
	/* a group list longer than we keep decides nothing: refused, never granted */
	if (id.ngroups > SV_IDS_GROUPS_MAX)
		return -EACCES;
	if (eaccess)
		caps = id.cap_eff;
	else
		caps = id.uid[0] == 0 ? id.cap_prm : 0;
	if (!same_userns(tid))
		caps = 0;
	return sv_access_check(st, mode, eaccess ? id.uid[3] : id.uid[0],
			       eaccess ? id.gid[3] : id.gid[0], id.groups, id.ngroups, caps);
}

static int access_at(pid_t tid, int dirfd, const char *p, int mode, int flags, bool shown)
{
	struct stat st;

	/* do_faccessat's own checks, in its order */
	if (mode & ~(R_OK | W_OK | X_OK))
		return -EINVAL;
	if (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (fstatat(dirfd, p, &st, (flags & AT_SYMLINK_NOFOLLOW) | (p[0] ? 0 : AT_EMPTY_PATH)))
		return -errno;
	/* the owner a program sees (pl_stat_tree's: Linux's root), not the exec user's on disk */
	if (shown) {
		st.st_uid = 0;
		st.st_gid = 0;
	}
	return access_on(tid, &st, mode, flags);
}

int sv_access_as(pid_t tid, int dirfd, const char *p, int mode, int flags)
{
	return access_at(tid, dirfd, p, mode, flags, false);
}

int sv_access_shown(pid_t tid, int dirfd, const char *p, int mode, int flags)
{
	return access_at(tid, dirfd, p, mode, flags, true);
}
