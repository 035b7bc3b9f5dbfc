/* SPDX-License-Identifier: MIT */
/*
 * Error recovery for the NVMe/TCP host, as Linux's nvme-tcp does it: when
 * a connection fails (the target restarted, a TCP reset, a timeout that
 * closed it), every connection of the association is closed, and a new
 * association is made every reconnect_delay until ctrl_loss_tmo has
 * passed: ICReq and Connect on the admin queue (same host NQN and host
 * ID, a new controller ID), CC written again with Property Set and
 * CSTS.RDY awaited, then ICReq and Connect on each I/O queue. The requests
 * that were on the lost connections and did not complete are sent again;
 * submitters wait meanwhile. Once ctrl_loss_tmo has passed, all of them
 * fail with -ENOTCONN, and so does every later command.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "tcp.h"

#define RDY_POLL_MS	10u
#define RDY_MAX_MS	30000u	/* bounds CSTS.RDY after a reconnect (CAP.TO is at most 127.5 s) */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void abs_time(struct timespec *ts, uint64_t ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(ms / 1000);
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

void nvme_tcp_state_init(struct nvme_tcp_ctrl *c)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->state_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&c->state_lock, NULL);
	c->state = NVME_TCP_NEW;
}

void nvme_tcp_set_why(struct nvme_tcp_ctrl *c, int err, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&c->state_lock);
	if (!c->why[0]) {
		va_start(ap, fmt);
		vsnprintf(c->why, sizeof(c->why), fmt, ap);
		va_end(ap);
		c->why_err = err;
	}
	pthread_mutex_unlock(&c->state_lock);
}

void nvme_tcp_state_destroy(struct nvme_tcp_ctrl *c)
{
	pthread_cond_destroy(&c->state_cond);
	pthread_mutex_destroy(&c->state_lock);
}

bool nvme_tcp_unreachable(struct nvme_tcp_ctrl *c)
{
	enum nvme_tcp_state state;

	pthread_mutex_lock(&c->state_lock);
	state = c->state;
	pthread_mutex_unlock(&c->state_lock);
	return state == NVME_TCP_RECONNECTING || state == NVME_TCP_DEAD;
}

static void set_state(struct nvme_tcp_ctrl *c, enum nvme_tcp_state from, enum nvme_tcp_state to)
{
	pthread_mutex_lock(&c->state_lock);
	if (c->state == from)
		c->state = to;
	pthread_cond_broadcast(&c->state_cond);
	pthread_mutex_unlock(&c->state_lock);
}

static unsigned nr_queues(struct nvme_host *h)
{
	return h->opts.nr_io_queues + h->opts.nr_poll_queues + 1;
}

/* CC as the host enabled it, then CSTS.RDY: the admin queue is usable. */
static int enable_ctrl(struct nvme_host *h)
{
	struct nvme_tcp_queue *tq = h->queues[0].priv;
	struct ucmd_nvme_sqe sqe;
	struct nvmf_prop_sqe *p = (struct nvmf_prop_sqe *)(void *)&sqe;
	uint64_t csts = 0, end = now_ms() + RDY_MAX_MS;
	int ret;

	memset(&sqe, 0, sizeof(sqe));
	p->opcode = NVMF_OPC_FABRICS;
	p->fctype = NVMF_FCTYPE_PROP_SET;
	p->offset = htole32(UCMD_NVME_REG_CC);
	p->value = htole64(h->ctrl_config);
	ret = nvme_tcp_raw_cmd(tq, &sqe, NULL);
	p->fctype = NVMF_FCTYPE_PROP_GET;
	p->offset = htole32(UCMD_NVME_REG_CSTS);
	p->value = 0;
	while (!ret) {
		ret = nvme_tcp_raw_cmd(tq, &sqe, &csts);
		if (ret || (csts & UCMD_NVME_CSTS_RDY))
			break;
		if (csts & UCMD_NVME_CSTS_CFS || now_ms() > end)
			return -EIO;
		struct timespec ts = { 0, (long)RDY_POLL_MS * 1000000 };
		nanosleep(&ts, NULL);
	}
	return ret;
}

/*
 * Set Features, Number of Queues, as the first association asked: a new
 * controller grants no I/O queue before it (Linux's nvme_set_queue_count
 * on every reconnect too).
 */
