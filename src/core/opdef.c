/* SPDX-License-Identifier: MIT */
/*
 * The opcode table (the kernel's io_uring/opdef.c). Every opcode Linux
 * defines has an entry so that its number is "known"; the ones ucmd
 * implements carry their prep/issue handlers. The common checks (ioprio,
 * IOPOLL, file) are done once in io_init_req() from these bits (seed 008).
 */
#include "core/core.h"

const struct io_issue_def io_issue_defs[IORING_OP_LAST] = {
	[IORING_OP_NOP] = {
		.name = "NOP",
		.implemented = 1,
		.iopoll = 1,
		.prep = io_nop_prep,
		.issue = io_nop,
	},
	[IORING_OP_READV] = {
		.name = "READV",
		.implemented = 1,
		.needs_file = 1,
		.plug = 1,
		.iopoll = 1,
		.ioprio = 1,
		.async_size = sizeof(struct ucmd_kiocb_rw),
		.prep = io_rw_prep,
		.issue = io_read,
		.cleanup = io_rw_cleanup,
		.iopoll_fn = io_rw_iopoll,
	},
	[IORING_OP_WRITEV] = {
		.name = "WRITEV",
		.implemented = 1,
		.needs_file = 1,
		.plug = 1,
		.iopoll = 1,
		.ioprio = 1,
		.async_size = sizeof(struct ucmd_kiocb_rw),
		.prep = io_rw_prep,
		.issue = io_write,
		.cleanup = io_rw_cleanup,
		.iopoll_fn = io_rw_iopoll,
	},
	[IORING_OP_READ_FIXED] = {
		.name = "READ_FIXED",
		.implemented = 1,
		.needs_file = 1,
		.plug = 1,
		.iopoll = 1,
		.ioprio = 1,
		.async_size = sizeof(struct ucmd_kiocb_rw),
		.prep = io_rw_prep,
		.issue = io_read,
		.cleanup = io_rw_cleanup,
		.iopoll_fn = io_rw_iopoll,
	},
	[IORING_OP_WRITE_FIXED] = {
		.name = "WRITE_FIXED",
		.implemented = 1,
		.needs_file = 1,
		.plug = 1,
		.iopoll = 1,
		.ioprio = 1,
		.async_size = sizeof(struct ucmd_kiocb_rw),
		.prep = io_rw_prep,
		.issue = io_write,
		.cleanup = io_rw_cleanup,
		.iopoll_fn = io_rw_iopoll,
	},
	[IORING_OP_READ] = {
		.name = "READ",
		.implemented = 1,
		.needs_file = 1,
		.plug = 1,
		.iopoll = 1,
		.ioprio = 1,
		.async_size = sizeof(struct ucmd_kiocb_rw),
		.prep = io_rw_prep,
		.issue = io_read,
		.cleanup = io_rw_cleanup,
		.iopoll_fn = io_rw_iopoll,
	},
	[IORING_OP_WRITE] = {
		.name = "WRITE",
		.implemented = 1,
		.needs_file = 1,
		.plug = 1,
		.iopoll = 1,
		.ioprio = 1,
		.async_size = sizeof(struct ucmd_kiocb_rw),
		.prep = io_rw_prep,
		.issue = io_write,
		.cleanup = io_rw_cleanup,
		.iopoll_fn = io_rw_iopoll,
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
