/* SPDX-License-Identifier: MIT */
/*
 * Which devices the daemon has, what kind each is, its device numbers and
 * its geometry. Entries are never freed or moved (struct pl_file points at
 * them from any thread): a reload updates them in place and appends new
 * names; a device the daemon no longer has is marked gone and no longer
 * found by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <nvme/types.h>

#include "client/client.h"
#include "preload/preload.h"
#include "preload/blkdev.h"

#define PL_MAX_DEVS 256u

struct dev_slot {
	struct pl_devinfo info;
	bool gone;
};

static pthread_mutex_t devs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dev_slot devs[PL_MAX_DEVS];
static unsigned nr_devs;
static bool loaded;

static bool classify(const char *name, struct pl_devinfo *d)
{
	unsigned x, y;
	char c;

	memset(d, 0, sizeof(*d));
	if (strlen(name) >= sizeof(d->name))
		return false;
	if (sscanf(name, "ng%un%u%c", &x, &y, &c) == 2)
		d->kind = PL_DEV_NS_CHR;
	else if (sscanf(name, "nvme%un%u%c", &x, &y, &c) == 2)
		d->kind = PL_DEV_NS_BLK;
	else if (sscanf(name, "nvme%u%c", &x, &c) == 1)
		d->kind = PL_DEV_CTRL, y = 0;
	else
		return false;	/* "null" and the like: not an NVMe device */
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->instance = x;
	d->nsid = y;
	return true;
}

/*
 * The daemon opens the device as this process under a number nobody else
 * can hold meanwhile: one of our own descriptors (an eventfd), so the
 * program's device numbers, which the daemon mirrors, are never touched.
 */
