/* SPDX-License-Identifier: MIT */
/*
 * open, openat, creat for a static program (sv.h), and for a dynamic one
 * (--dirs): every open it makes, its libc's and its own instruction's. Paths: once read, the
 * notification is checked to be still pending (SECCOMP_IOCTL_NOTIF_ID_VALID)
 * and every open is made here, never continued: the program could change
 * the path between our read and the kernel's. A file this process opens for
 * the program that turns out to be an NVMe node of the host (a symbolic
 * link, "..", a relative path into /dev) is ENOENT, so the host's drives
 * are never reached. A descendant is served as a process of its own
 * (sv_fork.c); one that shares its parent's memory (vfork) is not: its
 * device opens fail (EOPNOTSUPP).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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

#include <linux/io_uring.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"
#include "preload/sv_ids.h"

/*
 * What decides a thread's access to files: its credentials and umask
 * (sv_ids.h), its root and mount namespace as (dev, ino). 0 or -errno.
 */
struct sv_view {
	struct sv_ids ids;
	dev_t root_dev, mnt_dev;
	ino_t root_ino, mnt_ino;
};

static int view_of(pid_t tid, struct sv_view *v)
{
	char path[64];
	struct stat st;
	int ret = sv_ids_of(tid, &v->ids);

	if (ret)
		return ret;
	snprintf(path, sizeof(path), tid ? "/proc/%d/root" : "/proc/self/root", (int)tid);
	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	v->root_dev = st.st_dev;
	v->root_ino = st.st_ino;
	snprintf(path, sizeof(path), tid ? "/proc/%d/ns/mnt" : "/proc/self/ns/mnt", (int)tid);
	if (stat(path, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	v->mnt_dev = st.st_dev;
	v->mnt_ino = st.st_ino;
	return 0;
}

static struct sv_view own_view;
static int own_view_err;
static pthread_once_t own_view_once = PTHREAD_ONCE_INIT;

static void own_view_init(void)
{
	own_view_err = view_of(0, &own_view);
}

/*
 * Opens are made here with our credentials, root and mount namespace, the
 * ones the program started with. A thread that has changed any of them
 * since (a root program dropping to a user, a chroot, an unshare) would
 * have its files opened with rights it no longer has: -EACCES here, and
 * its open is made as it would make it (sv_open_as.c), never with ours.
 * v: the thread's view, whatever the answer.
 */
static int same_view(pid_t tid, struct sv_view *v)
{
	int ret;

	pthread_once(&own_view_once, own_view_init);
	if (own_view_err)
		return own_view_err;
	ret = view_of(tid, v);
	if (ret)
		return ret;
	if (!sv_ids_same(&v->ids, &own_view.ids) || v->root_dev != own_view.root_dev ||
	    v->root_ino != own_view.root_ino || v->mnt_dev != own_view.mnt_dev ||
	    v->mnt_ino != own_view.mnt_ino)
		return -EACCES;
	return 0;
}

/* The thread's root and mount namespace are ours (after same_view): the tree's path is its /sys. */
static bool same_place(const struct sv_view *v)
{
	return v->root_dev == own_view.root_dev && v->root_ino == own_view.root_ino &&
	       v->mnt_dev == own_view.mnt_dev && v->mnt_ino == own_view.mnt_ino;
}

static bool known_device(struct sv *s, const char *name)
{
	for (int i = 0; i < s->nr_names; i++)
		if (!strcmp(s->names[i], name))
			return true;
	return false;
}

static void open_device(struct sv *s, const struct seccomp_notif *req, const char *name,
			int flags, pid_t tg, struct sv_ans *a)
{
	char ph[PATH_MAX + 64];
	struct sv_fd *f;
	int i, fd, pfd, ret;

	if (strlen(name) >= sizeof(f->name)) {
		a->error = -ENOENT;
		return;
	}
	if (tg != s->pid) {
		sv_trace(s, "%s opened by pid %d, a child of the program: not served", name, (int)tg);
		a->error = -EOPNOTSUPP;
		return;
	}
	ret = sv_adopt(s);
	if (ret) {
		a->error = ret;
		return;
	}
	i = sv_slot_free(s);
	if (i < 0) {
		a->error = -EMFILE;
		return;
	}
	fd = (int)SV_FD_BASE + i;
	snprintf(ph, sizeof(ph), "%s/%.31s", s->phdir, name);
	pfd = open(ph, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		a->error = -errno;
		return;
	}
	ret = dc_open_fixed(s->e, name, flags & O_ACCMODE, fd);
	if (ret < 0) {
		sv_trace(s, "the daemon's open of %s: %s", name, strerror(-ret));
		close(pfd);
		a->error = ret;
		return;
	}
	f = &s->fds[i];
	memset(f, 0, sizeof(*f));
	f->kind = SV_DEV;
	memcpy(f->name, name, strlen(name) + 1);
	f->blk = !strncmp(name, "nvme", 4) && strchr(name + 4, 'n');
	f->oflags = flags;
	f->own_fd = -1;
	ret = f->blk ? sv_blk_geo(s, name, &f->geo, &f->dsm) : 0;
	if (!ret)
		ret = sv_desc_new(s, f, pfd);
	if (ret) {
		sv_trace(s, "the size of %s: %s", name, strerror(-ret));
		ucmd_close(s->e, fd);
		close(pfd);
		a->error = ret;
		return;
	}
	/* in the table before the program has the number: its next io_uring_enter finds it */
	sv_svtab_update(s, fd);
	sv_addfd_send(s, req, pfd, fd, flags & O_CLOEXEC, a);
	close(pfd);
	if (!a->sent) {
		ucmd_close(s->e, fd);
		sv_desc_put(s, f);
		f->kind = SV_FREE;
		sv_svtab_update(s, fd);
	}
}

/*
 * Is the file fd (opened here) one of the host's NVMe devices? By its name
 * (ENOENT, as for a name ucmd does not have), else by its device number (a
 * node made elsewhere, a bind mount: ENXIO, hostnvme.c); 0 if not.
 */
int sv_host_nvme(int fd)
{
	char link[64], target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) || (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)))
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -ENOENT;	/* a device we cannot name: not given out */
	target[n] = '\0';
	if (pl_path_under(target, "/dev") && strrchr(target, '/') &&
	    pl_path_dev_name(strrchr(target, '/') + 1))
		return -ENOENT;
	return pl_host_nvme_rdev(&st) ? -ENXIO : 0;
}

