/* SPDX-License-Identifier: MIT */
/*
 * libucmd-preload: the interposition library behind `ucmd exec`. Loaded
 * with LD_PRELOAD into an unmodified program (fio, nvme-cli, a liburing
 * program), it makes ucmd's devices appear as Linux's would:
 *
 *   /dev/nvme0    controller (char): admin ioctls, NVME_URING_CMD_ADMIN
 *   /dev/ng0n1    namespace (char): NVMe ioctls, IORING_OP_URING_CMD
 *   /dev/nvme0n1  namespace (block): read/write family, BLK* ioctls,
 *                 io_uring READ/WRITE/READV/WRITEV and their FIXED forms
 *   /sys/...      what libnvme's scan reads, generated (sysfs.c)
 *
 * Every device is the daemon's (ucmdd, src/server): one connection per
 * process (session.c), so fork, exec, threads and fio's job processes all
 * share one controller under the daemon's policy and audit.
 *
 * A device fd is a real descriptor of the program's: an open placeholder,
 * an empty directory <root>/dev.fd/<access mode>/<name> opened read-only
 * (fdmap.c), so that numbers, O_CLOEXEC, dup/dup2/fcntl, fork, exec and
 * close behave as the kernel makes them, the file offset is the kernel's
 * (shared by dups and forks as a device's is), and a call that reaches it
 * unserved fails with an errno (<root>/dev/<name>, an empty file, is what
 * the path calls reach). The
 * daemon knows the device under the same number (UCMDD_OPEN_FIXED),
 * because the program's SQEs name it and the daemon reads SQEs straight
 * from the shared ring. Modules:
 *
 *   session.c  the daemon connection; fork; the root; tracing; pl_next()
 *   devinfo.c  which devices exist, their kinds, numbers and geometry
 *   fdmap.c    device fds: open, close, dup*, fcntl, fstat; exec recovery
 *   fdpath.c   /dev/fd/N, /proc/self/fd/N, /dev/stdin... naming a device fd
 *   fdname.c   the descriptor number such a path names (ucmd-supervise's too)
 *   devlock.c  record locks and flock on device fds (a lock file per device)
 *   ioctl.c    ioctl(2) on device fds (NVMe and BLK* requests)
 *   rw.c       read/write/pread/pwrite/readv/writev/preadv/pwritev/lseek,
 *              BLK* ioctls
 *   paths.c    path interposers: /dev/<ucmd device>, /sys -> <root>/sys
 *   xattr.c    the path-named extended attribute calls, through paths.c
 *   sysfs.c    the generated tree under <root>
 *   dirs.c     listings of the directories the host and the tree share
 *   uring.c    io_uring_setup/enter/register on the daemon's rings
 *   seccomp.c  catching the io_uring and aio system calls libc does not make
 *   aio.c      Linux's native aio (libaio) on device fds
 *   nodata.c   mmap, sendfile, splice, copy_file_range, readahead on device fds
 *   stdio.c    FILE streams on device fds (glibc's own read/write bypass ours)
 *
 * Rules for every interposer: errors are returned as the libc function
 * returns them (-1 and errno); a call on something that is not ucmd's goes
 * to the next definition (pl_next) untouched; no lock is held across a call
 * into libucmd (which may itself call interposed functions).
 */
#ifndef UCMD_PRELOAD_H
#define UCMD_PRELOAD_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <linux/nvme_ioctl.h>

#include "ucmd/ucmd.h"

/* Environment, set by `ucmd exec` or by hand with LD_PRELOAD. */
#define PL_ENV_DAEMON	"UCMD_DAEMON"		/* the daemon's socket (required) */
#define PL_ENV_ROOT	"UCMD_EXEC_ROOT"	/* the generated tree; made if unset */
#define PL_ENV_TRACE	"UCMD_EXEC_TRACE"	/* "1": unhandled calls to stderr; else a file */
#define PL_ENV_VIEW	"UCMD_EXEC_VIEW"	/* "/", /dev, /sys at the start (view.c); made if unset */

#define PL_EXPORT __attribute__((visibility("default")))

/* ---- session.c ---- */

/*
 * This process's engine on the daemon, connected on first use (and anew in
 * a forked child, which must not speak on its parent's connection). NULL
 * with errno set (ENOTCONN: no daemon, UCMD_DAEMON unset or unreachable).
 */
struct ucmd_engine *pl_engine(void);
/* The next definition of a libc symbol (dlsym RTLD_NEXT); aborts if none. */
void *pl_next(const char *sym);
/*
 * The preload's own long-lived descriptors (the daemon connection, the
 * device lock files) live at PL_HIGH_FD_MIN or above, out of the way of a
 * program that takes low numbers it believes free, below the numbers
 * ucmd-supervise keeps (PL_SV_FD_BASE). fd moved there, close-on-exec (fd
 * itself closed), or fd as it was where RLIMIT_NOFILE does not reach.
 */
