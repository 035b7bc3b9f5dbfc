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
 * One thread, the connection's receiver, does it all, as Linux's nvmet-tcp
 * does its io_work: the commands of everything one receive brought are
 * queued on the SQ and submitted together when the receive buffer runs
 * dry (nvmet_tcp_io_flush); what completed is reaped at once and its responses
 * go out in one send. ucmdd's controllers run inline, so a command
 * usually completes inside the submission and never crosses a thread. A
 * completion that comes later (another engine thread posting it) wakes
 * the receiver through an eventfd registered on the ring, which it polls
 * beside its socket; while the receiver is awake the eventfd is disabled
 * (IORING_CQ_EVENTFD_DISABLED), so that busy periods cost no write(2).
 *
 * A completion another thread makes (a controller on its own thread) does
 * not reach the CQ by itself: the engine hands it to the ring's owner as
 * task work (Linux runs it when the owner's system call returns), which
 * this thread runs by entering the ring. The engine writes the same
 * eventfd when it queues such work (io_ring_set_owner_wake), so that the
 * receiver's poll wakes for it, and the ring's IORING_SQ_TASKRUN flag
 * (IORING_SETUP_TASKRUN_FLAG, which Linux allows with COOP_TASKRUN: task
 * work that interrupts nothing, run when the owner enters) says when
 * there is some to run. Before,
 * such a completion waited for the poll's one-second timeout, or for the
 * host's next PDU.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <linux/nvme_ioctl.h>

#include "core/core.h"
#include "nvme/target/tcp.h"

#define CQE_BATCH	32

/* One completion: its response (queued), then its slot goes back. */
static void reap_one(struct nvmet_tcp_conn *c, uint64_t ud, int res, uint64_t result)
{
	struct nvmet_tcp_slot *s;
	struct ucmd_nvme_cqe rsp = { 0 };
	uint32_t out_len;

	if (ud >= NVMET_TCP_QUEUE_SIZE)
		return;
	s = &c->slots[ud];
	c->inflight--;
	nvmet_tcp_cmd_done(c, s, res, result, &rsp, &out_len);
	nvmet_tcp_conn_respond(c, s, &rsp, out_len);
}

/* Submit what is queued on the SQ; false when the ring failed (the connection ends). */
static bool submit_pending(struct nvmet_tcp_conn *c)
{
	int ret;

	if (!c->sq_pending)
		return true;
	ret = ucmd_submit(&c->ring);
	if (ret >= 0)
		c->sq_pending -= (unsigned)ret < c->sq_pending ? (unsigned)ret : c->sq_pending;
	/*
	 * An SQE the ring did not take stays on the SQ and goes with the next
	 * submission: it is in flight, its completion answers it. A ring that
	 * cannot submit at all ends the connection.
	 */
	return ret >= 0;
}

/* Reap every CQE there is; how many. */
static unsigned reap_all(struct nvmet_tcp_conn *c)
{
	unsigned total = 0, n;

	do {
		struct io_uring_cqe *batch[CQE_BATCH];
		struct { uint64_t ud, result; int res; } done[CQE_BATCH];

		/* copied out and the CQ freed before the responses */
		n = ucmd_peek_batch_cqe(&c->ring, batch, CQE_BATCH);
		for (unsigned i = 0; i < n; i++)
			done[i] = (typeof(done[0])){ batch[i]->user_data, batch[i]->big_cqe[0],
						     batch[i]->res };
		ucmd_cq_advance(&c->ring, n);
		for (unsigned i = 0; i < n; i++)
			reap_one(c, done[i].ud, done[i].res, done[i].result);
		total += n;
	} while (n == CQE_BATCH);
	return total;
}

/* Completions other threads left to this ring's owner, waiting as task work. */
static bool task_work_waits(struct nvmet_tcp_conn *c)
{
	return c->inflight && (__atomic_load_n(c->ring.sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_TASKRUN);
}

void nvmet_tcp_io_flush(struct nvmet_tcp_conn *c)
{
	/*
	 * Sent responses free memory that may start commands waiting for it
	 * (nvmet_tcp_conn_flush_out's dispatch), whose SQEs are then queued: round
	 * until none is. Each round submits at least one SQE or stops, and
	 * the commands that can wait are bounded, so this ends.
	 */
	for (;;) {
		unsigned before = c->sq_pending, left = 0;

		if (c->has_ring) {
			if (!submit_pending(c)) {
				nvmet_tcp_conn_fail(c, 0, 0, NULL, 0);
				reap_all(c);
				nvmet_tcp_conn_flush_out(c);
				return;
			}
			left = c->sq_pending;
			/* they reach the CQ when the owner enters: now */
			if (task_work_waits(c))
				ucmd_enter(&c->ring, 0, 0, IORING_ENTER_GETEVENTS);
			reap_all(c);
		}
		nvmet_tcp_conn_flush_out(c);
		if (!c->sq_pending)
			break;
		if (left && left == before)
			break;	/* the ring took none: the next flush tries again */
	}
}

bool nvmet_tcp_io_idle(const struct nvmet_tcp_conn *c)
{
	return !c->has_ring || (!c->inflight && !c->sq_pending);
}

void nvmet_tcp_io_wait_begin(struct nvmet_tcp_conn *c, struct pollfd *pf)
{
	pf->fd = -1;
	pf->events = POLLIN;
	pf->revents = 0;
	if (!c->has_ring)
		return;
	/* enable the wake-up, then look once more: a CQE posted before it woke nobody */
	__atomic_and_fetch(c->ring.cq.kflags, ~IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
	pf->fd = c->ring_efd;
	if (ucmd_cq_ready(&c->ring) || task_work_waits(c))
		pf->fd = -2;	/* tells the caller not to sleep */
}

void nvmet_tcp_io_wait_end(struct nvmet_tcp_conn *c, const struct pollfd *pf)
{
	uint64_t v;

	if (!c->has_ring)
		return;
	__atomic_or_fetch(c->ring.cq.kflags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
	if (pf->fd >= 0 && (pf->revents & POLLIN) && read(c->ring_efd, &v, sizeof(v)) < 0)
		return;	/* EAGAIN: nothing was counted; the reap looks anyway */
}

int nvmet_tcp_io_start(struct nvmet_tcp_conn *c)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |
					      IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG };
	int ret;

	c->ring_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->ring_efd < 0)
		return -errno;
	/* the calling thread acts as the connection: the ring takes its identity */
	ret = ucmd_queue_init_engine(c->t->e, NVMET_TCP_RING_ENTRIES, &c->ring, &p);
	if (ret)
		goto close_efd;
	ret = ucmd_register_eventfd(&c->ring, c->ring_efd);
	if (ret) {
		ucmd_queue_exit(&c->ring);
		goto close_efd;
	}
	/* completions handed to this thread as task work wake it too */
	io_ring_set_owner_wake(&c->ring, c->ring_efd);
	/* the receiver is awake: it looks at the CQ itself until it sleeps */
	__atomic_or_fetch(c->ring.cq.kflags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_SEQ_CST);
	c->has_ring = true;
	return 0;
close_efd:
	close(c->ring_efd);
	c->ring_efd = -1;
	return ret;
}

void nvmet_tcp_io_stop(struct nvmet_tcp_conn *c)
{
	if (!c->has_ring)
		return;
	/* c->dead is set: every command submitted completes before its buffer goes */
	for (;;) {
		struct pollfd pf;
		unsigned inflight;

		nvmet_tcp_io_flush(c);
		inflight = c->inflight;
		if (!inflight)
			break;
		nvmet_tcp_io_wait_begin(c, &pf);
		if (pf.fd >= 0 && poll(&pf, 1, 1000) < 0 && errno != EINTR)
			pf.revents = 0;
		nvmet_tcp_io_wait_end(c, &pf);
	}
	ucmd_queue_exit(&c->ring);
	close(c->ring_efd);
	c->ring_efd = -1;
	c->has_ring = false;
}

int nvmet_tcp_io_submit(struct nvmet_tcp_conn *c, struct nvmet_tcp_slot *s, int fd, bool admin)
{
	const struct ucmd_nvme_sqe *q = &s->sqe;
	struct io_uring_sqe *sqe;
	struct nvme_uring_cmd *uc;

	if (!c->has_ring)
		return -ENXIO;
	sqe = ucmd_get_sqe(&c->ring);	/* never full: entries > slots */
	if (!sqe)
		return -EBUSY;
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
	c->sq_pending++;
	c->inflight++;
	/* submitted with the others at the next flush, when the receive buffer is empty */
	return 0;
}
