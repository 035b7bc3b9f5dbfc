/* SPDX-License-Identifier: MIT */
/*
 * The interposers define libc's own names (fstat and fstat64, fcntl and
 * fcntl64 as two symbols): without this, glibc's headers would rename the
 * first of each pair to the second. On 64-bit Linux both are one ABI.
 */
#undef _FILE_OFFSET_BITS
/*
 * ioctl(2) on device fds. The daemon serves the 64-bit-result passthrough
 * requests, NVME_IOCTL_ID and the vectored form, reading and writing the
 * program's memory itself (a bad address is EFAULT there). The older forms
 * programs still use -- libnvme 1.x issues NVME_IOCTL_ADMIN_CMD and
 * NVME_IOCTL_IO_CMD (a 32-bit result), nvme-cli's older paths
 * NVME_IOCTL_SUBMIT_IO -- are converted here to the 64-bit request the
 * kernel would build from them, and the result copied back as the kernel
 * copies it. The program's structure is read and written with
 * process_vm_readv/writev on ourselves, so a bad pointer is EFAULT as it is
 * from the kernel, never a crash in the preload.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/fs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <nvme/types.h>

#include "preload/passthru32.h"
#include "preload/preload.h"

/* The devices and the tree as the daemon now has them. */
static int rescan(void)
{
	const char *root;
	int ret = pl_devinfo_reload();

	if (!ret && (root = pl_root()))
		ret = pl_sysfs_sync(root);
	return ret;
}

/* After namespace management succeeds, the device list changes as Linux's does after its rescan. */
static void after_admin(const struct nvme_passthru_cmd64 *c, int ret)
{
	if (ret == 0 && (c->opcode == nvme_admin_ns_mgmt || c->opcode == nvme_admin_ns_attach ||
			 c->opcode == nvme_admin_format_nvm))
		rescan();
}

static int passthru64(int fd, unsigned long req, struct nvme_passthru_cmd64 *c)
{
	int ret = ucmd_ioctl(pl_engine(), fd, req, c);

	if (req == NVME_IOCTL_ADMIN64_CMD)
		after_admin(c, ret);
	return ret;
}

/* NVME_IOCTL_ADMIN_CMD / NVME_IOCTL_IO_CMD: struct nvme_passthru_cmd, result 32 bits. */
static int passthru32(int fd, unsigned long req, void *arg)
{
	struct nvme_passthru_cmd c;
	struct nvme_passthru_cmd64 c64;
	int ret = pl_copy_in(&c, arg, sizeof(c));

	if (ret)
		return ret;
	pl_passthru_widen(&c, &c64);
	ret = passthru64(fd, req == NVME_IOCTL_ADMIN_CMD ? NVME_IOCTL_ADMIN64_CMD :
				 NVME_IOCTL_IO64_CMD, &c64);
	/* the kernel writes the result back whenever the command ran, whatever its status */
	if (ret >= 0) {
		uint32_t res = (uint32_t)c64.result;

		if (pl_copy_out((char *)arg + offsetof(struct nvme_passthru_cmd, result), &res,
			     sizeof(res)))
			return -EFAULT;
	}
	return ret;
}

/* NVME_IOCTL_SUBMIT_IO: struct nvme_user_io, as the kernel's nvme_submit_io() builds it. */
static int submit_io(struct pl_file *f, int fd, void *arg)
{
	const struct pl_devinfo *d = f->dev;
	struct nvme_user_io io;
	struct nvme_passthru_cmd64 c;
	uint64_t len;
	int ret = pl_copy_in(&io, arg, sizeof(io));

	if (ret)
		return ret;
	if (io.flags)
		return -EINVAL;
	if (io.opcode != nvme_cmd_write && io.opcode != nvme_cmd_read &&
	    io.opcode != nvme_cmd_compare)
		return -EINVAL;
	if (!d->lba_size)
		return -EINVAL;
	len = ((uint64_t)io.nblocks + 1) * d->lba_size;
	if (len > UINT32_MAX)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.opcode = io.opcode;
	c.nsid = d->nsid;
	c.addr = io.addr;
	c.data_len = (uint32_t)len;
	c.metadata = io.metadata;
	c.metadata_len = io.metadata ? (uint32_t)(((uint64_t)io.nblocks + 1) * d->ms) : 0;
	c.cdw10 = (uint32_t)io.slba;
	c.cdw11 = (uint32_t)(io.slba >> 32);
	c.cdw12 = io.nblocks | ((uint32_t)io.control << 16);
	c.cdw13 = io.dsmgmt;
	c.cdw14 = io.reftag;
	c.cdw15 = io.apptag | ((uint32_t)io.appmask << 16);
	return ucmd_ioctl(pl_engine(), fd, NVME_IOCTL_IO64_CMD, &c);
}

