/* SPDX-License-Identifier: MIT */
/*
 * The nvme-pci role: bring the controller up through its registers, own the
 * submission and completion queues in host memory, ring doorbells (once per
 * batch), reap completions from the interrupt or from a poller, and handle
 * timeouts with an Abort command.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "host.h"

/* Linux's struct nvme_dev: the host and the controller it drives through MMIO. */
struct nvme_pci_dev {
	struct nvme_host host;		/* first: the public handle points at it */
	struct ucmd_ctrl *ctrl;		/* the emulated controller */
	bool irq_connected;		/* this host is the controller's interrupt target */
};

static inline struct ucmd_ctrl *pci_ctrl(const struct nvme_host *h)
{
	return ((const struct nvme_pci_dev *)(const void *)h)->ctrl;
}

static int pci_reg_read32(struct nvme_host *h, uint32_t off, uint32_t *val)
{
	*val = ctrl_read32(pci_ctrl(h), off);
	return 0;
}

static int pci_reg_read64(struct nvme_host *h, uint32_t off, uint64_t *val)
{
	*val = ctrl_read64(pci_ctrl(h), off);
	return 0;
}

static int pci_reg_write32(struct nvme_host *h, uint32_t off, uint32_t val)
{
	ctrl_write32(pci_ctrl(h), off, val);
	return 0;
}

static int nvme_alloc_queue(struct nvme_host *h, struct nvme_queue *q)
{
	size_t sq_bytes = (size_t)q->q_depth * sizeof(struct ucmd_nvme_sqe);
	size_t cq_bytes = (size_t)q->q_depth * sizeof(struct ucmd_nvme_cqe);

	q->sq_cmds = aligned_alloc(NVME_PAGE_SIZE, (sq_bytes + NVME_PAGE_SIZE - 1) & ~(size_t)4095);
	q->cqes = aligned_alloc(NVME_PAGE_SIZE, (cq_bytes + NVME_PAGE_SIZE - 1) & ~(size_t)4095);
	if (!q->sq_cmds || !q->cqes)
		return -ENOMEM;
	memset(q->sq_cmds, 0, sq_bytes);
	memset(q->cqes, 0, cq_bytes);
	q->sq_db = ucmd_nvme_db_offset(q->qid, 0, h->dstrd);
	q->cq_db = ucmd_nvme_db_offset(q->qid, 1, h->dstrd);
	return 0;
}

/*
 * nvme_pci_configure_admin_queue: from a disabled controller (as
 * nvme_disable_ctrl leaves it at probe), the admin rings in host memory
 * and their registers. The core sets CC.EN afterwards.
 */
static int pci_setup_admin_queue(struct nvme_host *h)
{
	struct nvme_queue *aq = &h->queues[0];
	uint64_t cap;
	int ret;

	ctrl_write32(pci_ctrl(h), UCMD_NVME_REG_CC, 0);
	ret = nvme_wait_ready(h, false);
	if (ret)
		return ret;
	cap = ctrl_read64(pci_ctrl(h), UCMD_NVME_REG_CAP);
	h->dstrd = (unsigned)((cap >> 32) & 0xf);
	nvme_queue_init_common(h, aq, 0, NVME_ADMIN_DEPTH, false);
	ret = nvme_alloc_queue(h, aq);
	if (ret)
		return ret;
	ctrl_write32(pci_ctrl(h), UCMD_NVME_REG_AQA,
			  (NVME_ADMIN_DEPTH - 1) << 16 | (NVME_ADMIN_DEPTH - 1));
	ctrl_write64(pci_ctrl(h), UCMD_NVME_REG_ASQ, (uint64_t)(uintptr_t)aq->sq_cmds);
	ctrl_write64(pci_ctrl(h), UCMD_NVME_REG_ACQ, (uint64_t)(uintptr_t)aq->cqes);
	return 0;
}

static void pci_stop_queues(struct nvme_host *h)
{
	/* under the SQ lock: a submitter either copied its command or sees !live */
	for (unsigned i = 0; i < h->nr_queues; i++) {
		pthread_mutex_lock(&h->queues[i].sq_lock);
		h->queues[i].live = false;
		pthread_mutex_unlock(&h->queues[i].sq_lock);
	}
}