/* A blocking open of a FIFO or a character device, made on a thread of its own. */
struct slow_open {
	struct sv *s;
	struct seccomp_notif req;	/* our copy: the loop's is reused */
	int probe;			/* O_PATH, the file judged */
	int flags;
};

static void *slow_open_run(void *arg)
{
	struct slow_open *j = arg;
	struct seccomp_notif_resp resp = { .id = j->req.id };
	struct sv_ans a = { 0 };
	char self[64];
	int fd;

	/* the inode the probe found, not the path again (the program may have changed it) */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", j->probe);
	fd = open(self, (j->flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC);
	if (fd < 0)
		a.error = -errno;
	else
		a.error = sv_host_nvme(fd);
	if (!a.error)
		sv_addfd_send(j->s, &j->req, fd, -1, j->flags & O_CLOEXEC, &a);
	if (!a.sent) {
		resp.error = a.error ? a.error : -EIO;
		ioctl(j->s->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
	}
	if (fd >= 0)
		close(fd);
	close(j->probe);
	free(j);
	return NULL;
}

/*
 * A FIFO's open waits for its other end, a terminal line's for its
 * carrier: made here in the loop, it would stop every other call of the
 * program (the other end's open among them). Such a file, found by an
 * O_PATH look that never waits, is opened on a thread that answers by
 * itself; true when it took the call.
 */
static bool open_slow(struct sv *s, const struct seccomp_notif *req, int dfd, const char *p,
		      int flags, struct sv_ans *a)
{
	struct slow_open *j;
	struct stat st;
	pthread_attr_t at;
	pthread_t t;
	int probe;

	if ((flags & (O_NONBLOCK | O_PATH)) || (flags & O_TMPFILE) == O_TMPFILE)
		return false;
	probe = openat(dfd, p, O_PATH | O_CLOEXEC | (flags & (O_NOFOLLOW | O_DIRECTORY)));
	if (probe < 0)
		return false;	/* the open itself says why (or creates it) */
	if (fstat(probe, &st) || !(S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) ||
	    ((flags & O_CREAT) && (flags & O_EXCL))) {
		close(probe);
		return false;
	}
	j = malloc(sizeof(*j));
	if (!j) {
		close(probe);
		return false;
	}
	*j = (struct slow_open){ .s = s, .req = *req, .probe = probe, .flags = flags };
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, slow_open_run, j)) {
		pthread_attr_destroy(&at);
		free(j);
		close(probe);
		return false;
	}
	pthread_attr_destroy(&at);
	a->sent = true;	/* the thread answers */
	return true;
}

