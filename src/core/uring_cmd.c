/* SPDX-License-Identifier: MIT */
/* IORING_OP_URING_CMD (seed 003): the generic side of command passthrough. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

#include "core/core.h"
#include "core/provider_done.h"
#include "core/uring_cmd_fast.h"

int io_uring_cmd_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	uint32_t flags = sqe->uring_cmd_flags;

	/* reserved fields and flags: one branch for the common, clean SQE */
	if (__builtin_expect(!io_uring_cmd_sqe_clean(sqe), 0)) {
		if (sqe->__pad1 || (flags & ~IORING_URING_CMD_FIXED))
			return -EINVAL;
		/* buf_index is read with FIXED only: Linux ignores it otherwise */
		if (flags & IORING_URING_CMD_FIXED) {
			if (sqe->buf_index >= req->ctx->nr_bufs)
				return -EFAULT;
			req->buf_index = sqe->buf_index;
		}
	}
	io_uring_cmd_prep_fields(&req->cmd, req->file, sqe, flags);
	return 0;
}

int io_uring_cmd_issue(struct ucmd_kiocb *req, unsigned issue_flags)
{
	struct io_uring_cmd *cmd = &req->cmd;
	const struct ucmd_file_ops *ops = req->file->ops;
	int ret;

	if (!ops->uring_cmd) {
		io_req_set_res(req, -EOPNOTSUPP, 0);
		return 0;
	}
	/* a file every module allows anything on pays two loads, not a call */
	ret = security_file_allowed(req->file, UCMD_HOOK_URING_CMD, req->creds)
		      ? 0 : security_uring_cmd(req->ctx->engine, cmd);
	if (ret) {
		io_req_set_res(req, ret, 0);
		return 0;
	}
	if ((issue_flags & IO_URING_F_IOPOLL) && !ops->uring_cmd_iopoll) {
		io_req_set_res(req, -EOPNOTSUPP, 0);
		return 0;
	}
	ret = ops->uring_cmd(cmd, issue_flags);
	if (ret == -EAGAIN || ret == -EIOCBQUEUED)
		return ret;
	io_req_set_res(req, ret, 0);
	return 0;
}

int io_uring_cmd_iopoll(struct ucmd_kiocb *req)
{
	const struct ucmd_file_ops *ops = req->file->ops;

	return ops->uring_cmd_iopoll ? ops->uring_cmd_iopoll(&req->cmd) : 0;
}

void io_uring_cmd_done(struct io_uring_cmd *cmd, long ret, uint64_t res2)
{
	struct ucmd_kiocb *req = cmd_to_req(cmd);

	/* res2 has a place only in a 32-byte CQE */
	io_req_set_res(req, (int32_t)ret, (req->ctx->flags & IORING_SETUP_CQE32) ? res2 : 0);
	io_req_provider_done(req);
}

bool io_uring_cmd_set_wait_src(struct io_uring_cmd *cmd, const struct io_wait_src_ops *ops,
			       void *arg)
{
	struct ucmd_kiocb *req = cmd_to_req(cmd);
	struct ucmd_ctx *ctx = req->ctx;

	/*
	 * Only the ring's owner under its lock (an io-wq worker's retry
	 * counts nothing), and only rings whose waiter sleeps on ctx->wake
	 * (an IOPOLL ring's polls, an SQPOLL ring's thread find theirs)
	 */
	if (current_ctx != ctx || (ctx->flags & (IORING_SETUP_IOPOLL | IORING_SETUP_SQPOLL)))
		return false;
	if (!ctx->wsrc_nr) {
		if (ctx->wait_efd < 0) {
			ctx->wait_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
			if (ctx->wait_efd < 0)
				return false;
		}
		ctx->wsrc_ops = ops;
		ctx->wsrc_arg = arg;
	} else if (ctx->wsrc_ops != ops || ctx->wsrc_arg != arg) {
		return false;	/* a second source: its completions wake the waiter as usual */
	}
	ctx->wsrc_nr++;
	req->flags |= REQ_F_WAIT_SRC;
	return true;
}

static void io_uring_cmd_work(struct ucmd_tw_node *node)
{
	struct ucmd_kiocb *req = (struct ucmd_kiocb *)((char *)node - offsetof(struct ucmd_kiocb, tw));

	req->cmd.task_work_cb(&req->cmd, 0);
}

void io_uring_cmd_complete_in_task(struct io_uring_cmd *cmd,
				   void (*cb)(struct io_uring_cmd *cmd, unsigned issue_flags))
{
	struct ucmd_kiocb *req = cmd_to_req(cmd);

	cmd->task_work_cb = cb;
	io_req_task_work_add(req, io_uring_cmd_work);
}

int io_uring_cmd_import_fixed(uint64_t ubuf, size_t len, int rw, struct iov_iter *iter,
			      const struct io_uring_cmd *cmd)
{
	struct ucmd_kiocb *req = cmd_to_req(cmd);

	return io_import_fixed(req->ctx, rw, req->buf_index, ubuf, len, iter);
}

int io_uring_cmd_import_fixed_vec(uint64_t uvec, size_t nr, int rw, struct iov_iter *iter,
				  const struct io_uring_cmd *cmd)
{
	struct ucmd_kiocb *req = cmd_to_req(cmd);

	if (nr > UCMD_UIO_MAXIOV)
		return -EINVAL;
	return io_import_fixed_vec(req->ctx, rw, req->buf_index, uvec, (unsigned)nr, iter);
}

const struct user_mm *io_uring_cmd_mm(const struct io_uring_cmd *cmd)
{
	return cmd_to_req(cmd)->ctx->task->mm;
}

void *io_uring_cmd_snap(const struct io_uring_cmd *cmd)
{
	/* the flag, not the pointer, says whether it is this request's */
	return (cmd_to_req(cmd)->flags & REQ_F_CMD_SNAP) ? cmd->snap : NULL;
}

void io_uring_cmd_set_snap(const struct io_uring_cmd *cmd, void *snap)
{
	struct ucmd_kiocb *req = cmd_to_req(cmd);

	io_uring_cmd_snap_release(req);
	req->cmd.snap = snap;
	if (snap)
		req->flags |= REQ_F_CMD_SNAP;
}

void io_uring_cmd_snap_release(struct ucmd_kiocb *req)
{
	if (!(req->flags & REQ_F_CMD_SNAP))
		return;
	free(req->cmd.snap);
	req->cmd.snap = NULL;
	req->flags &= ~REQ_F_CMD_SNAP;
}

const struct ucmd_cred *io_uring_cmd_cred(const struct io_uring_cmd *cmd)
{
	return cmd_to_req(cmd)->creds;
}

unsigned io_uring_cmd_ring_flags(const struct io_uring_cmd *cmd)
{
	return cmd_to_req(cmd)->ctx->flags;
}
