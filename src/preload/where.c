// SPDX-License-Identifier: MIT
/*
 * Where a path call's path leads (preload.h, "where.c"): one of ucmd's
 * devices (/dev/nvme0, /dev/ng0n1, /dev/nvme0n1: its placeholder), a file
 * of the generated tree (/sys's NVMe parts: the same path under the
 * root), or neither. One judgement for the preload's path interposers
 * (paths.c) and for ucmd-supervise --dirs (sv_stat.c, sv_sysfs.c), which
 * serves the same calls made with the program's own instruction: both
 * answer from the same tree, so both must find the same file.
 *
 * "//" and "/./" are folded; ".." is not (a path that climbs out of /dev
 * or /sys to come back is left to the kernel), except at the start of a
 * path relative to a directory of the tree.
 */
#undef _FILE_OFFSET_BITS

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "preload.h"

/* The parts of /sys that are wholly the tree's: the host's NVMe devices are not shown. */
static const char *const sys_own[] = {
	"/sys/class/nvme", "/sys/class/nvme-generic", "/sys/class/nvme-subsystem",
	"/sys/devices/virtual/nvme-subsystem",
};
/* Directories where the host's NVMe devices would be: without a tree, their NVMe names are denied. */
static const char *const sys_shared[] = {
	"/sys/block/", "/sys/class/block/", "/sys/dev/block/", "/sys/dev/char/",
};

/*
 * Does norm (under /sys) lead into the tree? What the tree has is the
 * tree's, except a directory that the host has too (/sys/block,
 * /sys/devices/pci0000:00, /sys/bus/pci/devices...): that stays the
 * host's, and a listing of it shows the tree's entries beside the host's
 * (dirs.c), as one directory. 1, 0, or -EACCES when this thread cannot
 * look into the tree (it dropped to another user).
 */
static int in_tree(const char *root, const char *norm)
{
	char path[PATH_MAX];
	struct stat st, hst;
	long r;

	/*
	 * The host's answer, not one ucmd-supervise would give for norm:
	 * from the trampoline, which its filter lets through (sv_filter.c)
	 */
	if (snprintf(path, sizeof(path), "%s%s", root, norm) >= (int)sizeof(path))
		return 0;
	r = pl_raw_syscall(__NR_newfstatat, AT_FDCWD, (long)path, (long)&st, AT_SYMLINK_NOFOLLOW,
			   0, 0);
	if (r)
		return r == -EACCES ? -EACCES : 0;
	return !S_ISDIR(st.st_mode) ||
	       pl_raw_syscall(__NR_newfstatat, AT_FDCWD, (long)norm, (long)&hst, 0, 0, 0) ||
	       !S_ISDIR(hst.st_mode);
}

/*
 * ucmd's, but this thread cannot reach what says so (the daemon's socket,
 * the tree: both in the exec's private directory, and it dropped to
 * another user): ucmd-supervise answers, as it answers the program's own
 * instruction (PL_WHERE_SV).
 */
static void unreachable(struct pl_where *w)
{
	snprintf(w->path, sizeof(w->path), "%s", w->norm);
	w->kind = PL_WHERE_SV;
}

/*
 * Under ucmd exec (UCMD_DAEMON set) an NVMe name is ucmd's or nothing: one
 * the daemon does not have, or any while the daemon cannot be reached,
 * leads to a path that does not exist (ENOENT), never to the host's
 * /dev/nvme* or its NVMe entries in /sys.
 */
static void deny(struct pl_where *w)
{
	if (!getenv(PL_ENV_DAEMON))
		return;
	snprintf(w->path, sizeof(w->path), "%s", PL_WHERE_DENIED);
	w->kind = PL_WHERE_SYS;
}

/*
 * Does norm, which names a ".." (where.c does not fold them: a link's
 * target is the kernel's to follow), stay in the tree's /sys once the
 * kernel walks root/norm? The tree lies in the exec's private directory,
 * beside the daemon's socket and log, and the tree's links lead deeper or
 * shallower than their names ("device/driver/../../../../../../sock" is the
 * socket): such a path must not answer with those files. The walk's own
 * answer, the file's name (an O_PATH open through the preload's judged
 * stub; ucmd-supervise's own): 1 in, 0 out, -errno (EACCES: out of this
 * thread's reach).
 */
