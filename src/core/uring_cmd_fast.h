/* SPDX-License-Identifier: MIT */
/*
 * The inline halves of io_uring_cmd_prep and io_uring_cmd_issue
 * (uring_cmd.c): what the submission's fast path for the common uring_cmd
 * (submit.c) and the full functions share, so that the two cannot drift.
 */
#ifndef UCMD_CORE_URING_CMD_FAST_H
#define UCMD_CORE_URING_CMD_FAST_H

#include "core/core.h"
#include "security/hooks.h"

/* The SQE's reserved field, command flags and buffer index are all 0. */
static inline bool io_uring_cmd_sqe_clean(const struct io_uring_sqe *sqe)
{
	return !(sqe->__pad1 | sqe->uring_cmd_flags | sqe->buf_index);
}

/* prep's stores; flags were checked (and buf_index taken) by the caller. */
static inline void io_uring_cmd_prep_fields(struct io_uring_cmd *cmd, struct ucmd_file *file,
					    const struct io_uring_sqe *sqe, uint32_t flags)
{
	cmd->flags = flags;
	cmd->file = file;
	/* sqe is the request's own snapshot (io_submit_sqes copied it). */
	cmd->sqe = sqe;
	cmd->cmd_op = sqe->cmd_op;
	cmd->task_work_cb = NULL;
	/* pdu is the provider's to initialise, as in Linux */
}

/*
 * The provider's ->uring_cmd when issue may call it at once: the file has
 * one, and every module allows anything on it to creds (the security
 * hook's cached answer: two loads, not a call). NULL: the full issue
 * decides (-EOPNOTSUPP, or the hooks).
 */
static inline int (*io_uring_cmd_direct(struct ucmd_file *file, const struct ucmd_cred *creds))(
	struct io_uring_cmd *, unsigned)
{
	int (*fn)(struct io_uring_cmd *, unsigned) = file->ops->uring_cmd;

	if (!fn || !security_file_allowed(file, UCMD_HOOK_URING_CMD, creds))
		return NULL;
	return fn;
}

#endif