static int set_queue_count(struct nvme_host *h)
{
	struct ucmd_nvme_sqe sqe = { .opcode = nvme_admin_set_features };
	uint64_t res = 0;
	unsigned nio = 0;
	int ret;

	for (unsigned i = 1; i < nr_queues(h); i++)
		nio += h->queues[i].priv != NULL;
	if (!nio)
		return 0;
	sqe.cdw10 = NVME_FEAT_FID_NUM_QUEUES;
	sqe.cdw11 = (nio - 1) << 16 | (nio - 1);
	ret = nvme_tcp_raw_cmd(h->queues[0].priv, &sqe, &res);
	if (!ret && ((res & 0xffff) + 1 < nio || ((res >> 16) & 0xffff) + 1 < nio))
		ret = -EIO;	/* fewer queues than the requests are spread over */
	return ret;
}

/* One attempt at a new association: every queue connected, the controller enabled. */
static int reconnect_all(struct nvme_host *h)
{
	for (unsigned i = 0; i < nr_queues(h); i++) {
		struct nvme_queue *q = &h->queues[i];
		int ret;

		if (!q->priv)
			continue;
		ret = nvme_tcp_reconnect_queue(h, q);
		if (!ret && !i)
			ret = enable_ctrl(h);
		if (!ret && !i)
			ret = set_queue_count(h);
		if (ret)
			return ret;
	}
	return 0;
}

/* Sleep ms unless the host stops first (true then). */
static bool wait_or_stop(struct nvme_tcp_ctrl *c, uint64_t ms)
{
	struct timespec ts;
	bool stop;

	abs_time(&ts, ms);
	pthread_mutex_lock(&c->state_lock);
	while (c->state != NVME_TCP_STOPPING &&
	       pthread_cond_timedwait(&c->state_cond, &c->state_lock, &ts) == 0)
		;
	stop = c->state == NVME_TCP_STOPPING;
	pthread_mutex_unlock(&c->state_lock);
	return stop;
}

static void recover(struct nvme_host *h)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);
	const struct nvmf_ctrl_options *o = &c->fabrics.opts;
	uint64_t deadline = o->ctrl_loss_tmo_ms < 0 ? UINT64_MAX :
			    now_ms() + (uint64_t)o->ctrl_loss_tmo_ms;
	unsigned n = nr_queues(h);

	/* Tear the association down: no sends, every receiver gone. */
	for (unsigned i = 0; i < n; i++) {
		struct nvme_tcp_queue *tq = h->queues[i].priv;

		if (!tq)
			continue;
		pthread_mutex_lock(&tq->send_lock);
		atomic_store(&tq->dead, true);
		pthread_mutex_unlock(&tq->send_lock);
		shutdown(tq->fd, SHUT_RDWR);
	}
	for (unsigned i = 0; i < n; i++)
		if (h->queues[i].priv)
			nvme_tcp_join_rx(h->queues[i].priv);
	/*
	 * A path of a multipath head: what the head sent on the lost I/O
	 * connections goes to another path now, not after a reconnection
	 * that may never come (the admin queue's own commands stay).
	 */
	if (h->ns_hidden)
		for (unsigned i = 1; i < n; i++)
			if (h->queues[i].priv)
				nvme_tcp_failover_sent(h->queues[i].priv);
	for (;;) {
		uint64_t now = now_ms();

		if (now >= deadline)
			goto give_up;
		/* Linux waits reconnect_delay before each attempt, the first too. */
		uint64_t wait = deadline - now < o->reconnect_delay_ms ? deadline - now :
				o->reconnect_delay_ms;
		if (wait_or_stop(c, wait))
			return;
		if (now_ms() >= deadline)
			goto give_up;
		if (!reconnect_all(h))
			break;
	}
	/* Live again: the lost requests go out before the receivers start. */
	atomic_fetch_add(&c->reconnects, 1);
	set_state(c, NVME_TCP_RECONNECTING, NVME_TCP_LIVE);
	for (unsigned i = 0; i < n; i++) {
		struct nvme_tcp_queue *tq = h->queues[i].priv;

		if (!tq)
			continue;
		pthread_mutex_lock(&tq->send_lock);
		atomic_store(&tq->dead, false);
		nvme_tcp_resend(tq);
		pthread_mutex_unlock(&tq->send_lock);
		if (nvme_tcp_start_rx(tq)) {
			/* no receiver: nothing completes on this queue, start over */
			shutdown(tq->fd, SHUT_RDWR);
			atomic_store(&tq->dead, true);
			set_state(c, NVME_TCP_LIVE, NVME_TCP_RECONNECTING);
		}
	}
	return;