int pl_private_open(struct ucmd_engine *e, const char *name, int flags)
{
	int fd = eventfd(0, EFD_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = dc_open_fixed(e, name, flags, fd);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	return fd;
}

void pl_private_close(struct ucmd_engine *e, int fd)
{
	ucmd_close(e, fd);
	close(fd);
}

int pl_dev_ioctl(const struct pl_devinfo *d, unsigned long op, void *arg)
{
	struct ucmd_engine *e = pl_engine();
	int fd, ret;

	if (!e)
		return -errno;
	fd = pl_private_open(e, d->name, O_RDONLY);
	if (fd < 0)
		return fd;
	ret = ucmd_ioctl(e, fd, op, arg);
	pl_private_close(e, fd);
	return ret;
}

int pl_admin(const struct pl_devinfo *d, struct nvme_passthru_cmd64 *cmd)
{
	return pl_dev_ioctl(d, NVME_IOCTL_ADMIN64_CMD, cmd);
}

int pl_identify(const struct pl_devinfo *ctrl, uint32_t nsid, uint32_t cns, uint8_t csi, void *buf)
{
	struct nvme_passthru_cmd64 cmd = {
		.opcode = nvme_admin_identify,
		.nsid = nsid,
		.addr = (uintptr_t)buf,
		.data_len = NVME_IDENTIFY_DATA_SIZE,
		.cdw10 = cns,
		.cdw11 = (uint32_t)csi << 24,
	};

	memset(buf, 0, NVME_IDENTIFY_DATA_SIZE);
	return pl_admin(ctrl, &cmd);
}

/* The formatted LBA size, metadata size and NSZE, from Identify Namespace on the controller. */
static void geometry(struct pl_devinfo *d, const struct pl_devinfo *ctrl)
{
	struct nvme_id_ns *id = aligned_alloc(4096, sizeof(*id));
	struct nvme_passthru_cmd64 cmd = {
		.opcode = nvme_admin_identify,
		.nsid = d->nsid,
		.data_len = sizeof(*id),
		.cdw10 = NVME_IDENTIFY_CNS_NS,
	};

	if (!id)
		return;
	cmd.addr = (uint64_t)(uintptr_t)id;
	if (ctrl && pl_admin(ctrl, &cmd) == 0)
		pl_ns_geometry(id, d);
	free(id);
}

static struct dev_slot *find_locked(const char *name)
{
	for (unsigned i = 0; i < nr_devs; i++)
		if (!strcmp(devs[i].info.name, name))
			return &devs[i];
	return NULL;
}

static const struct pl_devinfo *ctrl_of(unsigned instance)
{
	for (unsigned i = 0; i < nr_devs; i++)
		if (!devs[i].gone && devs[i].info.kind == PL_DEV_CTRL &&
		    devs[i].info.instance == instance)
			return &devs[i].info;
	return NULL;
}

static int load_locked(void)
{
	struct ucmd_engine *e = pl_engine();
	const char **names;
	unsigned ns_ordinal = 0;
	int n;

	if (!e)
		return -errno;
	names = calloc(PL_MAX_DEVS, sizeof(*names));
	if (!names)
		return -ENOMEM;
	n = ucmd_device_names(e, names, PL_MAX_DEVS);
	if (n < 0) {
		free(names);
		return n;
	}
	if ((unsigned)n > PL_MAX_DEVS)
		n = PL_MAX_DEVS;
	for (unsigned i = 0; i < nr_devs; i++)
		devs[i].gone = true;
	for (int i = 0; i < n; i++) {
		struct pl_devinfo d;
		struct dev_slot *s;

		/* a removed PCI function's devices are no one's until a rescan (ctlfiles.c) */
		if (!classify(names[i], &d) || pl_kind_removed(d.kind, d.instance))
			continue;
		s = find_locked(d.name);
		if (!s) {
			if (nr_devs == PL_MAX_DEVS)
				break;
			s = &devs[nr_devs++];
			s->info = d;
		}
		s->gone = false;
	}
	free(names);
	/* controllers first, so that namespaces find theirs */
	for (unsigned i = 0; i < nr_devs; i++) {
		struct pl_devinfo *d = &devs[i].info;

		if (!devs[i].gone && d->kind == PL_DEV_CTRL) {
			d->major = PL_MAJOR_CTRL;
			d->minor = d->instance;
		}
	}
	/* namespace ordinals: by (controller, nsid), the char and block nodes alike */
	for (unsigned x = 0; x < 256; x++) {
		for (unsigned i = 0; i < nr_devs; i++) {
			struct pl_devinfo *d = &devs[i].info;

			if (devs[i].gone || d->kind != PL_DEV_NS_CHR || d->instance != x)
				continue;
			d->major = PL_MAJOR_NG;
			d->minor = ns_ordinal++;
			/* a head whose first controller is removed: asked through the head (a path left) */
			geometry(d, ctrl_of(x) ? ctrl_of(x) : d);
			/* its block sibling has the same ordinal and geometry */
			char blk[32];
			struct dev_slot *b;

			snprintf(blk, sizeof(blk), "nvme%un%u", d->instance, d->nsid);
			b = find_locked(blk);
			if (b && !b->gone) {
				b->info.major = PL_MAJOR_BLK;
				b->info.minor = d->minor;
				b->info.lba_size = d->lba_size;
				b->info.nlba = d->nlba;
				b->info.ms = d->ms;
				b->info.ext = d->ext;
			}
		}
	}
	/* a block node without a char sibling (not made by ucmd, but be safe) */
	for (unsigned i = 0; i < nr_devs; i++) {
		struct pl_devinfo *d = &devs[i].info;

		if (!devs[i].gone && d->kind == PL_DEV_NS_BLK && !d->major) {
			d->major = PL_MAJOR_BLK;
			d->minor = ns_ordinal++;
			geometry(d, ctrl_of(d->instance) ? ctrl_of(d->instance) : d);
		}
	}
	loaded = true;
	return 0;
}

int pl_devinfo_reload(void)
{
	int ret;

	pthread_mutex_lock(&devs_lock);
	ret = load_locked();
	pthread_mutex_unlock(&devs_lock);
	return ret;
}

/*
 * A name this process's list does not have may be a namespace attached
 * since (by another process, or a client outside exec): as Linux's device
 * nodes appear for every process at once, the list is read again before
 * the answer is ENOENT, and the shared tree brought up to date.
 */
const struct pl_devinfo *pl_devinfo(const char *name)
{
	const struct pl_devinfo *d = NULL;
	struct dev_slot *s;
	bool first = !loaded, reloaded = false;
	int ret = 0;

	pthread_mutex_lock(&devs_lock);
	if (first)
		ret = load_locked();
	s = ret ? NULL : find_locked(name);
	/* removed by another process since our list was read (ctlfiles.c): gone now */
	if (!ret && (!s || s->gone || pl_kind_removed(s->info.kind, s->info.instance)) && !first) {
		ret = load_locked();
		reloaded = true;
		s = ret ? NULL : find_locked(name);
	}
	if (s && !s->gone)
		d = &s->info;
	pthread_mutex_unlock(&devs_lock);
	if (!d) {
		errno = ret ? -ret : ENOENT;
		return NULL;
	}
	if (reloaded) {
		const char *root = pl_root();

		if (root)
			pl_sysfs_sync(root);
	}
	return d;
}

unsigned pl_devinfo_list(const struct pl_devinfo **out, unsigned max)
{
	unsigned n = 0;

	pthread_mutex_lock(&devs_lock);
	if (!loaded && load_locked()) {
		pthread_mutex_unlock(&devs_lock);
		return 0;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < nr_devs; i++) {
			bool ctrl = devs[i].info.kind == PL_DEV_CTRL;

			if (devs[i].gone || ctrl != (pass == 0))
				continue;
			if (n < max)
				out[n] = &devs[i].info;
			n++;
		}
	}
	pthread_mutex_unlock(&devs_lock);
	return n;
}

