/* SPDX-License-Identifier: MIT */
/*
 * getdents64 for a static program (sv.h): every call comes here (readdir
 * and a program's own instruction alike), and x86-64's old getdents (the
 * same listing in its struct linux_dirent records, d_type the record's last
 * byte), so that a listing of /dev shows
 * ucmd's devices and none of the host's NVMe nodes, as the preload's
 * listing does for a dynamic program (dirs.c). The call is made here on a
 * copy of the program's descriptor (pidfd_getfd: the same open file, so
 * the same position), never continued: the program could make the number
 * name /dev between our look and the kernel's. The records go to the
 * program's buffer through a bounce buffer of ours (at most SV_DENTS_MAX
 * bytes per call, as a short answer is Linux's too).
 *
 * /dev (the host's directory, whatever path opened it): the host's entries
 * less its NVMe nodes, then ucmd's devices (nvmeXnY a block device, the
 * others character devices). Its position is the index of the next entry,
 * set on the open file after each call (tmpfs and devtmpfs take any
 * offset), so lseek, rewinddir and a dup behave as on Linux. A directory
 * of the host's /sys that the preload's tree has too (/sys/block,
 * /sys/class...) is the preload's merged listing (dirs_merge.c, sys_merged
 * below), the same code as a dynamic program's. Any other directory is
 * the kernel's own listing (the tree's own directories, which opens of
 * /sys/class/nvme... gave: sv_sysfs.c). A device or ring descriptor of
 * ours is ENOTDIR, as Linux's device nodes and rings.
 *
 * A dynamic program's calls (--dirs: the preload has the devices its libc
 * opened) are served the same for /dev and the merged directories; for
 * any other directory they go on to the kernel
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE), which costs half of making the call
 * here. A program that moves /dev onto
 * the number between our look and the kernel's gets the host's /dev names
 * (names only: every open is judged, sv_open.c); none does by accident.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"
#include "preload/sv.h"

#define SV_DENTS_MAX (64u * 1024)

/* The host's /dev less its NVMe nodes, then ucmd's devices: up to max in out; the count. */
static int dev_listing(struct sv *s, struct pl_dirent *out, int max)
{
	DIR *d = opendir("/dev");
	struct dirent *de;
	const char **names = s->names, *fresh[256];
	int n = 0, nr = s->nr_names, got;

	/*
	 * The devices follow the daemon's list (hot-plug), as a dynamic
	 * program's preload's do: asked again at each listing.
	 */
	got = ucmd_device_names(s->e, fresh, 256);
	if (got >= 0) {
		names = fresh;
		nr = got < 256 ? got : 256;
	}

	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		if (pl_path_dev_name(de->d_name))
			continue;	/* the host's NVMe nodes: never shown */
		snprintf(out[n].name, sizeof(out[n].name), "%s", de->d_name);
		out[n].type = de->d_type;
		out[n].ino = de->d_ino;
		n++;
	}
	closedir(d);
	for (int i = 0; i < nr && n < max; i++) {
		const char *nm = names[i];

		/* the daemon's other devices (its null device) are no /dev node of ours */
		if (!pl_path_dev_name(nm) || pl_name_removed(nm))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", nm);
		out[n].type = !strncmp(nm, "nvme", 4) && strchr(nm + 4, 'n') ? DT_BLK : DT_CHR;
		out[n].ino = 0x75636d6400000000ull + (uint64_t)i;	/* "ucmd", apart from tmpfs's */
		n++;
	}
	return n;
}

/*
 * Records of entries pos.. into buf (count bytes), getdents's (old) or
 * getdents64's: bytes written, *next the next index.
 */
static long dev_records(const struct pl_dirent *e, int n, int64_t pos, char *buf, size_t count,
			bool old, int64_t *next)
{
	size_t used = 0;
	int64_t i;

	for (i = pos < 0 ? 0 : pos; i < n; i++) {
		size_t len = pl_dirent_rec_len(old, e[i].name);

		if (used + len > count)
			break;
		pl_dirent_rec_put(old, buf + used, len, e[i].ino, i + 1, e[i].type, e[i].name);
		used += len;
	}
	*next = i;
	/* not even one record fits: the kernel's answer */
	return !used && i < n ? -EINVAL : (long)used;
}

static bool is_host_dev(struct sv *s, const struct stat *st)
{
	struct stat dev;

	if (!s->dev_ino) {
		if (stat("/dev", &dev))
			return false;
		s->dev_dev = dev.st_dev;
		s->dev_ino = dev.st_ino;
	}
	return s->dev_dev == st->st_dev && s->dev_ino == st->st_ino;
}