give_up:
	set_state(c, NVME_TCP_RECONNECTING, NVME_TCP_DEAD);
	for (unsigned i = 0; i < n; i++)
		if (h->queues[i].priv)
			nvme_tcp_end_sent(h->queues[i].priv, -ENOTCONN);
}

static void *recovery_thread(void *arg)
{
	struct nvme_host *h = arg;
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);

	pthread_mutex_lock(&c->state_lock);
	for (;;) {
		while (c->state != NVME_TCP_RECONNECTING && c->state != NVME_TCP_STOPPING)
			pthread_cond_wait(&c->state_cond, &c->state_lock);
		if (c->state == NVME_TCP_STOPPING)
			break;
		pthread_mutex_unlock(&c->state_lock);
		recover(h);
		pthread_mutex_lock(&c->state_lock);
	}
	pthread_mutex_unlock(&c->state_lock);
	return NULL;
}

int nvme_tcp_recovery_start(struct nvme_host *h)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);
	int ret;

	if (!c->fabrics.opts.ctrl_loss_tmo_ms || c->rec_started)
		return 0;
	ret = pthread_create(&c->rec_thread, NULL, recovery_thread, h);
	if (ret)
		return -ret;
	/* the admin queue's receiver already runs: it reads this under the lock */
	pthread_mutex_lock(&c->state_lock);
	c->rec_started = true;
	pthread_mutex_unlock(&c->state_lock);
	return 0;
}

void nvme_tcp_recovery_stop(struct nvme_host *h)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);

	pthread_mutex_lock(&c->state_lock);
	c->state = NVME_TCP_STOPPING;
	pthread_cond_broadcast(&c->state_cond);
	pthread_mutex_unlock(&c->state_lock);
	/* An attempt waiting for ICResp or Connect's answer gives up now. */
	for (unsigned i = 0; c->rec_started && h->queues && i < nr_queues(h); i++) {
		struct nvme_tcp_queue *tq = h->queues[i].priv;

		if (tq && tq->fd >= 0)
			shutdown(tq->fd, SHUT_RDWR);
	}
	if (c->rec_started) {
		pthread_join(c->rec_thread, NULL);
		/*
		 * Receivers may still fail their connection and ask for a
		 * recovery: they read rec_started under the lock. Only this
		 * thread writes it, so its own reads above need none.
		 */
		pthread_mutex_lock(&c->state_lock);
		c->rec_started = false;
		pthread_mutex_unlock(&c->state_lock);
	}
}

bool nvme_tcp_error_recovery(struct nvme_host *h)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(h);
	bool r = false;

	pthread_mutex_lock(&c->state_lock);
	if (!c->rec_started) {
		pthread_mutex_unlock(&c->state_lock);
		return false;
	}
	if (c->state == NVME_TCP_LIVE) {
		c->state = NVME_TCP_RECONNECTING;
		pthread_cond_broadcast(&c->state_cond);
	}
	r = c->state == NVME_TCP_RECONNECTING;
	pthread_mutex_unlock(&c->state_lock);
	return r;
}

int nvme_tcp_wait_live(struct nvme_tcp_queue *tq, bool failfast)
{
	struct nvme_tcp_ctrl *c = nvme_tcp_ctrl(tq->nq->host);

	pthread_mutex_lock(&tq->send_lock);
	for (;;) {
		enum nvme_tcp_state st;
		struct timespec ts;

		if (!tq->nq->live)
			break;
		if (!atomic_load(&tq->dead))
			return 0;
		pthread_mutex_unlock(&tq->send_lock);
		pthread_mutex_lock(&c->state_lock);
		st = c->state;
		if (st == NVME_TCP_DEAD || (failfast && st == NVME_TCP_RECONNECTING)) {
			pthread_mutex_unlock(&c->state_lock);
			return -ENOTCONN;
		}
		/* a dead connection nobody will bring back */
		if (st == NVME_TCP_NEW || st == NVME_TCP_STOPPING || !c->rec_started) {
			pthread_mutex_unlock(&c->state_lock);
			return -EIO;
		}
		/*
		 * RECONNECTING: the recovery wakes us when it is done or gives
		 * up. LIVE with this queue dead: its receiver is about to start
		 * the recovery, or the recovery is about to revive it: look
		 * again soon.
		 */
		abs_time(&ts, st == NVME_TCP_LIVE ? 10 : 1000);
		pthread_cond_timedwait(&c->state_cond, &c->state_lock, &ts);
		pthread_mutex_unlock(&c->state_lock);
		pthread_mutex_lock(&tq->send_lock);
	}
	pthread_mutex_unlock(&tq->send_lock);
	return -EIO;
}
