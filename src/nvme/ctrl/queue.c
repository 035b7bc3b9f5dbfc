/* SPDX-License-Identifier: MIT */
/*
 * Submission and completion queues: doorbells, fetching commands, posting
 * completions with the phase tag, interrupts, CQ-full backpressure, and the
 * controller thread of UCMD_CTRL_THREAD mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/cpu.h"
#include "ctrl_int.h"

void ctrl_cq_init(struct ucmd_ctrl *c, struct ctrl_cq *cq, uint16_t qid, uint64_t base,
		  void *mem, uint32_t size, bool ien, uint16_t vector)
{
	(void)c;
	memset(cq, 0, sizeof(*cq));
	cq->valid = true;
	cq->qid = qid;
	cq->base = base;
	cq->mem = mem;
	cq->size = size;
	cq->ien = ien;
	cq->vector = vector;
	cq->phase = 1;
	cq->backlog_tail = &cq->backlog;
}

void ctrl_sq_init(struct ucmd_ctrl *c, struct ctrl_sq *sq, uint16_t qid, uint64_t base,
		  void *mem, uint32_t size, uint16_t cqid)
{
	memset(sq, 0, sizeof(*sq));
	sq->valid = true;
	sq->qid = qid;
	sq->base = base;
	sq->mem = mem;
	sq->size = size;
	sq->cqid = cqid;
	c->cq[cqid].nr_sqs++;
}

static void cq_free_backlog(struct ctrl_cq *cq)
{
	struct ctrl_pending_cqe *p;

	while ((p = cq->backlog)) {
		cq->backlog = p->next;
		free(p);
	}
	cq->backlog_tail = &cq->backlog;
	cq->nr_backlog = 0;
}

void ctrl_sq_delete(struct ucmd_ctrl *c, uint16_t qid)
{
	struct ctrl_sq *sq = &c->sq[qid];
	struct ctrl_req **pp = &c->delayed, *r;

	if (!sq->valid)
		return;
	/* Commands the SQ still owns complete as aborted by the deletion. */
	while ((r = *pp)) {
		if (r->sqid == qid) {
			*pp = r->next;
			ctrl_post_req(c, r, UCMD_GEN(NVME_SC_ABORT_QUEUE));
		} else {
			pp = &r->next;
		}
	}
	c->cq[sq->cqid].nr_sqs--;
	memset(sq, 0, sizeof(*sq));
}

void ctrl_cq_delete(struct ucmd_ctrl *c, uint16_t qid)
{
	cq_free_backlog(&c->cq[qid]);
	memset(&c->cq[qid], 0, sizeof(c->cq[qid]));
}

void ctrl_queues_free(struct ucmd_ctrl *c)
{
	for (unsigned i = 0; i <= c->qmax; i++) {
		memset(&c->sq[i], 0, sizeof(c->sq[i]));
		cq_free_backlog(&c->cq[i]);
		memset(&c->cq[i], 0, sizeof(c->cq[i]));
	}
}

/* Queue sizes need not be powers of two: wrap by comparison, not by division. */
static uint32_t cq_used(const struct ctrl_cq *cq)
{
	return cq->tail >= cq->head ? cq->tail - cq->head : cq->tail + cq->size - cq->head;
}

static uint32_t sq_next(const struct ctrl_sq *sq, uint32_t i)
{
	return i + 1 == sq->size ? 0 : i + 1;
}

/* Slots we may still fill without overwriting an unconsumed entry */
static uint32_t cq_free(const struct ctrl_cq *cq)
{
	return cq->size - 1 - cq_used(cq);
}

static void cq_write(struct ctrl_cq *cq, const struct ucmd_nvme_cqe *src)
{
	struct ucmd_nvme_cqe *dst = &cq->mem[cq->tail];
	uint64_t hi;

	dst->dw0 = src->dw0;
	dst->dw1 = src->dw1;
	/* The phase tag publishes the entry: one release store of the upper half. */
	hi = (uint64_t)src->sq_head | (uint64_t)src->sq_id << 16 | (uint64_t)src->cid << 32 |
	     (uint64_t)(uint16_t)((src->status & ~1u) | cq->phase) << 48;
	__atomic_store_n((uint64_t *)(void *)&dst->sq_head, hi, __ATOMIC_RELEASE);
	if (++cq->tail == cq->size) {
		cq->tail = 0;
		cq->phase ^= 1;
	}
	cq->irq_pending = true;
}

