/* SPDX-License-Identifier: MIT */
/*
 * The calls ucmd-supervise serves for a static program (sv.h). The
 * program's memory is read and written with process_vm_readv/writev, as
 * the kernel's copy_from_user/copy_to_user would (a bad address is
 * EFAULT). Paths: once read, the notification is checked to be still
 * pending (SECCOMP_IOCTL_NOTIF_ID_VALID) and every open is made here, never
 * continued: the program could change the path between our read and the
 * kernel's. A file this process opens for the program that turns out to be
 * an NVMe node of the host (a symbolic link, "..", a relative path into
 * /dev) is ENOENT, so the host's drives are never reached.
 *
 * The daemon's engine acts in the program's memory (UCMDD_ADOPT, on the
 * first call that needs it), so an SQE's or an ioctl's addresses are the
 * program's, read by the daemon itself: the same front end as the preload
 * (src/client: dc_open_fixed, dc_queue_init, dc_enter, dc_register_raw).
 * Only the process we started is served this way: its forked children
 * share none of its daemon state, and their device calls fail (EOPNOTSUPP
 * for an open, EBADF on a descriptor).
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

#include <linux/io_uring.h>

#include <ucmd/daemon.h>

#include "preload/preload.h"
#include "preload/sv.h"

/* ---- the program's memory ---- */

static int mem_in(pid_t pid, void *dst, uint64_t src, size_t len)
{
	struct iovec l = { dst, len }, r = { (void *)(uintptr_t)src, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static int mem_out(pid_t pid, uint64_t dst, const void *src, size_t len)
{
	struct iovec l = { (void *)src, len }, r = { (void *)(uintptr_t)dst, len };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

/* A NUL-terminated string of at most max - 1 bytes, read a page at a time (never past one). */
static int str_in(pid_t pid, char *dst, uint64_t src, size_t max)
{
	size_t got = 0;

	while (got < max) {
		size_t n = 4096 - ((src + got) & 4095);

		if (n > max - got)
			n = max - got;
		if (mem_in(pid, dst + got, src + got, n))
			return -EFAULT;
		if (memchr(dst + got, 0, n))
			return 0;
		got += n;
	}
	return -ENAMETOOLONG;
}

/* The thread group of thread tid (a notification names the thread). */
static pid_t tgid_of(struct sv *s, pid_t tid)
{
	char path[64], line[128];
	pid_t tg = -1;
	FILE *f;
	int v;

	if (tid == s->pid)
		return tid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &v) == 1) {
			tg = v;
			break;
		}
	fclose(f);
	return tg;
}

/*
 * A connection of its own for the program, made when it first needs one:
 * the daemon closes a connection that held nothing for its idle timeout
 * (60 s), which the one that listed the devices may have outlived.
 */
static int adopt(struct sv *s)
{
	struct ucmd_engine *e;
	int ret;

	if (s->adopted)
		return 0;
	ret = ucmd_engine_connect(s->sock, &e);
	if (ret) {
		sv_trace(s, "cannot reach ucmdd at %s: %s", s->sock, strerror(-ret));
		return ret;
	}
	ucmd_engine_free(s->e);
	s->e = e;
	ret = dc_adopt(s->e, s->pidfd);
	if (ret) {
		sv_trace(s, "the daemon will not act in the program's memory: %s", strerror(-ret));
		return ret;
	}
	s->adopted = true;
	return 0;
}

static struct sv_fd *slot_of(struct sv *s, uint64_t fd)
{
	if ((uint32_t)fd < SV_FD_BASE || (uint32_t)fd >= SV_FD_BASE + SV_FD_NR)
		return NULL;
	return &s->fds[(uint32_t)fd - SV_FD_BASE];
}

static int slot_free(struct sv *s)
{
	for (unsigned i = 0; i < SV_FD_NR; i++)
		if (s->fds[i].kind == SV_FREE)
			return (int)i;
	return -1;
}

/* Install our fd src in the program as its answer: at number at (SETFD) or the lowest free. */
static void addfd_send(struct sv *s, const struct seccomp_notif *req, int src, int at,
		       bool cloexec, struct sv_ans *a)
{
	struct seccomp_notif_addfd af = {
		.id = req->id,
		.flags = SECCOMP_ADDFD_FLAG_SEND | (at >= 0 ? SECCOMP_ADDFD_FLAG_SETFD : 0),
		.srcfd = (uint32_t)src,
		.newfd = at >= 0 ? (uint32_t)at : 0,
		.newfd_flags = cloexec ? O_CLOEXEC : 0,
	};
	int ret = ioctl(s->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &af);

	if (ret < 0) {
		a->error = -errno;
		sv_trace(s, "installing a descriptor in the program: %s", strerror(errno));
		return;
	}
	a->val = ret;
	a->sent = true;
}

/* ---- open ---- */

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
	ret = adopt(s);
	if (ret) {
		a->error = ret;
		return;
	}
	i = slot_free(s);
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
	addfd_send(s, req, pfd, fd, flags & O_CLOEXEC, a);
	close(pfd);
	if (!a->sent) {
		ucmd_close(s->e, fd);
		f->kind = SV_FREE;
	}
}

