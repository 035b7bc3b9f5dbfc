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
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "ucmd/uapi/io_uring.h"
#include "ucmd/uapi/nvme_ioctl.h"

#ifdef __cplusplus
extern "C" {
#endif

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
};

/* ---- engines and devices ------------------------------------------------ */

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

/* ---- submission and completion ----------------------------------------- */

int ucmd_submit(struct ucmd_ring *ring);
int ucmd_submit_and_wait(struct ucmd_ring *ring, unsigned wait_nr);
int ucmd_wait_cqe_nr(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr, unsigned wait_nr);
int ucmd_peek_cqe(struct ucmd_ring *ring, struct io_uring_cqe **cqe_ptr);
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

#define ucmd_for_each_cqe(ring, head, cqe)					\
	for (head = *(ring)->cq.khead;						\
	     (cqe = (head != __atomic_load_n((ring)->cq.ktail, __ATOMIC_ACQUIRE) ? \
		     &(ring)->cq.cqes[((head) & (ring)->cq.ring_mask) << ucmd_cqe_shift(ring)] \
		     : NULL));							\
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
 * IORING_OP_URING_CMD with cmd_op for fd. The command itself goes into
 * ucmd_sqe_cmd(sqe): 16 bytes, or 80 on an SQE128 ring (where this also
 * clears the second half of the SQE).
 */
static inline void ucmd_prep_uring_cmd(struct io_uring_sqe *sqe, int cmd_op, int fd)
{
	ucmd_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = (uint32_t)cmd_op;
	sqe->__pad1 = 0;
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
	ucmd_prep_uring_cmd(sqe, (int)cmd_op, fd);
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, cmd, sizeof(*cmd));
}

#ifdef __cplusplus
}
#endif

#endif /* UCMD_UCMD_H */
