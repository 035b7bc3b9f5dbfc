/* SPDX-License-Identifier: MIT */
/* READ, WRITE, READV, WRITEV, READ_FIXED, WRITE_FIXED on a device. */
#include <errno.h>
#include <linux/fs.h>

#include "core/core.h"
#include "core/provider_done.h"
#include "security/hooks.h"

#define UCMD_RWF_OK (RWF_HIPRI | RWF_DSYNC | RWF_SYNC | RWF_NOWAIT)

static bool op_is_write(uint8_t op)
{
	return op == IORING_OP_WRITE || op == IORING_OP_WRITEV || op == IORING_OP_WRITE_FIXED;
}

/* Registered buffer index of ctx, or NULL (past the table, an empty slot). */
static const struct iovec *fixed_buf(struct ucmd_ctx *ctx, unsigned index)
{
	if (index >= ctx->nr_bufs || !ctx->bufs[index].iov_base)
		return NULL;
	return &ctx->bufs[index];
}

int io_import_fixed_vec(struct ucmd_ctx *ctx, int rw, unsigned index, uint64_t uvec, unsigned nr,
			struct iov_iter *iter)
{
	const struct iovec *buf = fixed_buf(ctx, index);

	if (!buf)
		return -EFAULT;
	return import_iovec_within_mm(ctx->task->mm, rw, uvec, nr,
				      (uint64_t)(uintptr_t)buf->iov_base, buf->iov_len, iter);
}

/* Import [addr, addr + len) from registered buffer index (the ring's task's memory) into iter. */
int io_import_fixed(struct ucmd_ctx *ctx, int rw, unsigned index, uint64_t addr,
			   size_t len, struct iov_iter *iter)
{
	const struct iovec *buf;
	uint64_t base;

	if (index >= ctx->nr_bufs)
		return -EFAULT;
	buf = &ctx->bufs[index];
	/* an empty slot of a sparse table */
	if (!buf->iov_base)
		return -EFAULT;
	base = (uint64_t)(uintptr_t)buf->iov_base;
	if (addr < base || addr + len < addr || addr + len > base + buf->iov_len)
		return -EFAULT;
	/*
	 * The buffer is the task's memory, reached as any of its addresses is
	 * when the request is issued: in place for this process, through a
	 * remote task's mm (bounced by the driver then) for a ucmdd client.
	 */
	return import_ubuf_mm(ctx->task->mm, rw, addr, len, iter);
}

int io_rw_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	struct ucmd_kiocb_rw *rw = &req->rw;
	int dir = op_is_write(req->opcode) ? UCMD_WRITE : UCMD_READ;
	int ret;

	rw->file = req->file;
	rw->pos = sqe->off;
	rw->rw = dir;
	rw->rwf = sqe->rw_flags;
	rw->ki_complete = NULL;
	rw->iter.mm = NULL;
	rw->iter.alloc = NULL;
	rw->iter.nr_segs = 0;
	if (rw->rwf & ~UCMD_RWF_OK)
		return -EOPNOTSUPP;
	if (!(req->file->f_mode & (dir == UCMD_WRITE ? FMODE_WRITE : FMODE_READ)))
		return -EBADF;
	switch (req->opcode) {
	case IORING_OP_READ_FIXED:
	case IORING_OP_WRITE_FIXED:
		req->buf_index = sqe->buf_index;
		ret = io_import_fixed(req->ctx, dir, sqe->buf_index, sqe->addr, sqe->len, &rw->iter);
		break;
	case IORING_OP_READV:
	case IORING_OP_WRITEV: {
		const struct ucmd_kiocb *outer = io_issuing_req;

		if (sqe->buf_index)
			return -EINVAL;
		/* the array is read for this request now, as its data is at issue */
		io_issuing_req = req;
		ret = import_iovec_mm(req->ctx->task->mm, dir, sqe->addr, sqe->len, &rw->iter);
		io_issuing_req = outer;
		break;
	}
	default:
		if (sqe->buf_index)
			return -EINVAL;
		ret = import_ubuf_mm(req->ctx->task->mm, dir, sqe->addr, sqe->len, &rw->iter);
		break;
	}
	return ret;
}

void io_rw_cleanup(struct ucmd_kiocb *req)
{
	iov_iter_release(&req->rw.iter);
}

static void io_rw_complete(struct ucmd_kiocb_rw *kiocb, long res)
{
	struct ucmd_kiocb *req = rw_to_req(kiocb);

	io_req_set_res(req, (int32_t)res, 0);
	io_req_provider_done(req);
}

static int io_rw_issue(struct ucmd_kiocb *req, unsigned issue_flags, bool write)
{
	struct ucmd_kiocb_rw *rw = &req->rw;
	const struct ucmd_file_ops *ops = req->file->ops;
	long (*fn)(struct ucmd_kiocb_rw *, unsigned) = write ? ops->write_iter : ops->read_iter;
	long ret;

	if (!fn) {
		io_req_set_res(req, -EINVAL, 0);
		return 0;
	}
	if ((req->ctx->flags & IORING_SETUP_IOPOLL) && !ops->iopoll) {
		io_req_set_res(req, -EOPNOTSUPP, 0);
		return 0;
	}
	ret = security_file_allowed(req->file, UCMD_HOOK_URING_RW, req->creds)
		      ? 0 : security_uring_rw(req->ctx->engine, rw, req->creds);
	if (ret) {
		io_req_set_res(req, (int32_t)ret, 0);
		return 0;
	}
	rw->ki_complete = io_rw_complete;
	ret = fn(rw, issue_flags);
	if (ret == -EIOCBQUEUED)
		return -EIOCBQUEUED;
	if (ret == -EAGAIN && !(rw->rwf & RWF_NOWAIT))
		return -EAGAIN;
	io_req_set_res(req, (int32_t)ret, 0);
	return 0;
}

int io_read(struct ucmd_kiocb *req, unsigned issue_flags)
{
	return io_rw_issue(req, issue_flags, false);
}

int io_write(struct ucmd_kiocb *req, unsigned issue_flags)
{
	return io_rw_issue(req, issue_flags, true);
}

int io_rw_iopoll(struct ucmd_kiocb *req)
{
	const struct ucmd_file_ops *ops = req->file->ops;

	return ops->iopoll ? ops->iopoll(&req->rw) : 0;
}
