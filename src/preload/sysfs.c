// SPDX-License-Identifier: MIT
/*
 * The generated tree under the exec root (preload.h, sysfs.c): device
 * placeholders in <root>/dev and, in <root>/sys, what Linux's sysfs shows
 * for NVMe controllers and namespaces, so that libnvme's scan (nvme list,
 * nvme list-subsys) and the programs that look up a device's queue limits
 * find ucmd's devices where they find a kernel's.
 *
 * The layout is Linux's with native multipath off (nvme_core.multipath=N):
 * a namespace's block device is a child of its controller, and each
 * controller has a subsystem of its own. libnvme 1.3 finds namespaces by
 * scanning the controller directory for "nvme%dn%d" (and a subsystem
 * directory for the same; multipath's head disks would be found twice if
 * both were present, so only one place has them).
 *
 *   sys/devices/pciD:B/D:B:S.0/                  the controller's PCI function
 *   sys/devices/pciD:B/D:B:S.0/nvme/nvmeX/       controller (dev 240:X)
 *   sys/devices/pciD:B/D:B:S.0/nvme/nvmeX/nvmeXnY/   block namespace (259:M)
 *   sys/devices/pciD:B/D:B:S.0/nvme/nvmeX/ngXnY/     generic namespace (241:M)
 *   sys/devices/virtual/nvme-subsystem/nvme-subsysX/
 *   sys/bus/pci/devices/D:B:S.0, sys/bus/pci/drivers/nvme/D:B:S.0, sys/bus/pci/rescan
 *   sys/class/{nvme,nvme-generic,nvme-subsystem,block}/..., sys/block/...,
 *   sys/dev/{char,block}/MAJ:MIN   relative links into sys/devices, as Linux
 *
 * The PCI function is QEMU's NVMe model as Linux shows it (vendor, device,
 * class 010802h, config space, resource0 the register file, which
 * pl_sysfs_regs() reads again from the controller at every open, res0.c
 * at every read), at a
 * slot of bus 0 the host's own PCI devices leave free (paths.c shows the
 * host's and the tree's entries of a directory both have side by side).
 *
 * Several processes of one `ucmd exec` share a root: the tree is built
 * under an flock on <root>/.lock, and <root>/.ready, written last, says
 * that it is complete. Every file and link appears by rename(2), so a
 * reader never sees a half-written attribute.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nvme/types.h>

#include "ucmd/nvme.h"

#include "preload.h"

#define MAX_DEVS 256

/* BAR0: the register file, then the doorbells (zeros), as QEMU's 16 KiB BAR */
#define BAR0_SIZE 0x4000u
#define BAR0_BASE 0xfe000000ull	/* where BAR0 of controller 0 says it is; X's is X BARs on */

/*
 * A directory of the tree, 0755 as sysfs's are whatever the umask (stat and
 * access of it answer as Linux's, and a program that dropped to another user
 * may search and list it: svcall.c, sv_sysfs.c); what keeps the tree private is the
 * exec's own 0700 directory above its root, which no one else can pass.
 * 0 if made or there, or -errno.
 */
int pl_sysfs_mkdir(const char *path)
{
	if (mkdir(path, 0755))
		return errno == EEXIST ? 0 : -errno;
	return chmod(path, 0755) ? -errno : 0;
}

int pl_sysfs_mkdirs(const char *path)
{
	char p[PATH_MAX];
	size_t n = strlen(path);
	int ret;

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		ret = pl_sysfs_mkdir(p);
		if (ret)
			return ret;
		*s = '/';
	}
	return pl_sysfs_mkdir(p);
}

