// SPDX-License-Identifier: MIT
/*
 * A connection's engine ring: the target's passthrough commands go to the
 * daemon's engine as IORING_OP_URING_CMD on the connection's engine files
 * (nvme<i> for the admin queue, ng<i>n<nsid> for an I/O queue), SQE128 and
 * CQE32 as Linux's NVMe passthrough wants them, so that as many run at
 * once as the host queues. The ring is created acting as the connection:
 * its credentials, with the host NQN and host ID, are what the engine's
 * policy and audit judge each command by.
 *
 * The receive thread submits (and the completer, when completions free
 * memory for commands waiting for it): sq_lock keeps the SQ one
 * producer's. The completer alone reaps the CQ, and it sends responses:
 * a peer that stops reading stalls it, never another connection.
 */
#include <errno.h>
#include <string.h>

#include <linux/nvme_ioctl.h>

#include "tcp/target.h"

#define WAKE_UD		UINT64_MAX	/* the NOP that wakes the completer to end */

#define CQE_BATCH	32

/* One completion: its response, then its slot goes back. */
static void reap_one(struct tcpt_conn *c, uint64_t ud, int res, uint64_t result)
{
	struct tcpt_slot *s;
	struct ucmd_nvme_cqe rsp = { 0 };
	uint32_t out_len;

	if (ud >= TCPT_QUEUE_SIZE)
		return;	/* the wake-up NOP */
	s = &c->slots[ud];
	pthread_mutex_lock(&c->lock);
	c->inflight--;
	pthread_mutex_unlock(&c->lock);
	tcpt_cmd_done(c, s, res, result, &rsp, &out_len);
	tcpt_conn_respond(c, s, &rsp, out_len);
}

static void *cq_main(void *arg)
{
	struct tcpt_conn *c = arg;

	cred_override_set(&c->cred);
	for (;;) {
		struct __kernel_timespec ts = { .tv_sec = 1 };
		struct io_uring_cqe *cqe, *batch[CQE_BATCH];
		struct { uint64_t ud, result; int res; } done[CQE_BATCH];
		unsigned n;
		bool end;

		pthread_mutex_lock(&c->lock);
		end = atomic_load(&c->dead) && !c->inflight;
		pthread_mutex_unlock(&c->lock);
		if (end)
			break;
		/* the timeout only bounds how late an ending connection is noticed */
		if (ucmd_wait_cqe_timeout(&c->ring, &cqe, &ts))
			continue;
		/* all that is there, copied out and the CQ freed before the sends */
		n = ucmd_peek_batch_cqe(&c->ring, batch, CQE_BATCH);
		for (unsigned i = 0; i < n; i++)
			done[i] = (typeof(done[0])){ batch[i]->user_data, batch[i]->big_cqe[0],
						     batch[i]->res };
		ucmd_cq_advance(&c->ring, n);
		for (unsigned i = 0; i < n; i++)
			reap_one(c, done[i].ud, done[i].res, done[i].result);
	}
	cred_override_set(NULL);
	return NULL;
}

int tcpt_io_start(struct tcpt_conn *c)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	int ret;

	/* the calling thread acts as the connection: the ring takes its identity */
	ret = ucmd_queue_init_engine(c->t->e, TCPT_RING_ENTRIES, &c->ring, &p);
	if (ret)
		return ret;
	ret = -pthread_create(&c->cq, NULL, cq_main, c);
	if (ret) {
		ucmd_queue_exit(&c->ring);
		return ret;
	}
	c->has_ring = true;
	return 0;
}

void tcpt_io_stop(struct tcpt_conn *c)
{
	struct io_uring_sqe *sqe;

	if (!c->has_ring)
		return;
	/* c->dead is set: wake the completer now rather than at its timeout */
	pthread_mutex_lock(&c->sq_lock);
	sqe = ucmd_get_sqe(&c->ring);
	if (sqe) {
		memset(sqe, 0, 2 * sizeof(*sqe));
		ucmd_prep_nop(sqe);
		sqe->user_data = WAKE_UD;
		(void)ucmd_submit(&c->ring);
	}
	pthread_mutex_unlock(&c->sq_lock);
	pthread_join(c->cq, NULL);
	ucmd_queue_exit(&c->ring);
	c->has_ring = false;
}

int tcpt_io_submit(struct tcpt_conn *c, struct tcpt_slot *s, int fd, bool admin)
{
	const struct ucmd_nvme_sqe *q = &s->sqe;
	struct io_uring_sqe *sqe;
	struct nvme_uring_cmd *uc;
	int ret;

	if (!c->has_ring)
		return -ENXIO;
	pthread_mutex_lock(&c->lock);
	c->inflight++;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&c->sq_lock);
	sqe = ucmd_get_sqe(&c->ring);	/* never full: entries > slots, submitted at once */
	if (!sqe) {
		ret = -EBUSY;
		goto out;
	}
	memset(sqe, 0, 2 * sizeof(*sqe));	/* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = admin ? NVME_URING_CMD_ADMIN : NVME_URING_CMD_IO;
	sqe->user_data = (uint64_t)(s - c->slots);
	uc = (struct nvme_uring_cmd *)(void *)sqe->cmd;
	uc->opcode = q->opcode;
	uc->nsid = le32toh(q->nsid);
	uc->cdw2 = le32toh(q->cdw2);
	uc->cdw3 = le32toh(q->cdw3);
	uc->cdw10 = le32toh(q->cdw10);
	uc->cdw11 = le32toh(q->cdw11);
	uc->cdw12 = le32toh(q->cdw12);
	uc->cdw13 = le32toh(q->cdw13);
	uc->cdw14 = le32toh(q->cdw14);
	uc->cdw15 = le32toh(q->cdw15);
	uc->addr = (uint64_t)(uintptr_t)s->buf;
	uc->data_len = s->len;
	ret = ucmd_submit(&c->ring);
	if (ret != 1) {
		/*
		 * The SQE stays in the SQ and goes with the next submission (the
		 * teardown's NOP): it is in flight, its completion answers it.
		 * A ring that cannot submit ends the connection.
		 */
		tcpt_conn_fail(c, 0, 0, NULL, 0);
	}
	ret = 0;
out:
	pthread_mutex_unlock(&c->sq_lock);
	if (ret) {
		pthread_mutex_lock(&c->lock);
		c->inflight--;
		pthread_mutex_unlock(&c->lock);
	}
	return ret;
}
