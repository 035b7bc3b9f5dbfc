/* SPDX-License-Identifier: MIT */
/*
 * The opcode table (the kernel's io_uring/opdef.c). Every number below
 * IORING_OP_LAST is an opcode Linux defines: one ucmd does not implement
 * fails with -EOPNOTSUPP, a number past the table with -EINVAL. The common checks (ioprio,
 * IOPOLL, file) are done once in io_init_req() from these bits (seed 008).
 */
#include "core/core.h"

/* The READ/WRITE family differ only in name and direction. */
#define RW_DEF(nm, fn)						\
	{							\
		.name = nm,					\
		.implemented = 1,				\
		.needs_file = 1,				\
		.plug = 1,					\
		.iopoll = 1,					\
		.ioprio = 1,					\
		.async_size = sizeof(struct ucmd_kiocb_rw),	\
		.prep = io_rw_prep,				\
		.issue = fn,					\
		.cleanup = io_rw_cleanup,			\
		.iopoll_fn = io_rw_iopoll,			\
	}

const struct io_issue_def io_issue_defs[IORING_OP_LAST] = {
	[IORING_OP_NOP] = {
		.name = "NOP",
		.implemented = 1,
		.iopoll = 1,
		.prep = io_nop_prep,
		.issue = io_nop,
		.cleanup = io_nop_cleanup,
	},
	[IORING_OP_READV]	= RW_DEF("READV", io_read),
	[IORING_OP_WRITEV]	= RW_DEF("WRITEV", io_write),
	[IORING_OP_READ_FIXED]	= RW_DEF("READ_FIXED", io_read),
	[IORING_OP_WRITE_FIXED]	= RW_DEF("WRITE_FIXED", io_write),
	[IORING_OP_READ]	= RW_DEF("READ", io_read),
	[IORING_OP_WRITE]	= RW_DEF("WRITE", io_write),
	[IORING_OP_FSYNC] = {
		.name = "FSYNC",
		.implemented = 1,
		.needs_file = 1,
		.prep = io_fsync_prep,
		.issue = io_fsync,
	},
	[IORING_OP_TIMEOUT] = {
		.name = "TIMEOUT",
		.implemented = 1,
		.async_size = sizeof(struct io_timeout),
		.prep = io_timeout_prep,
		.issue = io_timeout,
	},
	[IORING_OP_LINK_TIMEOUT] = {
		.name = "LINK_TIMEOUT",
		.implemented = 1,
		.async_size = sizeof(struct io_timeout),
		.prep = io_link_timeout_prep,
		.issue = io_link_timeout,
	},
	[IORING_OP_ASYNC_CANCEL] = {
		.name = "ASYNC_CANCEL",
		.implemented = 1,
		.prep = io_async_cancel_prep,
		.issue = io_async_cancel,
	},
	[IORING_OP_URING_CMD] = {
		.name = "URING_CMD",
		.implemented = 1,
		.needs_file = 1,
		.plug = 1,
		.iopoll = 1,
		.ioprio = 1,
		.async_size = 2 * sizeof(struct io_uring_sqe),
		.prep = io_uring_cmd_prep,
		.issue = io_uring_cmd_issue,
		.iopoll_fn = io_uring_cmd_iopoll,
	},
};

const char *io_uring_get_opcode(uint8_t opcode)
{
	if (opcode < IORING_OP_LAST && io_issue_defs[opcode].name)
		return io_issue_defs[opcode].name;
	return "INVALID";
}

/*
 * The kernel's io_uring_optable_init(): the table is checked once, so a
 * wrong entry fails loudly at start-up instead of on some request later.
 * async_size is the state an opcode needs to survive an -EAGAIN punt to
 * the worker; ucmd keeps it inside the request itself (the SQE snapshot and
 * the per-op union), so it must fit there.
 */
int io_uring_optable_init(void)
{
	const size_t inline_state = sizeof(((struct ucmd_kiocb *)0)->sqe) +
				    sizeof(((struct ucmd_kiocb *)0)->rw);

	for (unsigned op = 0; op < IORING_OP_LAST; op++) {
		const struct io_issue_def *def = &io_issue_defs[op];

		if (!def->implemented)
			continue;
		if (!def->name || !def->prep || !def->issue || def->async_size > inline_state)
			return -EINVAL;
		if (def->iopoll && def->needs_file && !def->iopoll_fn)
			return -EINVAL;
	}
	return 0;
}
