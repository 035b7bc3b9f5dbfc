/* SPDX-License-Identifier: MIT */
/*
 * Calls on a device or ring descriptor of a static program (sv.h), or one
 * a dynamic program's own open got from sv_open.c (--dirs): ioctl,
 * fstat and its family, close; the read/write family, fsync and lseek are
 * sv_rw.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/nvme_ioctl.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"

/*
 * fstat of a device fd: what Linux shows of the node (char for nvmeX and
 * ngXnY, block for nvmeXnY; st_size 0 as for any device node), not the
 * placeholder directory: what a dynamic program's preload's fstat of the
 * same device says (the tree's placeholder, the preload's numbers:
 * sv_stat.c), so that fstat agrees with stat of the path (os.Stat), a
 * static program's as a dynamic one's; made up here only when there is no
 * tree. The numbers are the preload's (preload.h). The
 * program's glibc makes it newfstatat(fd, "", AT_EMPTY_PATH) or statx: a
 * path below one of our fds is ENOENT (the placeholder holds nothing).
 */
static int dev_stat(struct sv *s, const struct seccomp_notif *req, const struct sv_fd *f)
{
	const __u64 *g = req->data.args;
	unsigned minor = 0, major = f->blk ? PL_MAJOR_BLK : PL_MAJOR_NG;
	mode_t mode = f->blk ? S_IFBLK | 0660 : S_IFCHR | 0600;
	uint64_t buf = g[1];
	char path[8];

	if (!strchr(f->name + 4, 'n') && strncmp(f->name, "ng", 2))
		major = PL_MAJOR_CTRL;	/* nvmeX */
	for (int i = 0; i < s->nr_names; i++)
		if (!strcmp(s->names[i], f->name))
			minor = (unsigned)i;
	if (req->data.nr != __NR_fstat) {
		int ret = sv_str_in(req->pid, path, g[1], sizeof(path));
		unsigned flags = (unsigned)(req->data.nr == __NR_statx ? g[2] : g[3]);

		if (ret)
			return ret == -ENAMETOOLONG ? -ENOENT : ret;
		if (path[0] || !(flags & AT_EMPTY_PATH))
			return -ENOENT;
		buf = req->data.nr == __NR_statx ? g[4] : g[2];
	}
	/* the preload's answer for the same device (its tree): what stat of the path says */
	if (req->data.nr == __NR_statx) {
		struct statx sx;

		if (sv_tree_dev_stat(f->name, NULL, &sx))
			return sv_mem_out(req->pid, buf, &sx, sizeof(sx));
	} else {
		struct stat st;

		if (sv_tree_dev_stat(f->name, &st, NULL))
			return sv_mem_out(req->pid, buf, &st, sizeof(st));
	}
	if (req->data.nr == __NR_statx) {
		struct statx sx = { .stx_mask = STATX_BASIC_STATS, .stx_blksize = 4096,
				    .stx_nlink = 1, .stx_uid = getuid(), .stx_gid = getgid(),
				    .stx_mode = (uint16_t)mode, .stx_rdev_major = major,
				    .stx_rdev_minor = minor };

		return sv_mem_out(req->pid, buf, &sx, sizeof(sx));
	}
	struct stat st = { .st_mode = mode, .st_nlink = 1, .st_uid = getuid(), .st_gid = getgid(),
			   .st_rdev = makedev(major, minor), .st_blksize = 4096 };

	return sv_mem_out(req->pid, buf, &st, sizeof(st));
}

/*
 * ioctl: a block node's BLK* queries are answered here as the preload
 * answers them (blkdev.c), BLKFLSBUF has nothing to flush, BLKDISCARD,
 * BLKSECDISCARD and BLKZEROOUT are sv_own.c's (blkdev.c's checks, Dataset
 * Management and zeroes written, as the preload's); the rest (the
 * NVMe ioctls, which Linux serves on the block node too) go to the daemon,
 * which reads and writes the argument in the program's memory, but the
 * 32-bit passthrough forms, which the daemon does not take (sv_pass32.c).
 */
static int64_t dev_ioctl(struct sv *s, const struct seccomp_notif *req, struct sv_fd *f)
{
	const __u64 *g = req->data.args;
	unsigned long cmd = (unsigned long)g[1];
	uint64_t val;
	int n;

	if (f->blk) {
		n = pl_blk_query(&f->geo, cmd, &val);
		if (n >= 0)
			return sv_mem_out((pid_t)req->pid, g[2], &val, (size_t)n);
		if (cmd == BLKFLSBUF)
			return 0;
		if (cmd == BLKDISCARD || cmd == BLKSECDISCARD || cmd == BLKZEROOUT)
			return sv_own_range_ioctl(s, (pid_t)req->pid, f, cmd, g[2]);
	}
	/* the 32-bit forms: the daemon's are the 64-bit ones (on nvmeX, IO_CMD is the daemon's own) */
	if (cmd == NVME_IOCTL_ADMIN_CMD ||
	    (cmd == NVME_IOCTL_IO_CMD && (f->blk || !strncmp(f->name, "ng", 2))))
		return sv_passthru32(s, (pid_t)req->pid, f, cmd, g[2]);
	return ucmd_ioctl(s->e, (int)(uint32_t)g[0], cmd, (void *)(uintptr_t)g[2]);
}

