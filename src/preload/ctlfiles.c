// SPDX-License-Identifier: MIT
/*
 * The tree's write-only control files (0200, DEVICE_ATTR_WO), taken at
 * their open for writing (where.c), as the rescans always were: the open
 * is where the preload and ucmd-supervise see the file (its write goes to
 * the tree's file like any other), so any open for writing takes the
 * action, whatever is then written (docs/compat.md says where Linux reads
 * the value).
 *
 *   /sys/bus/pci/rescan, <function>/rescan   Linux's bus rescan (a
 *       function's rescans its bus, dev_rescan_store): the daemon's list
 *       read again, and the functions removed come back, each controller
 *       reset on the way as nvme_probe enables it anew
 *   nvmeX/rescan_controller   the namespaces again (nvme_sysfs_rescan)
 *   nvmeX/reset_controller    a controller reset (nvme_sysfs_reset):
 *       NVME_IOCTL_RESET's path in the daemon (CC.EN cycled, queues
 *       created again, what was in flight ended as Linux ends it)
 *   <function>/reset          a function reset, which with the NVMe driver
 *       bound is a controller reset (its reset_prepare/reset_done)
 *   <function>/remove         the function and its controller leave /dev
 *       and /sys for every process of the exec until a rescan
 *
 * A removal is a marker file <root>/.removed/nvmeX, shared by the
 * processes of the exec as the tree is; devinfo.c does not list a removed
 * controller's devices, and the tree loses them at its next sync.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ucmd/uapi/nvme_ioctl.h"
#include "ucmd/ucmd.h"

#include "preload.h"

/*
 * The markers' directory, by the root's name in the environment, not
 * pl_root(): devinfo.c asks under its lock, which pl_root()'s first build
 * of the tree would take again. No root yet: nothing was ever removed.
 */
