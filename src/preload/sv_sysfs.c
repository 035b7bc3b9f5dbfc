/* SPDX-License-Identifier: MIT */
/*
 * Opens of what the preload's tree has, by a static program (every open)
 * or a dynamic one's own instruction (--dirs), and the daemon's device
 * list as it changes.
 *
 * A path into the tree (where.c, the preload's judgement on the preload's
 * tree) is opened as the preload opens it through libc: the tree's file,
 * read-only but the control files (EACCES for writing, as kernfs; a 0644
 * attribute opened for writing by root: sv_attrw.c), a control file's
 * action taken (a rescan, a reset, a removal) and resource0 written again
 * with the registers as they are (pl_where_open, the same code); sv_open.c
 * then opens that file as any
 * other (never continued). A name of the tree's directories reached from a
 * directory of the tree that is the host's after all (its ".." up to a
 * directory the two share) is opened by its host name.
 *
 * A /dev name the device list we started with does not have may be a
 * namespace attached since (nvme attach-ns under exec): the daemon's list
 * is read again before the answer is ENOENT, as the preload's lookups do,
 * and the new names get placeholders.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "preload/preload.h"
#include "preload/sv.h"
#include "preload/sv_openat2.h"

/* What an open with flags asks of the file: may_open's MAY_READ and MAY_WRITE, as access's bits. */
static int open_access(int flags)
{
	int acc = 0;

	if (flags & O_PATH)
		return 0;	/* nothing of the file itself */
	if ((flags & O_ACCMODE) != O_WRONLY)
		acc |= R_OK;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		acc |= W_OK;
	return acc;
}

/*
 * The tree lies in the exec's private directory, beside the daemon's socket
 * and log: a path that climbs out of /sys through the tree's links and
 * ".." ("device/driver/0000:00:04.0/../../../../../../ucmdd.log": where.c
 * does not fold "..", and a link's target is the kernel's to follow) must
 * not reach them with our credentials, so the kernel resolves it beneath
 * <root>/sys (RESOLVE_BENEATH), as the program's own walk of /sys would
 * never leave /sys for ucmd's files.
 */
int sv_tree_fd(const char *path, bool follow)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS,
	};
	const char *root = pl_root();
	char sys[PATH_MAX];
	size_t n;
	int fd, dfd;

	if (!root || snprintf(sys, sizeof(sys), "%s/sys", root) >= (int)sizeof(sys))
		return -ENOENT;
	n = strlen(sys);
	if (strncmp(path, sys, n) || path[n] != '/')
		return -ENOENT;	/* not under the tree's /sys (the denied path among them) */
	dfd = open(sys, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	/* a rename anywhere racing the links' ".." is no answer (sv_openat2.c) */
	fd = sv_openat2(dfd, path + n + 1, &how);
	close(dfd);
	return fd == -EXDEV ? -ENOENT : fd;
}