/*
 * The group Linux's block nodes belong to: udev's "disk" (systemd's
 * 50-udev-default.rules, SUBSYSTEM=="block", GROUP="disk"), by its number
 * in this host's /etc/group, read once (6, Debian's base-passwd number and
 * Fedora's and Arch's, when it cannot be read). From the trampoline (the
 * preload; sv_pl.c's in ucmd-supervise): a look of our own, no
 * notification, and no libc stdio inside a stat interposer.
 */
static gid_t disk_gid(void)
{
	static long gid = -1;
	char buf[8192];
	long fd, n;

	if (__atomic_load_n(&gid, __ATOMIC_RELAXED) >= 0)
		return (gid_t)__atomic_load_n(&gid, __ATOMIC_RELAXED);
	fd = pl_raw_syscall(__NR_openat, AT_FDCWD, (long)"/etc/group", O_RDONLY | O_CLOEXEC, 0, 0,
			    0);
	n = fd < 0 ? -1 : pl_raw_syscall(__NR_read, fd, (long)buf, sizeof(buf) - 1, 0, 0, 0);
	if (fd >= 0)
		pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	long found = 6;

	for (char *line = buf; n > 0 && line < buf + n;) {
		char *end = memchr(line, '\n', (size_t)(buf + n - line));
		unsigned long v;
		char *x;

		if (!strncmp(line, "disk:", 5) && (x = strchr(line + 5, ':')) &&
		    (!end || x < end) && sscanf(x + 1, "%lu", &v) == 1) {
			found = (long)v;
			break;
		}
		line = end ? end + 1 : buf + n;
	}
	__atomic_store_n(&gid, found, __ATOMIC_RELAXED);
	return (gid_t)found;
}

/*
 * A node's owner and mode as Linux's (Debian's udev): a namespace's block
 * device root:disk 0660; the controller's and the generic namespace's
 * character devices root:root 0600 (no udev rule names them: devtmpfs's
 * own). Shown only: whether the program may open the node is the daemon's
 * (its policy; access(2) answers from the placeholder, which is the exec
 * user's), as it was before (docs/compat.md).
 */
static void node_owner(const struct pl_devinfo *d, unsigned *uid, unsigned *gid, unsigned *mode)
{
	bool blk = d->kind == PL_DEV_NS_BLK;

	*uid = 0;
	*gid = blk ? (unsigned)disk_gid() : 0;
	*mode = blk ? (S_IFBLK | 0660) : (S_IFCHR | 0600);
}

/* What a device node stats as (its placeholder's times; the node's kind, numbers, owner, mode). */
void pl_stat_fix(const struct pl_devinfo *d, struct stat *st)
{
	unsigned uid, gid, mode;

	node_owner(d, &uid, &gid, &mode);
	st->st_mode = mode;
	st->st_uid = uid;
	st->st_gid = gid;
	st->st_rdev = makedev(d->major, d->minor);
	st->st_size = 0;
	st->st_blocks = 0;
	st->st_blksize = 4096;
}

void pl_statx_fix(const struct pl_devinfo *d, struct statx *stx)
{
	unsigned uid, gid, mode;

	node_owner(d, &uid, &gid, &mode);
	stx->stx_mode = (uint16_t)mode;
	stx->stx_uid = uid;
	stx->stx_gid = gid;
	stx->stx_rdev_major = d->major;
	stx->stx_rdev_minor = d->minor;
	stx->stx_size = 0;
	stx->stx_blocks = 0;
	stx->stx_blksize = 4096;
}

void pl_stat_tree(struct stat *st)
{
	st->st_uid = 0;
	st->st_gid = 0;
}

void pl_statx_tree(struct statx *stx)
{
	stx->stx_uid = 0;
	stx->stx_gid = 0;
}