static int removed_path(char *out, size_t len, const char *name)
{
	const char *root = getenv(PL_ENV_ROOT);
	int n;

	if (!root || !*root)
		return -ENOENT;
	n = snprintf(out, len, "%s/.removed%s%s", root, name ? "/" : "", name ? name : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool pl_ctl_removed(unsigned instance)
{
	char name[32], path[PATH_MAX];

	snprintf(name, sizeof(name), "nvme%u", instance);
	if (removed_path(path, sizeof(path), name))
		return false;
	/* from the trampoline: a look of our own, no notification (sv_filter.c) */
	return !pl_raw_syscall(__NR_faccessat, AT_FDCWD, (long)path, F_OK, 0, 0, 0);
}

bool pl_name_removed(const char *name)
{
	unsigned x;

	if (sscanf(name, "nvme%u", &x) != 1 && sscanf(name, "ng%u", &x) != 1)
		return false;
	return pl_ctl_removed(x);
}

/* The tree as the daemon's list says now (a sync racing ours is the one that counts). */
static int resync(const char *root)
{
	int ret = pl_devinfo_reload();

	return ret ? ret : pl_sysfs_sync(root);
}

/*
 * The controller a control file at path belongs to: the controller
 * directory's own (its "dev", 240:X) or the PCI function's (its nvme/).
 */
static const struct pl_devinfo *ctrl_at(const char *path, bool function)
{
	const char *slash = strrchr(path, '/');
	const struct pl_devinfo *c;
	char dev[PATH_MAX], buf[32], name[32];
	unsigned major, minor;
	ssize_t n;
	int fd;

	if (function)
		return pl_sysfs_regs_ctrl(path);
	if (!slash || snprintf(dev, sizeof(dev), "%.*s/dev", (int)(slash - path), path) >=
			      (int)sizeof(dev))
		return NULL;
	fd = open(dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	if (sscanf(buf, "%u:%u", &major, &minor) != 2 || major != PL_MAJOR_CTRL)
		return NULL;
	snprintf(name, sizeof(name), "nvme%u", minor);
	c = pl_devinfo(name);
	return c && c->kind == PL_DEV_CTRL ? c : NULL;
}

/* A removal's tree sync, left for after the open (take_remove); per thread, as opens are. */
static __thread bool sync_pending;

void pl_ctl_done(void)
{
	const char *root;

	if (!sync_pending)
		return;
	sync_pending = false;
	root = pl_root();
	if (root)
		pl_sysfs_sync(root);	/* a sync racing ours (-EWOULDBLOCK) is the one that counts */
}

static int take_reset(const char *root, const char *path, bool function)
{
	const struct pl_devinfo *c = ctrl_at(path, function);
	int ret;

	if (!c)
		return -ENODEV;	/* the controller went away under its file */
	ret = pl_dev_ioctl(c, NVME_IOCTL_RESET, NULL);
	if (ret)
		return ret;
	/* what a reset changes shows: the firmware activated (firmware_rev), the namespaces */
	return resync(root);
}

static int take_reset_controller(const char *root, const char *path)
{
	return take_reset(root, path, false);
}

static int take_reset_function(const char *root, const char *path)
{
	return take_reset(root, path, true);
}

static int take_rescan_controller(const char *root, const char *path)
{
	(void)path;
	return resync(root);
}

static int take_remove(const char *root, const char *path)
{
	const struct pl_devinfo *c = ctrl_at(path, true);
	char dir[PATH_MAX], marker[PATH_MAX];
	int fd;

	if (!c)
		return -ENODEV;
	if (removed_path(dir, sizeof(dir), NULL) || removed_path(marker, sizeof(marker), c->name))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	/*
	 * The tree loses the function once the open of its remove file is
	 * made (pl_ctl_done): the write that removes a function succeeds on
	 * Linux, and the file would be gone from under its own open here.
	 */
	sync_pending = true;
	(void)root;
	return pl_devinfo_reload();
}

/*
 * Linux's bus rescan: every function removed is found again and probed,
 * its controller enabled anew (a reset: CC.EN cycled, queues created
 * again); one that does not come back is left out of the tree, as a
 * probe that fails binds no driver.
 */
static int take_rescan_bus(const char *root, const char *path)
{
	char dir[PATH_MAX], marker[PATH_MAX];
	unsigned back[64], nr = 0;
	struct dirent *e;
	DIR *dp;

	(void)path;
	if (!removed_path(dir, sizeof(dir), NULL) && (dp = opendir(dir))) {
		while ((e = readdir(dp)) && nr < sizeof(back) / sizeof(back[0])) {
			unsigned x;
			char tail;

			if (sscanf(e->d_name, "nvme%u%c", &x, &tail) != 1 ||
			    snprintf(marker, sizeof(marker), "%s/%s", dir, e->d_name) >=
				    (int)sizeof(marker) || unlink(marker))
				continue;
			back[nr++] = x;
		}
		closedir(dp);
	}
	for (unsigned i = 0; i < nr; i++) {
		char name[32];
		const struct pl_devinfo *c;
		int ret;

		snprintf(name, sizeof(name), "nvme%u", back[i]);
		c = pl_devinfo(name);
		ret = c ? pl_dev_ioctl(c, NVME_IOCTL_RESET, NULL) : -errno;
		if (ret)
			pl_trace("%s: not probed again on the rescan: %s", name, strerror(-ret));
	}
	return resync(root);
}

static const struct {
	const char *name;
	int (*take)(const char *root, const char *path);
} ctls[] = {
	{ "rescan", take_rescan_bus },			/* the bus's and each function's */
	{ "rescan_controller", take_rescan_controller },
	{ "reset_controller", take_reset_controller },
	{ "reset", take_reset_function },
	{ "remove", take_remove },
};

int pl_ctl_open(const char *root, const char *path, const char *base)
{
	struct stat st;

	for (size_t i = 0; i < sizeof(ctls) / sizeof(ctls[0]); i++) {
		if (strcmp(base, ctls[i].name))
			continue;
		/* the tree's own control file, not a name that happens to match */
		if (lstat(path, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0200)
			return -EACCES;
		return ctls[i].take(root, path);
	}
	return -EACCES;
}