static int vpath(char *out, const char *fmt, va_list ap)
{
	int n = vsnprintf(out, PATH_MAX, fmt, ap);

	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/*
 * File path gets len bytes of buf with mode, written aside and renamed into
 * place, so that another process of the exec sees it whole or not at all.
 */
static int put_bytes(const char *path, const void *buf, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	int fd, ret = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	/* sysfs's modes, not the umask's: a 0444 attribute is readable by every user */
	if (fchmod(fd, mode))
		ret = -errno;
	else if (write(fd, buf, len) != (ssize_t)len)
		ret = errno ? -errno : -EIO;
	close(fd);
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

/*
 * An attribute's modes, as sysfs's: 0444 for one the kernel only shows,
 * 0644 for one it also takes writes to (DEVICE_ATTR_RW, S_IRUGO | S_IWUSR:
 * a device's uevent, the block queue's tunables, a PCI function's enable,
 * config...): root's write of the current value is taken, another is
 * EINVAL (pl_where_open, attrw.c); 0200 for the control files (ctlfiles.c).
 */
#define ATTR_RO 0444
#define ATTR_RW 0644

/* Write an attribute: file path (printf-style, already formatted) gets text. */
static int put_text(const char *path, const char *text, mode_t mode)
{
	return put_bytes(path, text, strlen(text), mode);
}

int pl_sysfs_putm(const char *dir, const char *name, mode_t mode, const char *fmt, ...)
{
	char path[PATH_MAX], val[1024];
	va_list ap;
	int n;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(val) - 1)
		return -EINVAL;
	val[n] = '\n';
	val[n + 1] = '\0';
	return put_text(path, val, mode);
}

/* An attribute Linux takes writes to (0644): as pl_sysfs_put otherwise. */
#define put_rw(dir, name, ...) pl_sysfs_putm(dir, name, ATTR_RW, __VA_ARGS__)

int pl_sysfs_link(const char *target, const char *path)
{
	char tmp[PATH_MAX];
	int ret;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	if (symlink(target, tmp))
		return -errno;
	if (rename(tmp, path)) {
		ret = -errno;
		unlink(tmp);
		return ret;
	}
	return 0;
}

int pl_sysfs_path(char *out, const char *f, ...)
{
	va_list ap;
	int ret;

	va_start(ap, f);
	ret = vpath(out, f, ap);
	va_end(ap);
	return ret;
}

static int dir_at(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int dir_at(char *out, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vpath(out, fmt, ap);
	va_end(ap);
	return ret ? ret : pl_sysfs_mkdirs(out);
}

/* What a device's path (stat, access, open) reaches: an empty regular file, 0600 (fds: fdmap.c). */
static int placeholder(const char *root, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/dev/%s", root, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return false;
	return true;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * n] = '\0';
}

/* Identify Controller's text fields as Linux shows them (space-padded, as the controller sent). */
struct ctrl_facts {
	char mn[41], sn[21], fr[9], nqn[NVME_NQN_LENGTH + 1];
	uint16_t vid, ssvid, cntlid;
};

static void ctrl_facts(const struct pl_devinfo *c, struct ctrl_facts *f)
{
	static struct nvme_id_ctrl id; /* 4 KiB: not on an interposer's stack */

	memset(f, 0, sizeof(*f));
	if (pl_identify(c, 0, NVME_IDENTIFY_CNS_CTRL, NVME_CSI_NVM, &id) != 0) {
		/* still a controller libnvme can list; empty fields say what is missing */
		pl_trace("sysfs: Identify Controller of %s failed", c->name);
		memset(&id, 0, sizeof(id));
	}
	memcpy(f->mn, id.mn, sizeof(id.mn));
	memcpy(f->sn, id.sn, sizeof(id.sn));
	memcpy(f->fr, id.fr, sizeof(id.fr));
	memcpy(f->nqn, id.subnqn, NVME_NQN_LENGTH);
	f->vid = le16toh(id.vid);
	f->ssvid = le16toh(id.ssvid);
	f->cntlid = le16toh(id.cntlid);
	if (!f->nqn[0]) /* Linux makes one up from the PCI ids, serial and model */
		snprintf(f->nqn, sizeof(f->nqn), "nqn.2014.08.org.nvmexpress:%04x%04x%s%s",
			 f->vid, le16toh(id.ssvid), f->sn, f->mn);
}

/*
 * The PCI function of controller x: "0000:00:SS.0" under "pci0000:00",
 * the x-th device number of bus 0 (from 1) that the host's own functions
 * leave free, and past bus 0's 31, domains of their own (0001...), which
 * no host has. Decided from the host's /sys/bus/pci/devices alone, so
 * that every process of an exec finds the same.
 */
struct pci_name {
	char bus[16];	/* "pci0000:00" */
	char addr[16];	/* "0000:00:04.0" */
};

static void pci_name(unsigned x, struct pci_name *p)
{
	unsigned dom = 0, slot = 0, free_seen = 0;
	struct stat st;

	for (;;) {
		char path[64];

		if (++slot > 31) {
			dom++;
			slot = 1;
		}
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:00:%02x.0", dom, slot);
		/* the host's answer (the trampoline's call), never ucmd-supervise's from the tree */
		if (!dom && !pl_raw_syscall(__NR_newfstatat, AT_FDCWD, (long)path, (long)&st,
					    AT_SYMLINK_NOFOLLOW, 0, 0))
			continue;	/* the host's */
		if (free_seen++ == x)
			break;
	}
	snprintf(p->bus, sizeof(p->bus), "pci%04x:00", dom);
	snprintf(p->addr, sizeof(p->addr), "%04x:00:%02x.0", dom, slot);
}

int pl_sysfs_ctrl_dev(char *out, size_t len, unsigned x)
{
	struct pci_name p;
	int n;

	pci_name(x, &p);
	n = snprintf(out, len, "%s/%s/nvme/nvme%u", p.bus, p.addr, x);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The controller's sysfs directory: <root>/sys/devices/<bus>/<addr>/nvme/nvmeX[/rest]. */
static int ctrl_path(char *out, const char *root, unsigned x, const char *rest)
{
	struct pci_name p;

	pci_name(x, &p);
	return pl_sysfs_path(out, "%s/sys/devices/%s/%s/nvme/nvme%u%s%s", root, p.bus, p.addr, x,
		   rest ? "/" : "", rest ? rest : "");
}

/* Writable attributes (0200): paths.c lets them be opened for writing. */
static int put_wo(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (pl_sysfs_path(path, "%s/%s", dir, name))
		return -ENAMETOOLONG;
	if (access(path, F_OK)) {
		int ret = put_text(path, "", 0200);

		if (ret)
			return ret;
	}
	return chmod(path, 0200) ? -errno : 0;
}

/* BAR0 as resource0: the register file now, the doorbells as zeros. 0 or -errno. */
static int put_regs(const char *path, const struct pl_devinfo *c)
{
	static uint8_t bar[BAR0_SIZE];	/* not on an interposer's stack */
	int ret = pl_regs_now(c, bar, sizeof(bar));

	return ret ?: put_bytes(path, bar, sizeof(bar), 0600);
}

/*
 * PCI configuration space (256 bytes) of QEMU's NVMe model: ids, command
 * (memory space and bus master on), class 010802h, BAR0 64-bit memory.
 */
static int put_config(const char *dir, const struct ctrl_facts *f, unsigned dev_id, uint64_t bar)
{
	uint8_t cfg[256] = { 0 };
	char path[PATH_MAX];
	uint32_t lo = (uint32_t)bar | 0x4, hi = (uint32_t)(bar >> 32);

	cfg[0] = f->vid & 0xff, cfg[1] = f->vid >> 8;
	cfg[2] = dev_id & 0xff, cfg[3] = dev_id >> 8;
	cfg[4] = 0x06;				/* memory space, bus master */
	cfg[6] = 0x10;				/* capabilities list */
	cfg[8] = 0x02;				/* revision */
	cfg[9] = 0x02, cfg[10] = 0x08, cfg[11] = 0x01;	/* NVM Express, I/O controller */
	memcpy(cfg + 0x10, &lo, 4);
	memcpy(cfg + 0x14, &hi, 4);
	cfg[0x2c] = f->ssvid & 0xff, cfg[0x2d] = f->ssvid >> 8;
	cfg[0x2e] = 0x00, cfg[0x2f] = 0x11;	/* subsystem 1100h */
	cfg[0x3d] = 0x01;			/* INTA */
	if (pl_sysfs_path(path, "%s/config", dir))
		return -ENAMETOOLONG;
	return put_bytes(path, cfg, sizeof(cfg), ATTR_RW);
}

/* The controller's PCI function, its bus and driver links (drivers/pci's names). */
static int build_pci(const char *root, const struct pl_devinfo *c, const struct ctrl_facts *f)
{
	char dir[PATH_MAX], t[PATH_MAX], l[PATH_MAX], res[1024];
	unsigned x = c->instance, dev_id = f->vid == 0x1b36 ? 0x0010 : 0x0001;
	uint64_t bar = BAR0_BASE + (uint64_t)x * BAR0_SIZE;
	struct pci_name p;
	size_t n = 0;
	int ret;

	pci_name(x, &p);
	ret = dir_at(dir, "%s/sys/devices/%s/%s", root, p.bus, p.addr);
	ret = ret ?: pl_sysfs_put(dir, "vendor", "0x%04x", f->vid);
	ret = ret ?: pl_sysfs_put(dir, "device", "0x%04x", dev_id);
	ret = ret ?: pl_sysfs_put(dir, "subsystem_vendor", "0x%04x", f->ssvid);
	ret = ret ?: pl_sysfs_put(dir, "subsystem_device", "0x1100");
	ret = ret ?: pl_sysfs_put(dir, "class", "0x010802");
	ret = ret ?: pl_sysfs_put(dir, "revision", "0x02");
	ret = ret ?: pl_sysfs_put(dir, "irq", "0");
	ret = ret ?: put_rw(dir, "numa_node", "-1");
	ret = ret ?: put_rw(dir, "enable", "1");
	ret = ret ?: put_rw(dir, "msi_bus", "1");
	ret = ret ?: pl_sysfs_put(dir, "local_cpulist", "0-%ld", sysconf(_SC_NPROCESSORS_CONF) - 1);
	ret = ret ?: pl_sysfs_put(dir, "current_link_speed", "Unknown");
	ret = ret ?: pl_sysfs_put(dir, "current_link_width", "0");
	ret = ret ?: put_rw(dir, "driver_override", "(null)");
	ret = ret ?: pl_sysfs_put(dir, "modalias", "pci:v%08Xd%08Xsv%08Xsd%08Xbc01sc08i02", f->vid, dev_id,
			 f->ssvid, 0x1100u);
	ret = ret ?: put_rw(dir, "uevent", "DRIVER=nvme\nPCI_CLASS=10802\nPCI_ID=%04X:%04X\n"
			 "PCI_SUBSYS_ID=%04X:1100\nPCI_SLOT_NAME=%s\n"
			 "MODALIAS=pci:v%08Xd%08Xsv%08Xsd%08Xbc01sc08i02",
			 f->vid, dev_id, f->ssvid, p.addr, f->vid, dev_id, f->ssvid, 0x1100u);
	/* resource: start, end, flags of the 6 BARs, the ROM and the bridge windows (13 lines) */
	n += (size_t)snprintf(res + n, sizeof(res) - n, "0x%016llx 0x%016llx 0x%016llx",
			      (unsigned long long)bar, (unsigned long long)(bar + BAR0_SIZE - 1),
			      0x140204ull);
	for (int i = 1; i < 13; i++)
		n += (size_t)snprintf(res + n, sizeof(res) - n,
				      "\n0x%016llx 0x%016llx 0x%016llx", 0ull, 0ull, 0ull);
	ret = ret ?: pl_sysfs_put(dir, "resource", "%s", res);
	ret = ret ?: put_config(dir, f, dev_id, bar);
	ret = ret ?: pl_sysfs_path(l, "%s/resource0", dir);
	ret = ret ?: put_regs(l, c);
	/* pci-sysfs's write-only files: remove, rescan (its bus), reset (ctlfiles.c) */
	ret = ret ?: put_wo(dir, "remove");
	ret = ret ?: put_wo(dir, "rescan");
	ret = ret ?: put_wo(dir, "reset");
	ret = ret ?: pl_sysfs_path(t, "../../../bus/pci/drivers/nvme");
	ret = ret ?: pl_sysfs_path(l, "%s/driver", dir);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(l, "%s/subsystem", dir);
	ret = ret ?: pl_sysfs_link("../../../bus/pci", l);

	ret = ret ?: dir_at(l, "%s/sys/bus/pci/drivers/nvme", root);
	ret = ret ?: pl_sysfs_path(t, "../../../../devices/%s/%s", p.bus, p.addr);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/bus/pci/drivers/nvme/%s", root, p.addr);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: dir_at(l, "%s/sys/bus/pci/devices", root);
	ret = ret ?: pl_sysfs_path(t, "../../../devices/%s/%s", p.bus, p.addr);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/bus/pci/devices/%s", root, p.addr);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: dir_at(l, "%s/sys/bus/pci", root);
	return ret ?: put_wo(l, "rescan");
}

/* What Linux's sysfs shows for a controller and its subsystem (drivers/nvme/host's names). */
static int build_ctrl(const char *root, const struct pl_devinfo *c, const struct ctrl_facts *f)
{
	char dir[PATH_MAX], t[PATH_MAX], l[PATH_MAX];
	unsigned x = c->instance;
	struct pci_name p;
	int ret;

	pci_name(x, &p);
	ret = build_pci(root, c, f);
	ret = ret ?: ctrl_path(dir, root, x, NULL);
	ret = ret ?: pl_sysfs_mkdirs(dir);
	ret = ret ?: pl_sysfs_put(dir, "dev", "%u:%u", c->major, c->minor);
	ret = ret ?: put_rw(dir, "uevent", "MAJOR=%u\nMINOR=%u\nDEVNAME=%s", c->major, c->minor,
			 c->name);
	ret = ret ?: pl_sysfs_put(dir, "model", "%s", f->mn);
	ret = ret ?: pl_sysfs_put(dir, "serial", "%s", f->sn);
	ret = ret ?: pl_sysfs_put(dir, "firmware_rev", "%s", f->fr);
	ret = ret ?: pl_sysfs_put(dir, "subsysnqn", "%s", f->nqn);
	ret = ret ?: pl_sysfs_put(dir, "transport", "pcie");
	ret = ret ?: pl_sysfs_put(dir, "address", "%s", p.addr);
	ret = ret ?: pl_sysfs_put(dir, "state", "live");
	ret = ret ?: pl_sysfs_put(dir, "cntlid", "%u", f->cntlid);
	ret = ret ?: pl_sysfs_put(dir, "numa_node", "-1");
	ret = ret ?: pl_sysfs_put(dir, "queue_count", "2");
	ret = ret ?: pl_sysfs_put(dir, "sqsize", "1023");
	ret = ret ?: pl_sysfs_put(dir, "kato", "0");
	ret = ret ?: pl_sysfs_put(dir, "cntrltype", "io");
	ret = ret ?: pl_sysfs_put(dir, "dctype", "none");
	ret = ret ?: put_wo(dir, "rescan_controller");
	ret = ret ?: put_wo(dir, "reset_controller");
	ret = ret ?: pl_sysfs_path(t, "../../../%s", p.addr);
	ret = ret ?: pl_sysfs_path(l, "%s/device", dir);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(l, "%s/subsystem", dir);
	ret = ret ?: pl_sysfs_link("../../../../../class/nvme", l);
	ret = ret ?: pl_sysfs_path(t, "../../devices/%s/%s/nvme/nvme%u", p.bus, p.addr, x);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/class/nvme/nvme%u", root, x);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/dev/char/%u:%u", root, c->major, c->minor);
	ret = ret ?: pl_sysfs_link(t, l);

	ret = ret ?: dir_at(dir, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u", root, x);
	ret = ret ?: pl_sysfs_put(dir, "subsysnqn", "%s", f->nqn);
	ret = ret ?: pl_sysfs_put(dir, "model", "%s", f->mn);
	ret = ret ?: pl_sysfs_put(dir, "serial", "%s", f->sn);
	ret = ret ?: pl_sysfs_put(dir, "firmware_rev", "%s", f->fr);
	ret = ret ?: pl_sysfs_put(dir, "subsystype", "nvm");
	ret = ret ?: put_rw(dir, "iopolicy", "numa");
	ret = ret ?: pl_sysfs_path(t, "../../../%s/%s/nvme/nvme%u", p.bus, p.addr, x);
	ret = ret ?: pl_sysfs_path(l, "%s/nvme%u", dir, x);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(t, "../../devices/virtual/nvme-subsystem/nvme-subsys%u", x);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/class/nvme-subsystem/nvme-subsys%u", root, x);
	ret = ret ?: pl_sysfs_link(t, l);
	return ret;
}

/*
 * The World Wide ID Linux shows (wwid_show's order): the NGUID, else the
 * EUI-64, else one made of the vendor id, serial, model and nsid.
 */
static void wwid(char *out, size_t n, const struct nvme_id_ns *ns, const struct ctrl_facts *f,
		 unsigned nsid)
{
	char h[64];

	if (!all_zero(ns->nguid, sizeof(ns->nguid))) {
		hex(h, ns->nguid, sizeof(ns->nguid));
		snprintf(out, n, "eui.%s", h);
	} else if (!all_zero(ns->eui64, sizeof(ns->eui64))) {
		hex(h, ns->eui64, sizeof(ns->eui64));
		snprintf(out, n, "eui.%s", h);
	} else {
		char sn[41], mn[81];

		hex(sn, (const uint8_t *)f->sn, strlen(f->sn));
		hex(mn, (const uint8_t *)f->mn, strlen(f->mn));
		snprintf(out, n, "nvme.%04x-%s-%s-%08x", f->vid, sn, mn, nsid);
	}
}

/*
 * integrity/ as Linux's NVMe driver registers it: the T10 profiles for PI
 * types 1 and 2 (type 1's) and 3, with the 16b guard, their EXT-DIF CRC-64
 * siblings with the 64b guard (the NVM Identify Namespace's ELBAF), "nop"
 * for metadata without protection, nothing without metadata. The tuple is
 * the whole metadata; the interval one logical block.
 */
static int build_integrity(const char *dir, const struct pl_devinfo *c, const struct pl_devinfo *d,
			   const struct nvme_id_ns *ns)
{
	static struct nvme_nvm_id_ns nvm;
	unsigned idx = (ns->flbas & 0xf) | ((ns->flbas >> 5) & 3) << 4;
	unsigned ms = le16toh(ns->lbaf[idx].ms), type = ns->dps & NVME_NS_DPS_PI_MASK, tag = 0;
	bool wide = false;
	const char *name = "none";
	int ret;

	if (type && pl_identify(c, d->nsid, NVME_IDENTIFY_CNS_CSI_NS, NVME_CSI_NVM, &nvm) == 0)
		wide = ((le32toh(nvm.elbaf[idx]) & NVME_NVM_ELBAF_PIF_MASK) >> 7) == 2;
	if (ms && type >= NVME_NS_DPS_PI_TYPE1 && type <= NVME_NS_DPS_PI_TYPE3) {
		if (type == NVME_NS_DPS_PI_TYPE3) {
			name = wide ? "EXT-DIF-TYPE3-CRC64" : "T10-DIF-TYPE3-CRC";
			tag = wide ? 8 : 6;	/* the application and reference tags */
		} else {
			name = wide ? "EXT-DIF-TYPE1-CRC64" : "T10-DIF-TYPE1-CRC";
			tag = 2;		/* the application tag */
		}
	} else if (ms) {
		name = "nop";
	}
	ret = pl_sysfs_put(dir, "format", "%s", name);
	ret = ret ?: pl_sysfs_put(dir, "tuple_size", "%u", ms);
	ret = ret ?: pl_sysfs_put(dir, "tag_size", "%u", tag);
	ret = ret ?: pl_sysfs_put(dir, "protection_interval_bytes", "%u", ms ? d->lba_size : 0);
	ret = ret ?: put_rw(dir, "read_verify", "%u", tag ? 1 : 0);
	ret = ret ?: put_rw(dir, "write_generate", "%u", tag ? 1 : 0);
	return ret ?: pl_sysfs_put(dir, "device_is_integrity_capable", "%u", tag ? 1 : 0);
}

/* A namespace's block device (nvmeXnY) or generic device (ngXnY), a child of its controller. */
static int build_ns(const char *root, const struct pl_devinfo *c, const struct ctrl_facts *f,
		    const struct pl_devinfo *d)
{
	static struct nvme_id_ns ns;
	char dir[PATH_MAX], t[PATH_MAX], l[PATH_MAX], id[256];
	unsigned x = d->instance;
	struct pci_name p;
	uint64_t bytes = d->nlba * d->lba_size;
	bool blk = d->kind == PL_DEV_NS_BLK;
	struct pl_zone_info zi;
	int ret;

	if (pl_identify(c, d->nsid, NVME_IDENTIFY_CNS_NS, NVME_CSI_NVM, &ns) != 0) {
		pl_trace("sysfs: Identify Namespace %u of %s failed", d->nsid, c->name);
		memset(&ns, 0, sizeof(ns));
	}
	pci_name(x, &p);
	ret = ctrl_path(dir, root, x, d->name);
	ret = ret ?: pl_sysfs_mkdirs(dir);
	ret = ret ?: pl_sysfs_put(dir, "dev", "%u:%u", d->major, d->minor);
	ret = ret ?: put_rw(dir, "uevent", "MAJOR=%u\nMINOR=%u\nDEVNAME=%s%s", d->major, d->minor,
			 d->name, blk ? "\nDEVTYPE=disk" : "");
	ret = ret ?: pl_sysfs_path(l, "%s/device", dir);
	ret = ret ?: pl_sysfs_path(t, "../../nvme%u", x);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(t, "../../devices/%s/%s/nvme/nvme%u/%s", p.bus, p.addr, x, d->name);
	if (!blk) {
		ret = ret ?: pl_sysfs_path(l, "%s/sys/class/nvme-generic/%s", root, d->name);
		ret = ret ?: pl_sysfs_link(t, l);
		ret = ret ?: pl_sysfs_path(l, "%s/sys/dev/char/%u:%u", root, d->major, d->minor);
		return ret ?: pl_sysfs_link(t, l);
	}
	ret = ret ?: pl_sysfs_path(l, "%s/sys/class/block/%s", root, d->name);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/dev/block/%u:%u", root, d->major, d->minor);
	ret = ret ?: pl_sysfs_link(t, l);
	ret = ret ?: pl_sysfs_path(t, "../devices/%s/%s/nvme/nvme%u/%s", p.bus, p.addr, x, d->name);
	ret = ret ?: pl_sysfs_path(l, "%s/sys/block/%s", root, d->name);
	ret = ret ?: pl_sysfs_link(t, l);

	ret = ret ?: pl_sysfs_put(dir, "size", "%llu", (unsigned long long)(bytes >> 9));
	ret = ret ?: pl_sysfs_put(dir, "nsid", "%u", d->nsid);
	wwid(id, sizeof(id), &ns, f, d->nsid);
	ret = ret ?: pl_sysfs_put(dir, "wwid", "%s", id);
	if (!all_zero(ns.nguid, sizeof(ns.nguid))) {
		const uint8_t *g = ns.nguid;

		ret = ret ?: pl_sysfs_put(dir, "nguid",
				 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10],
				 g[11], g[12], g[13], g[14], g[15]);
	}
	if (!all_zero(ns.eui64, sizeof(ns.eui64))) {
		const uint8_t *e = ns.eui64;

		ret = ret ?: pl_sysfs_put(dir, "eui", "%02x %02x %02x %02x %02x %02x %02x %02x",
				 e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]);
	}
	ret = ret ?: pl_sysfs_put(dir, "ro", "0");
	ret = ret ?: pl_sysfs_put(dir, "removable", "0");
	ret = ret ?: pl_sysfs_put(dir, "hidden", "0");
	ret = ret ?: pl_sysfs_put(dir, "range", "0");
	ret = ret ?: pl_sysfs_put(dir, "ext_range", "256");
	ret = ret ?: pl_sysfs_put(dir, "capability", "50");
	ret = ret ?: pl_sysfs_path(l, "%s/integrity", d->name);
	ret = ret ?: ctrl_path(dir, root, x, l);
	ret = ret ?: pl_sysfs_mkdirs(dir);
	ret = ret ?: build_integrity(dir, c, d, &ns);
	ret = ret ?: pl_sysfs_path(l, "%s/queue", d->name);
	ret = ret ?: ctrl_path(dir, root, x, l);
	ret = ret ?: pl_sysfs_mkdirs(dir);
	ret = ret ?: pl_sysfs_put(dir, "logical_block_size", "%u", d->lba_size);
	ret = ret ?: pl_sysfs_put(dir, "physical_block_size", "%u", d->lba_size);
	ret = ret ?: pl_sysfs_put(dir, "hw_sector_size", "%u", d->lba_size);
	ret = ret ?: pl_sysfs_put(dir, "minimum_io_size", "%u", d->lba_size);
	ret = ret ?: pl_sysfs_put(dir, "optimal_io_size", "0");
	ret = ret ?: pl_sysfs_put(dir, "max_hw_sectors_kb", "2048");
	ret = ret ?: put_rw(dir, "max_sectors_kb", "1280");
	ret = ret ?: pl_sysfs_put(dir, "max_segments", "128");
	ret = ret ?: put_rw(dir, "nr_requests", "1023");
	ret = ret ?: put_rw(dir, "rotational", "0");
	pl_zone_info(c, d, &zi);
	ret = ret ?: pl_sysfs_put(dir, "zoned", zi.zoned ? "host-managed" : "none");
	ret = ret ?: pl_sysfs_put(dir, "chunk_sectors", "%llu", (unsigned long long)zi.zone_sectors);
	ret = ret ?: pl_sysfs_put(dir, "nr_zones", "%u", zi.nr_zones);
	ret = ret ?: pl_sysfs_put(dir, "max_open_zones", "%u", zi.max_open);
	ret = ret ?: pl_sysfs_put(dir, "max_active_zones", "%u", zi.max_active);
	ret = ret ?: pl_sysfs_put(dir, "zone_append_max_bytes", "%u", zi.append_max_bytes);
	ret = ret ?: put_rw(dir, "scheduler", "[none]");
	ret = ret ?: pl_sysfs_put(dir, "discard_granularity", "%u", d->lba_size);
	ret = ret ?: put_rw(dir, "discard_max_bytes", "2199023255040");
	ret = ret ?: put_rw(dir, "write_cache", "write back");
	/* the block layer's tunables, Linux's defaults for a non-rotational disk */
	ret = ret ?: put_rw(dir, "read_ahead_kb", "128");
	ret = ret ?: put_rw(dir, "nomerges", "0");
	ret = ret ?: put_rw(dir, "rq_affinity", "1");
	ret = ret ?: put_rw(dir, "io_poll", "0");
	ret = ret ?: put_rw(dir, "io_poll_delay", "-1");
	ret = ret ?: put_rw(dir, "wbt_lat_usec", "2000");
	ret = ret ?: put_rw(dir, "iostats", "1");
	ret = ret ?: put_rw(dir, "add_random", "0");
	return ret;
}