#define PL_HIGH_FD_MIN 900
int pl_fd_move_high(int fd);
/* The tree's root directory (no trailing slash), built on first use. NULL if it cannot be. */
const char *pl_root(void);
/* `ucmd exec --trace`: one line per intercepted call that was not handled. */
/* A detached thread of the preload's, the program's signals blocked on it (thread.c). */
int pl_thread_start(void *(*fn)(void *), void *arg);
void pl_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
bool pl_tracing(void);
/* getpid() without a system call: kept by session.c across fork. */
pid_t pl_pid(void);
/*
 * Copy from or to the program's memory as the kernel's copy_from_user and
 * copy_to_user would: a bad address is -EFAULT, never a crash here
 * (process_vm_readv/writev on ourselves).
 */
int pl_copy_in(void *dst, const void *src, size_t len);
int pl_copy_out(void *dst, const void *src, size_t len);

/* ---- devinfo.c ---- */

enum pl_dev_kind {
	PL_DEV_CTRL,		/* nvmeX: char */
	PL_DEV_NS_CHR,		/* ngXnY: char, the generic (passthrough) node */
	PL_DEV_NS_BLK,		/* nvmeXnY: block */
};

/* Device numbers, fixed so that sysfs's dev files and fstat's st_rdev agree. */
#define PL_MAJOR_CTRL	240u	/* minor = controller instance */
#define PL_MAJOR_NG	241u	/* minor = namespace ordinal (devinfo order) */
#define PL_MAJOR_BLK	259u	/* BLOCK_EXT_MAJOR, minor = namespace ordinal */

struct pl_devinfo {
	char name[32];		/* "nvme0", "ng0n1", "nvme0n1" */
	enum pl_dev_kind kind;
	unsigned instance;	/* X */
	unsigned nsid;		/* Y; 0 for a controller */
	unsigned major, minor;
	/* namespaces: from Identify Namespace (the formatted LBA format) */
	uint32_t lba_size;	/* bytes */
	uint64_t nlba;		/* NSZE */
	uint16_t ms;		/* metadata bytes per LBA */
	bool ext;		/* metadata interleaved (extended LBA) */
};

/*
 * The device called name (a bare name: "ng0n1"), or NULL (errno ENOENT) if
 * the daemon has no such device. The list is read once per process (the
 * first call) and again by pl_devinfo_reload() (after namespace management).
 */
const struct pl_devinfo *pl_devinfo(const char *name);
/* All devices, controllers first; the count (at most max stored). */
unsigned pl_devinfo_list(const struct pl_devinfo **out, unsigned max);
int pl_devinfo_reload(void);
/*
 * An admin command (struct nvme_passthru_cmd64, as NVME_IOCTL_ADMIN64_CMD)
 * on device d through a private daemon fd, for what the preload itself
 * needs to know (identify data for sysfs, geometry). 0, an NVMe status > 0,
 * or -errno.
 */
int pl_admin(const struct pl_devinfo *d, struct nvme_passthru_cmd64 *cmd);
/* ioctl op (arg) on device d through a private daemon fd, as pl_admin: its answer, or -errno. */
int pl_dev_ioctl(const struct pl_devinfo *d, unsigned long op, void *arg);
/* Identify (CNS cns, command set csi) of nsid on controller ctrl into buf (4 KiB, zeroed first), as pl_admin. */
int pl_identify(const struct pl_devinfo *ctrl, uint32_t nsid, uint32_t cns, uint8_t csi, void *buf);

struct pl_file;
/* blkzoned.c: BLKREPORTZONE and the other zoned ioctls on nvmeXnY; 0 or -errno */
int pl_blkzoned_ioctl(struct pl_file *f, unsigned long req, void *arg);
/* zoned.c: a zoned namespace's queue limits (zoned false and -errno if not zoned) */
struct pl_zone_info {
	bool zoned;
	uint64_t zone_sectors;		/* 512-byte sectors: chunk_sectors */
	uint32_t nr_zones;
	uint32_t max_open, max_active;	/* 0: no limit */
	uint32_t append_max_bytes;
};
int pl_zone_info(const struct pl_devinfo *ctrl, const struct pl_devinfo *d, struct pl_zone_info *zi);
/*
 * A private daemon fd on device `name` for the preload's own commands: the
 * number is one of our descriptors (an eventfd), never one the program can
 * hold. The fd, or -errno; give it back with pl_private_close().
 */
int pl_private_open(struct ucmd_engine *e, const char *name, int flags);
void pl_private_close(struct ucmd_engine *e, int fd);

/* ---- execguard.c, execraw.c ---- */

/*
 * 0 if the program file (relative to dirfd; searched in $PATH if
 * path_search and it has no slash) may run under exec, else EACCES with
 * the reason on stderr (a static or 32-bit program: no preload).
 */
