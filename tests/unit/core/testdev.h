/* SPDX-License-Identifier: MIT */
/*
 * A scriptable test provider for the engine tests (test_link, test_iopoll,
 * test_async, test_plug, ...). The command area of a URING_CMD SQE holds a
 * struct td_cmd; cmd_op says what the provider does with it. Every issue is
 * logged (id, issue_flags) in order.
 */
#ifndef TESTDEV_H
#define TESTDEV_H

#include <stdbool.h>
#include <stdint.h>

#include "ucmd/ucmd.h"

enum {
	TD_OP_OK = 1,	/* complete at once with value */
	TD_OP_FAIL,	/* complete at once with -EIO */
	TD_OP_QUEUE,	/* -EIOCBQUEUED; td_complete_queued() finishes it from a thread */
	TD_OP_EAGAIN,	/* -EAGAIN under NONBLOCK, value when allowed to block */
	TD_OP_POLLED,	/* -EIOCBQUEUED; completed only by ->uring_cmd_iopoll */
};

struct td_cmd {
	uint64_t id;
	int64_t value;
};

struct td_log {
	uint64_t id;
	unsigned issue_flags;
};

/*
 * Register the devices on e: "tdev" (with uring_cmd_iopoll) and
 * "tdev_nopoll" (without). Also resets the log.
 */
void td_register(struct ucmd_engine *e);
void td_reset(void);
/* Copy of the issue log; returns its length. */
unsigned td_log_get(struct td_log *out, unsigned max);
unsigned td_nr_issued(void);
unsigned td_nr_queued(void);	/* TD_OP_QUEUE commands waiting */
unsigned td_nr_polls(void);	/* calls of ->uring_cmd_iopoll */
/* From a separate thread, complete every queued TD_OP_QUEUE command (with its value). */
void td_complete_queued(void);
/* From the calling thread, complete the oldest max queued commands; returns how many. */
unsigned td_complete_some(unsigned max);

/* ---- ring helpers ---- */
struct td_cqe {
	uint64_t user_data;
	int32_t res;
	uint32_t flags;
};

void td_ring_init(struct ucmd_engine *e, struct ucmd_ring *ring, unsigned entries,
		  unsigned flags);
struct io_uring_sqe *td_sqe(struct ucmd_ring *ring);
/* A URING_CMD SQE for the test device. */
struct io_uring_sqe *td_prep(struct ucmd_ring *ring, int fd, int op, uint64_t id, int64_t value);
/* Wait for and copy exactly n CQEs. */
void td_reap(struct ucmd_ring *ring, struct td_cqe *out, unsigned n);
/* Without waiting: copy what is in the CQ (after entering once to run task work). */
unsigned td_reap_ready(struct ucmd_ring *ring, struct td_cqe *out, unsigned max);
/*
 * Like td_reap, but gives up after about 10 s without a CQE (a lost CQE is a
 * failure, not a hang); returns how many were reaped.
 */
unsigned td_reap_bounded(struct ucmd_ring *ring, struct td_cqe *out, unsigned n);
/* The CQE for user_data among n, or NULL. */
const struct td_cqe *td_find(const struct td_cqe *c, unsigned n, uint64_t user_data);

#endif
