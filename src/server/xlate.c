/* SPDX-License-Identifier: MIT */
/*
 * One client SQE -> one engine SQE for the client's task.
 *
 * The translation reads only the daemon's snapshot of the SQE, so what is
 * judged and executed is what was copied once. The engine ring belongs to
 * the client's task, so the client's addresses reach the engine as they
 * are (the engine reaches them through the client's mm); what is left here
 * is what the daemon names for itself: fds (the client's table), registered
 * buffers (the ring's table, daemon memory), and cancel targets (the
 * proxy's slots). An opcode whose fd use it does not know still never
 * reaches the engine. The order of the common checks is the engine's
 * (io_init_req), so a client sees the errno it would see in-process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "server/ring.h"

uint8_t srv_dev_kind(struct ucmd_engine *e, int efd)
{
	struct ucmd_file *f = fget(e, efd);
	uint8_t k = SRV_DEV_OTHER;

	if (!f)
		return SRV_DEV_OTHER;
	if (!f->ops->uring_cmd)
		k = SRV_DEV_NONE;
	else if (!strcmp(f->ops->name, "null"))
		k = SRV_DEV_NULL;
	else if (!strcmp(f->ops->name, "nvme-generic"))
		k = SRV_DEV_NVME_NS;
	else if (!strcmp(f->ops->name, "nvme-ctrl"))
		k = SRV_DEV_NVME_CTRL;
	fput(f);
	return k;
}

/*
 * The SQE's file: fixed index (kept: the engine's table has the same
 * slots) or fd; and what kind of file it is. A fixed file's kind was taken
 * from the very file registered (ring_reg.c), never from the engine fd
 * number, which the client may have closed and reopened as another device
 * since; an fd's, with its generation, which recheck_fds() compares at
 * submission.
 */
static int xlate_fd(struct srv_xl *x, const struct io_uring_sqe *csqe, struct io_uring_sqe *esqe,
		    struct srv_slot *s, uint8_t *kind)
{
	int efd;

	if (csqe->flags & IOSQE_FIXED_FILE) {
		unsigned i = (unsigned)csqe->fd;

		if (i >= x->nr_ftab || x->ftab[i] < 0)
			return -EBADF;
		*kind = x->fkind[i];
		return 0;
	}
	efd = srv_fd_get_kind(x->c, csqe->fd, kind, &s->cgen);
	if (efd < 0)
		return -EBADF;
	s->cfd = csqe->fd;
	s->efd = efd;
	esqe->fd = efd;
	return 0;
}

/* [caddr, caddr + len) inside registered buffer idx: the daemon's address, or NULL. */
static struct srv_rbuf *fixed_buf(struct srv_xl *x, unsigned idx, uint64_t caddr, size_t len,
				  void **daddr)
{
	struct srv_rbuf *b;

	if (idx >= x->nr_btab)
		return NULL;
	b = &x->btab[idx];
	if (!b->daddr || caddr < b->caddr || caddr + len < caddr || caddr + len > b->caddr + b->len)
		return NULL;
	*daddr = (char *)b->daddr + (caddr - b->caddr);
	return b;
}

/*
 * A registered buffer's range: the engine gets the daemon's address; a
 * shadow is filled from the client before the device reads it, and the
 * range remembered to copy back after the device wrote it.
 */
static int xlate_fixed(struct srv_xl *x, struct srv_slot *s, unsigned idx, uint64_t caddr,
		       size_t len, bool to_device, uint64_t *eaddr)
{
	void *d;
	struct srv_rbuf *b = fixed_buf(x, idx, caddr, len, &d);

	if (!b)
		return -EFAULT;
	s->fixed = true;
	*eaddr = (uint64_t)(uintptr_t)d;
	if (!b->shadow)
		return 0;
	if (to_device)
		return srv_copy_from(x->c, d, caddr, len);
	s->fix_caddr = caddr;
	s->fix_daddr = d;
	s->fix_len = len;
	return 0;
}

static int xlate_rw(struct srv_xl *x, const struct io_uring_sqe *csqe, struct io_uring_sqe *esqe,
		    struct srv_slot *s)
{
	bool to_device = csqe->opcode == IORING_OP_WRITE || csqe->opcode == IORING_OP_WRITEV ||
			 csqe->opcode == IORING_OP_WRITE_FIXED;
	int ret;