static void pci_free_queue(struct nvme_queue *q)
{
	free(q->sq_cmds);
	free(q->cqes);
	q->sq_cmds = NULL;
	q->cqes = NULL;
}

/* Create Completion Queue, then Submission Queue, on the queue's memory */
static int pci_create_io_queue(struct nvme_host *h, struct nvme_queue *q)
{
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_create_cq };
	int st;

	c.dptr.prp1 = (uint64_t)(uintptr_t)q->cqes;
	c.cdw10 = (q->q_depth - 1) << 16 | q->qid;
	/* PC, and IEN only for interrupt-driven queues */
	c.cdw11 = (uint32_t)q->cq_vector << 16 | (q->polled ? 0u : 2u) | 1u;
	st = nvme_submit_sync_cmd(h, &c, NULL, 0, NULL);
	if (st)
		return st < 0 ? st : -EIO;
	memset(&c, 0, sizeof(c));
	c.opcode = nvme_admin_create_sq;
	c.dptr.prp1 = (uint64_t)(uintptr_t)q->sq_cmds;
	c.cdw10 = (q->q_depth - 1) << 16 | q->qid;
	c.cdw11 = (uint32_t)q->qid << 16 | 1u;
	st = nvme_submit_sync_cmd(h, &c, NULL, 0, NULL);
	if (st)
		return st < 0 ? st : -EIO;
	pthread_mutex_lock(&q->sq_lock);
	q->live = true;
	pthread_mutex_unlock(&q->sq_lock);
	return 0;
}

static int pci_setup_io_queue(struct nvme_host *h, struct nvme_queue *q)
{
	int st = nvme_alloc_queue(h, q);

	return st ? st : pci_create_io_queue(h, q);
}

/* ---- submission ---------------------------------------------------------- */

static void nvme_sq_copy_cmd(struct nvme_queue *q, struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);

	/* counted before the controller can see it (win_sub; one writer: sq_lock's holder) */
	if (req->dma_window) {
		atomic_store_explicit(&q->win_sub,
				      atomic_load_explicit(&q->win_sub, memory_order_relaxed) + 1,
				      memory_order_release);
		atomic_store_explicit(&req->win_counted, true, memory_order_relaxed);
	}
	memcpy(&q->sq_cmds[q->sq_tail], &req->cmd, sizeof(req->cmd));
	if (++q->sq_tail == q->q_depth)
		q->sq_tail = 0;
}

static void nvme_write_sq_db(struct nvme_queue *q)
{
	if (q->sq_tail == q->last_sq_tail)
		return;
	q->last_sq_tail = q->sq_tail;
	ctrl_write32(pci_ctrl(q->host), q->sq_db, q->sq_tail);
}

static blk_status_t nvme_queue_rq(struct blk_mq_hw_ctx *hctx, const struct blk_mq_queue_data *bd)
{
	struct nvme_queue *q = hctx->driver_data;
	struct request *rq = bd->rq;

	pthread_mutex_lock(&q->sq_lock);
	if (!q->live) {
		pthread_mutex_unlock(&q->sq_lock);
		return -EIO;
	}
	nvme_sq_copy_cmd(q, rq);
	if (bd->last)
		nvme_write_sq_db(q);
	pthread_mutex_unlock(&q->sq_lock);
	return BLK_STS_OK;
}

static void nvme_commit_rqs(struct blk_mq_hw_ctx *hctx)
{
	struct nvme_queue *q = hctx->driver_data;

	pthread_mutex_lock(&q->sq_lock);
	nvme_write_sq_db(q);
	pthread_mutex_unlock(&q->sq_lock);
}

/* A whole plug's worth for one queue: copy every command, ring once (seed 004). */
static void nvme_queue_rqs(struct request **rqlist)
{
	struct request *rq = *rqlist;
	struct nvme_queue *q;

	if (!rq)
		return;
	q = rq->hctx->driver_data;
	pthread_mutex_lock(&q->sq_lock);
	if (!q->live) {
		pthread_mutex_unlock(&q->sq_lock);
		return;		/* left on the list: the block layer fails them one by one */
	}
	for (; rq; rq = rq->rq_next)
		nvme_sq_copy_cmd(q, rq);
	nvme_write_sq_db(q);
	pthread_mutex_unlock(&q->sq_lock);
	*rqlist = NULL;
}