static const struct pl_devinfo *ctrl_of(const struct pl_devinfo **v, unsigned n, unsigned x)
{
	for (unsigned i = 0; i < n; i++)
		if (v[i]->kind == PL_DEV_CTRL && v[i]->instance == x)
			return v[i];
	return NULL;
}

/* Is name (an entry of a directory of the tree) one of the devices in v? */
static bool listed(const struct pl_devinfo **v, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(v[i]->name, name))
			return true;
	return false;
}

static void rm_tree(const char *path)
{
	char cmd[PATH_MAX];
	struct stat st;

	if (lstat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	/* a namespace directory: attribute files and one level of queue/ */
	if (snprintf(cmd, sizeof(cmd), "%s/queue", path) < (int)sizeof(cmd)) {
		static const char *const q[] = {
			"logical_block_size", "physical_block_size", "hw_sector_size",
			"minimum_io_size", "optimal_io_size", "max_hw_sectors_kb",
			"max_sectors_kb", "max_segments", "nr_requests", "rotational", "zoned",
			"scheduler", "discard_granularity", "discard_max_bytes", "write_cache",
			"chunk_sectors", "nr_zones", "max_open_zones", "max_active_zones",
			"zone_append_max_bytes", "read_ahead_kb", "nomerges", "rq_affinity", "io_poll",
			"io_poll_delay", "wbt_lat_usec", "iostats", "add_random",
		};
		char f[PATH_MAX];

		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
			if (snprintf(f, sizeof(f), "%s/%s", cmd, q[i]) < (int)sizeof(f))
				unlink(f);
		rmdir(cmd);
	}
	if (snprintf(cmd, sizeof(cmd), "%s/integrity", path) < (int)sizeof(cmd)) {
		static const char *const g[] = {
			"format", "tuple_size", "tag_size", "protection_interval_bytes",
			"read_verify", "write_generate", "device_is_integrity_capable",
		};
		char f[PATH_MAX];

		for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
			if (snprintf(f, sizeof(f), "%s/%s", cmd, g[i]) < (int)sizeof(f))
				unlink(f);
		rmdir(cmd);
	}
	static const char *const a[] = {
		"dev", "uevent", "device", "size", "nsid", "wwid", "nguid", "eui", "ro",
		"removable", "hidden", "range", "ext_range", "capability",
	};
	char f[PATH_MAX];

	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++)
		if (snprintf(f, sizeof(f), "%s/%s", path, a[i]) < (int)sizeof(f))
			unlink(f);
	rmdir(path);
}

