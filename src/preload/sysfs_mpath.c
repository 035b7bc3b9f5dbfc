// SPDX-License-Identifier: MIT
/*
 * The generated sysfs tree (sysfs.c) rearranged as Linux's native
 * multipath shows controllers of one NVM subsystem that ucmd's host joined
 * under one head (a controller directory of several controllers): one
 * nvme-subsysX holding links to every controller and the head's disks
 * (nvmeXnY, ngXnY, X the first controller's instance), and in each
 * controller a hidden path nvmeXcCnY with its ana_state and ana_grpid, so
 * that libnvme (nvme list-subsys, show-topology) sees the paths.
 *
 *   sys/devices/virtual/nvme-subsystem/nvme-subsysX/{nvmeC -> controller, nvmeXnY/, ngXnY/}
 *   sys/devices/<PCI function>/nvme/nvmeC/nvmeXcCnY/{ana_state, ana_grpid, nsid, device}
 *
 * Run after sysfs.c built the single-path layout, under its lock.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nvme/types.h>

#include "preload.h"

#define MAX_CTRLS 64

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(p);
	else
		unlink(p);
	return 0;
}

static void rm_rf(const char *path)
{
	nftw(path, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

struct mp_ctrl {
	const struct pl_devinfo *d;
	char nqn[NVME_NQN_LENGTH + 1];
	bool multi;		/* CMIC: more controllers in its subsystem */
	int lead;		/* index of its group's first controller, -1: none */
};

/* The ANA state of nsid through controller c, as Linux's ana_state names it. */
static const char *ana_state(const struct pl_devinfo *c, unsigned nsid, unsigned *grpid)
{
	static uint8_t buf[4096];
	struct nvme_passthru_cmd64 cmd = {
		.opcode = nvme_admin_get_log_page, .nsid = 0xffffffff,
		.addr = (uint64_t)(uintptr_t)buf, .data_len = sizeof(buf),
		.cdw10 = NVME_LOG_LID_ANA | ((sizeof(buf) / 4 - 1) << 16),
	};
	size_t off = sizeof(struct nvme_ana_log);
	unsigned ngrps;

	*grpid = 0;
	memset(buf, 0, sizeof(buf));
	if (pl_admin(c, &cmd))
		return "optimized";	/* no ANA reporting: Linux's default */
	ngrps = le16toh(((struct nvme_ana_log *)(void *)buf)->ngrps);
	for (unsigned g = 0; g < ngrps && off + sizeof(struct nvme_ana_group_desc) <= sizeof(buf);
	     g++) {
		struct nvme_ana_group_desc *d = (void *)(buf + off);
		uint32_t nn = le32toh(d->nnsids);

		off += sizeof(*d);
		for (uint32_t k = 0; k < nn && off + 4 <= sizeof(buf); k++, off += 4) {
			uint32_t id;

			memcpy(&id, buf + off, 4);
			if (le32toh(id) != nsid)
				continue;
			*grpid = le32toh(d->grpid);
			switch (d->state & 0xf) {
			case NVME_ANA_STATE_OPTIMIZED: return "optimized";
			case NVME_ANA_STATE_NONOPTIMIZED: return "non-optimized";
			case NVME_ANA_STATE_INACCESSIBLE: return "inaccessible";
			case NVME_ANA_STATE_PERSISTENT_LOSS: return "persistent-loss";
			case NVME_ANA_STATE_CHANGE: return "change";
			default: return "invalid";
			}
		}
	}
	return "optimized";
}