static int dotdot_beneath(const char *root, const char *path, const char *norm)
{
	size_t n = strlen(norm), r = strlen(root);
	char proc[64], name[PATH_MAX];
	long fd, len;

	if (!strstr(norm, "/../") && (n < 3 || strcmp(norm + n - 3, "/..")))
		return 1;
	fd = pl_open_judged(AT_FDCWD, path, O_PATH | O_CLOEXEC, 0);
	if (fd < 0)
		return fd == -ENOENT ? 0 : (int)fd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%ld", fd);
	len = pl_raw_syscall(__NR_readlinkat, AT_FDCWD, (long)proc, (long)name, sizeof(name) - 1,
			     0, 0);
	pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	if (len <= 0)
		return 0;
	name[len] = '\0';
	return !strncmp(name, root, r) && !strncmp(name + r, "/sys", 4) &&
	       (name[r + 4] == '/' || !name[r + 4]);
}

/*
 * A directory of the tree (a dirfd the program opened through /sys or
 * /dev, its working directory) is known to the program by its /sys or /dev
 * name: base becomes that, and the ".." that lead up from it are taken
 * off (base is the kernel's name of the directory, without links), so
 * that "../" from /sys/devices/pci0000:00/0000:00:04.0 is the host's
 * /sys/devices/pci0000:00 as for the program (find and fts walk back up
 * so). False if base is not in the tree.
 */
static bool from_tree(char *base, const char **path)
{
	const char *root = pl_root();
	size_t n = root ? strlen(root) : 0;

	if (!n || strncmp(base, root, n) || (base[n] != '/' && base[n]))
		return false;
	memmove(base, base + n, strlen(base + n) + 1);
	if (strncmp(base, "/dev", 4) && strncmp(base, "/sys", 4))
		return false;	/* the root's own files */
	while (!strcmp(*path, "..") || !strncmp(*path, "../", 3)) {
		char *slash = strrchr(base, '/');

		if (slash == base)
			return false;	/* up to / itself: not ucmd's business */
		*slash = '\0';
		*path += (*path)[2] ? 3 : 2;
	}
	return true;
}

static void where_in(const char *base_in, const char *path, struct pl_where *w, bool *moved)
{
	char abs[PATH_MAX];
	const char *root;

	if (!path || !*path)
		return;
	if (path[0] == '/') {
		if (strncmp(path, "/dev/", 5) && strncmp(path, "/sys/", 5) &&
		    strncmp(path, "//", 2))
			return; /* the common case, decided without a system call */
		if (strlen(path) >= sizeof(abs))
			return;
		strcpy(abs, path);
	} else {
		char base[PATH_MAX];

		if (!base_in || strlen(base_in) >= sizeof(base))
			return;
		strcpy(base, base_in);
		if (strncmp(base, "/dev", 4) && strncmp(base, "/sys", 4)) {
			if (!from_tree(base, &path))
				return;
			*moved = true;
		}
		if (snprintf(abs, sizeof(abs), "%s/%s", base, path) >= (int)sizeof(abs))
			return;
	}
	pl_path_fold(w->norm, abs);

	if (!strncmp(w->norm, "/dev/", 5)) {
		const char *name = w->norm + 5;

		if (!pl_path_dev_name(name))
			return;
		w->dev = pl_devinfo(name);
		root = w->dev ? pl_root() : NULL;
		if (!root && errno == EACCES && getenv(PL_ENV_DAEMON)) {
			unreachable(w);
			return;
		}
		if (!root || snprintf(w->path, sizeof(w->path), "%s/dev/%s", root, name) >=
				     (int)sizeof(w->path)) {
			deny(w);
			return;
		}
		w->kind = PL_WHERE_DEV;
		return;
	}
	bool own = false;
	size_t shared = 0;

	if (strncmp(w->norm, "/sys/", 5))
		return;
	for (size_t i = 0; i < sizeof(sys_own) / sizeof(sys_own[0]); i++)
		own |= pl_path_under(w->norm, sys_own[i]);
	for (size_t i = 0; !own && i < sizeof(sys_shared) / sizeof(sys_shared[0]); i++)
		if (!strncmp(w->norm, sys_shared[i], strlen(sys_shared[i])))
			shared = strlen(sys_shared[i]);
	root = pl_root();
	if (!root && errno == EACCES && getenv(PL_ENV_DAEMON) &&
	    (own || (shared && (!strncmp(w->norm + shared, "nvme", 4) ||
				!strncmp(w->norm + shared, "ng", 2))))) {
		unreachable(w);
		return;
	}
	if (!root) {
		if (own || (shared && (!strncmp(w->norm + shared, "nvme", 4) ||
				       !strncmp(w->norm + shared, "ng", 2))))
			deny(w);
		return;
	}
	if (!own) {
		int in = in_tree(root, w->norm);

		if (in < 0) {
			unreachable(w);
			return;
		}
		if (!in)
			return;
	}
	if (snprintf(w->path, sizeof(w->path), "%s%s", root, w->norm) >= (int)sizeof(w->path))
		return;
	int in = dotdot_beneath(root, w->path, w->norm);

	if (in == -EACCES) {
		unreachable(w);
		return;
	}
	if (in <= 0) {
		deny(w);	/* out of the tree: nothing of ucmd's, nor the host's NVMe */
		return;
	}
	w->kind = PL_WHERE_SYS;
}