/* The program's umask (applies to O_CREAT as the kernel applies it). */
static mode_t umask_of(pid_t tid)
{
	char path[64], line[128];
	unsigned m = 022;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 022;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	fclose(f);
	return (mode_t)m;
}

/* Is the file fd (opened here) one of the host's NVMe nodes? */
static bool host_nvme(int fd)
{
	char link[64], target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if (fstat(fd, &st) || (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)))
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return true;	/* a device we cannot name: not given out */
	target[n] = '\0';
	return pl_path_under(target, "/dev") && strrchr(target, '/') &&
	       pl_path_dev_name(strrchr(target, '/') + 1);
}

/* Anything else: opened here as the program would have (its cwd or dirfd, its umask). */
static void open_plain(struct sv *s, const struct seccomp_notif *req, int dirfd,
		       const char *path, int flags, mode_t mode, pid_t tg, struct sv_ans *a)
{
	char buf[PATH_MAX + 64], dpath[64];
	const char *p = path;
	int dfd = AT_FDCWD, fd;
	pid_t tid = (pid_t)req->pid;

	/* /proc/self here would be ours */
	if (pl_path_under(path, "/proc/self")) {
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
	if (flags & (O_CREAT | O_TMPFILE)) {
		mode_t old = umask(umask_of(tid));

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
	if (host_nvme(fd)) {
		sv_trace(s, "%s is the host's NVMe device: ENOENT", path);
		close(fd);
		a->error = -ENOENT;
		return;
	}
	addfd_send(s, req, fd, -1, flags & O_CLOEXEC, a);
	close(fd);
}

static void sv_open(struct sv *s, const struct seccomp_notif *req, int dirfd, uint64_t upath,
		    int flags, mode_t mode, struct sv_ans *a)
{
	char path[PATH_MAX], abs[2 * PATH_MAX + 2], folded[2 * PATH_MAX + 4], base[PATH_MAX];
	pid_t tid = (pid_t)req->pid, tg;
	int ret = str_in(tid, path, upath, sizeof(path));

	if (ret) {
		a->error = ret;
		return;
	}
	/* what we read is the call's only while it is still pending */
	if (!sv_id_valid(s, req->id)) {
		a->error = -ENOENT;
		return;
	}
	tg = tgid_of(s, tid);
	if (!path[0]) {
		a->error = -ENOENT;
		return;
	}
	if (path[0] == '/') {
		snprintf(abs, sizeof(abs), "%s", path);
	} else {
		char link[64];
		ssize_t n;

		if (dirfd == AT_FDCWD)
			snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
		else
			snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)tid, dirfd);
		n = readlink(link, base, sizeof(base) - 1);
		base[n > 0 ? n : 0] = '\0';
		snprintf(abs, sizeof(abs), "%s/%s", base, path);
	}
	pl_path_fold(folded, abs);
	if (pl_path_under(folded, "/dev") && folded[4] == '/' && pl_path_dev_name(folded + 5)) {
		if (known_device(s, folded + 5)) {
			open_device(s, req, folded + 5, flags, tg, a);
		} else {
			sv_trace(s, "%s: not one of ucmd's devices: ENOENT", folded);
			a->error = -ENOENT;
		}
		return;
	}
	open_plain(s, req, dirfd, path, flags, mode, tg, a);
}

/* ---- io_uring ---- */

