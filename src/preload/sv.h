/* SPDX-License-Identifier: MIT */
/*
 * ucmd-supervise: `ucmd exec` for a statically linked program, which no
 * dynamic linker preloads; and, with --dirs, beside the preload of a
 * dynamic one for its getdents64 (sv_dirs.c) and its opens (sv_open.c),
 * which the program may make with its own instruction, out of the
 * preload's reach, and the calls on a device such an open gave. The program runs under a seccomp filter whose
 * calls that may name ucmd's devices come here as user notifications
 * (SECCOMP_RET_USER_NOTIF); this process serves them on the daemon, whose
 * connection acts in the program's memory (UCMDD_ADOPT), and answers with
 * the call's result, a descriptor it installs in the program
 * (SECCOMP_IOCTL_NOTIF_ADDFD), or "go on" (SECCOMP_USER_NOTIF_FLAG_CONTINUE)
 * where nothing of the decision rests on memory the program can change.
 *
 *   supervise.c  the program's start, the notification loop
 *   sv_filter.c  the seccomp filter
 *   sv_calls.c   one notification to its family:
 *   sv_open.c    open, openat, creat
 *   sv_open_as.c an open for a thread whose credentials, root or mount
 *                namespace changed: made as that thread would
 *   sv_ids.c     a thread's credentials from /proc/TID/status (sv_ids.h)
 *   sv_svtab.c   the table of our device fds that the preload's rings mirror
 *   sv_uring.c   io_uring_setup/enter/register, the ring mmaps
 *   sv_regring.c IORING_REGISTER_RING_FDS
 *   sv_dev.c     ioctl (the BLK* queries: blkdev.c's, as the preload's),
 *                fstat, close
 *   sv_rw.c      the read/write family, fsync, lseek on block namespaces
 *   sv_own.c     what goes through a buffer of ours on a connection of our
 *                own: partial-block reads and writes, BLKZEROOUT, BLKDISCARD
 *   sv_pass32.c  the 32-bit passthrough ioctls (libnvme 1.x's), on that connection
 *   sv_dirs.c    getdents64, getdents: /dev lists ucmd's devices, not the host's NVMe
 *   sv_stat.c    stat, access, readlink and their family by path: the tree's,
 *                /dev/fd/N of a device fd the device (fdname.c)
 *   sv_tview.c   whose /dev and /sys a thread's path reaches (its root, its mounts)
 *   sv_access.c  access of the tree's files, for the calling thread's ids as they are
 *   sv_sysfs.c   opens into the tree; the device list read again on a miss
 *   sv_attrw.c   writes to the tree's 0644 attributes (attrval.c's rules)
 *   sv_pl.c      the preload's tree code (where.c, sysfs.c, devinfo.c, dirs_merge.c) here
 *   sv_sigsys.c  rt_sigaction of SIGSYS (--dirs): the program's, not the kernel's
 *   sv_fork.c    the program's descendants, each served as a process of its own
 *   sv_geo.c     a block namespace's size and block size, read at open
 *   sv_common.c  the program's memory, the descriptor table, the daemon
 *
 * Device and ring descriptors live at numbers SV_FD_BASE.. of the
 * program's table (the filter can only judge numbers), and so does a 0644
 * attribute of the tree opened for writing (SV_ATTR: its writes judged,
 * sv_attrw.c; the rest is the kernel's on the read-only file): a device fd is an
 * empty directory opened read-only (supervise.c), so every call that is not
 * trapped fails on it by itself (never moves data); a ring fd is the ring's
 * memfd, whose SQEs sit at IORING_OFF_SQES (UCMDD_QI_SQES_AT_OFF) so that
 * the program's own mmaps of it need nothing of ours (IORING_OFF_CQ_RING
 * is answered with the program's own SQ ring mapping: sv_uring.c).
 */
#ifndef UCMD_PRELOAD_SV_H
#define UCMD_PRELOAD_SV_H

#include <linux/seccomp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "client/client.h"
#include "preload/blkdev.h"

#define SV_FD_BASE 960u		/* below the default RLIMIT_NOFILE soft limit (1024) */
#define SV_FD_NR 64u
#define SV_MAX_NAMES 256u	/* the daemon's devices we know */

#define SV_REG_RINGS 16u	/* IO_RINGFD_REG_MAX: registered ring indexes per thread */
#define SV_REG_MAX 128u		/* registered rings across threads */