/* The program's descriptor fd, as a descriptor of ours on the same open file; or -errno. */
static int their_fd(struct sv *s, pid_t tg, int fd)
{
	int pidfd = tg == s->pid ? s->pidfd : (int)syscall(SYS_pidfd_open, tg, 0), dup;

	if (pidfd < 0)
		return -ESRCH;
	dup = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	if (dup < 0)
		dup = -errno;
	if (pidfd != s->pidfd)
		close(pidfd);
	return dup;
}

/*
 * A listing of a directory of the host's /sys that the preload's tree has
 * too (/sys/block, /sys/class,
 * /sys/devices/pci0000:00...): the preload's merged listing
 * (dirs_merge.c), positions as /dev's. True when it answered; false for
 * any other directory (the kernel's own listing: the tree's directories
 * themselves, opened in the tree, list as they are).
 */
static bool sys_merged(struct sv *s, const struct seccomp_notif *req, int fd, size_t count,
		       struct sv_ans *a)
{
	char link[64], dir[PATH_MAX];
	struct pl_dirent *e = NULL;
	struct statfs sfs;
	unsigned n = 0;
	int64_t pos, next;
	char *buf;
	ssize_t len;
	long ret;

	if (fstatfs(fd, &sfs) || sfs.f_type != SYSFS_MAGIC)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, dir, sizeof(dir) - 1);
	if (len <= 0)
		return false;
	dir[len] = '\0';
	if (pl_dir_listing(dir, &e, &n))
		return false;
	buf = malloc(count ? count : 1);
	pos = lseek(fd, 0, SEEK_CUR);
	ret = buf ? dev_records(e, (int)n, pos, buf, count, req->data.nr == __NR_getdents, &next) :
		    -ENOMEM;
	if (ret >= 0 && lseek(fd, next, SEEK_SET) < 0)
		ret = -errno;
	if (ret > 0 && sv_mem_out((pid_t)req->pid, req->data.args[1], buf, (size_t)ret))
		ret = -EFAULT;
	sv_trace(s, "%s of %s: the host's and the tree's: %ld",
		 req->data.nr == __NR_getdents ? "getdents" : "getdents64", dir, ret);
	free(buf);
	free(e);
	if (ret < 0)
		a->error = (int)ret;
	else
		a->val = ret;
	return true;
}

void sv_getdents(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	struct sv_fd *f = sv_slot_of(s, g[0]);
	size_t count = (uint32_t)g[2] > SV_DENTS_MAX ? SV_DENTS_MAX : (uint32_t)g[2];
	bool old = req->data.nr == __NR_getdents;	/* struct linux_dirent records */
	struct stat st;
	char *buf = NULL;
	long ret;
	int fd;

	if (f && f->kind != SV_FREE && !f->closed && tg == s->pid) {
		a->error = -ENOTDIR;
		return;
	}
	fd = their_fd(s, tg, (int)(uint32_t)g[0]);
	if (fd < 0) {
		a->error = fd == -ESRCH ? -EBADF : fd;
		return;
	}
	if (fstat(fd, &st)) {
		a->error = -errno;
		close(fd);
		return;
	}
	/* a directory of the host's /sys that the preload's tree has too: the merged listing */
	if (!is_host_dev(s, &st) && sys_merged(s, req, fd, count, a)) {
		close(fd);
		return;
	}
	if (s->dirs && !is_host_dev(s, &st)) {
		/* a dynamic program's other directories: the kernel's call, on its own descriptor */
		a->cont = true;
		close(fd);
		return;
	}
	buf = malloc(count ? count : 1);
	if (!buf) {
		ret = -ENOMEM;
	} else if (!is_host_dev(s, &st)) {
		ret = syscall(old ? SYS_getdents : SYS_getdents64, fd, buf, count);
		if (ret < 0)
			ret = -errno;
	} else {
		enum { MAX_ENTS = 4096 };
		struct pl_dirent *e = malloc(MAX_ENTS * sizeof(*e));
		int n = e ? dev_listing(s, e, MAX_ENTS) : -ENOMEM;
		int64_t pos = lseek(fd, 0, SEEK_CUR), next;

		ret = n;
		if (n >= 0) {
			ret = dev_records(e, n, pos, buf, count, old, &next);
			if (ret >= 0 && lseek(fd, next, SEEK_SET) < 0)
				ret = -errno;
		}
		free(e);
	}
	if (ret > 0 && sv_mem_out((pid_t)req->pid, g[1], buf, (size_t)ret))
		ret = -EFAULT;
	free(buf);
	close(fd);
	if (ret < 0)
		a->error = (int)ret;
	else
		a->val = ret;
}