/* ---- completion ------------------------------------------------------------ */

static bool nvme_cqe_take(struct nvme_queue *q, struct ucmd_nvme_cqe *out)
{
	struct ucmd_nvme_cqe *e = &q->cqes[q->cq_head];
	/* The phase tag publishes the entry: acquire the upper 8 bytes first. */
	uint64_t hi = __atomic_load_n((uint64_t *)(void *)&e->sq_head, __ATOMIC_ACQUIRE);

	if (((hi >> 48) & 1) != q->cq_phase)
		return false;
	out->dw0 = e->dw0;
	out->dw1 = e->dw1;
	out->sq_head = (uint16_t)hi;
	out->sq_id = (uint16_t)(hi >> 16);
	out->cid = (uint16_t)(hi >> 32);
	out->status = (uint16_t)(hi >> 48);
	if (++q->cq_head == q->q_depth) {
		q->cq_head = 0;
		q->cq_phase ^= 1;
	}
	return true;
}

/*
 * Reap the CQ. Interrupts and pollers may race, and in inline controller
 * mode the CQ head doorbell can raise a nested interrupt on this very
 * thread: whoever finds the CQ busy leaves a note and the owner runs again.
 */
static int pci_poll_queue(struct nvme_queue *q)
{
	int found = 0;

	atomic_store(&q->cq_pending, 1);
	while (atomic_load(&q->cq_pending)) {
		struct ucmd_nvme_cqe cqe;
		int n = 0;

		if (pthread_mutex_trylock(&q->cq_lock))
			return found;
		atomic_store(&q->cq_pending, 0);
		blk_complete_batch_begin();
		while (nvme_cqe_take(q, &cqe)) {
			nvme_handle_cqe(q, &cqe);
			n++;
		}
		blk_complete_batch_end();
		if (n && q->live)
			ctrl_write32(pci_ctrl(q->host), q->cq_db, q->cq_head);
		pthread_mutex_unlock(&q->cq_lock);
		found += n;
	}
	return found;
}

/* The controller's interrupt target: this host, until detach disconnects it. */
static void nvme_irq(void *arg, uint16_t vector)
{
	struct nvme_host *h = arg;
	unsigned n = __atomic_load_n(&h->nr_queues, __ATOMIC_ACQUIRE);

	for (unsigned i = 0; i < n; i++) {
		struct nvme_queue *q = &h->queues[i];

		if (!q->polled && q->cq_vector == vector && q->cqes)
			pci_poll_queue(q);
	}
}

/*
 * The controller's question before it touches host memory for a command
 * (ctrl_set_dma_window): a command another process wrote reaches only the
 * buffers its request holds. A command id this host does not know now is
 * allowed nothing: the controller cannot tell whose it was.
 */
static bool nvme_dma_window(void *arg, uint16_t sqid, uint16_t cid, struct ucmd_dma_window *w)
{
	struct nvme_host *h = arg;
	unsigned n = __atomic_load_n(&h->nr_queues, __ATOMIC_ACQUIRE);
	struct request *rq = NULL;
	struct nvme_request *req;

	if (sqid < n) {
		struct nvme_queue *q = &h->queues[sqid];

		/*
		 * No windowed request in this queue: the host's own command. A
		 * windowed one counted in win_sub before the doorbell showed it;
		 * win_done is read first, so a stale value can only be low.
		 */
		unsigned done = atomic_load_explicit(&q->win_done, memory_order_acquire);

		if (atomic_load_explicit(&q->win_sub, memory_order_acquire) == done)
			return false;
		rq = nvme_find_rq(q, cid);
	}
	if (!rq) {
		memset(w, 0, sizeof(*w));
		return true;
	}
	req = nvme_req(rq);
	/* the host's own command (a block read, an Identify of its own): no question */
	if (!req->dma_window)
		return false;
	w->seg = req->data.iov;
	w->nr_seg = req->has_data ? req->data.nr_segs : 0;
	w->list = (uint64_t)(uintptr_t)req->dma_list;
	w->list_len = req->dma_list ? req->dma_list_len : 0;
	w->meta = (uint64_t)(uintptr_t)rq->meta;
	w->meta_len = rq->meta_len;
	return true;
}