	switch (csqe->opcode) {
	case IORING_OP_READ_FIXED:
	case IORING_OP_WRITE_FIXED: {
		uint64_t eaddr = 0;

		s->out = to_device ? SRV_OUT_NONE : SRV_OUT_RES;
		ret = xlate_fixed(x, s, csqe->buf_index, csqe->addr, csqe->len, to_device, &eaddr);
		esqe->addr = eaddr;
		return ret;
	}
	default:
		/* the client's own address: the engine reaches it through the client's task */
		return 0;
	}
}

/*
 * Vectored fixed buffers (Linux 6.15): every segment of the client's iovec
 * array must lie inside registered buffer idx (else -EFAULT, the driver's
 * answer). The engine then gets an ordinary vectored command (FIXED cleared)
 * on the client's own addresses, which it reaches through the client's task:
 * the data lands where the client's registered buffer is. A client that
 * rewrites its array after this check only moves its own memory.
 */
static int xlate_fixed_vec(struct srv_xl *x, unsigned idx, uint64_t cvec, uint32_t nr,
			   struct io_uring_sqe *esqe)
{
	struct iovec *v;
	void *d;
	int ret = 0;

	if (nr > UCMD_UIO_MAXIOV)
		return -EINVAL;
	v = malloc(nr ? nr * sizeof(*v) : 1);
	if (!v)
		return -ENOMEM;
	if (nr && srv_copy_from(x->c, v, cvec, nr * sizeof(*v)))
		ret = -EFAULT;
	for (uint32_t i = 0; !ret && i < nr; i++)
		if (v[i].iov_len &&
		    !fixed_buf(x, idx, (uint64_t)(uintptr_t)v[i].iov_base, v[i].iov_len, &d))
			ret = -EFAULT;
	free(v);
	esqe->uring_cmd_flags &= ~IORING_URING_CMD_FIXED;
	esqe->buf_index = 0;
	return ret;
}

/* struct nvme_uring_cmd with IORING_URING_CMD_FIXED: its data in a registered buffer. */
static int xlate_nvme_fixed(struct srv_xl *x, const struct io_uring_sqe *csqe,
			    struct io_uring_sqe *esqe, struct srv_slot *s)
{
	struct nvme_uring_cmd u;
	/* the driver's direction: the opcode's low bit means host to device */
	bool to_device;
	uint64_t eaddr = 0;
	int ret;

	memcpy(&u, csqe->cmd, sizeof(u));
	if (!u.data_len)
		return 0;
	if (csqe->cmd_op == NVME_URING_CMD_IO_VEC)
		return xlate_fixed_vec(x, csqe->buf_index, u.addr, u.data_len, esqe);
	to_device = u.opcode & 1;
	s->out = to_device ? SRV_OUT_NONE : SRV_OUT_NVME;
	ret = xlate_fixed(x, s, csqe->buf_index, u.addr, u.data_len, to_device, &eaddr);
	if (ret)
		return ret;
	u.addr = eaddr;
	memcpy(esqe->cmd, &u, sizeof(u));
	return 0;
}

/*
 * The engine and the driver judge a uring_cmd as they do in-process (its
 * flags, buf_index, the SQE's size, cmd_op, data, iovec array, metadata):
 * every address in it is the client's, reached through the client's task.
 * The daemon translates only a registered buffer, which it knows the place
 * of in NVMe's flat commands alone; anything else FIXED reaches the engine
 * as it is and gets the engine's answer.
 */
static int xlate_uring_cmd(struct srv_xl *x, const struct io_uring_sqe *csqe,
			   struct io_uring_sqe *esqe, struct srv_slot *s, uint8_t kind)
{
	if (csqe->uring_cmd_flags != IORING_URING_CMD_FIXED || !x->sqe128)
		return 0;
	if ((kind == SRV_DEV_NVME_NS &&
	     (csqe->cmd_op == NVME_URING_CMD_IO || csqe->cmd_op == NVME_URING_CMD_IO_VEC)) ||
	    (kind == SRV_DEV_NVME_CTRL && csqe->cmd_op == NVME_URING_CMD_ADMIN))
		return xlate_nvme_fixed(x, csqe, esqe, s);
	return 0;
}