static void apply_cq_db(struct ucmd_ctrl *c, uint16_t qid, uint32_t val);

/*
 * The CQ looks full: apply a head doorbell that is already staged, or
 * mark the CQ so that the next head doorbell wakes the controller.
 * Returns true when the CQ may have room now.
 */
static bool cq_refresh(struct ucmd_ctrl *c, struct ctrl_cq *cq)
{
	unsigned idx = 2u * cq->qid + 1u;
	bool staged;
	uint32_t val = 0;

	pthread_mutex_lock(&c->db_lock);
	staged = c->db_dirty[idx];
	if (staged) {
		c->db_dirty[idx] = 0;
		val = c->db_val[idx];
	} else {
		c->cq_waiting[cq->qid] = 1;
	}
	pthread_mutex_unlock(&c->db_lock);
	if (staged)
		apply_cq_db(c, cq->qid, val);
	return staged;
}

static void cq_drain_backlog(struct ctrl_cq *cq)
{
	struct ctrl_pending_cqe *p;

	while ((p = cq->backlog) && cq_free(cq)) {
		cq->backlog = p->next;
		if (!cq->backlog)
			cq->backlog_tail = &cq->backlog;
		cq->nr_backlog--;
		cq_write(cq, &p->cqe);
		free(p);
	}
}

/*
 * A request for the SQ entry at sqe: the one kept from the last command, or
 * a new one. The entry is copied whole, so only what follows it is zeroed.
 */
static struct ctrl_req *ctrl_req_get(struct ucmd_ctrl *c, const struct ucmd_nvme_sqe *sqe,
				     uint16_t sqid)
{
	struct ctrl_req *req = c->req_spare;

	if (!req && !(req = malloc(sizeof(*req))))
		return NULL;
	c->req_spare = NULL;
	memcpy(&req->cmd, sqe, sizeof(req->cmd));
	/* the window is read only once win_state says it was asked: not zeroed */
	memset((char *)req + sizeof(req->cmd), 0, offsetof(struct ctrl_req, win) - sizeof(req->cmd));
	req->sqid = sqid;
	return req;
}

static void ctrl_req_put(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	if (!c->req_spare)
		c->req_spare = req;
	else
		free(req);
}

void ctrl_post_req(struct ucmd_ctrl *c, struct ctrl_req *req, uint16_t status)
{
	struct ctrl_sq *sq = &c->sq[req->sqid];
	struct ctrl_cq *cq;
	struct ucmd_nvme_cqe cqe = {
		.dw0 = req->dw0, .dw1 = req->dw1, .sq_id = req->sqid, .cid = req->cmd.cid,
		.status = (uint16_t)(status << 1),
	};

	if (status && (status & 0x7ff) != UCMD_GEN(NVME_SC_ABORT_REQ) &&
	    (status & 0x7ff) != UCMD_GEN(NVME_SC_ABORT_QUEUE))
		ctrl_error_record(c, req->sqid, req->cmd.cid, status, req->cmd.nsid, req->err_lba);
	if (!sq->valid) {
		/* The SQ went away (reset): nobody is waiting for this. */
		ctrl_req_put(c, req);
		return;
	}
	cq = &c->cq[sq->cqid];
	cqe.sq_head = (uint16_t)sq->head;
	if (!cq->nr_backlog && cq_free(cq)) {
		cq_write(cq, &cqe);
	} else {
		/* CQ full: keep it until the host frees a slot. */
		struct ctrl_pending_cqe *p = calloc(1, sizeof(*p));

		if (p) {
			p->cqe = cqe;
			*cq->backlog_tail = p;
			cq->backlog_tail = &p->next;
			cq->nr_backlog++;
		} else {
			ctrl_ctrl_fatal(c);
		}
		cq_refresh(c, cq);
	}
	ctrl_req_put(c, req);
}

static void run_req(struct ucmd_ctrl *c, struct ctrl_req *req)
{
	uint16_t status = ctrl_exec(c, req);

	c->commands++;
	if (status != UCMD_DEFERRED)
		ctrl_post_req(c, req, status);
}

