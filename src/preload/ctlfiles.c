// SPDX-License-Identifier: MIT
/*
 * The tree's write-only control files (0200, DEVICE_ATTR_WO), taken at
 * their write, as Linux's stores take them: the open for writing (root's
 * alone, as the mode says) is made as a 0644 attribute's is (where.c,
 * PL_OPEN_ATTRW: the tree's file O_RDONLY | O_APPEND), and the write
 * reaches pl_ctl_write through attrval.c's judgement, from the preload's
 * interposers (attrw.c, bash's builtin echo on 1 or 2 too). The value is
 * read as each store reads it (ctls[]'s value rule); an empty write is
 * nothing (sysfs_kf_write calls no store for it). A static program's are
 * taken at its open for writing instead, whatever is then written
 * (pl_ctl_take, sv_sysfs.c: a static shell's redirection moves the
 * descriptor below the numbers whose writes ucmd-supervise sees).
 *
 *   /sys/bus/pci/rescan, <function>/rescan   Linux's bus rescan (a
 *       function's rescans its bus, dev_rescan_store): the daemon's list
 *       read again, and the functions removed come back, each controller
 *       reset on the way as nvme_probe enables it anew; kstrtoul's number,
 *       0 nothing, anything else EINVAL (rescan_store)
 *   nvmeX/rescan_controller   the namespaces again (nvme_sysfs_rescan),
 *       whatever is written
 *   nvmeX/reset_controller    a controller reset (nvme_sysfs_reset):
 *       NVME_IOCTL_RESET's path in the daemon (CC.EN cycled, queues
 *       created again, what was in flight ended as Linux ends it),
 *       whatever is written
 *   <function>/reset          a function reset, which with the NVMe driver
 *       bound is a controller reset (its reset_prepare/reset_done); 1
 *       alone, anything else EINVAL, ERANGE past an unsigned long
 *       (reset_store returns kstrtoul's error)
 *   <function>/remove         the function and its controller leave /dev
 *       and /sys for every process of the exec until a rescan, their
 *       descriptors already open failing as on a driver unbound (ioctl.c,
 *       rw.c, sv_dev.c); the namespaces named after its subsystem go with
 *       the subsystem's last controller (a multipath head stays over the
 *       controllers left, sysfs_mpath.c); kstrtoul's number, 0 nothing,
 *       anything else EINVAL (remove_store)
 *
 * A removal is a marker file <root>/.removed/nvmeX, shared by the
 * processes of the exec as the tree is; devinfo.c does not list a removed
 * controller's devices, and the tree loses them at its next sync. The same
 * removals are kept in <root>/.removed/map, a byte per controller instance
 * that every process of the exec maps (pl_dev_gone): the device fds already
 * open are asked about at each call, and a system call there would cost
 * every read what a removal costs once.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/*
 * The map: byte X has GONE_CTRL once controller X's function is removed,
 * GONE_NS once the namespaces named after X are (nvmeXnY, ngXnY: those of
 * controller X alone, or a multipath head's, X its subsystem's, which go
 * with the last controller of the subsystem), cleared by the rescan that
 * brings them back. Instances past it are asked by their marker.
 */
#define GONE_MAP_LEN 4096u
#define GONE_CTRL 1u
#define GONE_NS 2u

static unsigned char *_Atomic gone_map;
static const unsigned char gone_none[1];	/* no map to be had: markers then */

/*
 * Mapped at a process's first ask, created by whichever process asks first
 * (the tree's root is the exec's, so is the map). Raw system calls: asked
 * from the trampoline and from ucmd-supervise as pl_ctl_removed is.
 */
