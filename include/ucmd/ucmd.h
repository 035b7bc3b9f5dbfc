/* SPDX-License-Identifier: MIT */
/*
 * ucmd: io_uring command passthrough for NVMe, in user space.
 *
 * The API has liburing's shape: every liburing call a passthrough program
 * uses has a twin ucmd_X for io_uring_X with the same arguments and
 * semantics, and struct ucmd_ring stands for struct io_uring. SQEs and CQEs
 * are struct io_uring_sqe / struct io_uring_cqe with Linux's exact layout.
 *
 * Rings live on an engine (struct ucmd_engine), which holds the devices as
 * the kernel does for a process. ucmd_queue_init*() without an engine use
 * the process's default engine; ucmd_open() gives a descriptor that is valid
 * on every ring of that engine.
 */
#ifndef UCMD_UCMD_H
#define UCMD_UCMD_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "ucmd/uapi/io_uring.h"
#include "ucmd/uapi/nvme_ioctl.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

struct ucmd_engine;
struct ucmd_backend;

/* Application view of the SQ ring: pointers into the shared ring memory. */
struct ucmd_sq {
	unsigned *khead;
	unsigned *ktail;
	unsigned *kring_mask;
	unsigned *kring_entries;
	unsigned *kflags;
	unsigned *kdropped;
	unsigned *array;
	struct io_uring_sqe *sqes;
	unsigned sqe_head;
	unsigned sqe_tail;
	size_t ring_sz;
	void *ring_ptr;
	unsigned ring_mask;
	unsigned ring_entries;
};

struct ucmd_cq {
	unsigned *khead;
	unsigned *ktail;
	unsigned *kring_mask;
	unsigned *kring_entries;
	unsigned *kflags;
	unsigned *koverflow;
	struct io_uring_cqe *cqes;
	size_t ring_sz;
	void *ring_ptr;
	unsigned ring_mask;
	unsigned ring_entries;
};

struct ucmd_ring {
	struct ucmd_sq sq;
	struct ucmd_cq cq;
	unsigned flags;		/* IORING_SETUP_* */
	int ring_fd;		/* the memfd holding the rings and SQEs */
	unsigned features;
	struct ucmd_engine *engine;
	/*
	 * The backend behind the ring (ucmd's own engine, the kernel, ...),
	 * which every call that is not one of the inline helpers below goes
	 * through, and its own state for the ring. Both opaque.
	 */
	const struct ucmd_backend *ops;
	void *backend;
	int enter_ring_fd;	/* kernel rings: the registered index, else ring_fd */
	unsigned int_flags;	/* UCMD_INT_FLAG_* */
};

/* ring->int_flags */
#define UCMD_INT_FLAG_REG_RING	(1U << 0)	/* ucmd_register_ring_fd() done */
/*
 * A poller consumes the SQ on its own (a ucmdd ring's proxy) although the
 * ring is no SQPOLL ring: ucmd_submit() then counts the SQEs it published,
 * which are submitted, as a ring without SQPOLL counts them, not the ones
 * the poller has yet to take (set by the backend).
 */
#define UCMD_INT_FLAG_SQ_POLLED	(1U << 1)

/* ---- engines and devices ------------------------------------------------ */

/*
 * Errors. Calls return a negative errno (or NULL where a pointer is
 * returned). The calls that set things up -- ucmd_engine_create[_kernel]()
 * and ucmd_engine_new[_kernel](), ucmd_ctrl_create() (<ucmd/ctrl.h>),
 * ucmd_nvme_attach() (<ucmd/nvme.h>) and those of <ucmd/security.h> --
 * also leave a sentence saying why in ucmd_last_error() when they fail: a
 * per-thread string, like errno, valid until the thread's next failing
 * call; a successful call does not clear it. Device and ring calls
 * (ucmd_open, ucmd_ioctl, prep, submit, wait) report through return values
 * and CQEs only.
 */
const char *ucmd_last_error(void);

/*
 * Create an engine with its null device into *out; 0 or -errno (-ENOMEM,
 * -EINVAL for a NULL out), with the reason in ucmd_last_error(). Release it
 * with ucmd_engine_free().
 */
int ucmd_engine_create(struct ucmd_engine **out);
/* The same, returning NULL on failure (the reason in ucmd_last_error()). */
struct ucmd_engine *ucmd_engine_new(void);
void ucmd_engine_free(struct ucmd_engine *e);
/* The process's default engine, created on first use. */
struct ucmd_engine *ucmd_engine_default(void);