static int nvme_poll(struct blk_mq_hw_ctx *hctx)
{
	return pci_poll_queue(hctx->driver_data);
}

/* ---- timeouts ---------------------------------------------------------------- */

static enum rq_end_io_ret abort_endio(struct request *rq, blk_status_t err)
{
	(void)rq;
	(void)err;
	return RQ_END_IO_FREE;
}

static void nvme_send_abort(struct nvme_host *h, struct nvme_request *req)
{
	struct ucmd_nvme_sqe c = { .opcode = nvme_admin_abort_cmd };
	struct request *abort_rq;
	int err;

	c.cdw10 = (uint32_t)req->cmd.cid << 16 | req->nvmeq->qid;
	abort_rq = nvme_alloc_request(&h->admin_q, &c, 0, BLK_MQ_REQ_NOWAIT, &err);
	if (!abort_rq)
		return;		/* the command still completes; it is already cancelled */
	abort_rq->end_io = abort_endio;
	blk_execute_rq_nowait(abort_rq, false);
}

/*
 * The block layer claimed rq for us. Mark it cancelled (it will end with
 * -EINTR) and ask the controller to abort it; the request ends when its CQE
 * comes back, so the controller never touches a buffer the caller got back.
 */
static enum blk_eh_timer_return nvme_timeout(struct request *rq)
{
	struct nvme_request *req = nvme_req(rq);

	if (nvme_timeout_begin(rq)) {
		nvme_send_abort(req->nvmeq->host, req);
		nvme_timeout_hand_off(rq);
	}
	return BLK_EH_DONE;
}

static const struct blk_mq_ops nvme_mq_admin_ops = {
	.queue_rq = nvme_queue_rq,
	.commit_rqs = nvme_commit_rqs,
	.timeout = nvme_timeout,
	.init_hctx = nvme_init_hctx,
};

static const struct blk_mq_ops nvme_mq_ops = {
	.queue_rq = nvme_queue_rq,
	.commit_rqs = nvme_commit_rqs,
	.queue_rqs = nvme_queue_rqs,
	.poll = nvme_poll,
	.timeout = nvme_timeout,
	.init_hctx = nvme_init_hctx,
};

/*
 * NVME_IOCTL_RESET (Linux's nvme_reset_ctrl_sync, nvme_reset_work): stop
 * the queues, disable the controller (CC.EN 0, no shutdown notification)
 * and wait for CSTS.RDY 0, end what was in flight as Linux's
 * nvme_cancel_request does (a passthrough command returns -EINTR), then
 * bring the same queues back: admin queue registers, CC.EN 1, the same
 * number of I/O queues, Create CQ/SQ for each, asynchronous events on.
 * A controller that comes back with fewer queues, or not at all, is left
 * stopped (-EIO), as Linux marks it dead.
 */
static int pci_reset(struct nvme_host *h)
{
	struct nvme_queue *aq = &h->queues[0];
	unsigned want = h->nr_queues - 1, got = want;
	int ret;

	pci_stop_queues(h);
	ret = nvme_reg_write32(h, UCMD_NVME_REG_CC, 0);
	if (!ret)
		ret = nvme_wait_ready(h, false);
	nvme_cancel_inflight(h);
	if (ret)
		return ret;
	for (unsigned i = 0; i < h->nr_queues; i++) {
		struct nvme_queue *q = &h->queues[i];

		pthread_mutex_lock(&q->cq_lock);
		pthread_mutex_lock(&q->sq_lock);
		q->sq_tail = q->last_sq_tail = 0;
		q->cq_head = 0;
		q->cq_phase = 1;
		memset(q->cqes, 0, (size_t)q->q_depth * sizeof(*q->cqes));
		pthread_mutex_unlock(&q->sq_lock);
		pthread_mutex_unlock(&q->cq_lock);
	}
	ctrl_write32(pci_ctrl(h), UCMD_NVME_REG_AQA, (aq->q_depth - 1) << 16 | (aq->q_depth - 1));
	ctrl_write64(pci_ctrl(h), UCMD_NVME_REG_ASQ, (uint64_t)(uintptr_t)aq->sq_cmds);
	ctrl_write64(pci_ctrl(h), UCMD_NVME_REG_ACQ, (uint64_t)(uintptr_t)aq->cqes);
	ret = nvme_enable_ctrl(h);
	if (!ret && want)
		ret = nvme_set_queue_count(h, &got);
	if (!ret && got < want)
		ret = -EIO;
	for (unsigned i = 1; !ret && i <= want; i++)
		ret = pci_create_io_queue(h, &h->queues[i]);
	if (!ret)
		ret = nvme_enable_aen(h);
	if (ret)
		pci_stop_queues(h);
	return ret;
}

