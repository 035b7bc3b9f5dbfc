/* SPDX-License-Identifier: MIT */
/*
 * Devices and open files: the engine's equivalent of struct file_operations.
 * A provider (a "driver") registers a device with a table of operations; an
 * open file records its open mode and its opener's credentials.
 */
#ifndef UCMD_CORE_FILE_H
#define UCMD_CORE_FILE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "core/cred.h"

struct ucmd_engine;
struct ucmd_file;
struct io_uring_cmd;
struct ucmd_kiocb_rw;
struct ucmd_cmd_desc;
struct ucmd_disk_stat;

/* issue_flags, the kernel's enum io_uring_cmd_flags values */
#define IO_URING_F_COMPLETE_DEFER	(1u << 0)
#define IO_URING_F_UNLOCKED		(1u << 1)
#define IO_URING_F_IOWQ			(1u << 3)
#define IO_URING_F_NONBLOCK		(1u << 31)
#define IO_URING_F_SQE128		(1u << 8)
#define IO_URING_F_CQE32		(1u << 9)
#define IO_URING_F_IOPOLL		(1u << 10)

/* The provider will complete later (io_uring_cmd_done / ki_complete). */
#define EIOCBQUEUED 529

struct ucmd_file_ops {
	const char *name;
	/* Called at open; may refuse (-EACCES, -EPERM, ...). */
	int (*open)(struct ucmd_file *f);
	void (*release)(struct ucmd_file *f);
	/* IORING_OP_URING_CMD: 0/-errno/positive status, or -EIOCBQUEUED. */
	int (*uring_cmd)(struct io_uring_cmd *cmd, unsigned issue_flags);
	/* IOPOLL: reap completions for cmd's queue; returns completions found. */
	int (*uring_cmd_iopoll)(struct io_uring_cmd *cmd);
	/* READ/WRITE family: bytes done, -errno, or -EIOCBQUEUED. */
	long (*read_iter)(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags);
	long (*write_iter)(struct ucmd_kiocb_rw *kiocb, unsigned issue_flags);
	int (*iopoll)(struct ucmd_kiocb_rw *kiocb);
	/* IORING_OP_FSYNC, from a worker (may block): 0 or -errno. NULL: -EINVAL. */
	int (*fsync)(struct ucmd_file *f, int datasync);
	/*
	 * Synchronous ioctl (NVME_IOCTL_*), called by vfs_ioctl only. karg
	 * is the engine's copy of what cmd carries in (_IOC_WRITE, _IOC_SIZE
	 * bytes of arg; NULL if nothing): the copy security judged, so the
	 * provider reads its input there, never again from arg, and writes
	 * its output to arg through current_task()'s mm (core/task.h: arg may
	 * be a daemon client's address, never this process's to touch).
	 */
	long (*ioctl)(struct ucmd_file *f, unsigned long cmd, void *arg, const void *karg);
	/*
	 * A controller's registers as its BAR0 shows them (ucmd_nvme_regs_read,
	 * which checked off and len): 0 or -errno. NULL: not a controller.
	 */
	int (*regs_read)(struct ucmd_file *f, uint32_t off, void *buf, size_t len);
	/* Describe a URING_CMD for security modules (generic terms). */
	int (*describe)(const struct io_uring_cmd *cmd, struct ucmd_cmd_desc *desc);
	/*
	 * Describe an ioctl from karg as describe() does the same command
	 * sent as a uring_cmd; 1: cmd carries no device command (NVME_IOCTL_ID).
	 */
	int (*describe_ioctl)(const struct ucmd_file *f, unsigned long cmd, const void *karg,
			      struct ucmd_cmd_desc *desc);
	/* Describe a READ/WRITE family request. */
	int (*describe_rw)(const struct ucmd_kiocb_rw *kiocb, struct ucmd_cmd_desc *desc);
	/* A block device's statistics (the device's priv); NULL: not a disk. */
	int (*disk_stat)(void *priv, struct ucmd_disk_stat *out);
};

struct ucmd_device {
	char name[32];
	const struct ucmd_file_ops *ops;
	void *priv;
	struct ucmd_device *next;
	/* an unlinked device (engine_unlink_device) is freed with its last file */
	atomic_int opens;
	atomic_bool unlinked, freed;
};

struct ucmd_file {
	const struct ucmd_file_ops *ops;
	struct ucmd_device *dev;
	struct ucmd_engine *engine;
	void *private_data;	/* the provider's, set in ->open */
	int f_flags;		/* O_RDONLY / O_WRONLY / O_RDWR ... */
	unsigned f_mode;	/* FMODE_READ | FMODE_WRITE */
	/*
	 * Per hook (uring_cmd, uring_rw, file_ioctl): the generation << 2,
	 * |1 when every module allows every such call on this file at that
	 * generation, |2 when it does for callers with CAP_SYS_ADMIN
	 * (security/hooks.h, SEC_ALLOW_*). On ops' cache line, which every
	 * command reads anyway.
	 */
	atomic_uint sec_allow[3];
	struct ucmd_cred cred;	/* the opener's */
	atomic_int refs;
	bool counted;		/* in its engine's nr_files (filp_open's) */
};

#define FMODE_READ  (1u << 0)
#define FMODE_WRITE (1u << 1)

int engine_add_device(struct ucmd_engine *e, const char *name,
			   const struct ucmd_file_ops *ops, void *priv);
int engine_remove_device(struct ucmd_engine *e, const char *name);
/*
 * Take name out of the device list even while files are open on it (a
 * namespace that is gone): they keep working on what they opened, no new
 * open finds it. 0 or -ENOENT.
 */
int engine_unlink_device(struct ucmd_engine *e, const char *name);
struct ucmd_device *engine_find_device(struct ucmd_engine *e, const char *name);

/*
 * Open device name as the caller now (Linux's filp_open): a file with one
 * reference, in no table yet (core/fdtable.h installs it). 0, or -EINVAL
 * (flags), -ENOENT (no such device), -ENFILE (the engine's UCMD_MAX_FILES
 * are open), -ENOMEM, or the provider's refusal.
 */
int filp_open(struct ucmd_engine *e, const char *name, int flags, struct ucmd_file **out);
/* Reference the open file behind the current task's fd (NULL if none); drop with fput. */
struct ucmd_file *fget(struct ucmd_engine *e, int fd);
void get_file(struct ucmd_file *f);
void fput(struct ucmd_file *f);

/*
 * ioctl(2) on an open file, as the caller now (Linux's vfs_ioctl with
 * security_file_ioctl in front): the provider's result or -errno (-ENOTTY:
 * no such ioctl; -EFAULT: arg unreadable; -EACCES: security denied).
 */
long vfs_ioctl(struct ucmd_file *f, unsigned long cmd, void *arg);

#endif
