/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_ASYNC_CANCEL (the kernel's io_uring/cancel.c). What can be
 * cancelled is what Linux can cancel: a request waiting for an io-wq
 * worker (it completes with -ECANCELED) and a TIMEOUT (-ECANCELED). One a
 * worker is issuing now is -EALREADY; one a driver holds (a uring_cmd
 * queued to the NVMe device, a read in flight) is not found, -ENOENT, as
 * Linux's io_try_cancel has nothing to reach it with either.
 */
#include <errno.h>

#include "core/core.h"

#define CANCEL_FLAGS (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_FD | \
		      IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD_FIXED)

struct cancel_key {
	uint64_t user_data;
	struct ucmd_file *file;		/* IORING_ASYNC_CANCEL_FD */
	bool any;
};

static bool cancel_match(struct ucmd_kiocb *req, void *data)
{
	const struct cancel_key *k = data;

	if (k->any)
		return true;
	if (k->file)
		return req->file == k->file;
	return req->user_data == k->user_data;
}

static void io_req_cancelled_tw(struct ucmd_tw_node *node)
{
	io_req_complete((struct ucmd_kiocb *)((char *)node - offsetof(struct ucmd_kiocb, tw)));
}

void io_req_complete_cancelled(struct ucmd_kiocb *req, int res)
{
	io_req_set_res(req, res, 0);
	io_req_task_work_add(req, io_req_cancelled_tw);
}

int io_try_cancel(struct ucmd_ctx *ctx, bool (*match)(struct ucmd_kiocb *, void *), void *data,
		  bool all, bool skip_timeouts)
{
	struct ucmd_kiocb *taken;
	bool running;
	int nr = io_wq_cancel(ctx, match, data, all, &taken, &running);

	while (taken) {
		struct ucmd_kiocb *r = taken;

		taken = r->next;
		io_req_complete_cancelled(r, -ECANCELED);
	}
	if (nr && !all)
		return 0;
	if (running && !all)
		return -EALREADY;
	if (!skip_timeouts) {
		int n = io_timeout_cancel(ctx, match, data, all);

		if (n && !all)
			return 0;
		nr += n;
	}
	if (all)
		return nr;
	return -ENOENT;
}

int io_async_cancel_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	struct io_cancel *c = &req->cancel;

	/* Linux: no offset, no file index; flags it knows */
	if (sqe->off || sqe->file_index)
		return -EINVAL;
	c->addr = sqe->addr;
	c->flags = sqe->cancel_flags;
	if (c->flags & ~CANCEL_FLAGS)
		return -EINVAL;
	if (c->flags & IORING_ASYNC_CANCEL_FD) {
		if (c->flags & IORING_ASYNC_CANCEL_ANY)
			return -EINVAL;
		c->fd = sqe->fd;
	}
	/* the lists it searches are the owner's to complete from */
	req->flags &= ~REQ_F_FORCE_ASYNC;
	return 0;
}

int io_async_cancel(struct ucmd_kiocb *req, unsigned issue_flags)
{
	struct ucmd_ctx *ctx = req->ctx;
	struct io_cancel *c = &req->cancel;
	struct cancel_key key = { .user_data = c->addr, .any = c->flags & IORING_ASYNC_CANCEL_ANY };
	bool all = c->flags & (IORING_ASYNC_CANCEL_ALL | IORING_ASYNC_CANCEL_ANY);
	struct ucmd_file *held = NULL;
	int ret;

	(void)issue_flags;
	if (c->flags & IORING_ASYNC_CANCEL_FD) {
		if (c->flags & IORING_ASYNC_CANCEL_FD_FIXED) {
			if ((unsigned)c->fd >= ctx->nr_fixed_files || !ctx->fixed_files[c->fd]) {
				io_req_set_res(req, -EBADF, 0);
				return 0;
			}
			key.file = ctx->fixed_files[c->fd];
		} else {
			held = io_file_get(ctx, c->fd);
			if (!held) {
				io_req_set_res(req, -EBADF, 0);
				return 0;
			}
			key.file = held;
		}
	}
	ret = io_try_cancel(ctx, cancel_match, &key, all, c->flags & IORING_ASYNC_CANCEL_FD);
	if (held)
		fput(held);
	io_req_set_res(req, ret, 0);
	return 0;
}