/*
 * Namespaces deleted or detached since the tree was made (nvme delete-ns,
 * detach-ns): their placeholders, links and directories go, as Linux
 * removes the devices.
 */
static void prune(const char *root, const struct pl_devinfo **v, unsigned n)
{
	static const char *const dirs[] = { "dev", "sys/block", "sys/class/block",
					    "sys/class/nvme-generic" };
	char path[PATH_MAX], ent[PATH_MAX];

	for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++) {
		DIR *dp;
		struct dirent *e;

		if (pl_sysfs_path(path, "%s/%s", root, dirs[k]))
			continue;
		dp = opendir(path);
		if (!dp)
			continue;
		while ((e = readdir(dp))) {
			unsigned x, y;
			char tail;

			if (e->d_name[0] == '.' || listed(v, n, e->d_name))
				continue;
			if (sscanf(e->d_name, "nvme%un%u%c", &x, &y, &tail) != 2 &&
			    sscanf(e->d_name, "ng%un%u%c", &x, &y, &tail) != 2)
				continue;
			if (pl_sysfs_path(ent, "%s/%s", path, e->d_name))
				continue;
			unlink(ent);
			if (!ctrl_path(ent, root, x, e->d_name))
				rm_tree(ent);
		}
		closedir(dp);
	}
	/* sys/dev links of removed devices dangle now: drop them */
	for (int k = 0; k < 2; k++) {
		DIR *dp;
		struct dirent *e;

		if (pl_sysfs_path(path, "%s/sys/dev/%s", root, k ? "block" : "char"))
			continue;
		dp = opendir(path);
		if (!dp)
			continue;
		while ((e = readdir(dp))) {
			struct stat st;

			if (e->d_name[0] == '.' || pl_sysfs_path(ent, "%s/%s", path, e->d_name))
				continue;
			if (stat(ent, &st) && errno == ENOENT)
				unlink(ent);
		}
		closedir(dp);
	}
}

