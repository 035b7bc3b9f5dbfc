/* SPDX-License-Identifier: MIT */
#include "core/core.h"

int io_nop_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	(void)req;
	(void)sqe;
	return 0;
}

int io_nop(struct ucmd_kiocb *req, unsigned issue_flags)
{
	(void)issue_flags;
	io_req_set_res(req, 0, 0);
	return 0;
}