static unsigned char *gone_map_get(void)
{
	unsigned char *m = atomic_load_explicit(&gone_map, memory_order_acquire), *exp = NULL;
	char dir[PATH_MAX], path[PATH_MAX];
	struct stat st;
	long fd, p;

	if (m)
		return m == gone_none ? NULL : m;
	if (removed_path(dir, sizeof(dir), NULL) || removed_path(path, sizeof(path), "map"))
		return NULL;	/* not under exec yet: nothing removed, asked again later */
	pl_raw_syscall(__NR_mkdirat, AT_FDCWD, (long)dir, 0700, 0, 0, 0);
	fd = pl_raw_syscall(__NR_openat, AT_FDCWD, (long)path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			    0600, 0, 0);
	m = (unsigned char *)gone_none;
	if (fd >= 0) {
		if (!pl_raw_syscall(__NR_fstat, fd, (long)&st, 0, 0, 0, 0) &&
		    (st.st_size >= GONE_MAP_LEN ||
		     !pl_raw_syscall(__NR_ftruncate, fd, GONE_MAP_LEN, 0, 0, 0, 0))) {
			p = pl_raw_syscall(__NR_mmap, 0, GONE_MAP_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
					   fd, 0);
			if (p >= 0 || p < -4095)
				m = (unsigned char *)p;
		}
		pl_raw_syscall(__NR_close, fd, 0, 0, 0, 0, 0);
	}
	if (!atomic_compare_exchange_strong(&gone_map, &exp, m)) {
		if (m != gone_none)
			pl_raw_syscall(__NR_munmap, (long)m, GONE_MAP_LEN, 0, 0, 0, 0);
		m = exp;
	}
	return m == gone_none ? NULL : m;
}

void pl_ctl_map(void)
{
	(void)gone_map_get();
}

static void gone_set(unsigned instance, unsigned char bit)
{
	unsigned char *m = gone_map_get();

	if (m && instance < GONE_MAP_LEN)
		__atomic_fetch_or(&m[instance], bit, __ATOMIC_RELEASE);
}

static void gone_clear_all(void)
{
	unsigned char *m = gone_map_get();

	for (unsigned i = 0; m && i < GONE_MAP_LEN; i++)
		__atomic_store_n(&m[i], 0, __ATOMIC_RELEASE);
}

/* A marker's name: nvmeX for a controller, nsX for the namespaces named after X. */
static bool marker_exists(const char *prefix, unsigned instance)
{
	char name[32], path[PATH_MAX];

	snprintf(name, sizeof(name), "%s%u", prefix, instance);
	if (removed_path(path, sizeof(path), name))
		return false;
	/* from the trampoline: a look of our own, no notification (sv_filter.c) */
	return !pl_raw_syscall(__NR_faccessat, AT_FDCWD, (long)path, F_OK, 0, 0, 0);
}

bool pl_ctl_removed(unsigned instance)
{
	return marker_exists("nvme", instance);
}

bool pl_kind_removed(enum pl_dev_kind kind, unsigned instance)
{
	return marker_exists(kind == PL_DEV_CTRL ? "nvme" : "ns", instance);
}

/* name's kind (a controller's "nvmeX", or a namespace's) and X; false: none of ours */
static bool name_kind(const char *name, enum pl_dev_kind *kind, unsigned *x)
{
	unsigned y;
	char tail;

	if (sscanf(name, "nvme%un%u%c", x, &y, &tail) == 2 ||
	    sscanf(name, "ng%un%u%c", x, &y, &tail) == 2) {
		*kind = PL_DEV_NS_BLK;	/* the block and char nodes alike */
		return true;
	}
	*kind = PL_DEV_CTRL;
	return sscanf(name, "nvme%u%c", x, &tail) == 1;
}

bool pl_name_removed(const char *name)
{
	enum pl_dev_kind kind;
	unsigned x;

	return name_kind(name, &kind, &x) && pl_kind_removed(kind, x);
}

static bool instance_gone(enum pl_dev_kind kind, unsigned instance)
{
	unsigned char *m = gone_map_get();

	if (m && instance < GONE_MAP_LEN)
		return __atomic_load_n(&m[instance], __ATOMIC_ACQUIRE) &
		       (kind == PL_DEV_CTRL ? GONE_CTRL : GONE_NS);
	/* no map (another user's root, or past it): the marker, a system call */
	return getenv(PL_ENV_ROOT) && pl_kind_removed(kind, instance);
}

bool pl_dev_gone(const struct pl_devinfo *d)
{
	return d && instance_gone(d->kind, d->instance);
}

bool pl_name_gone(const char *name)
{
	enum pl_dev_kind kind;
	unsigned x;

	return name_kind(name, &kind, &x) && instance_gone(kind, x);
}

