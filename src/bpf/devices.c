// SPDX-License-Identifier: MIT
/*
 * The NVMe devices a policy can name, as the kernel lists them in sysfs:
 * /dev/ngXnY (class nvme-generic), /dev/nvmeX (class nvme) and the block
 * devices /dev/nvmeXnY. Each gets its dev_t (what the program sees in the
 * file's inode), its namespace and block size, and its controller's
 * Commands Supported and Effects log (what makes a command "intrusive").
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/nvme_ioctl.h>
#include <linux/types.h>
#include <nvme/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "devices.h"
#include "ucmd_lsm.h"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	char *ok;

	if (!f)
		return -errno;
	ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return -EIO;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* "M:m" into the kernel's dev_t encoding (major << 20 | minor) */
static int read_dev(const char *path, uint32_t *dev)
{
	unsigned ma, mi;
	char buf[32];

	if (read_line(path, buf, sizeof(buf)) || sscanf(buf, "%u:%u", &ma, &mi) != 2)
		return -ENOENT;
	*dev = ma << 20 | mi;
	return 0;
}

/* the char major a driver registered, from /proc/devices, or 0 */
uint32_t ul_char_major(const char *driver)
{
	FILE *f = fopen("/proc/devices", "re");
	char line[128], name[64];
	bool chr = false;
	unsigned m;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Character", 9))
			chr = true;
		else if (!strncmp(line, "Block", 5))
			chr = false;
		else if (chr && sscanf(line, "%u %63s", &m, name) == 2 && !strcmp(name, driver)) {
			fclose(f);
			return m;
		}
	}
	fclose(f);
	return 0;
}

static unsigned block_shift(const char *blk)
{
	char path[256], buf[32];
	unsigned long bs;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/logical_block_size", blk);
	if (read_line(path, buf, sizeof(buf)))
		return 9;
	bs = strtoul(buf, NULL, 10);
	for (unsigned s = 9; s < 32; s++)
		if (1ul << s == bs)
			return s;
	return 9;
}

static uint32_t dev_nsid(const char *name)
{
	char path[300];
	int fd, id;

	snprintf(path, sizeof(path), "/dev/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	id = ioctl(fd, NVME_IOCTL_ID);
	close(fd);
	return id > 0 ? (uint32_t)id : 0;
}

static int add(struct ucmd_bpf_dev *devs, unsigned *n, const char *name, const char *devfile,
	       bool blk, unsigned kind)
{
	struct ucmd_bpf_dev *d;
	unsigned x = 0, y = 0;

	if (*n == UL_MAX_DEVS)
		return -E2BIG;
	d = &devs[*n];
	memset(d, 0, sizeof(*d));
	if (read_dev(devfile, &d->dev))
		return 0;	/* gone meanwhile */
	if (strlen(name) >= sizeof(d->name))
		return 0;	/* not a name the kernel gives NVMe devices */
	memcpy(d->name, name, strlen(name) + 1);
	d->blk = blk;
	d->kind = kind;
	if (kind == UL_DEV_NG)
		sscanf(name, "ng%un%u", &x, &y);
	else
		sscanf(name, "nvme%un%u", &x, &y);
	d->ctrl = x;
	if (kind != UL_DEV_CTRL) {
		char b[40];

		snprintf(b, sizeof(b), "nvme%un%u", x, y);
		d->lba_shift = block_shift(b);
		d->nsid = dev_nsid(name);
	}
	(*n)++;
	return 0;
}

static bool ns_name(const char *s, const char *prefix)
{
	unsigned x, y;
	char tail;

	return !strncmp(s, prefix, strlen(prefix)) &&
	       sscanf(s + strlen(prefix), "%un%u%c", &x, &y, &tail) == 2;
}

static bool ctrl_name(const char *s)
{
	unsigned x;
	char tail;

	return sscanf(s, "nvme%u%c", &x, &tail) == 1;
}

static int scan(const char *dir, struct ucmd_bpf_dev *devs, unsigned *n, unsigned kind)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return 0;	/* no such class: no such devices */
	while (!ret && (e = readdir(d))) {
		char path[512];
		bool ok = kind == UL_DEV_NG ? ns_name(e->d_name, "ng") :
			  kind == UL_DEV_CTRL ? ctrl_name(e->d_name) : ns_name(e->d_name, "nvme");

		if (!ok)
			continue;
		snprintf(path, sizeof(path), "%s/%s/dev", dir, e->d_name);
		ret = add(devs, n, e->d_name, path, kind == UL_DEV_BLK, kind);
	}
	closedir(d);
	return ret;
}

int ul_find_devices(struct ucmd_bpf_dev *devs, unsigned *n)
{
	int ret;

	*n = 0;
	if ((ret = scan("/sys/class/nvme-generic", devs, n, UL_DEV_NG)) ||
	    (ret = scan("/sys/class/nvme", devs, n, UL_DEV_CTRL)) ||
	    (ret = scan("/sys/block", devs, n, UL_DEV_BLK)))
		return ret;
	return 0;
}

/*
 * The Commands Supported and Effects log of controller x, with the effects
 * the driver knows whatever the log says (as ucmd's host driver and Linux's
 * nvme_init_known_nvm_effects()). A controller that cannot give it (or a
 * policy in force that refuses the loader's Get Log Page) gets those alone.
 */
int ul_read_effects(unsigned x, uint32_t eff[512])
{
	struct nvme_admin_cmd c = { 0 };
	char path[32];
	int fd, ret = 0;

	memset(eff, 0, 512 * sizeof(*eff));
	snprintf(path, sizeof(path), "/dev/nvme%u", x);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		c.opcode = nvme_admin_get_log_page;
		c.nsid = 0xffffffff;
		c.addr = (__u64)(uintptr_t)eff;
		c.data_len = 2048;		/* ACS and IOCS */
		c.cdw10 = NVME_LOG_LID_CMD_EFFECTS | ((2048 / 4 - 1) << 16);
		if (ioctl(fd, NVME_IOCTL_ADMIN_CMD, &c)) {
			ret = -EIO;
			memset(eff, 0, 512 * sizeof(*eff));
		} else {
			/* the zoned command set's own opcodes, as ucmd's host merges them */
			uint32_t z[512];

			c.addr = (__u64)(uintptr_t)z;
			c.cdw14 = (uint32_t)NVME_CSI_ZNS << 24;
			if (!ioctl(fd, NVME_IOCTL_ADMIN_CMD, &c))
				for (unsigned op = 0; op < 256; op++)
					if (!eff[256 + op])
						eff[256 + op] = z[256 + op];
		}
		close(fd);
	} else {
		ret = -errno;
	}
	eff[nvme_admin_format_nvm] |= NVME_CMD_EFFECTS_LBCC | NVME_CMD_EFFECTS_NCC |
				      NVME_CMD_EFFECTS_CSE_MASK;
	eff[nvme_admin_sanitize_nvm] |= NVME_CMD_EFFECTS_LBCC | NVME_CMD_EFFECTS_CSE_MASK;
	eff[nvme_admin_security_recv] &= ~(uint32_t)NVME_CMD_EFFECTS_CSE_MASK;
	eff[256 + nvme_cmd_read] |= NVME_CMD_EFFECTS_CSUPP;
	eff[256 + nvme_cmd_write] |= NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC;
	eff[256 + nvme_cmd_write_zeroes] |= NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC;
	eff[256 + nvme_cmd_write_uncor] |= NVME_CMD_EFFECTS_CSUPP | NVME_CMD_EFFECTS_LBCC;
	return ret;
}
