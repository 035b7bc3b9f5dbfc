/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_NOP, with Linux's nop_flags (6.x io_uring/nop.c):
 * IORING_NOP_INJECT_RESULT posts sqe->len as the result; the other flags
 * Linux knows (a file, a fixed file or buffer, task work, CQE32) change
 * nothing ucmd posts and are taken; any other bit is -EINVAL, as Linux's.
 * UCMD_NOP_CQE_FLAGS (core/backend.h) is ucmd's own: the CQE's flags from
 * sqe->off, so that the preload can post a completion of the kernel's
 * (a forwarded request's, docs/compat.md) with its flags intact.
 */
#include "core/core.h"

#define NOP_LINUX_FLAGS (UCMD_NOP_INJECT_RESULT | (0x1fu << 1))

int io_nop_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	uint32_t fl = __atomic_load_n(&sqe->rw_flags, __ATOMIC_RELAXED);

	(void)req;
	if (fl & ~(NOP_LINUX_FLAGS | UCMD_NOP_CQE_FLAGS))
		return -EINVAL;
	return 0;
}

int io_nop(struct ucmd_kiocb *req, unsigned issue_flags)
{
	/* the snapshot prep saw: the program cannot change it in between */
	const struct io_uring_sqe *sqe = &req->sqe[0];
	uint32_t fl = (uint32_t)sqe->rw_flags;

	(void)issue_flags;
	io_req_set_res(req, (fl & UCMD_NOP_INJECT_RESULT) ? (int32_t)sqe->len : 0, 0);
	if (fl & UCMD_NOP_CQE_FLAGS)
		req->cqe_flags = (uint32_t)sqe->off;
	return 0;
}