static void uring_setup(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	struct io_uring_params p;
	unsigned cqe_sz;
	struct sv_fd *f;
	int i, ret;

	if (tg != s->pid) {
		a->error = -EOPNOTSUPP;
		return;
	}
	ret = mem_in(req->pid, &p, req->data.args[1], sizeof(p));
	if (!ret)
		ret = adopt(s);
	if (ret) {
		a->error = ret;
		return;
	}
	for (unsigned k = 0; k < sizeof(p.resv) / sizeof(p.resv[0]); k++)
		if (p.resv[k]) {
			a->error = -EINVAL;
			return;
		}
	i = slot_free(s);
	if (i < 0) {
		a->error = -EMFILE;
		return;
	}
	f = &s->fds[i];
	memset(f, 0, sizeof(*f));
	ret = dc_queue_init_flags(s->e, (unsigned)req->data.args[0], &f->ring, &p,
				  UCMDD_QI_SQES_AT_OFF);
	if (ret) {
		a->error = ret;
		return;
	}
	cqe_sz = (p.flags & IORING_SETUP_CQE32) ? 32 : 16;
	f->rings_len = p.cq_off.cqes + (size_t)p.cq_entries * cqe_sz;
	if (p.sq_off.array + (size_t)p.sq_entries * 4 > f->rings_len)
		f->rings_len = p.sq_off.array + (size_t)p.sq_entries * 4;
	f->sqes_len = (size_t)p.sq_entries * ((p.flags & IORING_SETUP_SQE128) ? 128 : 64);
	/* the layout's private fields are the daemon's, not Linux's ABI */
	p.sq_off.resv2 = 0;
	p.cq_off.resv2 = 0;
	ret = mem_out(req->pid, req->data.args[1], &p, sizeof(p));
	if (!ret) {
		f->kind = SV_RING;
		/* Linux's ring descriptors are close-on-exec */
		addfd_send(s, req, f->ring.ring_fd, (int)SV_FD_BASE + i, true, a);
		if (a->sent)
			return;
		ret = a->error;
	}
	f->kind = SV_FREE;
	ucmd_queue_exit(&f->ring);
	a->error = ret;
}

static struct sv_fd *ring_of(struct sv *s, const struct seccomp_notif *req, pid_t tg)
{
	struct sv_fd *f = slot_of(s, req->data.args[0]);

	/* a forked child's copy of the ring: its requests would run in the parent's memory */
	if (!f || f->kind != SV_RING || tg != s->pid)
		return NULL;
	return f;
}

static void uring_enter(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	unsigned flags = (unsigned)g[3];
	struct io_uring_getevents_arg ga;
	struct __kernel_timespec ts;
	sigset_t mask;
	struct sv_fd *f;
	int ret;

	/* a registered ring index (IORING_REGISTER_RING_FDS is not offered here) */
	f = flags & IORING_ENTER_REGISTERED_RING ? NULL : ring_of(s, req, tg);
	if (!f) {
		a->error = -EBADF;
		return;
	}
	if (!(flags & IORING_ENTER_EXT_ARG)) {
		ret = dc_enter(&f->ring, (unsigned)g[1], (unsigned)g[2], flags);
		goto out;
	}
	if (g[5] != sizeof(ga)) {
		a->error = -EINVAL;
		return;
	}
	ret = mem_in(req->pid, &ga, g[4], sizeof(ga));
	if (!ret && ga.sigmask)
		ret = mem_in(req->pid, &mask, ga.sigmask,
			     ga.sigmask_sz < sizeof(mask) ? ga.sigmask_sz : sizeof(mask));
	if (!ret && ga.ts)
		ret = mem_in(req->pid, &ts, ga.ts, sizeof(ts));
	if (ret) {
		a->error = ret;
		return;
	}
	flags &= ~IORING_ENTER_EXT_ARG;
	ret = ga.ts ? dc_enter_timeout(&f->ring, (unsigned)g[1], (unsigned)g[2], flags, &ts,
				       ga.sigmask ? &mask : NULL)
		    : dc_enter(&f->ring, (unsigned)g[1], (unsigned)g[2], flags);
out:
	if (ret < 0)
		a->error = ret;
	else
		a->val = ret;
}