int pl_exec_check(int dirfd, const char *file, bool path_search);
/*
 * The execve or execveat system call nr with arguments a (trapped, or from
 * libc's own call sites): judged as pl_exec_check, then made through the
 * trampoline with the preload's environment kept. Its result (-errno).
 */
long pl_exec_syscall(long nr, const long a[6]);
/* In the constructor: libc's execve and execveat call sites taken over (a call, not a trap). */
void pl_exec_init(void);

/* ---- fdmap.c ---- */

struct pl_file {
	const struct pl_devinfo *dev;
	int oflags;		/* as the program opened it (O_DIRECT, O_NONBLOCK kept here) */
};

/* The ucmd device behind the program's fd, or NULL if it is not one. Lock-free. */
struct pl_file *pl_fd(int fd);
/*
 * After a call on fd, unknown above, failed with err as no device's would
 * (ENOTTY, EISDIR, EBADF, EINVAL, ENODEV, EACCES: a placeholder's answers;
 * 0: it succeeded, as fsync does on a placeholder): is fd a copy
 * of a device descriptor made with the program's own instruction (a raw
 * dup)? Then it is ours from now on and its file is returned, for the call
 * to be made again on it; else NULL, errno unchanged.
 */
struct pl_file *pl_fd_adopt(int fd, int err);
/* Another fd of the program's, of device d, on the same open file description as fd; or -1. */
int pl_fd_same_file(int fd, const struct pl_devinfo *d);
/*
 * fdpath.c: path names a device descriptor (/dev/fd/N, /proc/self/fd/N,
 * /dev/stdin...)? Then *d is its device (the open is the device's); 0 or
 * -errno (ENOTDIR: a path below it).
 */
int pl_fd_path_dev(const char *path, const struct pl_devinfo **d);
/* The same, and *fd the descriptor path names (-1: none) when *d is set. */
int pl_fd_path_fd(const char *path, const struct pl_devinfo **d, int *fd);
/*
 * fdname.c: the descriptor number path names for process pid (its
 * /proc/self, its threads' ids), or -1; *rest: what follows the number's
 * component ("" for none).
 */
int pl_fd_named(const char *path, pid_t pid, const char **rest);
/* devlock.c: record locks and flock on device fds, on the device's lock file */
struct flock;
bool pl_devlock_cmd(int cmd);	/* F_GETLK, F_SETLK(W) or their OFD forms */
int pl_devlock_fcntl(int fd, struct pl_file *f, int cmd, struct flock *fl);	/* fcntl's result */
int pl_devlock_flock(int fd, struct pl_file *f, int op);			/* flock's result */
/* fd, of device d, is about to be closed or replaced: locks go as Linux's close drops them */
void pl_devlock_closing(int fd, const struct pl_devinfo *d);
/*
 * An exec is about to be made: the lock descriptors whose locks Linux's
 * exec keeps are left open across it (their fds survive); _failed: it
 * failed, they are close-on-exec again. _recover, at load: the ones the
 * image before kept.
 */
void pl_devlock_exec(void);
void pl_devlock_exec_failed(void);
void pl_devlock_recover(void);
/*
 * open(2) of a ucmd device: the placeholder (an empty directory, read-only)
 * opened with the program's status flags (fdmap.c), then the daemon's open
 * at the same number. fd or -1
 * with errno (the daemon's answer: EACCES by policy, ENOENT...).
 */
int pl_dev_open(const struct pl_devinfo *d, int flags);
/*
 * Overwrite what a stat of the placeholder says with the device's: type,
 * st_rdev, sizes, and Linux's owner and mode (root:disk 0660 for a block
 * node, root:root 0600 for a character one).
 */
void pl_stat_fix(const struct pl_devinfo *d, struct stat *st);
void pl_statx_fix(const struct pl_devinfo *d, struct statx *stx);
/*
 * What the tree's files and directories (PL_WHERE_SYS) stat as: root's,
 * as Linux's /sys, though the tree is the exec user's on disk. Shown
 * only: what may be opened is where.c's judgement (a 0644 attribute
 * writable by root alone, as a root-owned file is), not the owner.
 */
void pl_stat_tree(struct stat *st);
void pl_statx_tree(struct statx *stx);
/*
 * treefd.c: is fd, whose fstat showed st_dev dev and st_uid uid, one of
 * the tree's /sys files or directories (so its fstat shows pl_stat_tree's
 * owner, as the path's stat does)? errno is left as it was.
 */
bool pl_fd_in_tree(int fd, unsigned long long dev, unsigned uid);
/* At load: the device fds this image inherited through exec, found by their placeholders. */
void pl_fdmap_recover(void);
/* A new connection (first use, after fork): the daemon opens every known device fd again. */
void pl_fdmap_reopen(struct ucmd_engine *e);
/*
 * Is this path (as the kernel resolved it) one of our placeholders (an fd's
 * /proc link)? Its device and the access mode it stands for (*acc), or NULL.
 */
