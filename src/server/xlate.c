/* SPDX-License-Identifier: MIT */
/*
 * One client SQE -> one engine SQE for the client's task.
 *
 * The translation reads only the daemon's snapshot of the SQE, so what is
 * judged and executed is what was copied once. The engine ring belongs to
 * the client's task, so the SQE reaches the engine as the client wrote it:
 * its fds and fixed files are the client's numbers (the task's file
 * table), its addresses and registered buffers the client's memory (the
 * task's mm, reached when each request is issued). What is left here is
 * what the proxy itself owns: cancel targets (its slots carry the client's
 * user_data) and CQE_SKIP_SUCCESS (it posts the client's CQEs). An opcode
 * Linux has and the proxy does not pass on still never reaches the engine.
 */
#include <errno.h>
#include <string.h>

#include "core/core.h"
#include "server/ring.h"

/* Cancel by the client's user_data: the engine knows its request by the slot's index. */
static void xlate_cancel(struct srv_xl *x, const struct io_uring_sqe *csqe,
			 struct io_uring_sqe *esqe, struct srv_slot *s)
{
	unsigned flags = csqe->cancel_flags;

	/* CANCEL_FD: the client's number (or fixed index), the engine's to resolve */
	if (!(flags & IORING_ASYNC_CANCEL_FD))
		esqe->fd = -1;
	if (flags & (IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD))
		return;		/* the engine ring holds this client's requests only */
	esqe->addr = SRV_UD_NONE;
	for (unsigned i = 0; i < x->nr_slots; i++) {
		const struct srv_slot *p = &x->slots[i];

		if (p != s && p->busy && !p->internal && p->user_data == csqe->addr) {
			esqe->addr = i;
			break;
		}
	}
	/*
	 * None found: the engine finds none either (-ENOENT), with Linux's
	 * chain rule. With IORING_ASYNC_CANCEL_ALL only the first match is
	 * cancelled (a known gap: the engine matches one user_data).
	 */
}

int srv_xlate(struct srv_xl *x, const struct io_uring_sqe *csqe, struct io_uring_sqe *esqe,
	      struct srv_slot *s)
{
	/* constant sizes: vector moves, not rep movs (see ring.c's sqe_copy) */
	if (x->sqe128)
		memcpy(esqe, csqe, 2 * sizeof(*esqe));
	else
		memcpy(esqe, csqe, sizeof(*esqe));
	/* the proxy applies it: the engine must post every CQE to free the slot */
	esqe->flags &= (uint8_t)~IOSQE_CQE_SKIP_SUCCESS;
	s->skip_success = csqe->flags & IOSQE_CQE_SKIP_SUCCESS;

	/* the engine's own answer (-EINVAL, -EOPNOTSUPP), before it reads an fd or an address */
	if (io_sqe_refused_early(csqe)) {
		esqe->fd = -1;
		return 0;
	}
	switch (csqe->opcode) {
	case IORING_OP_NOP:
	case IORING_OP_TIMEOUT:
	case IORING_OP_LINK_TIMEOUT:
		esqe->fd = -1;
		return 0;
	case IORING_OP_READ:
	case IORING_OP_WRITE:
	case IORING_OP_READV:
	case IORING_OP_WRITEV:
	case IORING_OP_READ_FIXED:
	case IORING_OP_WRITE_FIXED:
	case IORING_OP_FSYNC:
	case IORING_OP_URING_CMD:
		return 0;
	case IORING_OP_ASYNC_CANCEL:
		xlate_cancel(x, csqe, esqe, s);
		return 0;
	default:
		/* Linux has it, ucmd's engine does not (io_init_req's answer) */
		return -EOPNOTSUPP;
	}
}