/*
 * Bad user addresses are -EFAULT, never a crash: the engine's copies to and
 * from the application's memory run under a SIGSEGV/SIGBUS handler that
 * recovers only its own faults and passes every other one to the handler it
 * replaced. It is installed on first use; a program that installs its own
 * SIGSEGV or SIGBUS handler afterwards calls this again to put ucmd's in
 * front. Returns 0 or -errno from sigaction().
 */
int ucmd_uaccess_init(void);

/*
 * Open a device of the engine by name ("null", "ng0n1", "nvme0", ...).
 * flags: O_RDONLY, O_WRONLY or O_RDWR. Returns a descriptor (>= 0) valid on
 * the engine's rings, or a negative errno (-ENOENT: no such device).
 */
int ucmd_open(struct ucmd_engine *e, const char *name, int flags);
int ucmd_close(struct ucmd_engine *e, int fd);

/*
 * The synchronous ioctl path, ioctl(2) on a descriptor from ucmd_open():
 * what the device's driver supports, as Linux's NVMe driver does --
 * NVME_IOCTL_ID on a namespace (returns the nsid), NVME_IOCTL_ADMIN64_CMD
 * on a controller or namespace, NVME_IOCTL_IO64_CMD and
 * NVME_IOCTL_IO64_CMD_VEC on a namespace (arg: struct nvme_passthru_cmd64;
 * returns 0, a positive NVMe status, or -errno). On a kernel engine
 * (<ucmd/kernel.h>) it is ioctl(2) on the real descriptor. Errors: -EBADF
 * for a descriptor that is not open, -ENOTTY for a command the device does
 * not know, -EFAULT for a bad arg, -EACCES/-EPERM as Linux decides.
 */
int ucmd_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg);
/* The engine's device names: up to max of them into names; returns how many there are. */
int ucmd_device_names(struct ucmd_engine *e, const char **names, unsigned max);

/*
 * A block device's I/O statistics: the fields of Linux's
 * /sys/block/<dev>/stat that fio's "Disk stats" use; [0] reads, [1] writes.
 * Passthrough I/O on the generic device is not counted, as in Linux.
 */
struct ucmd_disk_stat {
	uint64_t ios[2];		/* completed I/Os */
	uint64_t merges[2];		/* merged into another request */
	uint64_t sectors[2];		/* 512-byte sectors moved */
	uint64_t ticks_ms[2];		/* summed I/O durations */
	uint64_t io_ticks_ms;		/* time with I/O in flight */
	uint64_t time_in_queue_ms;	/* summed durations, reads and writes */
};

/*
 * The statistics of block device `name` ("nvme0n1"; on the kernel backend,
 * from /sys/block). -ENOENT: no such device; -ENOTBLK: not a block device.
 */
int ucmd_disk_stat(struct ucmd_engine *e, const char *name, struct ucmd_disk_stat *out);

/*
 * ioctl(2) on a device descriptor of the engine (NVME_IOCTL_ID,
 * NVME_IOCTL_ADMIN64_CMD, NVME_IOCTL_IO64_CMD, ..._VEC): the driver's result,
 * or -EBADF, -ENOTTY (no such ioctl), -EFAULT, -EACCES (the engine's
 * security policy refused it, as it would the same command as a uring_cmd).
 */
int ucmd_ioctl(struct ucmd_engine *e, int fd, unsigned long cmd, void *arg);

/*
 * Memory for I/O: len bytes (rounded up to whole pages), zeroed and
 * page-aligned, that the engine's backend reaches without a copy. On a
 * daemon engine (<ucmd/daemon.h>) it is a sealed memfd shared with the
 * daemon, so commands on it are zero-copy there; on the native and kernel
 * backends, plain page-aligned memory. Any memory works for I/O on every
 * backend: this is the fast one. NULL on failure with errno set (EINVAL
 * for len 0 or no engine, ENOMEM, ENOTCONN when the daemon is gone).
 * Release with ucmd_buf_free() on the same engine, before the engine:
 * ucmd_engine_free() unmaps a daemon engine's buffers.
 */
void *ucmd_buf_alloc(struct ucmd_engine *e, size_t len);
/* Give back a buffer from ucmd_buf_alloc(e, ...); NULL and unknown pointers are ignored. */
void ucmd_buf_free(struct ucmd_engine *e, void *p);