const struct pl_devinfo *pl_placeholder_dev(const char *path, int *acc);

/* ---- rw.c ---- */

/*
 * ioctl(2) requests of a block device (BLKGETSIZE64, BLKSSZGET, BLKPBSZGET,
 * BLKGETSIZE, BLKIOMIN, BLKIOOPT, BLKFLSBUF, BLKDISCARD...) on f, a
 * PL_DEV_NS_BLK file (ioctl.c calls it first for those): the ioctl's result
 * (-1 and errno set as ioctl(2) sets it), or -2 with errno untouched if req
 * is not a block request (ioctl.c then tries the NVMe ones).
 */
int pl_blk_ioctl(struct pl_file *f, int fd, unsigned long req, void *arg);

/*
 * The read/write family on device f as the other modules need it (aio.c,
 * nodata.c): bytes moved or -errno, never -1. iov is the program's array
 * (user_iov: copied with EFAULT) or one of ours; use_pos: the file offset
 * is read and advanced, off ignored. rwf: RWF_* flags.
 */
ssize_t pl_dev_rw(struct pl_file *f, int fd, const struct iovec *iov, int cnt, bool user_iov,
		  off_t off, bool use_pos, bool write, int rwf);
/* fsync/fdatasync on device f: 0 or -errno (EINVAL on the char devices). */
int pl_dev_fsync(struct pl_file *f, int fd, bool datasync);

/* ---- aio.c ---- */

/*
 * Linux's native aio (io_setup, io_submit...) as the system calls take
 * their arguments: the kernel's return (-errno). Every context is made
 * here, with a kernel context behind it for the files that are not ucmd's;
 * pl_aio_is_ctx() says whether a context number is one of ours.
 */
bool pl_aio_is_ctx(unsigned long ctx);
long pl_io_setup(unsigned nr_events, unsigned long *ctxp);
long pl_io_destroy(unsigned long ctx);
long pl_io_submit(unsigned long ctx, long nr, void *iocbpp);
long pl_io_cancel(unsigned long ctx, void *iocb, void *result);
long pl_io_getevents(unsigned long ctx, long min_nr, long nr, void *events, void *timeout,
		     const void *usig, bool pgetevents);

/* ---- nodata.c ---- */

/*
 * libc's syscall(nr, a...) when it names a device fd in a call that moves
 * data (read/write family, sendfile, splice, mmap, fallocate, ioctl...):
 * true and *ret as syscall() returns (-1 and errno), through the
 * interposer of that call; false if not a device's call.
 */
bool pl_syscall_fd(long nr, const long a[6], long *ret);

/* ---- sysfs.c ---- */

/*
 * Build the tree under root: dev/<name> placeholders (empty regular files,
 * 0600) for every device, and sys/ as Linux's sysfs shows the controllers
 * and namespaces (sys/class/nvme, sys/class/nvme-generic, sys/block,
 * sys/class/nvme-subsystem, sys/devices/...). 0 or -errno.
 */
int pl_sysfs_build(const char *root);
/*
 * Bring a built tree up to date with pl_devinfo_list() (call it after
 * pl_devinfo_reload(), when namespace management changed the devices):
 * new namespaces get placeholders and sysfs entries, gone ones lose theirs.
 * 0 or -errno.
 */
int pl_sysfs_sync(const char *root);
/*
 * Set by ucmd-supervise once the tree is built: its build and sync then
 * never wait for the tree's lock (-EWOULDBLOCK), since the process holding
 * it may be waiting for the supervisor to make its opens.
 */