/* Anything else: opened here as the program would have (its cwd or dirfd, its umask). */
static void open_plain(struct sv *s, const struct seccomp_notif *req, int dirfd,
		       const char *path, int flags, mode_t mode, pid_t tg,
		       const struct sv_view *v, bool changed, struct sv_ans *a)
{
	char buf[PATH_MAX + 64], dpath[64];
	const char *p = path;
	int dfd = AT_FDCWD, fd;
	pid_t tid = (pid_t)req->pid;

	/* /proc/self here would be ours, and so would /dev/fd and /dev/stdin (links to it) */
	if (pl_path_under(path, "/dev/fd")) {
		snprintf(buf, sizeof(buf), "/proc/%d/fd%s", (int)tid, path + 7);
		p = buf;
	} else if (!strcmp(path, "/dev/stdin") || !strcmp(path, "/dev/stdout") ||
		   !strcmp(path, "/dev/stderr")) {
		snprintf(buf, sizeof(buf), "/proc/%d/fd/%d", (int)tid,
			 path[8] == 'i' ? 0 : path[8] == 'o' ? 1 : 2);
		p = buf;
	} else if (pl_path_under(path, "/proc/self")) {
		snprintf(buf, sizeof(buf), "/proc/%d%s", (int)tg, path + 10);
		p = buf;
	} else if (pl_path_under(path, "/proc/thread-self")) {
		snprintf(buf, sizeof(buf), "/proc/%d/task/%d%s", (int)tg, (int)tid, path + 17);
		p = buf;
	}
	if (p[0] != '/') {
		if (dirfd == AT_FDCWD)
			snprintf(dpath, sizeof(dpath), "/proc/%d/cwd", (int)tid);
		else
			snprintf(dpath, sizeof(dpath), "/proc/%d/fd/%d", (int)tid, dirfd);
		dfd = open(dpath, O_PATH | O_CLOEXEC);
		if (dfd < 0) {
			a->error = errno == ENOENT ? -EBADF : -errno;
			return;
		}
	}
	if (changed) {
		sv_open_as(s, req, &v->ids, dfd, p, flags, mode, a);
		if (dfd >= 0)
			close(dfd);
		return;
	}
	if (open_slow(s, req, dfd, p, flags, a)) {
		if (dfd >= 0)
			close(dfd);
		return;
	}
	if (flags & (O_CREAT | O_TMPFILE)) {
		mode_t old = umask((mode_t)v->ids.umask);

		fd = openat(dfd, p, flags | O_CLOEXEC, mode);
		umask(old);
	} else {
		fd = openat(dfd, p, flags | O_CLOEXEC);
	}
	if (fd < 0)
		a->error = -errno;
	if (dfd >= 0)
		close(dfd);
	if (fd < 0)
		return;
	a->error = sv_host_nvme(fd);
	if (a->error) {
		sv_trace(s, "%s is the host's NVMe device: %s", path, strerror(-a->error));
		close(fd);
		return;
	}
	sv_addfd_send(s, req, fd, -1, flags & O_CLOEXEC, a);
	close(fd);
}

/* Has the thread of view v (same_view's) another root or mount namespace than ours? */
static bool view_moved(const struct sv_view *v)
{
	return v->root_dev != own_view.root_dev || v->root_ino != own_view.root_ino ||
	       v->mnt_dev != own_view.mnt_dev || v->mnt_ino != own_view.mnt_ino;
}

/*
 * The tree's file for a thread whose root is not ours but reaches our /sys
 * (sv_tview.c: a bind mount of it): the tree lies in our root, so it is
 * named from an O_PATH of our root, which the thread's chroot and mount
 * namespace leave as it is, and opened with the thread's ids.
 */
static void open_tree_as(struct sv *s, const struct seccomp_notif *req, const struct sv_view *v,
			 const char *abs, int flags, mode_t mode, struct sv_ans *a)
{
	int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (rootfd < 0) {
		a->error = -errno;
		return;
	}
	sv_open_as(s, req, &v->ids, rootfd, abs + 1, flags, mode, a);
	close(rootfd);
}

/*
 * /dev/fd/N, /proc/self/fd/N, /dev/stdin... (fdname.c, the preload's
 * reading) naming a device of ours: Linux opens the device afresh with the
 * new open's flags (the magic link leads to the node), so the device is
 * opened as its /dev name is (open_device: the daemon judges it), not the
 * placeholder directory the kernel would reach; a path below it is
 * ENOTDIR. abs is the path from the thread's own root and mounts (the
 * caller's check). True if answered.
 */
