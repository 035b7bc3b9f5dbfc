/* SPDX-License-Identifier: MIT */
/*
 * The provider-facing side of IORING_OP_URING_CMD (seed 003), with the
 * kernel's names: a provider's ->uring_cmd() gets a struct io_uring_cmd
 * whose sqe points at the engine's snapshot of the SQE, never at the shared
 * ring, and finishes it with io_uring_cmd_done().
 */
#ifndef UCMD_CORE_URING_CMD_H
#define UCMD_CORE_URING_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ucmd/uapi/io_uring.h"
#include "core/file.h"
#include "core/iov_iter.h"

struct io_uring_cmd {
	struct ucmd_file *file;
	const struct io_uring_sqe *sqe;	/* the snapshot taken at prep */
	void (*task_work_cb)(struct io_uring_cmd *cmd, unsigned issue_flags);
	uint32_t cmd_op;
	uint32_t flags;			/* IORING_URING_CMD_* */
	uint8_t pdu[32];		/* the provider's own per-command space */
	void *snap;			/* io_uring_cmd_snap(): the engine's to manage */
};

static inline const void *io_uring_sqe_cmd(const struct io_uring_sqe *sqe)
{
	return sqe->cmd;
}

/* Complete cmd: ret into cqe.res, res2 into big_cqe[0] on a CQE32 ring. */
void io_uring_cmd_done(struct io_uring_cmd *cmd, long ret, uint64_t res2);

/*
 * Run cb in the ring owner's task context (task work); safe from any thread,
 * e.g. a device's interrupt thread. cb usually ends with io_uring_cmd_done().
 */
void io_uring_cmd_complete_in_task(struct io_uring_cmd *cmd,
				   void (*cb)(struct io_uring_cmd *cmd, unsigned issue_flags));

/*
 * A wait source: a provider whose completions arrive where a thread can
 * read them (a socket) lets the ring's waiter read them itself, on its own
 * thread, instead of sleeping until the provider's thread reads them and
 * hands them over (a wake-up and a thread switch per batch). The waiter
 * of a ring whose requests in flight named one (the last one named while
 * none was in flight) calls, in its wait loop:
 *   reap(arg, sleeps) with the ring's lock held: complete what is there,
 *                     never sleeping; how many it completed. sleeps: if
 *                     it completes none the waiter goes on to sleep on
 *                     the source (no deadline has passed), so a look the
 *                     sleep makes anyway (a poll that returns at once when
 *                     there is something) may be left to it
 *   sleep_begin(arg)  with the lock held: true when the waiter may sleep
 *                     on the source; the source then stays valid (and its
 *                     own reader stays away) until sleep_end
 *   sleep(arg, efd, timeout_ms)  without the lock: sleep until the source
 *                     has something, efd (the ring's wake-up) is readable
 *                     or the time passed; it may return earlier
 *   sleep_end(arg)
 * Rings without it, IOPOLL and SQPOLL rings wait as before.
 */
struct io_wait_src_ops {
	int  (*reap)(void *arg, bool sleeps);
	bool (*sleep_begin)(void *arg);
	void (*sleep)(void *arg, int efd, int timeout_ms);
	void (*sleep_end)(void *arg);
};
/*
 * Name ops/arg as the wait source of cmd's ring, from ->uring_cmd(): true
 * when the ring's waiter will call them for cmd (false: an IOPOLL or
 * SQPOLL ring, another source already named, not the ring's owner).
 */
bool io_uring_cmd_set_wait_src(struct io_uring_cmd *cmd, const struct io_wait_src_ops *ops,
			       void *arg);

/* The address space the command's user addresses name (the ring's task's). */
struct user_mm;
const struct user_mm *io_uring_cmd_mm(const struct io_uring_cmd *cmd);

/* Map [ubuf, ubuf + len) of registered buffer sqe->buf_index into iter. */
int io_uring_cmd_import_fixed(uint64_t ubuf, size_t len, int rw, struct iov_iter *iter,
			      const struct io_uring_cmd *cmd);
/*
 * Vectored fixed buffers (Linux 6.15): the iovec array at uvec (nr entries),
 * every segment inside the command's registered buffer, else -EFAULT.
 */
int io_uring_cmd_import_fixed_vec(uint64_t uvec, size_t nr, int rw, struct iov_iter *iter,
				  const struct io_uring_cmd *cmd);

/*
 * Command data a provider must judge and run from one copy: NVMe Copy's and
 * Dataset Management's range lists sit in the data buffer, which the
 * application can change at any time. A provider that reads such data
 * copies it once into engine memory (malloc) and attaches the copy to the
 * request with io_uring_cmd_set_snap(); its describe() (the security hook)
 * and its ->uring_cmd() (the execution) then both use
 * io_uring_cmd_snap(), whichever runs first making it, so the policy's
 * decision and what the device executes come from the same bytes. The copy
 * is freed with the request (free()), after the command completed. Works
 * on a const cmd: the snapshot is request state, like the SQE snapshot.
 */
void *io_uring_cmd_snap(const struct io_uring_cmd *cmd);
void io_uring_cmd_set_snap(const struct io_uring_cmd *cmd, void *snap);

/* Credentials the command acts with (a personality, or the ring's owner). */
const struct ucmd_cred *io_uring_cmd_cred(const struct io_uring_cmd *cmd);
/* The ring's setup flags (IORING_SETUP_*), for providers that care. */
unsigned io_uring_cmd_ring_flags(const struct io_uring_cmd *cmd);

/*
 * READ/WRITE family requests as a provider sees them (the kernel's kiocb +
 * iov_iter). ki_complete may be called from any thread.
 */
struct ucmd_kiocb_rw {
	struct ucmd_file *file;
	uint64_t pos;
	int rw;				/* UCMD_READ or UCMD_WRITE */
	unsigned rwf;			/* RWF_* */
	struct iov_iter iter;
	void (*ki_complete)(struct ucmd_kiocb_rw *kiocb, long res);
	uint8_t pdu[32];		/* the provider's own per-request space */
};

#endif