void pl_where(const char *base, const char *path, struct pl_where *w)
{
	bool moved = false;

	w->kind = PL_WHERE_NONE;
	w->host = false;
	w->through = false;
	where_in(base, path, w, &moved);
	if (moved && w->kind == PL_WHERE_NONE) {
		/* relative to a tree directory, yet the host's: by its absolute name */
		snprintf(w->path, sizeof(w->path), "%s", w->norm);
		w->kind = PL_WHERE_SYS;
		w->host = true;
	}
}

/*
 * An open of a file of the tree, before it is made: an attribute without
 * a store (0444) takes no write (EACCES for writing or creating, as kernfs
 * answers); a 0644 one, whose store Linux has, is opened for root as
 * attrw.c says (PL_OPEN_ATTRW: its current value taken, another EINVAL:
 * a block queue's tunables are a kernel queue's, which ucmd has not, and
 * a write that seemed taken would be a lie); the control files' action is
 * taken (ctlfiles.c: the rescans, a controller's or a function's reset, a
 * function's removal). A PCI function's resource0 is written again with
 * the controller's registers as they are now.
 */
/*
 * An attribute opened for writing: a 0644 one (a store on Linux) by root
 * (Linux's are root's), PL_OPEN_ATTRW, whose writes attrw.c judges; any
 * other EACCES (0444: no store; 0600 resource0, a link, another user).
 */
static int attr_open(const char *path)
{
	struct stat st;

	if (lstat(path, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0644 ||
	    geteuid() != 0)
		return -EACCES;
	return PL_OPEN_ATTRW;
}

int pl_where_open(const struct pl_where *w, int flags)
{
	const char *root, *base = strrchr(w->path, '/');
	bool writing = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
	size_t n;
	int ret;

	/* first: the tree's own build opens files that are no one's (pl_root's lock is held) */
	if (w->kind != PL_WHERE_SYS)
		return 0;
	root = pl_root();
	n = root ? strlen(root) : 0;
	if (!n || strncmp(w->path, root, n) || w->path[n] != '/' || !base)
		return 0;	/* the denied path: ENOENT from the kernel */
	base++;
	if (writing) {
		ret = pl_ctl_open(root, w->path, base);
		return ret == -EACCES ? attr_open(w->path) : ret;
	}
	if (!strcmp(base, "resource0")) {
		ret = pl_sysfs_regs(w->path);
		/* the daemon's refusal is the open's; a file not a function's is left alone */
		return ret == -ENOENT ? 0 : ret;
	}
	return 0;
}