static void sq_process(struct ucmd_ctrl *c, struct ctrl_sq *sq, uint64_t now)
{
	struct ctrl_cq *cq = &c->cq[sq->cqid];

	/* Never fetch more than the CQ can take: that is the backpressure. */
	while (sq->valid && sq->head != sq->tail) {
		struct ctrl_req *req;
		unsigned delay;

		if (cq_free(cq) <= cq->nr_backlog && (!cq_refresh(c, cq) || cq_free(cq) <= cq->nr_backlog))
			break;
		req = ctrl_req_get(c, &sq->mem[sq->head], sq->qid);
		if (!req) {
			ctrl_ctrl_fatal(c);
			return;
		}
		sq->head = sq_next(sq, sq->head);
		delay = c->delay_ms[sq->qid == 0][req->cmd.opcode];
		if (delay && c->p.mode == UCMD_CTRL_THREAD) {
			req->deadline_ns = now + (uint64_t)delay * 1000000ull;
			req->next = c->delayed;
			c->delayed = req;
			continue;
		}
		run_req(c, req);
	}
}

bool ctrl_abort_req(struct ucmd_ctrl *c, uint16_t sqid, uint16_t cid)
{
	struct ctrl_req **lists[] = { &c->delayed, &c->aer_reqs };

	for (unsigned i = 0; i < 2; i++) {
		for (struct ctrl_req **pp = lists[i], *r; (r = *pp); pp = &r->next) {
			if (r->sqid != sqid || r->cmd.cid != cid)
				continue;
			*pp = r->next;
			if (i == 1)
				c->nr_aer_reqs--;
			ctrl_post_req(c, r, UCMD_GEN(NVME_SC_ABORT_REQ));
			return true;
		}
	}
	return false;
}

static void run_delayed(struct ucmd_ctrl *c, uint64_t now)
{
	struct ctrl_req **pp = &c->delayed, *r;

	while ((r = *pp)) {
		if (r->deadline_ns <= now) {
			*pp = r->next;
			r->next = NULL;
			run_req(c, r);
			pp = &c->delayed;	/* the handler may have changed the list */
		} else {
			pp = &r->next;
		}
	}
}

static uint64_t next_deadline(struct ucmd_ctrl *c)
{
	uint64_t d = 0;

	for (struct ctrl_req *r = c->delayed; r; r = r->next)
		if (!d || r->deadline_ns < d)
			d = r->deadline_ns;
	return d;
}

static void db_invalid(struct ucmd_ctrl *c, uint8_t info)
{
	ctrl_error_record(c, 0xffff, 0xffff, UCMD_GEN(NVME_SC_INVALID_FIELD), 0, 0);
	ctrl_event(c, NVME_AER_ERROR, info, NVME_LOG_LID_ERROR);
}

static void apply_sq_db(struct ucmd_ctrl *c, uint16_t qid, uint32_t val)
{
	struct ctrl_sq *sq = &c->sq[qid];

	if (!sq->valid)
		return db_invalid(c, NVME_AER_ERROR_INVALID_DB_REG);
	if (val >= sq->size)
		return db_invalid(c, NVME_AER_ERROR_INVALID_DB_VAL);
	/* start every announced read's data on its way before running any */
	for (uint32_t i = sq->tail; qid && i != val; i = sq_next(sq, i))
		ctrl_nvm_prefetch(c, &sq->mem[i]);
	sq->tail = val;
}

static void apply_cq_db(struct ucmd_ctrl *c, uint16_t qid, uint32_t val)
{
	struct ctrl_cq *cq = &c->cq[qid];
	uint32_t used;

	if (!cq->valid)
		return db_invalid(c, NVME_AER_ERROR_INVALID_DB_REG);
	/* The new head must lie within the entries we posted. */
	used = cq_used(cq);
	if (val >= cq->size || (val + cq->size - cq->head) % cq->size > used)
		return db_invalid(c, NVME_AER_ERROR_INVALID_DB_VAL);
	cq->head = val;
	cq_drain_backlog(cq);
}

/* Move doorbell values written since the last run into the queues. */
static void apply_doorbells(struct ucmd_ctrl *c)
{
	unsigned n = c->qmax + 1u, bad;
	uint32_t vals[64];
	uint16_t idx[64];
	unsigned i = 0;

	do {
		unsigned k = 0;

		pthread_mutex_lock(&c->db_lock);
		__atomic_store_n(&c->db_any, false, __ATOMIC_RELAXED);
		bad = c->db_bad_reg;
		c->db_bad_reg = 0;
		for (; i < 2 * n && k < 64; i++) {
			if (!c->db_dirty[i])
				continue;
			c->db_dirty[i] = 0;
			vals[k] = c->db_val[i];
			idx[k++] = (uint16_t)i;
		}
		pthread_mutex_unlock(&c->db_lock);
		for (unsigned j = 0; j < k; j++) {
			if (!(c->csts & UCMD_NVME_CSTS_RDY))
				continue;	/* a disabled controller ignores doorbells */
			if (idx[j] & 1)
				apply_cq_db(c, idx[j] / 2, vals[j]);
			else
				apply_sq_db(c, idx[j] / 2, vals[j]);
		}
		while (bad-- && (c->csts & UCMD_NVME_CSTS_RDY))
			db_invalid(c, NVME_AER_ERROR_INVALID_DB_REG);
		bad = 0;
	} while (i < 2 * n);
}