/* A head's disk (nvmeXnY or ngXnY) moved from controller X into the subsystem. */
static int move_head(const char *root, const struct pl_devinfo *d, unsigned x)
{
	char from[PATH_MAX], to[PATH_MAX], l[PATH_MAX], t[PATH_MAX];
	bool blk = d->kind == PL_DEV_NS_BLK;
	struct stat st;
	int ret;

	ret = pl_sysfs_ctrl_dev(t, sizeof(t), x);
	ret = ret ?: pl_sysfs_path(from, "%s/sys/devices/%s/%s", root, t, d->name);
	ret = ret ?: pl_sysfs_path(to, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u/%s", root, x,
			   d->name);
	if (ret)
		return ret;
	if (!lstat(from, &st)) {
		rm_rf(to);	/* a rebuild: the tree made it again where it was */
		if (rename(from, to))
			return -errno;
	}
	/* its parent is the subsystem now */
	ret = pl_sysfs_path(l, "%s/device", to);
	ret = ret ?: pl_sysfs_path(t, "../../nvme-subsys%u", x);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(t, "devices/virtual/nvme-subsystem/nvme-subsys%u/%s", x,
				   d->name);
	if (ret)
		return ret;
	if (blk) {
		char rel[PATH_MAX];

		ret = pl_sysfs_path(rel, "../../%s", t);
		ret = ret ?: pl_sysfs_path(l, "%s/sys/class/block/%s", root, d->name);
		ret = ret ?: pl_sysfs_link(rel, l);
		ret = ret ?: pl_sysfs_path(l, "%s/sys/dev/block/%u:%u", root, d->major, d->minor);
		ret = ret ?: pl_sysfs_link(rel, l);
		ret = ret ?: pl_sysfs_path(rel, "../%s", t);
		ret = ret ?: pl_sysfs_path(l, "%s/sys/block/%s", root, d->name);
		return ret ?: pl_sysfs_link(rel, l);
	}
	char rel[PATH_MAX];

	ret = pl_sysfs_path(rel, "../../%s", t);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/class/nvme-generic/%s", root, d->name);
	ret = ret ?: pl_sysfs_link(rel, l);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/dev/char/%u:%u", root, d->major, d->minor);
	return ret ?: pl_sysfs_link(rel, l);
}