/*
 * Remove a directory of the tree and what is in it (its files, links and
 * directories, never following a link: the tree's are relative links
 * into itself).
 */
static void rm_rf(const char *path)
{
	char ent[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *dp;

	if (lstat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	dp = opendir(path);
	if (dp) {
		while ((e = readdir(dp))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			if (snprintf(ent, sizeof(ent), "%s/%s", path, e->d_name) < (int)sizeof(ent))
				rm_rf(ent);
		}
		closedir(dp);
	}
	rmdir(path);
}

/*
 * Controllers the list no longer has (a PCI function removed through its
 * remove file, ctlfiles.c, or a controller the daemon dropped): their
 * node, their PCI function with everything below it, its bus and driver
 * links and their subsystem go, as Linux's removal of the function takes
 * its devices with it. Their namespaces are prune()'s, links left
 * dangling too.
 */
static void prune_ctrls(const char *root, const struct pl_devinfo **v, unsigned n)
{
	char cls[PATH_MAX], path[PATH_MAX], rel[PATH_MAX];
	struct dirent *e;
	DIR *dp;

	if (pl_sysfs_path(cls, "%s/sys/class/nvme", root) || !(dp = opendir(cls)))
		return;
	while ((e = readdir(dp))) {
		struct pci_name p;
		unsigned x;
		char tail;

		if (sscanf(e->d_name, "nvme%u%c", &x, &tail) != 1 || listed(v, n, e->d_name))
			continue;
		pci_name(x, &p);
		if (!pl_sysfs_path(path, "%s/dev/nvme%u", root, x))
			unlink(path);
		if (!pl_sysfs_path(path, "%s/sys/bus/pci/devices/%s", root, p.addr))
			unlink(path);
		if (!pl_sysfs_path(path, "%s/sys/bus/pci/drivers/nvme/%s", root, p.addr))
			unlink(path);
		if (!pl_sysfs_path(path, "%s/sys/class/nvme-subsystem/nvme-subsys%u", root, x))
			unlink(path);
		if (!pl_sysfs_path(path, "%s/sys/devices/virtual/nvme-subsystem/nvme-subsys%u",
				   root, x))
			rm_rf(path);
		if (!pl_sysfs_path(rel, "%s/sys/devices/%s/%s", root, p.bus, p.addr))
			rm_rf(rel);
		if (!pl_sysfs_path(path, "%s/%s", cls, e->d_name))
			unlink(path);
	}
	closedir(dp);
}

int pl_sysfs_ns(const char *root, const struct pl_devinfo *c, const struct pl_devinfo *d)
{
	static struct ctrl_facts f;

	ctrl_facts(c, &f);
	return build_ns(root, c, &f, d);
}

/* Make the tree say what pl_devinfo_list() says now. Under the lock. */
static int sync_locked(const char *root)
{
	static const char *const top[] = {
		"dev", "sys/class/nvme", "sys/class/nvme-generic", "sys/class/nvme-subsystem",
		"sys/class/block", "sys/block", "sys/dev/char", "sys/dev/block",
		"sys/devices/virtual/nvme-subsystem", "sys/bus/pci/devices", "sys/bus/pci/drivers/nvme",
	};
	static const struct pl_devinfo *v[MAX_DEVS];
	static struct ctrl_facts facts;
	char path[PATH_MAX];
	unsigned n;
	int ret;

	for (size_t i = 0; i < sizeof(top) / sizeof(top[0]); i++) {
		ret = dir_at(path, "%s/%s", root, top[i]);
		if (ret)
			return ret;
	}
	n = pl_devinfo_list(v, MAX_DEVS);
	for (unsigned i = 0; i < n; i++) {
		ret = placeholder(root, v[i]->name);
		if (ret)
			return ret;
	}
	/* controllers first (devinfo's order), each followed by its namespaces */
	for (unsigned i = 0; i < n; i++) {
		const struct pl_devinfo *c = v[i];

		if (c->kind != PL_DEV_CTRL)
			continue;
		ctrl_facts(c, &facts);
		ret = build_ctrl(root, c, &facts);
		for (unsigned j = 0; !ret && j < n; j++)
			if (v[j]->kind != PL_DEV_CTRL && v[j]->instance == c->instance)
				ret = build_ns(root, c, &facts, v[j]);
		if (ret)
			return ret;
	}
	for (unsigned i = 0; i < n; i++)
		if (v[i]->kind != PL_DEV_CTRL && !ctrl_of(v, n, v[i]->instance))
			pl_trace("sysfs: %s has no controller in the device list", v[i]->name);
	prune_ctrls(root, v, n);
	prune(root, v, n);
	/* controllers of one subsystem under one head: Linux's multipath layout */
	return pl_sysfs_mpath(root, v, n);
}

bool pl_sysfs_lock_nowait;

static int lock_root(const char *root)
{
	char path[PATH_MAX];
	int fd;

	if (pl_sysfs_path(path, "%s/.lock", root))
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | (pl_sysfs_lock_nowait ? LOCK_NB : 0))) {
		if (errno != EINTR) {
			int ret = -errno;

			close(fd);
			return ret;
		}
	}
	return fd;
}