/* No interrupt reaches a detached host: none is in flight after this. */
static void pci_disconnect(struct nvme_host *h)
{
	struct nvme_pci_dev *dev = (struct nvme_pci_dev *)(void *)h;

	if (dev->irq_connected) {
		ctrl_set_dma_window(dev->ctrl, NULL, NULL);
		ctrl_set_irq(dev->ctrl, NULL, NULL);
	}
	dev->irq_connected = false;
}

static void pci_free_ctrl(struct nvme_host *h)
{
	free(h);	/* the struct nvme_pci_dev that starts with it */
}

static const struct nvme_ctrl_ops nvme_pci_ctrl_ops = {
	.name = "pci",
	.reg_read32 = pci_reg_read32,
	.reg_read64 = pci_reg_read64,
	.reg_write32 = pci_reg_write32,
	.setup_admin_queue = pci_setup_admin_queue,
	.setup_io_queue = pci_setup_io_queue,
	.stop_queues = pci_stop_queues,
	.reset = pci_reset,
	.free_queue = pci_free_queue,
	.map_data = nvme_pci_map_data,
	.poll = pci_poll_queue,
	.disconnect = pci_disconnect,
	.free_ctrl = pci_free_ctrl,
	.admin_mq_ops = &nvme_mq_admin_ops,
	.mq_ops = &nvme_mq_ops,
};

/* Linux's nvme_probe: the host of the emulated controller ctrl. */
int ucmd_nvme_attach(struct ucmd_engine *e, struct ucmd_ctrl *ctrl,
		     const struct ucmd_nvme_host_opts *opts, struct ucmd_nvme_host **out)
{
	return nvme_pci_attach(e, ctrl, opts, false, out);
}

int nvme_pci_attach(struct ucmd_engine *e, struct ucmd_ctrl *ctrl,
		    const struct ucmd_nvme_host_opts *opts, bool ns_hidden,
		    struct ucmd_nvme_host **out)
{
	struct nvme_pci_dev *dev;
	struct nvme_host *h;
	int ret;

	last_error_clear();
	if (!e || !ctrl || !out)
		return last_error_set(-EINVAL, "ucmd_nvme_attach: %s is NULL",
				      !e ? "the engine" : !ctrl ? "the controller" : "out");
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return last_error_set(-ENOMEM, "ucmd_nvme_attach: out of memory");
	h = &dev->host;
	/*
	 * Before anything can touch the controller (even the failure path's
	 * disable): it has one host at a time, and enabling or disabling it
	 * would reset the queues of one already attached. nvme_irq() looks
	 * only at queues already counted, so an interrupt now finds nothing
	 * to do.
	 */
	ret = ctrl_set_irq(ctrl, nvme_irq, h);
	if (ret) {
		free(dev);
		return last_error_set(ret, "ucmd_nvme_attach: the controller already has a "
				      "host attached (detach it first)");
	}
	dev->irq_connected = true;
	dev->ctrl = ctrl;
	ctrl_set_dma_window(ctrl, nvme_dma_window, h);
	nvme_init_ctrl(h, e, &nvme_pci_ctrl_ops, opts);
	h->ns_hidden = ns_hidden;
	h->regs_ok = true;	/* MMIO: even a failed bring-up is undone by a disable */
	ret = nvme_host_start(h);
	if (ret)
		goto fail;
	*out = (struct ucmd_nvme_host *)h;
	return 0;
fail:
	nvme_host_free(h);
	return last_error_default(ret, "ucmd_nvme_attach: bringing up the controller");
}