/* ---- ring setup and teardown ------------------------------------------- */

int ucmd_queue_init(unsigned entries, struct ucmd_ring *ring, unsigned flags);
int ucmd_queue_init_params(unsigned entries, struct ucmd_ring *ring, struct io_uring_params *p);
int ucmd_queue_init_engine(struct ucmd_engine *e, unsigned entries, struct ucmd_ring *ring,
			   struct io_uring_params *p);
void ucmd_queue_exit(struct ucmd_ring *ring);

/* ---- registration -------------------------------------------------------- */

int ucmd_register_files(struct ucmd_ring *ring, const int *files, unsigned nr_files);
int ucmd_unregister_files(struct ucmd_ring *ring);
int ucmd_register_buffers(struct ucmd_ring *ring, const struct iovec *iovecs, unsigned nr_iovecs);
int ucmd_unregister_buffers(struct ucmd_ring *ring);
/* Register the caller's current credentials; returns the personality id. */
int ucmd_register_personality(struct ucmd_ring *ring);
int ucmd_unregister_personality(struct ucmd_ring *ring, int id);

/*
 * liburing 2.3's other registration calls, same arguments and returns
 * (docs/liburing-parity.md lists the differences):
 * - register_ring_fd: 1 when registered, -EEXIST if it already is;
 *   unregister: 1, -EINVAL if it is not.
 * - register_files_update: replace nr_files slots from off (-1 empties a
 *   slot, IORING_REGISTER_FILES_SKIP keeps it); returns how many were
 *   updated, -ENXIO without a table, -EINVAL past its end, -EBADF for an
 *   fd that is not open.
 * - register_files_sparse / register_buffers_sparse: a table of nr empty
 *   slots; a request on an empty slot fails with -EBADF (files) or -EFAULT
 *   (buffers).
 * - register_eventfd: the eventfd (a real one, from eventfd(2)) is
 *   signalled whenever CQEs are posted, unless IORING_CQ_EVENTFD_DISABLED
 *   is set in *ring->cq.kflags; -EBUSY if one is registered, -EINVAL if fd
 *   is not an eventfd; unregister: -ENXIO if none.
 */
int ucmd_register_ring_fd(struct ucmd_ring *ring);
int ucmd_unregister_ring_fd(struct ucmd_ring *ring);
int ucmd_register_files_update(struct ucmd_ring *ring, unsigned off, const int *files,
			       unsigned nr_files);
int ucmd_register_files_sparse(struct ucmd_ring *ring, unsigned nr);
int ucmd_register_buffers_sparse(struct ucmd_ring *ring, unsigned nr);
int ucmd_register_eventfd(struct ucmd_ring *ring, int fd);
int ucmd_unregister_eventfd(struct ucmd_ring *ring);

/*
 * Which opcodes the ring (or the default engine) implements: liburing's
 * io_uring_get_probe_ring / io_uring_get_probe. NULL on failure (errno
 * set); free with ucmd_free_probe().
 */
struct io_uring_probe *ucmd_get_probe_ring(struct ucmd_ring *ring);
struct io_uring_probe *ucmd_get_probe(void);
void ucmd_free_probe(struct io_uring_probe *probe);

static inline int ucmd_opcode_supported(const struct io_uring_probe *p, int op)
{
	if (op < 0 || op > p->last_op)
		return 0;
	return (p->ops[op].flags & IO_URING_OP_SUPPORTED) != 0;
}

/* ---- submission and completion ----------------------------------------- */

int ucmd_submit(struct ucmd_ring *ring);
int ucmd_submit_and_wait(struct ucmd_ring *ring, unsigned wait_nr);
int ucmd_wait_cqe_nr(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr);
int ucmd_peek_cqe(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr);
/*
 * Waiting with a timeout (liburing's semantics): ts is relative; -ETIME when
 * it passes first. wait_cqes and wait_cqe_timeout submit nothing;
 * submit_and_wait_timeout submits what is queued first and returns how
 * many it submitted (or -ETIME/-errno). sigmask, when given, is the signal
 * mask while waiting, as with io_uring_enter(2).
 */
int ucmd_wait_cqes(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr,
		   struct __kernel_timespec *ts, sigset_t *sigmask);
int ucmd_wait_cqe_timeout(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr,
			  struct __kernel_timespec *ts);