static bool any_db_pending(struct ucmd_ctrl *c)
{
	bool any;

	pthread_mutex_lock(&c->db_lock);
	any = c->db_any;
	pthread_mutex_unlock(&c->db_lock);
	return any;
}

/* The earliest of d (0: none) and when a background operation needs a pass */
static uint64_t bg_deadline(struct ucmd_ctrl *c, uint64_t d)
{
	uint64_t b = 0;

	if (ctrl_sanitize_busy(c) && !c->p.read_only)
		b = ktime_get_ns();	/* at once: the next chunk */
	else if (c->dst.op)
		b = c->dst.start_ns + c->dst.dur_ns;
	return b && (!d || b < d) ? b : d;
}

void ctrl_ctrl_run(struct ucmd_ctrl *c)
{
	uint16_t vectors[64];
	unsigned nvec = 0;
	uint64_t deadline;
	uint8_t kick;

	pthread_mutex_lock(&c->lock);
	ctrl_subsys_enter(c);
	/* what another controller or the owner left for this one */
	ctrl_subsys_notices(c);
	do {
		uint64_t now = ktime_get_ns();

		apply_doorbells(c);
		if (c->csts & UCMD_NVME_CSTS_RDY) {
			run_delayed(c, now);
			for (unsigned q = 0; q <= c->qmax; q++)
				if (c->sq[q].valid)
					sq_process(c, &c->sq[q], now);
		}
	} while (any_db_pending(c) && c->p.mode == UCMD_CTRL_INLINE);
	/*
	 * Background operations advance once per pass (the next doorbell, or
	 * the thread's own timer): a sanitize by a chunk, a self-test by
	 * the clock. They go on while the controller is disabled.
	 */
	/* the subsystem's sanitize: whichever controller passes, under controller 1's lock */
	ctrl_sanitize_step(ctrl_primary(c));
	ctrl_selftest_step(c);
	/* One interrupt per vector per batch, not one per completion. */
	for (unsigned q = 0; q <= c->qmax; q++) {
		struct ctrl_cq *cq = &c->cq[q];
		bool dup = false;

		if (!cq->valid || !cq->irq_pending)
			continue;
		cq->irq_pending = false;
		if (!cq->ien)
			continue;
		for (unsigned j = 0; j < nvec; j++)
			dup |= vectors[j] == cq->vector;
		if (!dup && nvec < 64)
			vectors[nvec++] = cq->vector;
	}
	c->irqs += nvec;
	deadline = bg_deadline(c, next_deadline(c));
	kick = ctrl_subsys_kick_take(c);
	ctrl_subsys_leave(c);
	pthread_mutex_unlock(&c->lock);
	/* the other controllers this pass left something for: their passes */
	if (kick)
		ctrl_subsys_kick(c, kick);

	/* Only the controller thread sleeps on a deadline: delays need it. */
	if (c->p.mode == UCMD_CTRL_THREAD) {
		pthread_mutex_lock(&c->db_lock);
		c->timer_deadline_ns = deadline;
		pthread_mutex_unlock(&c->db_lock);
	}
	/* Outside the lock: the handler may ring doorbells itself. */
	if (!nvec)
		return;
	pthread_rwlock_rdlock(&c->irq_lock);
	for (unsigned j = 0; c->irq && j < nvec; j++)
		c->irq(c->irq_arg, vectors[j]);
	pthread_rwlock_unlock(&c->irq_lock);
}