int pl_sysfs_build(const char *root)
{
	char ready[PATH_MAX];
	int lk, ret;

	if (pl_sysfs_path(ready, "%s/.ready", root))
		return -ENAMETOOLONG;
	if (!access(ready, F_OK)) /* the common case: another process made it */
		return 0;
	if (mkdir(root, 0700) && errno != EEXIST)
		return -errno;
	lk = lock_root(root);
	if (lk < 0)
		return lk;
	ret = 0;
	if (access(ready, F_OK)) {
		ret = sync_locked(root);
		ret = ret ?: put_text(ready, "", ATTR_RO);
	}
	close(lk); /* drops the flock */
	return ret;
}

int pl_sysfs_sync(const char *root)
{
	int lk = lock_root(root), ret;

	if (lk < 0)
		return lk;
	ret = sync_locked(root);
	close(lk);
	return ret;
}

/* The controller whose PCI function's resource0 is path, or NULL. */
static const struct pl_devinfo *regs_ctrl(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const struct pl_devinfo *c = NULL;
	struct dirent *e;
	DIR *dp;

	if (!slash || pl_sysfs_path(dir, "%.*s/nvme", (int)(slash - path), path))
		return NULL;
	dp = opendir(dir);
	if (!dp)
		return NULL;
	while ((e = readdir(dp)) && !c) {
		unsigned x;
		char tail;

		if (sscanf(e->d_name, "nvme%u%c", &x, &tail) == 1)
			c = pl_devinfo(e->d_name);
	}
	closedir(dp);
	return c && c->kind == PL_DEV_CTRL ? c : NULL;
}

int pl_sysfs_regs(const char *path)
{
	const struct pl_devinfo *c = regs_ctrl(path);

	return c ? put_regs(path, c) : -ENOENT;
}

const struct pl_devinfo *pl_sysfs_regs_ctrl(const char *path)
{
	return regs_ctrl(path);
}

int pl_regs_now(const struct pl_devinfo *c, void *bar, size_t len)
{
	struct ucmd_engine *e = pl_engine();
	int fd, ret;

	if (!e)
		return -errno;
	memset(bar, 0, len);
	fd = pl_private_open(e, c->name, O_RDONLY);
	if (fd < 0)
		return fd;
	ret = ucmd_nvme_regs_read(e, fd, 0, bar, len < 0x1000 ? len : 0x1000);
	pl_private_close(e, fd);
	return ret;
}