extern bool pl_sysfs_lock_nowait;
/* A directory of the tree: 0755 whatever the umask (sysfs_mpath.c's too). 0 or -errno. */
int pl_sysfs_mkdir(const char *path);
/* path and every directory above it, as pl_sysfs_mkdir makes one. 0 or -errno. */
int pl_sysfs_mkdirs(const char *path);
/* The tree's writes (sysfs_mpath.c's too), each appearing whole (renamed into place): */
/* <dir>/<name> holds the formatted value and a newline, of mode (0444, 0644). 0 or -errno. */
int pl_sysfs_putm(const char *dir, const char *name, mode_t mode, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* A read-only attribute (0444), as most of sysfs's. */
#define pl_sysfs_put(dir, name, ...) pl_sysfs_putm(dir, name, 0444, __VA_ARGS__)
/* A symbolic link at path pointing at target (relative, as sysfs's links are). 0 or -errno. */
int pl_sysfs_link(const char *target, const char *path);
/* A path formatted into out (PATH_MAX bytes): 0, or -ENAMETOOLONG. */
int pl_sysfs_path(char *out, const char *f, ...) __attribute__((format(printf, 2, 3)));
/*
 * sysfs_mpath.c: the controllers of one subsystem (CMIC, one NQN) under
 * one nvme-subsysX with the head's disks and a hidden nvmeXcCnY path per
 * controller (ana_state, ana_grpid), as Linux's native multipath; called
 * by the sync with its device list, under its lock.
 */
int pl_sysfs_mpath(const char *root, const struct pl_devinfo **v, unsigned n);
/*
 * Namespace d's directory as sysfs.c makes it under its controller X's
 * (d's instance), identified through controller c: for sysfs_mpath.c's
 * head whose controller X is removed (moved then into its subsystem).
 */
int pl_sysfs_ns(const char *root, const struct pl_devinfo *c, const struct pl_devinfo *d);
/* The controllers removed (ctlfiles.c), at most max: their count. */
unsigned pl_ctl_removed_list(unsigned *out, unsigned max);
/*
 * Controller x's directory under sys/devices, its PCI function's
 * "<bus>/<addr>/nvme/nvmeX", which sysfs.c decides: what sysfs_mpath.c
 * moves paths into and links to. 0 or -ENAMETOOLONG.
 */
int pl_sysfs_ctrl_dev(char *out, size_t len, unsigned x);

/*
 * path (in the tree) is a PCI function's resource0: write it again with
 * the controller's registers as they are now (what an mmap of it sees;
 * reads through libc are res0.c's, at each call). 0 or -errno.
 */
int pl_sysfs_regs(const char *path);
/* The controller whose PCI function's resource0 is path (in the tree), or NULL. */
const struct pl_devinfo *pl_sysfs_regs_ctrl(const char *path);
/* BAR0 of controller c now into bar (len bytes; the registers, doorbells zero): 0 or -errno. */
int pl_regs_now(const struct pl_devinfo *c, void *bar, size_t len);
/*
 * res0.c: resource0 opened at fd (path in the tree): its reads (read,
 * pread) read the registers as they are at the read, as a host's BAR0.
 */
void pl_res0_opened(int fd, const char *path);
/* A read of fd if it is such a resource0: true and *ret (bytes or -errno). */
bool pl_res0_read(int fd, void *buf, size_t n, off_t off, bool at_pos, ssize_t *ret);

/* ---- dirs.c ---- */

struct __dirstream;
struct dirent64;
/*
 * opendir(3) of path (as the program gave it) opened d on the host's
 * directory: if the tree has that directory too, d lists both from now on.
 */
void pl_dir_opened(struct __dirstream *d, const char *path);
/* scandir(3) of such a directory on the merged listing; -2 if path is not one. */
int pl_dir_scandir(const char *path, struct dirent64 ***list,
		   int (*filter)(const struct dirent64 *),
		   int (*compar)(const struct dirent64 **, const struct dirent64 **));
/* One entry of a merged listing. */
struct pl_dirent {
	char name[256];
	unsigned char type;	/* DT_* */
	uint64_t ino;
};
/*
 * The merged listing of host directory dir (absolute, as the kernel names
 * it) into *out (malloc'ed, *n entries, "." and ".." first as the host has
 * them): 0, -ENOENT if dir is not one the tree has too, or -errno.
 */
int pl_dir_listing(const char *dir, struct pl_dirent **out, unsigned *n);
/*
 * dirs_merge.c: that listing of host directory dir read through d (the
 * caller's, read to its end) into *out (malloc'ed, *n entries): 0, -ENOENT
 * if the tree has no such directory, -ENOMEM.
 */
int pl_dir_merge(struct __dirstream *d, const char *dir, struct pl_dirent **out, unsigned *n);
/* Is this thread inside a merge (reading the host's directory for it)? */
bool pl_dir_merging(void);
/* dirs_raw.c: the getdents64 system call (the SIGSYS trap, syscall()): false if fd is not a merged directory. */
bool pl_dir_getdents64(int fd, void *buf, size_t count, long *ret);
/* The same for the old getdents (syscall(SYS_getdents)), in struct linux_dirent records. */
bool pl_dir_getdents(int fd, void *buf, size_t count, long *ret);

/* ---- where.c: where a path call's path leads (the preload's and ucmd-supervise's) ---- */

enum pl_where_kind {
	PL_WHERE_NONE,		/* not ucmd's business: the host's, untouched */
	PL_WHERE_DEV,		/* one of ucmd's devices: path is its placeholder */
	PL_WHERE_SYS,		/* the tree's: path is the file in the tree (or the denied path) */
	/*
	 * ucmd's or the tree's, but out of this thread's reach (it dropped to
	 * another user; the tree lies in the exec's private directory): the
	 * call is ucmd-supervise's to answer (paths.c, pl_sv_call)
	 */
	PL_WHERE_SV,
};

struct pl_where {
	enum pl_where_kind kind;
	const struct pl_devinfo *dev;	/* PL_WHERE_DEV */
	char path[PATH_MAX];		/* DEV: the placeholder; SYS: in the tree */
	char norm[PATH_MAX];		/* the path as the program meant it, absolute */
	bool host;			/* SYS: path is the host's (norm), reached from the tree */
	bool through;			/* SV: ucmd's, from another root (view.c): dev still set */
};

/* An NVMe name ucmd does not have leads here: a path that does not exist (ENOENT). */
#define PL_WHERE_DENIED "/proc/self/ucmd-exec-no-such-device"

/*
 * Where path leads; base is the directory a relative path starts from, as
 * the kernel names it (the working directory, a dirfd's /proc link), or
 * NULL (a relative path is then not ucmd's).
 */
void pl_where(const char *base, const char *path, struct pl_where *w);
/*
 * An open with flags of where w leads, before it is made: 0 to go on (open
 * w->path), or -errno. sysfs's attributes are read-only (EACCES for
 * writing), the rescans are taken (the tree brought up to date), a
 * resource0 written again with the registers as they are now.
 */
int pl_where_open(const struct pl_where *w, int flags);
/* pl_where_open's "open it with pl_attrw_flags(flags)": a 0644 attribute, opened by root for writing */
#define PL_OPEN_ATTRW 1

/* ---- attrw.c: writes to the tree's 0644 attributes (the preload's) ---- */
/* The flags an attribute's open for writing is made with (O_RDONLY | O_APPEND: attrw.c). */
int pl_attrw_flags(int flags);
/*
 * A write (iov, cnt: the program's) the kernel refused (EBADF) on fd: if
 * fd is an attribute opened for writing, true and *ret the write's result
 * as libc's (its length, or -1 and errno: EINVAL for a value not the
 * current one); false: not one, the kernel's answer stands.
 */
bool pl_attrw(int fd, const struct iovec *iov, int cnt, ssize_t *ret);
/* Is fd an attribute opened for writing (stdio.c: its stream's writes are write's)? */
bool pl_attrw_fd(int fd);
/*
 * attrval.c: the write of val to the tree's attribute at path, whose
 * current value is cur (both NUL-terminated, both trimmed in place): 0 if
 * taken, else -EINVAL
 */
int pl_attr_judge(const char *path, char *cur, char *val);

/* ---- ctlfiles.c: the tree's write-only control files ---- */
/*
 * An open for writing of the tree's file path (its last name base), under
 * root: a control file (rescan, rescan_controller, reset_controller, a
 * PCI function's reset, remove, rescan) PL_OPEN_ATTRW for root, whose
 * write pl_ctl_write takes, -EACCES for another user; any other file
 * -EACCES (kernfs's answer without a store).
 */
int pl_ctl_open(const char *root, const char *path, const char *base);
/* Is the tree's file path one of the control files (its name, mode 0200)? */
bool pl_ctl_file(const char *path);
/*
 * A write of val (NUL-terminated, as written) to the control file path:
 * its value read as Linux's store reads it, the action taken when it says
 * so; 0 or -errno (EINVAL, ERANGE for a value refused, the action's own).
 */
int pl_ctl_write(const char *path, const char *val);
/*
 * The control file path's action taken now, whatever will be written:
 * ucmd-supervise's, at a static program's open for writing (sv_sysfs.c);
 * 0 or -errno, -EACCES for a file not one of them.
 */
int pl_ctl_take(const char *path);
/* After a control file's write or pl_ctl_take's open: what it left for then (a removal's tree sync). */
void pl_ctl_done(void);
/* Was controller instance's PCI function removed (its remove written, no rescan since)? */
bool pl_ctl_removed(unsigned instance);
/* The same by a device's name: "nvme0" its controller's, "nvme0n1", "ng0n1" pl_kind_removed's. */
bool pl_name_removed(const char *name);
/*
 * Are the devices of kind named after instance removed? A controller by
 * its own function's removal; the namespaces nvmeXnY, ngXnY (any kind but
 * PL_DEV_CTRL) once every controller of subsystem X is removed (X's own,
 * or the controllers under one multipath head, named after the first).
 */
bool pl_kind_removed(enum pl_dev_kind kind, unsigned instance);
/* Removed controller instance's subsystem when it was removed (X of nvme-subsysX), or -1. */
int pl_ctl_removed_group(unsigned instance);
/*
 * Has d's controller been removed (its PCI function's remove) since d was
 * opened? Then an fd already open on it fails as Linux's do once the
 * driver is unbound: its NVMe ioctls ENODEV (the queue is dying), its
 * reads, writes and flushes EIO (the disk is dead). Without a system call.
 */
bool pl_dev_gone(const struct pl_devinfo *d);
/* Map the removals' map (pl_dev_gone's) now, if it can be: once the tree is ready. */
void pl_ctl_map(void);
/* The same by controller instance, and by a device's name ("ng0n1": ucmd-supervise's fds). */
bool pl_instance_gone(unsigned instance);
bool pl_name_gone(const char *name);

/* ---- paths.c ---- */
/* The path interposers (open*, stat*, access, opendir, readlink...), and: */
/* The path a path-only call reaches: path itself, or (copied to buf) the tree's or the placeholder's. */
const char *pl_path_for(const char *path, char buf[PATH_MAX]);
/* Where path leads (where.c), relative to dirfd as the kernel resolves it. */
void pl_classify(int dirfd, const char *path, struct pl_where *w);
/* pl_where_open's verdict as libc's: 0 (or PL_OPEN_ATTRW), or -1 and errno. */
int pl_sys_open_ok(const struct pl_where *w, int flags);
/*
 * The call nr made again as the program made it, from libc's syscall
 * instruction, which ucmd-supervise's filter sends it: the answer for what
 * this thread cannot reach of the tree (PL_WHERE_SV, or EACCES on the
 * tree's path), as the supervisor gives it for this thread's ids. Without a
 * supervisor (LD_PRELOAD by hand): -EACCES, never the unjudged call.
 * The result or -errno.
 */
long pl_sv_call(long nr, long a0, long a1, long a2, long a3, long a4);
/* open's open, as libc's (fd, or -1 and errno): judged, from the stub, checked after (fopen.c) */
int pl_open_path(int dirfd, const char *path, int flags, mode_t mode);

/* ---- pathname.c: the string side of paths.c, pure ---- */

/* A struct linux_dirent64 record of name (getdents64's): its length, 8-byte aligned. */
size_t pl_dirent64_len(const char *name);
/* Write that record, reclen = pl_dirent64_len(name) bytes, padding zeroed, at rec. */
void pl_dirent64_put(void *rec, size_t reclen, uint64_t ino, int64_t off, unsigned char type,
		     const char *name);
/* A struct linux_dirent record (the old getdents's: d_type last): its length, long-aligned. */
size_t pl_linux_dirent_len(const char *name);
/* Write that record, reclen = pl_linux_dirent_len(name) bytes, padding zeroed, at rec. */
void pl_linux_dirent_put(void *rec, size_t reclen, uint64_t ino, int64_t off,
			 unsigned char type, const char *name);
/* Either record: old for getdents's struct linux_dirent, else getdents64's. */
size_t pl_dirent_rec_len(bool old, const char *name);
void pl_dirent_rec_put(bool old, void *rec, size_t reclen, uint64_t ino, int64_t off,
		       unsigned char type, const char *name);

/* A PCI function's sysfs class ("0x010802\n"): an NVMe controller's (01h/08h)? */
bool pl_pci_class_nvme(const char *class_text);
/* "nvme..." or "ng..." then a digit, one component: a name devinfo may know. */
bool pl_path_dev_name(const char *s);
/* Is p dir itself or below it (dir without a trailing slash)? */
bool pl_path_under(const char *p, const char *dir);
/*
 * An absolute path p folded into out ("//" and "/./" dropped, "/" for
 * nothing left); out has room for strlen(p) + 2 bytes. ".." is kept: the
 * kernel resolves it, and a folded ".." could cross a symbolic link.
 */
void pl_path_fold(char *out, const char *p);

/*
 * view.c: whose /dev and /sys a thread's path reaches, ucmd-supervise's
 * (sv_tview.c) and the preload's (paths.c) one verdict. PL_VIEW_OURS: the
 * thread has the program's root and mounts, the path is judged as always;
 * PL_VIEW_THROUGH: another root or mounts, whose /dev or /sys is ours (a
 * bind mount of it): ucmd's, but reached through that root; PL_VIEW_OWN:
 * the thread's own file, the kernel's answer in its root.
 */
enum pl_view { PL_VIEW_OURS, PL_VIEW_THROUGH, PL_VIEW_OWN };
/*
 * folded: the absolute path as the thread names it; same_view: the thread
 * has our root and mounts; top_ours("/dev" or "/sys", arg): is that
 * directory, looked up in the thread's root and mounts, our own?
 */
enum pl_view pl_view_of(const char *folded, bool same_view,
			bool (*top_ours)(const char *top, void *arg), void *arg);
/* The preload's: the calling thread's view, against the program's start (PL_ENV_VIEW). */
void pl_view_init(void);
enum pl_view pl_view_here(const char *folded);
/* The process may have left our view: a chroot, pivot_root, unshare or setns (seccomp.c). */
void pl_view_moved(void);
/* Has it (and is there a view to leave)? Without, pl_view_here is PL_VIEW_OURS. */
bool pl_view_left(void);
/* /proc/devices text: does its character (block) section name major "nvme" or "nvme-generic"? */
bool pl_proc_devices_nvme(const char *text, bool block, unsigned major);
/* A /sys/dev/block/MAJ:MIN link's target: an NVMe namespace (nvmeXnY, nvmeXcYnZ) or its partition? */
bool pl_sysfs_block_nvme(const char *target);
/* UCMD_TEST_NVME_MAJORS's "c:MAJ,b:MAJ..." (tests only): does it name major of that kind? */
bool pl_test_majors_has(const char *spec, bool block, unsigned major);

/* ---- hostnvme.c ---- */

/* Is st (of a file just opened) one of the host's NVMe devices, by its device number? */
bool pl_host_nvme_rdev(const struct stat *st);

/* ---- uring.c ---- */

/* The io_uring system calls, emulated on the daemon's rings: the kernel's return conventions (-errno). */
long pl_io_uring_setup(unsigned entries, struct io_uring_params *p);
long pl_io_uring_enter(int fd, unsigned to_submit, unsigned min_complete, unsigned flags,
		       const void *arg, size_t argsz);
long pl_io_uring_register(int fd, unsigned opcode, void *arg, unsigned nr_args);
/* mmap(2) of a ring fd at IORING_OFF_SQ_RING/CQ_RING/SQES; MAP_FAILED with errno for a fd not a ring's. */
bool pl_uring_is_ring(int fd);
/* The program closed fd through libc: if it was a ring's, forget it. */
void pl_uring_close(int fd);
long pl_uring_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
/* In a forked child: no registered ring index, no io_uring_task, as Linux's new task. */
void pl_uring_forked(void);

/* ---- uring_relay.c: a forked child's submit on an inherited ring ---- */
struct pl_relay;
struct ucmd_ring;
/*
 * Take up to to_submit SQEs the program published on shared (its maker's
 * ring) and run them in this process, their CQEs relayed into shared's CQ;
 * *slot is made at the first. How many were taken, or -errno (EBADF: an
 * SQE names the shared ring's registered resources, or the ring has no
 * program SQ).
 */
long pl_relay_submit(struct ucmd_ring *shared, struct pl_relay *_Atomic *slot, unsigned to_submit);
/*
 * The process is exiting: every request its relays took is cancelled or
 * waited for, and its CQE relayed, before this returns (exit_hook.c).
 */
void pl_relay_exit(void);

/* ---- svtab.c: the device fds ucmd-supervise gave, mirrored for our rings (before an enter) ---- */
void pl_svtab_sync(void);
/* an SQPOLL ring was made: a thread mirrors each change of the table before the open returns */
void pl_svtab_watch(void);
/* fd is a device the supervisor gave this process: its name and open flags */
bool pl_svtab_dev(int fd, char name[32], int *flags);

/* ---- seccomp.c ---- */

/* Install the filter and the SIGSYS handler once per process image. 0 or -errno. */
int pl_seccomp_install(void);
/* The filter and its trampoline are there: trapped calls reach our SIGSYS handler. */
bool pl_seccomp_on(void);
/* A system call that the filter lets through (the trampoline's address is allowed). */
long pl_raw_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5);
/*
 * From now on the writes on descriptors 1 and 2 (write, pwrite64, writev,
 * pwritev, pwritev2) that no interposer sees, glibc's own (a stdout
 * stream's), trap too, in every thread and in the images exec makes, so
 * that one on an attribute is judged (pl_attrw_trapped). Once per process
 * (a second filter is not added). 0 or -errno.
 */