static bool fd_path_open(struct sv *s, const struct seccomp_notif *req, const char *abs, int flags,
			 pid_t tg, bool changed, struct sv_ans *a)
{
	char name[32];
	const char *rest;
	int fd = tg > 0 ? pl_fd_named(abs, tg, &rest) : -1;

	if (fd < 0 || !sv_fd_device(s, tg, fd, name, sizeof(name)))
		return false;
	if (*rest)
		a->error = -ENOTDIR;
	else if (pl_name_removed(name))
		a->error = -ENXIO;	/* its function removed: the driver gone (chrdev_open, blkdev_open) */
	else if (changed)
		a->error = -EACCES;	/* the daemon would judge our credentials, not the thread's */
	else
		open_device(s, req, name, flags, tg, a);
	sv_trace(s, "%s: fd %d, %s: %s", abs, fd, name, a->error ? strerror(-a->error) : "opened");
	return true;
}

void sv_open(struct sv *s, const struct seccomp_notif *req, int dirfd, uint64_t upath,
		    int flags, mode_t mode, struct sv_ans *a)
{
	char path[PATH_MAX], abs[2 * PATH_MAX + 2], folded[2 * PATH_MAX + 4], base[PATH_MAX];
	pid_t tid = (pid_t)req->pid, tg;
	int ret = sv_str_in(tid, path, upath, sizeof(path));
	struct sv_view v;
	bool changed;
	int hold = -1;

	if (ret) {
		a->error = ret;
		return;
	}
	/* what we read is the call's only while it is still pending */
	if (!sv_id_valid(s, req->id)) {
		a->error = -ENOENT;
		return;
	}
	tg = sv_tgid_of(s, tid);
	if (!path[0]) {
		a->error = -ENOENT;
		return;
	}
	ret = same_view(tid, &v);
	if (ret && ret != -EACCES) {
		a->error = ret;
		return;
	}
	changed = ret == -EACCES;
	/* a bad dirfd is the kernel's EBADF, never a path judged from "/" */
	ret = sv_thread_base(tid, dirfd, path, base, sizeof(base));
	if (ret < 0) {
		a->error = ret;
		return;
	}
	if (ret > 0) {
		/*
		 * its root or mounts give it another /dev and /sys, or none
		 * (sv_tview.c; changed, then): its own file, as it opens it
		 */
		open_plain(s, req, dirfd, path, flags, mode, tg, &v, changed, a);
		return;
	}
	if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else
		snprintf(abs, sizeof(abs), "%s/%s", base, path);
	pl_path_fold(folded, abs);
	if (fd_path_open(s, req, abs, flags, tg, changed, a))
		return;
	if (pl_path_under(folded, "/dev") && folded[4] == '/' && pl_path_dev_name(folded + 5)) {
		/* attached since we started: the list again; a removed function's: gone */
		bool known = !pl_name_removed(folded + 5) &&
			     (known_device(s, folded + 5) || sv_names_refresh(s, folded + 5));

		if (known && changed) {
			/* the daemon would judge our connection's credentials, not the thread's */
			sv_trace(s, "%s: the caller's credentials, root or mounts are no longer the "
				 "ones it started with: EACCES", folded);
			a->error = -EACCES;
		} else if (known) {
			open_device(s, req, folded + 5, flags, tg, a);
		} else {
			sv_trace(s, "%s: not one of ucmd's devices: ENOENT", folded);
			a->error = -ENOENT;
		}
		return;
	}
	/*
	 * the preload's tree: its file, as the preload opens it; for a thread
	 * whose ids changed, with ours once Linux's check for its ids said yes
	 * (the tree lies in the exec's private directory, which it may no
	 * longer search, where Linux's /sys is every user's)
	 */
	ret = sv_sysfs_where(s, path[0] == '/' ? NULL : base, path, flags, abs, sizeof(abs),
			     changed && same_place(&v) ? tid : 0, &hold);
	if (ret < 0)
		a->error = ret;
	else if (ret == 3 && changed)
		a->error = -EACCES;	/* root's alone, judged on our ids: not a thread's that changed */
	else if (ret == 3)
		sv_attr_open(s, req, abs, flags, a);
	else if (hold >= 0)	/* a /proc link to the file: O_NOFOLLOW was for the file's path */
		open_plain(s, req, AT_FDCWD, abs, flags & ~O_NOFOLLOW, mode, tg, &v, false, a);
	else if (ret > 0 && changed && view_moved(&v))
		open_tree_as(s, req, &v, abs, flags, mode, a);
	else if (ret > 0)
		open_plain(s, req, AT_FDCWD, abs, flags, mode, tg, &v, changed, a);
	else
		open_plain(s, req, dirfd, path, flags, mode, tg, &v, changed, a);
	pl_ctl_done();	/* a removal's tree sync, once its file is open */
	if (hold >= 0)
		close(hold);
}