static void uring_register(struct sv *s, const struct seccomp_notif *req, pid_t tg,
			   struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	struct sv_fd *f = ring_of(s, req, tg);
	unsigned opcode = (unsigned)g[1], nr = (unsigned)g[3];
	int ret, efd;

	if (!f) {
		a->error = -EBADF;
		return;
	}
	switch (opcode) {
	case IORING_REGISTER_RING_FDS:
	case IORING_UNREGISTER_RING_FDS:
		ret = -EINVAL;	/* liburing goes on without a registered ring fd */
		break;
	case IORING_REGISTER_EVENTFD:
	case IORING_REGISTER_EVENTFD_ASYNC:
		ret = nr == 1 ? mem_in(req->pid, &efd, g[2], sizeof(efd)) : -EINVAL;
		if (ret)
			break;
		efd = (int)syscall(SYS_pidfd_getfd, s->pidfd, efd, 0);
		if (efd < 0) {
			ret = -errno;
			break;
		}
		ret = dc_register_raw(&f->ring, opcode, NULL, 1, efd, NULL, 0, NULL);
		close(efd);
		break;
	case IORING_REGISTER_PROBE: {
		size_t max = sizeof(struct io_uring_probe) + 256 * sizeof(struct io_uring_probe_op);
		struct io_uring_probe *p;
		size_t len = 0;

		if (!nr || nr > 256) {
			ret = -EINVAL;
			break;
		}
		p = calloc(1, max);
		if (!p) {
			ret = -ENOMEM;
			break;
		}
		ret = dc_register_raw(&f->ring, opcode, NULL, nr, -1, p, max, &len);
		if (ret >= 0) {
			size_t want = sizeof(*p) + (size_t)nr * sizeof(p->ops[0]);

			if (mem_out(req->pid, g[2], p, len > want ? want : len))
				ret = -EFAULT;
		}
		free(p);
		break;
	}
	default:
		/* the daemon reads arg from the program's memory itself */
		ret = dc_register_raw(&f->ring, opcode, (const void *)(uintptr_t)g[2], nr, -1, NULL,
				      0, NULL);
		break;
	}
	if (ret < 0)
		a->error = ret;
	else
		a->val = ret;
}

/* mmap of a number of ours: a ring's two regions go on to the kernel; nothing else maps. */
static void sv_mmap(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	struct sv_fd *f = slot_of(s, g[4]);
	size_t len = g[1];

	if (!f || f->kind == SV_FREE) {
		a->cont = true;	/* not a descriptor we made: the kernel's */
		return;
	}
	if (f->kind == SV_DEV) {
		a->error = -ENODEV;	/* no mmap in nvme_dev_fops / nvme_ns_chr_fops */
		return;
	}
	/* the memfd holds the rings at 0 and the SQEs at IORING_OFF_SQES: Linux's offsets */
	if ((g[5] == IORING_OFF_SQ_RING && len && len <= ((f->rings_len + 4095) & ~4095ul)) ||
	    (g[5] == IORING_OFF_SQES && len && len <= ((f->sqes_len + 4095) & ~4095ul))) {
		a->cont = true;
		return;
	}
	/* IORING_OFF_CQ_RING: IORING_FEAT_SINGLE_MMAP says the SQ ring's mapping holds it */
	a->error = -EINVAL;
}

/* ---- device fds: ioctl, the read/write family, lseek, close ---- */

static int io_ring(struct sv *s)
{
	struct io_uring_params p = { 0 };
	int ret;

	if (s->io_live)
		return 0;
	ret = ucmd_queue_init_engine(s->e, 4, &s->io, &p);
	if (!ret)
		s->io_live = true;
	return ret;
}

/* One read or write at the program's buf on our ring: bytes or -errno. */
static int64_t rw(struct sv *s, int fd, bool write, uint64_t buf, uint64_t len, uint64_t off)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	int ret = io_ring(s);

	if (ret)
		return ret;
	if (len > INT32_MAX)
		len = INT32_MAX & ~4095u;
	sqe = ucmd_get_sqe(&s->io);
	if (!sqe)
		return -EBUSY;
	ucmd_prep_rw(write ? IORING_OP_WRITE : IORING_OP_READ, sqe, fd,
		     (const void *)(uintptr_t)buf, (unsigned)len, off);
	ret = ucmd_submit(&s->io);
	if (ret != 1)
		return ret < 0 ? ret : -EIO;
	ret = ucmd_wait_cqe(&s->io, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	ucmd_cqe_seen(&s->io, cqe);
	return ret;
}