/* SV_ATTR: a 0644 attribute of the tree opened for writing (sv_attrw.c) */
enum sv_kind { SV_FREE, SV_DEV, SV_RING, SV_ATTR };

/* IORING_REGISTER_RING_FDS: thread tid's index idx names the ring of fds[slot] */
struct sv_reg {
	pid_t tid;		/* 0: a free entry */
	unsigned idx;
	int slot;
};

struct sv_desc;
struct pl_svtab;
struct pl_svack;

struct sv_fd {
	enum sv_kind kind;
	struct sv_desc *desc;	/* the open file description, shared across fork (sv_fork.c) */
	bool foreign;		/* ring: another process's, inherited across fork (EEXIST) */
	bool attach;		/* device: inherited, not yet opened on this process's connection */
	int attach_err;		/* device: why that open failed (its calls fail so), or 0 */
	char name[32];		/* device: "ng0n1" */
	bool blk;		/* nvmeXnY: the read/write family is served */
	int oflags;		/* device: as the program opened it (access mode, O_DIRECT, O_DSYNC) */
	struct pl_blk_geo geo;	/* nvmeXnY: its size and block size when opened */
	bool dsm;		/* nvmeXnY: its controller has Dataset Management (ONCS) */
	int own_fd;		/* nvmeXnY: our number for it on s->own (sv_own.c), or -1 */
	struct ucmd_ring ring;	/* ring: the daemon's, mapped here too */
	size_t rings_len, sqes_len;
	unsigned regs;		/* ring: registrations holding it (sv_regring.c) */
	bool closed;		/* ring: its descriptor closed, registrations keep it */
};

/*
 * An open file description of ours (a device or ring descriptor) as the
 * kernel knows it: the file the program holds (file, our own reference to
 * it, which kcmp(KCMP_FILE) finds in any process), its file position, and
 * what a process that inherits it needs (tmpl). Held by every process's
 * slot that names it (sv_fork.c).
 */
struct sv_desc {
	unsigned refs;
	int file;		/* ours: the placeholder directory, or the ring's memfd */
	uint64_t pos;		/* the file position (read/write family, lseek): shared as on Linux */
	struct sv_fd tmpl;	/* the slot as opened (its ring: the opener's, not to be used) */
	/*
	 * ring: its maker's slot while the maker holds it, through which a
	 * process that inherited an SQPOLL ring has its enters served
	 * (sv_uring.c); NULL once the maker let go of it
	 */
	struct sv_fd *owner;
	struct sv_desc *next;
};

/*
 * One process served: the program we started (supervise.c's), or one of
 * its descendants (a forked child, sv_fork.c) with its own connection
 * acting in its own memory and its own table of our numbers.
 */
struct sv {
	const char *sock;	/* the daemon's socket */
	struct ucmd_engine *e;	/* acting in the program's memory once adopted */
	pid_t pid;		/* the process (a thread group) */
	int pidfd;
	int memfd;		/* its /proc/PID/mem when first seen: reads 0 once it exec'd */
	bool exec_pending;	/* it called execve: is its image another from its next call on? */
	struct sv *root;	/* the program we started (itself for it) */
	int listener;		/* seccomp notification fd */
	bool adopted;
	const char *phdir;	/* <dir>/dev: the placeholders */
	const char **names;	/* the daemon's devices */
	int nr_names;
	struct sv_fd fds[SV_FD_NR];
	struct sv_reg regs[SV_REG_MAX];
	struct ucmd_ring io;	/* our own ring: read/write family on nvmeXnY */
	bool io_live;
	struct ucmd_engine *own;	/* a connection of ours, not acting in the program (sv_own.c) */
	struct ucmd_ring own_ring;
	void *own_buf;		/* the bounce buffer, shared with the daemon */
	unsigned long served, passed;	/* counts for --trace */
	bool trace;
	bool dirs;		/* --dirs: a dynamic program's getdents64 and opens */
	struct pl_svtab *svtab;	/* sv_svtab.c: the table this process's preload mirrors, or NULL */
	int svtab_fd;
	struct pl_svack *svack;	/* the preload's answers (an SQPOLL ring), or NULL */
	int svack_fd;
	dev_t dev_dev;		/* the host's /dev, looked at once */
	ino_t dev_ino;
};