int pl_ctl_removed_group(unsigned instance)
{
	char name[32], path[PATH_MAX], buf[16];
	unsigned x;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "nvme%u", instance);
	if (removed_path(path, sizeof(path), name) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (int)instance;	/* an older marker: its own subsystem */
	buf[n] = '\0';
	return sscanf(buf, "%u", &x) == 1 && x <= INT_MAX ? (int)x : (int)instance;
}

unsigned pl_ctl_removed_list(unsigned *out, unsigned max)
{
	char dir[PATH_MAX];
	struct dirent *e;
	unsigned n = 0;
	DIR *dp;

	if (removed_path(dir, sizeof(dir), NULL) || !(dp = opendir(dir)))
		return 0;
	while ((e = readdir(dp)) && n < max) {
		char tail;

		if (sscanf(e->d_name, "nvme%u%c", &out[n], &tail) == 1)
			n++;
	}
	closedir(dp);
	return n;
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

/* A removal's tree sync, left for after the write (take_remove); per thread, as writes are. */
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

/*
 * The subsystem controller c is in, as the tree shows it now: X of the
 * nvme-subsysX holding a link nvmeC (a multipath head's subsystem, named
 * after its first controller, sysfs_mpath.c), else c's own.
 */
static unsigned subsys_of(const char *root, unsigned c)
{
	char dir[PATH_MAX], p[PATH_MAX];
	struct dirent *e;
	unsigned x = c, s;
	struct stat st;
	DIR *dp;

	if (snprintf(dir, sizeof(dir), "%s/sys/devices/virtual/nvme-subsystem", root) >=
		    (int)sizeof(dir) || !(dp = opendir(dir)))
		return c;
	while ((e = readdir(dp))) {
		char tail;

		if (sscanf(e->d_name, "nvme-subsys%u%c", &s, &tail) != 1 ||
		    snprintf(p, sizeof(p), "%s/%s/nvme%u", dir, e->d_name, c) >= (int)sizeof(p) ||
		    lstat(p, &st))
			continue;
		x = s;
		break;
	}
	closedir(dp);
	return x;
}

/* Is every controller of subsystem x (its links in nvme-subsysX) removed now? */
static bool subsys_all_removed(const char *root, unsigned x)
{
	char dir[PATH_MAX];
	struct dirent *e;
	bool all = true;
	DIR *dp;

	if (snprintf(dir, sizeof(dir), "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u", root,
		     x) >= (int)sizeof(dir) || !(dp = opendir(dir)))
		return true;	/* none left to show it */
	while ((e = readdir(dp)) && all) {
		unsigned c;
		char tail;

		if (sscanf(e->d_name, "nvme%u%c", &c, &tail) == 1 && !pl_ctl_removed(c))
			all = false;
	}
	closedir(dp);
	return all;
}

static int put_marker(const char *name, const char *fmt, unsigned v)
{
	char path[PATH_MAX], buf[16];
	int fd, n, ret = 0;

	if (removed_path(path, sizeof(path), name))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), fmt, v);
	if (write(fd, buf, (size_t)n) != n)
		ret = -EIO;
	close(fd);
	return ret;
}

/*
 * Controller c leaves: its marker says its subsystem (for the tree to
 * keep a multipath head over the others, sysfs_mpath.c), and the
 * namespaces named after that subsystem go with its last controller, as
 * Linux's head goes with its last path (nvme_mpath_remove_disk).
 */
static int take_remove(const char *root, const char *path)
{
	const struct pl_devinfo *c = ctrl_at(path, true);
	char dir[PATH_MAX], name[32];
	unsigned x;
	int ret;

	if (!c)
		return -ENODEV;
	if (removed_path(dir, sizeof(dir), NULL))
		return -ENAMETOOLONG;
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	x = subsys_of(root, c->instance);
	snprintf(name, sizeof(name), "nvme%u", c->instance);
	ret = put_marker(name, "%u\n", x);
	if (ret)
		return ret;
	gone_set(c->instance, GONE_CTRL);	/* its fds open in any process of the exec fail from now */
	if (subsys_all_removed(root, x)) {
		snprintf(name, sizeof(name), "ns%u", x);
		ret = put_marker(name, "%u\n", x);
		if (ret)
			return ret;
		gone_set(x, GONE_NS);
	}
	/* the tree loses the function once the write is judged (pl_ctl_write) */
	sync_pending = true;
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

			if ((sscanf(e->d_name, "nvme%u%c", &x, &tail) != 1 &&
			     sscanf(e->d_name, "ns%u%c", &x, &tail) != 1) ||
			    snprintf(marker, sizeof(marker), "%s/%s", dir, e->d_name) >=
				    (int)sizeof(marker) || unlink(marker))
				continue;
			if (e->d_name[1] == 'v')
				back[nr++] = x;	/* a controller, probed again */
		}
		closedir(dp);
		gone_clear_all();
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