int sv_sysfs_where(struct sv *s, const char *base, const char *path, int flags, char *out,
		   size_t len, pid_t as_tid, int *hold)
{
	static struct pl_where w;	/* one call at a time: the loop's */
	int ret, fd;

	if (path[0] == '/' && strncmp(path, "/sys/", 5) && strncmp(path, "//", 2))
		return 0;	/* the common case: no look at the tree */
	pl_where(base, path, &w);
	if (w.kind == PL_WHERE_SV)
		return -EACCES;	/* our own tree out of our reach: nothing to open */
	if (w.kind != PL_WHERE_SYS)
		return 0;	/* /dev's are sv_open.c's own */
	if (as_tid && !w.host) {
		/*
		 * before the open's side effects (a rescan): what the thread may
		 * do with the file, as Linux checks it (its file system ids and
		 * effective capabilities); kernfs creates no file
		 */
		fd = sv_tree_fd(w.path, !(flags & O_NOFOLLOW));
		ret = fd < 0 ? fd : sv_access_as(as_tid, fd, "", open_access(flags), AT_EACCESS);
		if (fd >= 0)
			close(fd);
		if (ret == -ENOENT && (flags & O_CREAT))
			ret = -EACCES;
		if (ret) {
			sv_trace(s, "%s: for the thread's ids: %s", path, strerror(-ret));
			return ret;
		}
	}
	/*
	 * a control file for writing: taken at the open, whatever is then
	 * written, as before the preload took it at the write (ctlfiles.c): a
	 * static shell's `echo 1 >` moves the descriptor to 1, below the
	 * numbers whose writes we see (sv_attrw.c), and would take nothing
	 */
	if (((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))) && !w.host &&
	    pl_ctl_file(w.path))
		ret = pl_ctl_take(w.path);
	else
		ret = pl_where_open(&w, flags);
	/*
	 * a 0644 attribute for writing: opened at one of our numbers, whose
	 * writes we see (sv_attrw.c); for a thread whose ids changed, refused
	 * (the open for writing is root's, judged on our ids by where.c)
	 */
	if (ret == PL_OPEN_ATTRW) {
		if (as_tid || w.host)
			return -EACCES;
		if (strlen(w.path) >= len)
			return -ENAMETOOLONG;
		strcpy(out, w.path);
		return 3;
	}
	/*
	 * a rescan's sync found the tree's lock held: a process of the program
	 * is bringing the tree up to date at this moment (we never wait for it,
	 * sv_pl.c); the rescan is that one
	 */
	if (ret == -EWOULDBLOCK)
		ret = 0;
	if (ret) {
		sv_trace(s, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (as_tid && !w.host) {
		/* after the open's own work (resource0 written again): that file, beneath /sys */
		fd = sv_tree_fd(w.path, !(flags & O_NOFOLLOW));
		if (fd < 0)
			return fd;
		if (!(flags & O_PATH)) {
			struct stat st;

			if (fstat(fd, &st) || S_ISLNK(st.st_mode)) {
				close(fd);
				return -ELOOP;	/* O_NOFOLLOW on a link, as open answers */
			}
		}
		*hold = fd;
		snprintf(out, len, "/proc/%d/fd/%d", (int)getpid(), fd);
		return 1;
	}
	if (strlen(w.path) >= len)
		return -ENAMETOOLONG;
	strcpy(out, w.path);
	return w.host ? 2 : 1;
}

bool sv_names_refresh(struct sv *s, const char *name)
{
	/*
	 * One list for every process served (a forked child's view shares the
	 * program's array): kept in the program's, the caller's count brought
	 * up to it; asked on the caller's connection, or the program's while
	 * the caller has none yet
	 */
	struct sv *r = s->root ? s->root : s;
	const char *fresh[SV_MAX_NAMES];
	int n = ucmd_device_names(s->e ? s->e : r->e, fresh, SV_MAX_NAMES);
	bool found = false, ok = true;

	if (n < 0)
		return false;
	if (n > (int)SV_MAX_NAMES)
		n = (int)SV_MAX_NAMES;
	for (int i = 0; i < n && ok; i++) {
		bool have = false;
		char ph[PATH_MAX];
		char *copy;

		for (int k = 0; k < r->nr_names && !have; k++)
			have = !strcmp(r->names[k], fresh[i]);
		found |= !strcmp(fresh[i], name);
		if (have || r->nr_names == (int)SV_MAX_NAMES)
			continue;
		/* kept for good: a name's index is its minor (sv_dev.c), its placeholder removed at exit */
		copy = strdup(fresh[i]);
		snprintf(ph, sizeof(ph), "%s/%s", r->phdir, copy ? copy : "");
		if (!copy || (mkdir(ph, 0500) && errno != EEXIST)) {
			free(copy);
			ok = false;
			break;
		}
		r->names[r->nr_names++] = copy;
		sv_trace(s, "%s: a new device of the daemon's", copy);
	}
	s->nr_names = r->nr_names;
	return ok && found;
}