int pl_seccomp_trap_std_writes(void);
/*
 * A trapped write on 1 or 2 (nr, the call's arguments): made for real,
 * and when the kernel refuses it (EBADF) on an attribute opened for
 * writing, attrw.c's answer. The system call's result (-errno).
 */
long pl_attrw_trapped(long nr, const long a[6]);

/* The trampoline's page (seccomp.c): far below the mmap area and above any PIE or heap, free in
 * every image we have seen; the same in every image, so ucmd-supervise's filter knows it too. */
#define PL_TRAMP_ADDR 0x10000000000ul
#define PL_TRAMP_LEN 4096ul
/* Its openat stub (pl_open_judged): the entry, and the address after its syscall instruction,
 * which ucmd-supervise's filter lets openat through from (seccomp_data.instruction_pointer). */
#define PL_TRAMP_OPENAT 48ul
#define PL_TRAMP_OPENAT_IP 58ul
/* An open whose path the preload has judged and copied (paths.c): fd or -errno. */
long pl_open_judged(int dirfd, const char *path, int flags, mode_t mode);

/* ---- sigsys.c (x86-64): the program's SIGSYS disposition, apart from ours ---- */

/* Our handler in the kernel (restorer: rt_sigreturn's code), the program's SIG_DFL: 0 or -errno. */
int pl_sigsys_install(void (*handler)(int, siginfo_t *, void *), void *restorer);
/* A SIGSYS not of our filter: to the program's disposition, as ucmd-supervise recorded it. */
void pl_sigsys_chain(int sig, siginfo_t *si, void *ctx);

#endif /* UCMD_PRELOAD_H */