/* Cancel by the client's user_data: the engine knows its request by the slot's index. */
static int xlate_cancel(struct srv_xl *x, const struct io_uring_sqe *csqe,
			struct io_uring_sqe *esqe, struct srv_slot *s)
{
	unsigned flags = csqe->cancel_flags;

	esqe->fd = -1;
	if (flags & IORING_ASYNC_CANCEL_FD) {
		if (flags & IORING_ASYNC_CANCEL_FD_FIXED) {
			/* the engine's table has the client's indexes */
			esqe->fd = csqe->fd;
		} else {
			uint8_t kind;
			int efd = srv_fd_get_kind(x->c, csqe->fd, &kind, &s->cgen);

			if (efd < 0)
				return -EBADF;
			s->cfd = csqe->fd;
			s->efd = efd;
			esqe->fd = efd;
		}
	}
	if (flags & (IORING_ASYNC_CANCEL_ANY | IORING_ASYNC_CANCEL_FD))
		return 0;	/* the engine ring holds this client's requests only */
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
	return 0;
}

int srv_xlate(struct srv_xl *x, const struct io_uring_sqe *csqe, struct io_uring_sqe *esqe,
	      struct srv_slot *s)
{
	uint8_t op = csqe->opcode, kind = SRV_DEV_OTHER;
	int ret = 0;

	/* constant sizes: vector moves, not rep movs (see ring.c's sqe_copy) */
	if (x->sqe128)
		memcpy(esqe, csqe, 2 * sizeof(*esqe));
	else
		memcpy(esqe, csqe, sizeof(*esqe));
	/* the proxy applies it: the engine must post every CQE to free the slot */
	esqe->flags &= (uint8_t)~IOSQE_CQE_SKIP_SUCCESS;
	s->skip_success = csqe->flags & IOSQE_CQE_SKIP_SUCCESS;
	s->out = SRV_OUT_NONE;
	s->fixed = false;
	s->cfd = s->efd = -1;
	s->fix_caddr = 0;
	s->fix_daddr = NULL;
	s->fix_len = 0;

	/* the engine's own answer (-EINVAL, -EOPNOTSUPP), before it reads an fd or an address */
	if (io_sqe_refused_early(csqe)) {
		esqe->fd = -1;
		return 0;
	}
	switch (op) {
	case IORING_OP_NOP:
		esqe->fd = -1;
		return 0;
	case IORING_OP_READ:
	case IORING_OP_WRITE:
	case IORING_OP_READV:
	case IORING_OP_WRITEV:
	case IORING_OP_READ_FIXED:
	case IORING_OP_WRITE_FIXED:
		ret = xlate_fd(x, csqe, esqe, s, &kind);
		if (!ret)
			ret = xlate_rw(x, csqe, esqe, s);
		break;
	case IORING_OP_FSYNC:
		return xlate_fd(x, csqe, esqe, s, &kind);
	case IORING_OP_URING_CMD:
		ret = xlate_fd(x, csqe, esqe, s, &kind);
		if (!ret)
			ret = xlate_uring_cmd(x, csqe, esqe, s, kind);
		break;
	case IORING_OP_TIMEOUT:
	case IORING_OP_LINK_TIMEOUT:
		/* the engine reads the timespec from the client's memory itself */
		esqe->fd = -1;
		return 0;
	case IORING_OP_ASYNC_CANCEL:
		return xlate_cancel(x, csqe, esqe, s);
	default:
		/* Linux has it, ucmd's engine does not (io_init_req's answer) */
		return -EOPNOTSUPP;
	}
	if (ret)
		srv_xlate_release(x, s);
	return ret;
}

int32_t srv_xlate_complete(struct srv_xl *x, struct srv_slot *s, int32_t res)
{
	size_t out = 0;
	int err = 0;

	/* a registered buffer's shadow the device wrote; never a dead client's */
	if (s->fix_len && !atomic_load(&x->c->dead)) {
		if (s->out == SRV_OUT_RES && res > 0)
			out = (size_t)res < s->fix_len ? (size_t)res : s->fix_len;
		else if (s->out == SRV_OUT_NVME && res == 0)
			out = s->fix_len;
		if (out)
			err = srv_copy_to(x->c, s->fix_caddr, s->fix_daddr, out);
	}
	s->fix_len = 0;
	return err ? -EFAULT : res;
}

void srv_xlate_release(struct srv_xl *x, struct srv_slot *s)
{
	(void)x;
	s->fix_len = 0;
}
