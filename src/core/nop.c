/* SPDX-License-Identifier: MIT */
#include <errno.h>

#include "core/core.h"

/*
 * Linux's nop_flags (the SQE's rw_flags word), 6.10 and 6.18: a result to
 * post (sqe->len, as a signed res), and a CQE32's two extra words
 * (sqe->off, sqe->addr). The preload relays a forked child's completions
 * into a ring it shares with its parent with them (docs/compat.md).
 */
#define UCMD_NOP_INJECT_RESULT	(1u << 0)
#define UCMD_NOP_CQE32		(1u << 5)

int io_nop_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	/* io_nop_prep: extra words need a ring whose CQEs have room for them */
	if ((sqe->rw_flags & UCMD_NOP_CQE32) && !(req->ctx->flags & IORING_SETUP_CQE32))
		return -EINVAL;
	return 0;
}

int io_nop(struct ucmd_kiocb *req, unsigned issue_flags)
{
	const struct io_uring_sqe *sqe = &req->sqe[0];
	uint32_t fl = sqe->rw_flags;

	(void)issue_flags;
	io_req_set_res(req, (fl & UCMD_NOP_INJECT_RESULT) ? (int32_t)sqe->len : 0,
		       (fl & UCMD_NOP_CQE32) ? sqe->off : 0);
	if (fl & UCMD_NOP_CQE32) {
		req->big_cqe[1] = sqe->addr;
		/* every other request posts big_cqe[1] as the zero its allocation gave */
		req->flags |= REQ_F_NEED_CLEANUP;
	}
	return 0;
}

void io_nop_cleanup(struct ucmd_kiocb *req)
{
	req->big_cqe[1] = 0;
}
