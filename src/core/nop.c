/* SPDX-License-Identifier: MIT */
/*
 * IORING_OP_NOP, with Linux's nop_flags (io_uring/nop.c, 6.10 to 6.18):
 * IORING_NOP_INJECT_RESULT posts sqe->len as the result; IORING_NOP_CQE32
 * posts sqe->off and sqe->addr as a big CQE's two extra words (a CQE32
 * ring only, else -EINVAL as Linux's prep); the other flags Linux knows (a
 * file, a fixed file or buffer, task work) change nothing ucmd posts and
 * are taken; any other bit is -EINVAL, as Linux's.
 * UCMD_NOP_CQE_FLAGS (core/backend.h) is ucmd's own: the CQE's flags from
 * sqe->addr3, so that the preload can post a completion of the kernel's (a
 * forwarded request's, docs/compat.md) with its flags intact. The preload
 * relays a forked child's completions into the ring it shares with its
 * parent with INJECT_RESULT and CQE32.
 */
#include <errno.h>

#include "core/core.h"

#define NOP_LINUX_FLAGS (UCMD_NOP_INJECT_RESULT | (0x1fu << 1))

int io_nop_prep(struct ucmd_kiocb *req, const struct io_uring_sqe *sqe)
{
	uint32_t fl = __atomic_load_n(&sqe->rw_flags, __ATOMIC_RELAXED);

	if (fl & ~(NOP_LINUX_FLAGS | UCMD_NOP_CQE_FLAGS))
		return -EINVAL;
	/* extra words need a ring whose CQEs have room for them */
	if ((fl & UCMD_NOP_CQE32) && !(req->ctx->flags & IORING_SETUP_CQE32))
		return -EINVAL;
	return 0;
}

int io_nop(struct ucmd_kiocb *req, unsigned issue_flags)
{
	/* the snapshot prep saw: the program cannot change it in between */
	const struct io_uring_sqe *sqe = &req->sqe[0];
	uint32_t fl = (uint32_t)sqe->rw_flags;

	(void)issue_flags;
	io_req_set_res(req, (fl & UCMD_NOP_INJECT_RESULT) ? (int32_t)sqe->len : 0,
		       (fl & UCMD_NOP_CQE32) ? sqe->off : 0);
	if (fl & UCMD_NOP_CQE32) {
		req->big_cqe[1] = sqe->addr;
		/* every other request posts big_cqe[1] as the zero its allocation gave */
		req->flags |= REQ_F_NEED_CLEANUP;
	}
	if (fl & UCMD_NOP_CQE_FLAGS)
		req->cqe_flags = (uint32_t)sqe->addr3;
	return 0;
}

void io_nop_cleanup(struct ucmd_kiocb *req)
{
	req->big_cqe[1] = 0;
}