/* Returns whether the write needs a controller pass. */
static bool db_stage(struct ucmd_ctrl *c, uint32_t off, uint32_t val)
{
	uint32_t idx = (off - UCMD_NVME_REG_DBS) / 4;

	pthread_mutex_lock(&c->db_lock);
	c->doorbells++;
	if (idx < 2u * (c->qmax + 1u)) {
		c->db_val[idx] = val;
		c->db_dirty[idx] = 1;
		/*
		 * A CQ head nobody waits for is applied at the next pass (the
		 * next SQ doorbell, or a full CQ looking for staged heads), as
		 * a device reads it when it next needs room: one pass per
		 * batch instead of two.
		 */
		if ((idx & 1) && !c->cq_waiting[idx / 2]) {
			pthread_mutex_unlock(&c->db_lock);
			return false;
		}
		if (idx & 1)
			c->cq_waiting[idx / 2] = 0;
	} else {
		c->db_bad_reg++;
	}
	__atomic_store_n(&c->db_any, true, __ATOMIC_RELAXED);
	if (c->p.mode == UCMD_CTRL_THREAD)
		pthread_cond_signal(&c->db_cond);
	pthread_mutex_unlock(&c->db_lock);
	return true;
}

void ctrl_db_write(struct ucmd_ctrl *c, uint32_t off, uint32_t val)
{
	/* ctrl_ctrl_run holds c->lock for a whole pass: a trap waits for it. */
	bool trap = c->p.mode == UCMD_CTRL_THREAD && c->p.db_trap, run;

	if (trap)
		pthread_mutex_lock(&c->lock);
	run = db_stage(c, off, val);
	if (trap)
		pthread_mutex_unlock(&c->lock);
	if (run && c->p.mode == UCMD_CTRL_INLINE)
		ctrl_ctrl_run(c);
}

void ctrl_wake(struct ucmd_ctrl *c)
{
	if (c->p.mode == UCMD_CTRL_INLINE) {
		ctrl_ctrl_run(c);
		return;
	}
	/* a pass with no doorbell staged: apply_doorbells finds nothing */
	pthread_mutex_lock(&c->db_lock);
	__atomic_store_n(&c->db_any, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&c->db_cond);
	pthread_mutex_unlock(&c->db_lock);
}

/*
 * Called with db_lock held and nothing staged. Going to sleep costs the next
 * doorbell a futex wake-up and this thread a trip through the scheduler, so
 * first watch db_any for a while without the lock, as QEMU's IOThreads poll
 * before they block: a host that rings again within the window finds the
 * device awake, and a trapping doorbell then meets a pass in progress, which
 * is the cost a plugged batch pays once and an unplugged one per command.
 */
static bool poll_for_doorbell(struct ucmd_ctrl *c)
{
	uint64_t end;

	if (c->p.poll_ns == UCMD_CTRL_NO_POLL)
		return false;
	pthread_mutex_unlock(&c->db_lock);
	end = ktime_get_ns() + c->p.poll_ns;
	while (!__atomic_load_n(&c->db_any, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&c->stop, __ATOMIC_RELAXED) && ktime_get_ns() < end)
		cpu_relax();
	pthread_mutex_lock(&c->db_lock);
	return c->db_any;
}

static void *ctrl_thread(void *arg)
{
	struct ucmd_ctrl *c = arg;

	pthread_mutex_lock(&c->db_lock);
	for (;;) {
		if (!c->stop && !c->db_any && poll_for_doorbell(c))
			c->poll_hits++;
		while (!c->stop && !c->db_any &&
		       !(c->timer_deadline_ns && ktime_get_ns() >= c->timer_deadline_ns)) {
			if (c->timer_deadline_ns) {
				struct timespec ts = {
					.tv_sec = (time_t)(c->timer_deadline_ns / 1000000000ull),
					.tv_nsec = (long)(c->timer_deadline_ns % 1000000000ull),
				};
				pthread_cond_timedwait(&c->db_cond, &c->db_lock, &ts);
			} else {
				pthread_cond_wait(&c->db_cond, &c->db_lock);
			}
		}
		if (c->stop)
			break;
		c->wakeups++;
		pthread_mutex_unlock(&c->db_lock);
		ctrl_ctrl_run(c);
		pthread_mutex_lock(&c->db_lock);
	}
	pthread_mutex_unlock(&c->db_lock);
	return NULL;
}

int ctrl_thread_start(struct ucmd_ctrl *c)
{
	int ret = pthread_create(&c->thread, NULL, ctrl_thread, c);

	if (ret)
		return -ret;
	c->thread_started = true;
	return 0;
}

void ctrl_thread_stop(struct ucmd_ctrl *c)
{
	if (!c->thread_started)
		return;
	pthread_mutex_lock(&c->db_lock);
	__atomic_store_n(&c->stop, true, __ATOMIC_RELAXED);
	pthread_cond_signal(&c->db_cond);
	pthread_mutex_unlock(&c->db_lock);
	pthread_join(c->thread, NULL);
	c->thread_started = false;
}