/*
 * NVME_IOCTL_IO_CMD on the controller's device (nvme_dev_user_cmd): Linux
 * runs it on the controller's only namespace, with a warning in its log
 * (here: the trace). The daemon's driver does it, as the kernel's does: it
 * knows the controller's own namespace also when that is one path of a
 * multipath head, which has no device here to open.
 */
static int dev_user_cmd(struct pl_file *f, int fd, void *arg)
{
	pl_trace("%s: using deprecated NVME_IOCTL_IO_CMD ioctl on the char device", f->dev->name);
	return ucmd_ioctl(pl_engine(), fd, NVME_IOCTL_IO_CMD, arg);
}

static int nvme_ioctl(struct pl_file *f, int fd, unsigned long req, void *arg)
{
	switch (req) {
	case NVME_IOCTL_ID:
		return ucmd_ioctl(pl_engine(), fd, req, NULL);
	case NVME_IOCTL_IO_CMD:
		if (f->dev->kind == PL_DEV_CTRL)
			return dev_user_cmd(f, fd, arg);
		return passthru32(fd, req, arg);
	case NVME_IOCTL_ADMIN_CMD:
		return passthru32(fd, req, arg);
	case NVME_IOCTL_ADMIN64_CMD: {
		int ret = ucmd_ioctl(pl_engine(), fd, req, arg);
		struct nvme_passthru_cmd64 c;

		if (ret == 0 && !pl_copy_in(&c, arg, sizeof(c)))
			after_admin(&c, ret);
		return ret;
	}
	case NVME_IOCTL_IO64_CMD:
	case NVME_IOCTL_IO64_CMD_VEC:
		return ucmd_ioctl(pl_engine(), fd, req, arg);
	case NVME_IOCTL_SUBMIT_IO:
		if (f->dev->kind == PL_DEV_CTRL)
			return -ENOTTY;
		return submit_io(f, fd, arg);
	case NVME_IOCTL_RESET:
		/* the controller's device only, as in Linux; the daemon resets it */
		if (f->dev->kind != PL_DEV_CTRL)
			return -ENOTTY;
		return ucmd_ioctl(pl_engine(), fd, req, NULL);
	case NVME_IOCTL_RESCAN:
		/*
		 * Linux rescans the controller's namespaces; the daemon's
		 * devices are always current, so it is our view that catches up.
		 */
		if (f->dev->kind != PL_DEV_CTRL)
			return -ENOTTY;
		return rescan();
	default:
		return -ENOTTY;
	}
}

PL_EXPORT int ioctl(int fd, unsigned long req, ...)
{
	static int (*next)(int, unsigned long, ...);
	struct pl_file *f = pl_fd(fd);
	va_list ap;
	void *arg;
	int ret;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!f) {
		if (!next)
			next = pl_next("ioctl");
		ret = next(fd, req, arg);
		/*
		 * a placeholder's ENOTTY to a request of ours ('N', the block
		 * layer's 0x12; not isatty's): a device copied without libc? (fdmap.c)
		 */
		if (ret >= 0 || (_IOC_TYPE(req) != 'N' && _IOC_TYPE(req) != 0x12) ||
		    !(f = pl_fd_adopt(fd, errno)))
			return ret;
	}
	/* nvme_submit_user_cmd on a removed controller: blk_queue_enter's -ENODEV */
	if (pl_dev_gone(f->dev) && (_IOC_TYPE(req) == 'N' || f->dev->kind != PL_DEV_NS_BLK)) {
		errno = ENODEV;
		return -1;
	}
	/* a dead disk: its bios fail, its capacity is 0 (blk_mark_disk_dead) */
	if (pl_dev_gone(f->dev) && (req == BLKDISCARD || req == BLKSECDISCARD || req == BLKZEROOUT)) {
		errno = EIO;
		return -1;
	}
	if (pl_dev_gone(f->dev) && (req == BLKGETSIZE64 || req == BLKGETSIZE)) {
		uint64_t z64 = 0;
		unsigned long zl = 0;

		ret = req == BLKGETSIZE64 ? pl_copy_out(arg, &z64, sizeof(z64)) :
					    pl_copy_out(arg, &zl, sizeof(zl));
		if (ret) {
			errno = -ret;
			return -1;
		}
		return 0;
	}
	if (f->dev->kind == PL_DEV_NS_BLK) {
		ret = pl_blk_ioctl(f, fd, req, arg);
		if (ret != -2)
			return ret;
	}
	if (!pl_engine())
		return -1;
	ret = nvme_ioctl(f, fd, req, arg);
	if (ret == -ENOTTY)
		pl_trace("ioctl(%d, %#lx) on %s: not handled (ENOTTY)", fd, req, f->dev->name);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}