/*
 * fstat of a device fd: what Linux shows of the node (char for nvmeX and
 * ngXnY, block for nvmeXnY; st_size 0 as for any device node), not the
 * placeholder directory. The numbers are the preload's (preload.h). The
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
		int ret = str_in(req->pid, path, g[1], sizeof(path));
		unsigned flags = (unsigned)(req->data.nr == __NR_statx ? g[2] : g[3]);

		if (ret)
			return ret == -ENAMETOOLONG ? -ENOENT : ret;
		if (path[0] || !(flags & AT_EMPTY_PATH))
			return -ENOENT;
		buf = req->data.nr == __NR_statx ? g[4] : g[2];
	}
	if (req->data.nr == __NR_statx) {
		struct statx sx = { .stx_mask = STATX_BASIC_STATS, .stx_blksize = 4096,
				    .stx_nlink = 1, .stx_uid = getuid(), .stx_gid = getgid(),
				    .stx_mode = (uint16_t)mode, .stx_rdev_major = major,
				    .stx_rdev_minor = minor };

		return mem_out(req->pid, buf, &sx, sizeof(sx));
	}
	struct stat st = { .st_mode = mode, .st_nlink = 1, .st_uid = getuid(), .st_gid = getgid(),
			   .st_rdev = makedev(major, minor), .st_blksize = 4096 };

	return mem_out(req->pid, buf, &st, sizeof(st));
}

static void fd_call(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	struct sv_fd *f = slot_of(s, g[0]);
	int fd = (int)(uint32_t)g[0], nr = req->data.nr;
	int64_t ret;

	if (!f || f->kind == SV_FREE) {
		a->cont = true;	/* a number of ours we did not give: the kernel's */
		return;
	}
	if (nr == __NR_close) {
		if (tg == s->pid) {
			if (f->kind == SV_DEV)
				ucmd_close(s->e, fd);
			else
				/* the program's mappings of the memfd stay valid, as on Linux */
				ucmd_queue_exit(&f->ring);
			f->kind = SV_FREE;
		}
		a->cont = true;	/* the kernel closes the program's descriptor */
		return;
	}
	if (tg != s->pid) {
		a->error = -EBADF;	/* a forked child: the daemon's mirror is the parent's */
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
	switch (nr) {
	case __NR_ioctl:
		/* the daemon reads and writes the argument in the program's memory */
		ret = ucmd_ioctl(s->e, fd, (unsigned long)g[1], (void *)(uintptr_t)g[2]);
		break;
	case __NR_pread64:
	case __NR_pwrite64:
		ret = f->blk ? rw(s, fd, nr == __NR_pwrite64, g[1], g[2], g[3]) : -EINVAL;
		break;
	case __NR_read:
	case __NR_write:
		ret = f->blk ? rw(s, fd, nr == __NR_write, g[1], g[2], f->pos) : -EINVAL;
		if (ret > 0)
			f->pos += (uint64_t)ret;
		break;
	case __NR_lseek:
		if (!f->blk) {
			ret = -ESPIPE;
		} else if ((int)g[2] == SEEK_SET || (int)g[2] == SEEK_CUR) {
			int64_t pos = (int64_t)g[1] + ((int)g[2] == SEEK_CUR ? (int64_t)f->pos : 0);

			ret = pos < 0 ? -EINVAL : pos;
			if (pos >= 0)
				f->pos = (uint64_t)pos;
		} else {
			ret = -EINVAL;	/* SEEK_END and the others: not served here */
		}
		break;
	case __NR_fstat:
	case __NR_newfstatat:
	case __NR_statx:
		ret = dev_stat(s, req, f);
		break;
	default:
		ret = -EBADF;
		break;
	}
	if (ret < 0)
		a->error = (int)ret;
	else
		a->val = ret;
}

void sv_serve(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	pid_t tg = tgid_of(s, (pid_t)req->pid);

	memset(a, 0, sizeof(*a));
	switch (req->data.nr) {
	case __NR_open:
		sv_open(s, req, AT_FDCWD, g[0], (int)g[1], (mode_t)g[2], a);
		break;
	case __NR_creat:
		sv_open(s, req, AT_FDCWD, g[0], O_CREAT | O_WRONLY | O_TRUNC, (mode_t)g[1], a);
		break;
	case __NR_openat:
		sv_open(s, req, (int)g[0], g[1], (int)g[2], (mode_t)g[3], a);
		break;
	case __NR_io_uring_setup:
		uring_setup(s, req, tg, a);
		break;
	case __NR_io_uring_enter:
		uring_enter(s, req, tg, a);
		break;
	case __NR_io_uring_register:
		uring_register(s, req, tg, a);
		break;
	case __NR_mmap:
		sv_mmap(s, req, a);
		break;
	case __NR_dup2:
	case __NR_dup3:
		a->error = -EBADF;	/* onto a number of ours (the filter sends only those) */
		break;
	default:
		fd_call(s, req, tg, a);
		break;
	}
	if (a->cont)
		s->passed++;
	else
		s->served++;
}