/* What to answer one notification with. */
struct sv_ans {
	int64_t val;		/* result (>= 0) */
	int error;		/* -errno, or 0 */
	bool cont;		/* SECCOMP_USER_NOTIF_FLAG_CONTINUE */
	bool sent;		/* answered already (SECCOMP_ADDFD_FLAG_SEND) */
};

/*
 * sv_fork.c: the process a notification of thread group tg is served as:
 * root for the program, a view of its own for a descendant (made on its
 * first call, its table found with kcmp; remade after an exec); NULL when
 * tg cannot be served (a vfork child sharing its parent's memory, or past
 * the table's size): root's rules for other processes apply (EOPNOTSUPP,
 * EBADF).
 */
struct sv *sv_view(struct sv *root, pid_t tg, uint64_t ip);
/* a new open file description for slot f (ours: file): 0 or -errno */
int sv_desc_new(struct sv *s, struct sv_fd *f, int file);
/* the description of ours process pid holds at number fd (kcmp), or NULL */
struct sv_desc *sv_desc_of(pid_t pid, int fd);
/* slot f lets go of its description */
void sv_desc_put(struct sv *s, struct sv_fd *f);
/* device slot f of s inherited: opened on s's connection now (0 or -errno) */
int sv_attach(struct sv *s, struct sv_fd *f);
/* supervise.c's loop: the served descendants' pidfds into pf (at most max), and their exits */
int sv_views_pollfds(struct pollfd *pf, int max);
void sv_views_exited(struct sv *root, const struct pollfd *pf, int n);
/* once the program is gone: every view released */
void sv_views_end(struct sv *root);

/* sv_calls.c: serve one notification (req->data.nr is one the filter traps). */
void sv_serve(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a);

/* sv_common.c: the program's memory (0 or -EFAULT; a string: -ENAMETOOLONG past max - 1) */
int sv_mem_in(pid_t pid, void *dst, uint64_t src, size_t len);
int sv_mem_out(pid_t pid, uint64_t dst, const void *src, size_t len);
int sv_str_in(pid_t pid, char *dst, uint64_t src, size_t max);
/* the directory a relative path of thread tid starts from (its cwd, its dirfd): 0 or -EBADF */
int sv_base_of(pid_t tid, int dirfd, char *base, size_t len);
/*
 * sv_tview.c: how thread tid's path (relative to dirfd) is judged against
 * the tree: 0 as ours, base then the directory a relative path starts from
 * ("" for an absolute path); 1: its root or mounts give it another /dev or
 * /sys than ours, or none (chroot, unshare -m): the thread's own file, not
 * the tree's; -EBADF for a dirfd not open
 */
int sv_thread_base(pid_t tid, int dirfd, const char *path, char *base, size_t len);
/* sv_tview.c: do the two paths name one file (device and inode)? */
bool sv_same_file(const char *a, const char *b);
/* the thread group of thread tid (a notification names the thread), or -1 */
pid_t sv_tgid_of(struct sv *s, pid_t tid);
/* the daemon's connection acting in the program's memory, made on first need: 0 or -errno */
int sv_adopt(struct sv *s);
/* our slot of the program's descriptor fd, or NULL; a free slot's index, or -1 */
struct sv_fd *sv_slot_of(struct sv *s, uint64_t fd);
int sv_slot_free(struct sv *s);
/* install our fd src in the program as its answer: at number at (SETFD) or the lowest free */
void sv_addfd_send(struct sv *s, const struct seccomp_notif *req, int src, int at, bool cloexec,
		   struct sv_ans *a);

/* sv_open.c: open, openat, creat */
void sv_open(struct sv *s, const struct seccomp_notif *req, int dirfd, uint64_t upath, int flags,
	     mode_t mode, struct sv_ans *a);
/* sv_open.c: is the file fd one of the host's NVMe devices? -ENOENT, -ENXIO, or 0 */
int sv_host_nvme(int fd);
/*
 * sv_open_as.c: path (relative to dfd, an O_PATH of the thread's, or
 * absolute when dfd < 0) opened as thread req->pid would (ids: its ids,
 * groups, capabilities and umask, sv_ids.h; its root, mount namespace); a
 * thread of ours answers (a->sent), or a->error
 */
struct sv_ids;
void sv_open_as(struct sv *s, const struct seccomp_notif *req, const struct sv_ids *ids, int dfd,
		const char *path, int flags, mode_t mode, struct sv_ans *a);