/*
 * A call on a device whose controller was removed (ctlfiles.c), as Linux's
 * fd on an unbound driver answers it: the NVMe ioctls ENODEV (the queue is
 * dying), a disk's reads, writes, flushes, discards EIO and its size 0 (the
 * disk is dead);
 * true when answered so (*ret), false for what still works as before (stat,
 * lseek, the disk's block sizes, a char device's EINVAL to a read).
 */
static bool gone_call(struct sv *s, const struct seccomp_notif *req, struct sv_fd *f, int64_t *ret)
{
	unsigned long cmd = (unsigned long)req->data.args[1];
	int nr = req->data.nr;

	if (nr == __NR_ioctl) {
		if (_IOC_TYPE(cmd) == 'N' || !f->blk)
			*ret = -ENODEV;
		else if (cmd == BLKDISCARD || cmd == BLKSECDISCARD || cmd == BLKZEROOUT)
			*ret = -EIO;
		else if (cmd == BLKGETSIZE64 || cmd == BLKGETSIZE) {
			uint64_t zero = 0;	/* a dead disk's capacity (blk_mark_disk_dead) */

			*ret = sv_mem_out((pid_t)req->pid, req->data.args[2], &zero,
					  cmd == BLKGETSIZE64 ? sizeof(uint64_t) : sizeof(long));
		} else
			*ret = dev_ioctl(s, req, f);	/* the block sizes: the open's */
		return true;
	}
	if (!f->blk || nr == __NR_fstat || nr == __NR_newfstatat || nr == __NR_statx ||
	    nr == __NR_lseek)
		return false;
	*ret = -EIO;
	return true;
}

void sv_fd_call(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	struct sv_fd *f = sv_slot_of(s, g[0]);
	int fd = (int)(uint32_t)g[0], nr = req->data.nr;
	int64_t ret;

	if (!f || f->kind == SV_FREE || f->closed) {
		a->cont = true;	/* a number of ours we did not give: the kernel's */
		return;
	}
	if (f->kind == SV_ATTR) {
		bool cont = false;

		if (nr == __NR_close) {
			if (tg == s->pid) {
				sv_desc_put(s, f);
				memset(f, 0, sizeof(*f));
			}
			a->cont = true;
			return;
		}
		/* a vfork child's write too: judged in the memory it shares */
		ret = sv_attr_call(s, req, f, &cont);
		if (cont)
			a->cont = true;
		else if (ret < 0)
			a->error = (int)ret;
		else
			a->val = ret;
		return;
	}
	if (nr == __NR_close) {
		if (tg == s->pid && f->kind == SV_DEV) {
			sv_own_close(s, f);
			if (!f->attach && !f->attach_err)
				ucmd_close(s->e, fd);
			sv_desc_put(s, f);
			memset(f, 0, sizeof(*f));
			sv_svtab_update(s, fd);
		} else if (tg == s->pid && f->foreign) {
			sv_desc_put(s, f);	/* the parent's ring: nothing of it is ours here */
			memset(f, 0, sizeof(*f));
		} else if (tg == s->pid) {
			/* a registered ring outlives its descriptor, as on Linux */
			f->closed = true;
			sv_desc_put(s, f);
			sv_ring_put(s, f);
		}
		a->cont = true;	/* the kernel closes the program's descriptor */
		return;
	}
	if (tg != s->pid) {
		a->error = -EBADF;	/* a vfork child: no process of its own here */
		return;
	}
	/* inherited across fork: opened on this process's connection at its first use */
	if (f->kind == SV_DEV && f->attach) {
		ret = sv_adopt(s);
		if (!ret && f->attach)
			sv_attach(s, f);
		if (ret) {
			a->error = (int)ret;
			return;
		}
	}
	if (f->kind == SV_DEV && f->attach_err) {
		a->error = f->attach_err;
		return;
	}
	if (f->kind == SV_RING) {
		if (nr == __NR_fstat || nr == __NR_newfstatat || nr == __NR_statx) {
			a->cont = true;	/* the memfd's own, as Linux shows an anon inode */
			return;
		}
		a->error = nr == __NR_ioctl ? -ENOTTY : nr == __NR_lseek ? -ESPIPE : -EINVAL;
		return;
	}
	if (pl_name_gone(f->name) && gone_call(s, req, f, &ret))
		goto out;
	switch (nr) {
	case __NR_ioctl:
		ret = dev_ioctl(s, req, f);
		break;
	case __NR_fstat:
	case __NR_newfstatat:
	case __NR_statx:
		ret = dev_stat(s, req, f);
		break;
	default:
		ret = sv_blk_call(s, req, f);
		break;
	}
out:
	if (ret < 0)
		a->error = (int)ret;
	else
		a->val = ret;
}