int ucmd_submit_and_wait_timeout(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr,
				 unsigned wait_nr, struct __kernel_timespec *ts,
				 sigset_t *sigmask);
/* Up to count CQEs that are ready, without waiting; returns how many. */
unsigned ucmd_peek_batch_cqe(struct ucmd_ring *ring, struct io_uring_cqe **cqes, unsigned count);
/* The raw io_uring_enter(2) twin. */
int ucmd_enter(struct ucmd_ring *ring, unsigned to_submit, unsigned min_complete, unsigned flags);

static inline int ucmd_wait_cqe(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr)
{
	return ucmd_wait_cqe_nr(ring, cqe_ptr, 1);
}

static inline unsigned ucmd_cqe_shift(const struct ucmd_ring *ring)
{
	return (ring->flags & IORING_SETUP_CQE32) ? 1 : 0;
}

static inline unsigned ucmd_sqe_shift(const struct ucmd_ring *ring)
{
	return (ring->flags & IORING_SETUP_SQE128) ? 1 : 0;
}

/* Next free SQE (128-byte stride on SQE128 rings), or NULL when the SQ is full. */
static inline struct io_uring_sqe *ucmd_get_sqe(struct ucmd_ring *ring)
{
	struct ucmd_sq *sq = &ring->sq;
	unsigned head, next = sq->sqe_tail + 1;

	/* With SQPOLL another thread moves the head. */
	head = __atomic_load_n(sq->khead, (ring->flags & IORING_SETUP_SQPOLL) ?
			       __ATOMIC_ACQUIRE : __ATOMIC_RELAXED);
	if (next - head > sq->ring_entries)
		return NULL;
	struct io_uring_sqe *sqe =
		&sq->sqes[(sq->sqe_tail & sq->ring_mask) << ucmd_sqe_shift(ring)];
	sq->sqe_tail = next;
	return sqe;
}

static inline unsigned ucmd_sq_ready(const struct ucmd_ring *ring)
{
	return ring->sq.sqe_tail - __atomic_load_n(ring->sq.khead, __ATOMIC_ACQUIRE);
}

static inline unsigned ucmd_sq_space_left(const struct ucmd_ring *ring)
{
	return ring->sq.ring_entries - ucmd_sq_ready(ring);
}