/*
 * sv_svtab.c (svtab.h): the table of s's device fds (each process its
 * own) that its preload's rings mirror: fd's entry written again
 * (installed or closed); the ioctl that asks for it answered with a
 * read-only descriptor of it (PL_SV_IOC_ACK: of the preload's answer page)
 */
void sv_svtab_update(struct sv *s, int fd);
/* every entry written again (s exec'd: what it kept); s's table let go (s exited) */
void sv_svtab_rewrite(struct sv *s);
void sv_svtab_release(struct sv *s);
void sv_svtab_give(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);
/* PL_SV_IOC_FDINFO: which device of ours the process's descriptor is */
void sv_svtab_fdinfo(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);
/*
 * sv_sysfs.c: where an open of path (base: its directory, for a
 * relative one) leads in the preload's tree: 1 and the tree's file to open
 * in out, 2 and the host's (a ".." out of a tree directory), 0 if not the
 * tree's, 3 and the tree's file of a 0644 attribute opened for writing
 * by root (sv_attr_open), or -errno (EACCES: written; a rescan's error). as_tid, not 0: a
 * thread whose ids are no longer ours, for which Linux's permission check
 * on the tree's file is made first (sv_access.c): the tree is ours to open
 * then, its directories all 0755 as sysfs's, the exec's private directory
 * above it passed with our credentials; out is then that file resolved
 * beneath the tree's /sys (sv_tree_fd), a descriptor of ours in *hold,
 * which the caller closes once it opened out.
 */
int sv_sysfs_where(struct sv *s, const char *base, const char *path, int flags, char *out,
		   size_t len, pid_t as_tid, int *hold);
/*
 * sv_attrw.c: the tree's 0644 attribute at path opened for writing
 * (sv_sysfs_where's 3), installed at one of our numbers; a call on such a
 * slot: a write judged (bytes or -errno), else *cont (the kernel's)
 */
void sv_attr_open(struct sv *s, const struct seccomp_notif *req, const char *path, int flags,
		  struct sv_ans *a);
int64_t sv_attr_call(struct sv *s, const struct seccomp_notif *req, struct sv_fd *f, bool *cont);
/* the daemon's device list read again, new names kept (placeholders made): does it have name? */
bool sv_names_refresh(struct sv *s, const char *name);
/* sv_uring.c: io_uring_setup/enter/register, mmap of a number of ours */
void sv_uring_setup(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);
void sv_uring_enter(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);
void sv_uring_register(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);
void sv_mmap(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a);
/* sv_regring.c: IORING_(UN)REGISTER_RING_FDS of nr updates at uarg; as the call returns */
int sv_ring_fds(struct sv *s, const struct seccomp_notif *req, pid_t tg, bool reg,
		uint64_t uarg, unsigned nr);
/* the ring thread tid registered at idx, or NULL and *err (-EINVAL, -EBADF) */
struct sv_fd *sv_reg_ring(struct sv *s, pid_t tid, uint64_t idx, int *err);
/* a ring's descriptor closed or a registration dropped: freed when nothing holds it */
void sv_ring_put(struct sv *s, struct sv_fd *f);
/*
 * sv_dirs.c: getdents64 and getdents (every call): /dev with ucmd's devices and none of
 * the host's NVMe, /sys/block and the like merged with the tree's
 */
void sv_getdents(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);
/*
 * sv_stat.c: stat, lstat, newfstatat, statx, access, faccessat,
 * faccessat2, readlink, readlinkat by path: ucmd's devices and the tree's
 * files answered from the preload's tree (where.c), the rest continued
 */
void sv_path_call(struct sv *s, const struct seccomp_notif *req, struct sv_ans *a);
/*
 * sv_stat.c: what the preload's fstat of device name says (its
 * placeholder in the tree, the device's kind and numbers): false when the
 * tree has no such device
 */
struct statx;
bool sv_tree_dev_stat(const char *name, struct stat *st, struct statx *stx);
/*
 * sv_stat.c: the device whose placeholder descriptor fd of process pid is
 * (one we gave, 960.., or the program's copy of one): its name, else false.
 */
bool sv_fd_device(const struct sv *s, pid_t pid, int fd, char *name, size_t len);
/*
 * sv_access.c: access of the tree's file p relative to dirfd ("": dirfd
 * itself; faccessat2's mode and flags) for thread tid, as its ids are now:
 * 0 or -errno
 */