/*
 * kstrtoul(s, 0): an optional '+', then 0x hex, 0 octal or decimal
 * digits, one newline after them at most (echo's): 0 and the number in
 * *v, -EINVAL for anything else, -ERANGE past an unsigned long.
 */
static int kstrtoul0(const char *s, unsigned long *v)
{
	unsigned long x = 0;
	unsigned base = 10, d, n = 0;

	if (*s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    s[2] && strchr("0123456789abcdefABCDEF", s[2])) {
		base = 16;
		s += 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (;; s++, n++) {
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (d >= base)
			break;
		if (x > (~0UL - d) / base)
			return -ERANGE;
		x = x * base + d;
	}
	if (!n)
		return -EINVAL;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*v = x;
	return 0;
}

/* How a store reads what is written: 1 take the action, 0 nothing, or -errno. */
static int any_value(const char *val)
{
	(void)val;
	return 1;
}

/* remove_store, rescan_store, dev_rescan_store: a number, 0 nothing; kstrtoul's ERANGE too EINVAL */
static int nonzero(const char *val)
{
	unsigned long v;

	return kstrtoul0(val, &v) ? -EINVAL : v != 0;
}

/* reset_store: 1 alone; kstrtoul's own error returned */
static int one(const char *val)
{
	unsigned long v;
	int ret = kstrtoul0(val, &v);

	return ret ? ret : v == 1 ? 1 : -EINVAL;
}

static const struct {
	const char *name;
	int (*take)(const char *root, const char *path);
	int (*value)(const char *val);
} ctls[] = {
	{ "rescan", take_rescan_bus, nonzero },		/* the bus's and each function's */
	{ "rescan_controller", take_rescan_controller, any_value },
	{ "reset_controller", take_reset_controller, any_value },
	{ "reset", take_reset_function, one },
	{ "remove", take_remove, nonzero },
};

/* The entry of ctls the tree's file path is, or -1: by its name and its mode, 0200. */
static int ctl_of(const char *path)
{
	const char *base = strrchr(path, '/');
	struct stat st;

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(ctls) / sizeof(ctls[0]); i++) {
		if (strcmp(base, ctls[i].name))
			continue;
		/* the tree's own control file, not a name that happens to match */
		if (lstat(path, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 07777) != 0200)
			return -1;
		return (int)i;
	}
	return -1;
}

int pl_ctl_open(const char *root, const char *path, const char *base)
{
	(void)root;
	(void)base;
	if (ctl_of(path) < 0)
		return -EACCES;
	/* root's alone (0200, root's on Linux): the write is the action, as an attribute's */
	return geteuid() == 0 ? PL_OPEN_ATTRW : -EACCES;
}

bool pl_ctl_file(const char *path)
{
	return ctl_of(path) >= 0;
}

int pl_ctl_take(const char *path)
{
	const char *root = pl_root();
	int i = ctl_of(path);

	if (i < 0)
		return -EACCES;
	return root ? ctls[i].take(root, path) : -ENODEV;
}

int pl_ctl_write(const char *path, const char *val)
{
	const char *root = pl_root();
	int i = ctl_of(path), ret;

	if (i < 0)
		return -EINVAL;
	if (!*val)
		return 0;	/* an empty write: no store called (sysfs_kf_write) */
	ret = ctls[i].value(val);
	if (ret <= 0)
		return ret;
	if (!root)
		return -ENODEV;
	ret = ctls[i].take(root, path);
	pl_ctl_done();	/* a removal's tree sync: the file goes, this descriptor stays */
	return ret;
}