/* CQEs are waiting in the overflow list for room in the CQ. */
static inline bool ucmd_cq_has_overflow(const struct ucmd_ring *ring)
{
	return __atomic_load_n(ring->sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW;
}

static inline unsigned ucmd_cq_ready(const struct ucmd_ring *ring)
{
	return __atomic_load_n(ring->cq.ktail, __ATOMIC_ACQUIRE) - *ring->cq.khead;
}

static inline void ucmd_cq_advance(struct ucmd_ring *ring, unsigned nr)
{
	if (nr)
		__atomic_store_n(ring->cq.khead, *ring->cq.khead + nr, __ATOMIC_RELEASE);
}

static inline void ucmd_cqe_seen(struct ucmd_ring *ring, struct io_uring_cqe *cqe)
{
	if (cqe)
		ucmd_cq_advance(ring, 1);
}

/*
 * The loop tests the tail, not the CQE pointer, which the compiler cannot
 * tell is never NULL; cqe is NULL after the loop, as with liburing's.
 */
#define ucmd_for_each_cqe(ring, head, cqe)					\
	for (head = *(ring)->cq.khead;						\
	     head != __atomic_load_n((ring)->cq.ktail, __ATOMIC_ACQUIRE) ?	\
		     (cqe = &(ring)->cq.cqes[((head) & (ring)->cq.ring_mask)	\
					     << ucmd_cqe_shift(ring)], 1) :	\
		     (cqe = NULL, 0);						\
	     head++)

/* ---- SQE preparation (liburing's io_uring_prep_* twins) ------------------ */

static inline void ucmd_prep_rw(int op, struct io_uring_sqe *sqe, int fd, const void *addr,
				unsigned len, uint64_t offset)
{
	sqe->opcode = (uint8_t)op;
	sqe->flags = 0;
	sqe->ioprio = 0;
	sqe->fd = fd;
	sqe->off = offset;
	sqe->addr = (uint64_t)(uintptr_t)addr;
	sqe->len = len;
	sqe->rw_flags = 0;
	sqe->buf_index = 0;
	sqe->personality = 0;
	sqe->file_index = 0;
	sqe->addr3 = 0;
	sqe->__pad2[0] = 0;
}

static inline void ucmd_prep_nop(struct io_uring_sqe *sqe)
{
	ucmd_prep_rw(IORING_OP_NOP, sqe, -1, NULL, 0, 0);
}

static inline void ucmd_prep_read(struct io_uring_sqe *sqe, int fd, void *buf, unsigned nbytes,
				  uint64_t offset)
{
	ucmd_prep_rw(IORING_OP_READ, sqe, fd, buf, nbytes, offset);
}

static inline void ucmd_prep_write(struct io_uring_sqe *sqe, int fd, const void *buf,
				   unsigned nbytes, uint64_t offset)
{
	ucmd_prep_rw(IORING_OP_WRITE, sqe, fd, buf, nbytes, offset);
}

static inline void ucmd_prep_readv(struct io_uring_sqe *sqe, int fd, const struct iovec *iovecs,
				   unsigned nr_vecs, uint64_t offset)
{
	ucmd_prep_rw(IORING_OP_READV, sqe, fd, iovecs, nr_vecs, offset);
}

static inline void ucmd_prep_writev(struct io_uring_sqe *sqe, int fd,
				    const struct iovec *iovecs, unsigned nr_vecs,
				    uint64_t offset)
{
	ucmd_prep_rw(IORING_OP_WRITEV, sqe, fd, iovecs, nr_vecs, offset);
}

static inline void ucmd_prep_read_fixed(struct io_uring_sqe *sqe, int fd, void *buf,
					unsigned nbytes, uint64_t offset, int buf_index)
{
	ucmd_prep_rw(IORING_OP_READ_FIXED, sqe, fd, buf, nbytes, offset);
	sqe->buf_index = (uint16_t)buf_index;
}

static inline void ucmd_prep_write_fixed(struct io_uring_sqe *sqe, int fd, const void *buf,
					 unsigned nbytes, uint64_t offset, int buf_index)
{
	ucmd_prep_rw(IORING_OP_WRITE_FIXED, sqe, fd, buf, nbytes, offset);
	sqe->buf_index = (uint16_t)buf_index;
}

/*
 * IORING_OP_URING_CMD with cmd_op for fd, as liburing's
 * io_uring_prep_uring_cmd: every field of the 64-byte SQE but user_data is
 * set, and its 16 command bytes are cleared. An SQE cannot tell whether its
 * ring is SQE128, so the 64 command bytes of the second half are not
 * touched: on an SQE128 ring use ucmd_prep_uring_cmd128() or
 * ucmd_prep_cmd(), which clear all 80.
 */
static inline void ucmd_prep_uring_cmd(struct io_uring_sqe *sqe, int cmd_op, int fd)
{
	ucmd_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = (uint32_t)cmd_op;
	sqe->__pad1 = 0;
}

/*
 * The same for an SQE of an IORING_SETUP_SQE128 ring (only there: the
 * second 64 bytes belong to the next SQE on a 64-byte ring): the 80-byte
 * command area is cleared whole.
 */
static inline void ucmd_prep_uring_cmd128(struct io_uring_sqe *sqe, int cmd_op, int fd)
{
	ucmd_prep_uring_cmd(sqe, cmd_op, fd);
	memset(sqe->cmd, 0, 80);
}

/* Bytes of command an SQE of this ring carries: 16, or 80 on SQE128. */
static inline unsigned ucmd_sqe_cmd_size(const struct ucmd_ring *ring)
{
	return (ring->flags & IORING_SETUP_SQE128) ? 80 : 16;
}

/*
 * A URING_CMD carrying len bytes of cmd, for an SQE of ring: the command
 * area the ring has is cleared, then cmd copied in. -EINVAL (and sqe left
 * alone) when len is more than ucmd_sqe_cmd_size(ring).
 */
static inline int ucmd_prep_cmd(const struct ucmd_ring *ring, struct io_uring_sqe *sqe,
				int cmd_op, int fd, const void *cmd, size_t len)
{
	if (len > ucmd_sqe_cmd_size(ring))
		return -EINVAL;
	ucmd_prep_uring_cmd(sqe, cmd_op, fd);
	memset(sqe->cmd, 0, ucmd_sqe_cmd_size(ring));
	if (len)
		memcpy(sqe->cmd, cmd, len);
	return 0;
}

/* IORING_OP_FSYNC; fsync_flags 0 or IORING_FSYNC_DATASYNC. */
static inline void ucmd_prep_fsync(struct io_uring_sqe *sqe, int fd, unsigned fsync_flags)
{
	ucmd_prep_rw(IORING_OP_FSYNC, sqe, fd, NULL, 0, 0);
	sqe->fsync_flags = fsync_flags;
}

/*
 * IORING_OP_TIMEOUT: completes with -ETIME when ts passes (relative, or
 * absolute with IORING_TIMEOUT_ABS), or with 0 once count other CQEs were
 * posted (count 0: the time only). ts must stay valid until submission.
 */
static inline void ucmd_prep_timeout(struct io_uring_sqe *sqe, const struct __kernel_timespec *ts,
				     unsigned count, unsigned flags)
{
	ucmd_prep_rw(IORING_OP_TIMEOUT, sqe, -1, ts, 1, count);
	sqe->timeout_flags = flags;
}

/*
 * IORING_OP_LINK_TIMEOUT, linked after the request it bounds (that one has
 * IOSQE_IO_LINK): when ts passes first the request is cancelled if it can be
 * (it completes with -ECANCELED) and this completes with -ETIME, or with
 * the cancel's error (-EALREADY, -ENOENT) if it cannot; when the request
 * finishes first this completes with -ECANCELED.
 */
static inline void ucmd_prep_link_timeout(struct io_uring_sqe *sqe,
					  const struct __kernel_timespec *ts, unsigned flags)
{
	ucmd_prep_rw(IORING_OP_LINK_TIMEOUT, sqe, -1, ts, 1, 0);
	sqe->timeout_flags = flags;
}

/*
 * IORING_OP_ASYNC_CANCEL of the request(s) with user_data (flags
 * IORING_ASYNC_CANCEL_ALL/_ANY/_FD/_FD_FIXED): 0 (or how many with _ALL),
 * -ENOENT when none was found, -EALREADY when it is already running.
 */
static inline void ucmd_prep_cancel64(struct io_uring_sqe *sqe, uint64_t user_data, int flags)
{
	ucmd_prep_rw(IORING_OP_ASYNC_CANCEL, sqe, -1, NULL, 0, 0);
	sqe->addr = user_data;
	sqe->cancel_flags = (uint32_t)flags;
}

static inline void ucmd_prep_cancel(struct io_uring_sqe *sqe, const void *user_data, int flags)
{
	ucmd_prep_cancel64(sqe, (uint64_t)(uintptr_t)user_data, flags);
}

/* Cancel by file: every request on fd with IORING_ASYNC_CANCEL_ALL. */
static inline void ucmd_prep_cancel_fd(struct io_uring_sqe *sqe, int fd, unsigned flags)
{
	ucmd_prep_rw(IORING_OP_ASYNC_CANCEL, sqe, fd, NULL, 0, 0);
	sqe->cancel_flags = flags | IORING_ASYNC_CANCEL_FD;
}

static inline void *ucmd_sqe_cmd(struct io_uring_sqe *sqe)
{
	return sqe->cmd;
}

static inline void ucmd_sqe_set_data64(struct io_uring_sqe *sqe, uint64_t data)
{
	sqe->user_data = data;
}

static inline void ucmd_sqe_set_data(struct io_uring_sqe *sqe, void *data)
{
	sqe->user_data = (uint64_t)(uintptr_t)data;
}

static inline uint64_t ucmd_cqe_get_data64(const struct io_uring_cqe *cqe)
{
	return cqe->user_data;
}

static inline void *ucmd_cqe_get_data(const struct io_uring_cqe *cqe)
{
	return (void *)(uintptr_t)cqe->user_data;
}

static inline void ucmd_sqe_set_flags(struct io_uring_sqe *sqe, unsigned flags)
{
	sqe->flags = (uint8_t)flags;
}

/*
 * Convenience for NVMe passthrough: prepare a 128-byte SQE carrying cmd for
 * NVME_URING_CMD_IO / _IO_VEC / _ADMIN / _ADMIN_VEC on fd.
 */
static inline void ucmd_prep_nvme_cmd(struct io_uring_sqe *sqe, int fd, uint32_t cmd_op,
				      const struct nvme_uring_cmd *cmd)
{
	ucmd_prep_uring_cmd128(sqe, (int)cmd_op, fd);
	memcpy(sqe->cmd, cmd, sizeof(*cmd));
}

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* UCMD_UCMD_H */