int sv_access_as(pid_t tid, int dirfd, const char *p, int mode, int flags);
/*
 * The same, as access(2) answers a program of the tree's file: on the
 * owner it is shown (root's, 0:0: pl_stat_tree), as Linux's root-owned
 * sysfs file answers, not the exec user's who owns it on disk. Only an
 * answer: what the thread may open is still sv_access_as's (sv_sysfs.c).
 */
int sv_access_shown(pid_t tid, int dirfd, const char *p, int mode, int flags);
/*
 * sv_sysfs.c: the tree's file path (<root>/sys/...), resolved by the
 * kernel beneath <root>/sys alone, as an O_PATH descriptor (follow: its last
 * link followed): fd, or -errno (-ENOENT for a path that leads out of it)
 */
int sv_tree_fd(const char *path, bool follow);
/*
 * Linux's permission check of mode (R_OK, W_OK, X_OK; 0 is F_OK) on the
 * file st for ids uid, gid, groups and capabilities caps: 0 or -EACCES
 */
int sv_access_check(const struct stat *st, int mode, unsigned uid, unsigned gid,
		    const unsigned *groups, int ngroups, unsigned long long caps);
/* sv_pl.c: the preload's trace lines (pl_trace) go to stderr */
extern bool sv_pl_trace;
/* sv_sigsys.c: rt_sigaction of SIGSYS (--dirs): recorded per thread group, never made */
void sv_sigaction(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);
/* sv_geo.c: the block device of namespace node name ("nvme0n1") and its DSM: 0 or -errno */
int sv_blk_geo(struct sv *s, const char *name, struct pl_blk_geo *g, bool *dsm);
/*
 * sv_own.c: total bytes (cut to the device) at pos of device f between the
 * program's segments iov[cnt] (our copy of its array) and the device,
 * through our bounce buffer (blkdev.c's read-modify-write): bytes or -errno
 */
int64_t sv_own_rw(struct sv *s, pid_t pid, struct sv_fd *f, const struct iovec *iov, int cnt,
		  uint64_t pos, size_t total, bool write, unsigned rwf);
/* BLKDISCARD, BLKSECDISCARD, BLKZEROOUT on device f, range at the program's arg: 0 or -errno */
int sv_own_range_ioctl(struct sv *s, pid_t pid, struct sv_fd *f, unsigned long cmd, uint64_t arg);
/* device f's number on our connection (opened on first need), or -errno */
int sv_own_dev_fd(struct sv *s, struct sv_fd *f);
/*
 * sv_pass32.c: NVME_IOCTL_ADMIN_CMD, NVME_IOCTL_IO_CMD (the 32-bit result)
 * on device f, its struct at the program's arg: built as the 64-bit form
 * on our connection, data through our buffer; the ioctl's result or -errno
 */
int64_t sv_passthru32(struct sv *s, pid_t pid, struct sv_fd *f, unsigned long cmd, uint64_t arg);
/* device f closed: our number for it goes too */
void sv_own_close(struct sv *s, struct sv_fd *f);
/* sv_rw.c: read/write family, fsync, fdatasync, lseek on device f: result or -errno */
int64_t sv_blk_call(struct sv *s, const struct seccomp_notif *req, struct sv_fd *f);
/* sv_dev.c: a call whose argument 0 is a number of ours (ioctl, read/write family, close...) */
void sv_fd_call(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a);

/* sv_filter.c: the numbers the filter sends to the supervisor. */
extern const int sv_always[];	/* every call */
extern const unsigned sv_nr_always;
extern const int sv_fd0[];	/* when argument 0 is a number of ours */
extern const unsigned sv_nr_fd0;
extern const int sv_paths[];	/* the looks by path (sv_stat.c): every one (--dirs: but the trampoline's) */
extern const unsigned sv_nr_paths;
/* sv_filter.c: the filter into out (SV_FILTER_MAX entries); its length, or -EINVAL. */
#define SV_FILTER_MAX 128
struct sock_filter;
int sv_filter_build(struct sock_filter *out);
/* the filter of a dynamic program (--dirs): getdents64, opens, calls on our numbers */
int sv_dirs_filter_build(struct sock_filter *out);
/* supervise.c: is the notification still pending (its memory read stays good)? */
bool sv_id_valid(struct sv *s, uint64_t id);
void sv_trace(struct sv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