/* Controller c (not its group's first, x) joins nvme-subsysX: its own subsystem goes. */
static int join_subsys(const char *root, unsigned c, unsigned x)
{
	static const char *const files[] = { "subsysnqn", "model", "serial", "firmware_rev",
					     "subsystype", "iopolicy" };
	char dir[PATH_MAX], p[PATH_MAX], t[PATH_MAX], dev[128];
	int ret;

	if (pl_sysfs_path(dir, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u", root, c))
		return -ENAMETOOLONG;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (!pl_sysfs_path(p, "%s/%s", dir, files[i]))
			unlink(p);
	if (!pl_sysfs_path(p, "%s/nvme%u", dir, c))
		unlink(p);
	rmdir(dir);
	if (!pl_sysfs_path(p, "%s/sys/class/nvme-subsystem/nvme-subsys%u", root, c))
		unlink(p);
	ret = pl_sysfs_ctrl_dev(dev, sizeof(dev), c);
	ret = ret ?: pl_sysfs_path(t, "../../../%s", dev);
	ret = ret ?: pl_sysfs_path(p, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u/nvme%u", root,
			   x, c);
	return ret ?: pl_sysfs_link(t, p);
}

/*
 * Is nsid attached to controller c (in its active namespace list, CNS 02h)?
 * Linux makes a path only through a controller that reports the namespace.
 */
static bool ns_attached(const struct pl_devinfo *c, unsigned nsid)
{
	static uint32_t list[1024];

	if (!nsid || pl_identify(c, nsid - 1, NVME_IDENTIFY_CNS_NS_ACTIVE_LIST, NVME_CSI_NVM, list))
		return false;
	return le32toh(list[0]) == nsid;
}

/* Path nvmeXcCnY of head nsid y through controller c. */
static int add_path(const char *root, const struct pl_devinfo *c, unsigned x, unsigned y)
{
	char dir[PATH_MAX], l[PATH_MAX], t[64], dev[128];
	unsigned cc = c->instance, grpid;
	const char *state = ana_state(c, y, &grpid);
	int ret;

	ret = pl_sysfs_ctrl_dev(dev, sizeof(dev), cc);
	ret = ret ?: pl_sysfs_path(dir, "%s/sys/devices/%s/nvme%uc%un%u", root, dev, x, cc, y);
	if (ret)
		return ret;
	ret = pl_sysfs_mkdir(dir);
	ret = ret ?: pl_sysfs_put(dir, "ana_state", "%s", state);
	ret = ret ?: pl_sysfs_put(dir, "ana_grpid", "%u", grpid);
	ret = ret ?: pl_sysfs_put(dir, "nsid", "%u", y);
	ret = ret ?: pl_sysfs_put(dir, "hidden", "1");
	ret = ret ?: pl_sysfs_path(l, "%s/device", dir);
	snprintf(t, sizeof(t), "../../nvme%u", cc);
	return ret ?: pl_sysfs_link(t, l);
}

/* Is controller x in the list (not removed)? */
static bool ctrl_listed(const struct mp_ctrl *c, unsigned nc, unsigned x)
{
	for (unsigned i = 0; i < nc; i++)
		if (c[i].d->instance == x)
			return true;
	return false;
}

/*
 * The subsystem's name when its first controller x, the one the head is
 * named after, was removed: the head's namespaces still listed (others of
 * the subsystem remain) whose Identify Controller, answered through the
 * head, gives the group's NQN. x, or -1: the group's own first controller.
 */
static int removed_first(const struct mp_ctrl *c, unsigned nc, const char *nqn,
			 const struct pl_devinfo **v, unsigned n)
{
	static struct nvme_id_ctrl id;

	for (unsigned k = 0; k < n; k++) {
		unsigned o = v[k]->instance;

		if (v[k]->kind == PL_DEV_CTRL || ctrl_listed(c, nc, o) ||
		    pl_ctl_removed_group(o) != (int)o)
			continue;
		if (!pl_identify(v[k], 0, NVME_IDENTIFY_CNS_CTRL, NVME_CSI_NVM, &id) &&
		    !strncmp(id.subnqn, nqn, NVME_NQN_LENGTH))
			return (int)o;
	}
	return -1;
}

/*
 * nvme-subsysX for a group whose first controller x is removed: the
 * subsystem keeps its name (Linux's subsystem outlives a controller), so
 * controller c's own, as sysfs.c made it, becomes it (once: a later sync
 * finds it made and c joins it as the others do).
 */
static int keep_subsys(const char *root, unsigned c, unsigned x)
{
	char from[PATH_MAX], to[PATH_MAX], l[PATH_MAX], t[PATH_MAX];
	struct stat st;
	int ret;

	ret = pl_sysfs_path(to, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u", root, x);
	ret = ret ?: pl_sysfs_path(from, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u", root, c);
	if (ret)
		return ret;
	if (!lstat(to, &st))
		return 0;
	if (rename(from, to))
		return -errno;
	if (!pl_sysfs_path(l, "%s/sys/class/nvme-subsystem/nvme-subsys%u", root, c))
		unlink(l);
	ret = pl_sysfs_path(t, "../../devices/virtual/nvme-subsystem/nvme-subsys%u", x);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/class/nvme-subsystem/nvme-subsys%u", root, x);
	return ret ?: pl_sysfs_link(t, l);
}

/*
 * A head's disk whose controller x is removed: made as sysfs.c makes it
 * (through controller c, under x's function), moved into the subsystem,
 * and what of the removed function that made again goes.
 */
static int orphan_head(const char *root, const struct pl_devinfo *c, const struct pl_devinfo *d,
		       unsigned x)
{
	char dev[128], p[PATH_MAX];
	int ret = pl_sysfs_ns(root, c, d);

	ret = ret ?: move_head(root, d, x);
	if (ret || pl_sysfs_ctrl_dev(dev, sizeof(dev), x))
		return ret;
	/* <bus>/<addr>/nvme/nvmeX: each directory, emptied, up to the function's */
	for (int up = 0; up < 3; up++) {
		char *slash;

		if (pl_sysfs_path(p, "%s/sys/devices/%s", root, dev) || rmdir(p))
			break;
		slash = strrchr(dev, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return 0;
}

/* nvme-subsysX's links to controllers no longer listed (removed): gone, as Linux unlinks them */
static void drop_gone_links(const char *root, const struct mp_ctrl *c, unsigned nc, unsigned x)
{
	char dir[PATH_MAX], p[PATH_MAX];
	struct dirent *e;
	DIR *dp;

	if (pl_sysfs_path(dir, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u", root, x) ||
	    !(dp = opendir(dir)))
		return;
	while ((e = readdir(dp))) {
		unsigned k;
		char tail;

		if (sscanf(e->d_name, "nvme%u%c", &k, &tail) == 1 && !ctrl_listed(c, nc, k) &&
		    !pl_sysfs_path(p, "%s/%s", dir, e->d_name))
			unlink(p);
	}
	closedir(dp);
}

int pl_sysfs_mpath(const char *root, const struct pl_devinfo **v, unsigned n)
{
	static struct mp_ctrl c[MAX_CTRLS];
	static struct nvme_id_ctrl id;
	unsigned removed[MAX_CTRLS], nr = pl_ctl_removed_list(removed, MAX_CTRLS);
	unsigned nc = 0;
	int ret = 0;

	for (unsigned i = 0; i < n && nc < MAX_CTRLS; i++) {
		if (v[i]->kind != PL_DEV_CTRL)
			continue;
		memset(&c[nc], 0, sizeof(c[nc]));
		c[nc].d = v[i];
		c[nc].lead = -1;
		if (!pl_identify(v[i], 0, NVME_IDENTIFY_CNS_CTRL, NVME_CSI_NVM, &id)) {
			memcpy(c[nc].nqn, id.subnqn, NVME_NQN_LENGTH);
			c[nc].multi = id.cmic & NVME_CTRL_CMIC_MULTI_CTRL;
		}
		nc++;
	}
	/* a group: controllers with CMIC's multi-controller bit and one subsystem NQN */
	for (unsigned i = 0; i < nc; i++) {
		if (!c[i].multi || !c[i].nqn[0] || c[i].lead >= 0)
			continue;
		for (unsigned j = i + 1; j < nc; j++)
			if (c[j].multi && c[j].lead < 0 && !strcmp(c[i].nqn, c[j].nqn))
				c[j].lead = (int)i;
		c[i].lead = (int)i;
	}
	for (unsigned i = 0; i < nc && !ret; i++) {
		unsigned x = c[i].d->instance, members = 0;
		int first;

		if (c[i].lead != (int)i)
			continue;
		/* the head and its subsystem are named after the first controller, removed or not */
		first = removed_first(c, nc, c[i].nqn, v, n);
		if (first >= 0)
			x = (unsigned)first;
		for (unsigned j = 0; j < nc; j++)
			members += c[j].lead == (int)i;
		/* the removed ones count: the head stays a head over the paths left (Linux's) */
		for (unsigned r = 0; r < nr; r++)
			members += pl_ctl_removed_group(removed[r]) == (int)x;
		if (members < 2)
			continue;	/* one controller: the layout stays */
		if (first >= 0)
			ret = keep_subsys(root, c[i].d->instance, x);
		drop_gone_links(root, c, nc, x);
		for (unsigned j = 0; j < nc && !ret; j++)
			if (c[j].lead == (int)i && c[j].d->instance != x)
				ret = join_subsys(root, c[j].d->instance, x);
		for (unsigned k = 0; k < n && !ret; k++) {
			if (v[k]->kind == PL_DEV_CTRL || v[k]->instance != x)
				continue;
			ret = first >= 0 ? orphan_head(root, c[i].d, v[k], x) : move_head(root, v[k], x);
			if (ret || v[k]->kind != PL_DEV_NS_BLK)
				continue;
			for (unsigned j = 0; j < nc && !ret; j++)
				if (c[j].lead == (int)i && ns_attached(c[j].d, v[k]->nsid))
					ret = add_path(root, c[j].d, x, v[k]->nsid);
		}
	}
	return ret;
}
