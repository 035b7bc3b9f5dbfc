/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "core/core.h"
#include "testdev.h"

#define TD_MAX_LOG 8192
#define TD_MAX_QUEUED 1024

static pthread_mutex_t td_lock = PTHREAD_MUTEX_INITIALIZER;
static struct td_log td_log[TD_MAX_LOG];
static unsigned td_nlog;
static struct io_uring_cmd *td_queued[TD_MAX_QUEUED];
static unsigned td_nqueued;
static struct io_uring_cmd *td_polled[TD_MAX_QUEUED];
static unsigned td_npolled;
static unsigned td_npolls;

void td_reset(void)
{
	pthread_mutex_lock(&td_lock);
	td_nlog = 0;
	td_nqueued = 0;
	td_npolled = 0;
	td_npolls = 0;
	pthread_mutex_unlock(&td_lock);
}

static int td_uring_cmd(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	struct td_cmd c;
	int ret;

	memcpy(&c, io_uring_sqe_cmd(cmd->sqe), sizeof(c));
	pthread_mutex_lock(&td_lock);
	if (td_nlog < TD_MAX_LOG)
		td_log[td_nlog++] = (struct td_log){ c.id, issue_flags };
	switch (cmd->cmd_op) {
	case TD_OP_OK:
		ret = (int)c.value;
		break;
	case TD_OP_FAIL:
		ret = -EIO;
		break;
	case TD_OP_QUEUE:
		memcpy(cmd->pdu, &c.value, sizeof(c.value));
		td_queued[td_nqueued++] = cmd;
		ret = -EIOCBQUEUED;
		break;
	case TD_OP_EAGAIN:
		ret = (issue_flags & IO_URING_F_NONBLOCK) ? -EAGAIN : (int)c.value;
		break;
	case TD_OP_POLLED:
		memcpy(cmd->pdu, &c.value, sizeof(c.value));
		td_polled[td_npolled++] = cmd;
		ret = -EIOCBQUEUED;
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	pthread_mutex_unlock(&td_lock);
	return ret;
}

static int td_uring_cmd_iopoll(struct io_uring_cmd *cmd)
{
	struct io_uring_cmd *done[TD_MAX_QUEUED];
	unsigned n;

	(void)cmd;
	pthread_mutex_lock(&td_lock);
	td_npolls++;
	n = td_npolled;
	memcpy(done, td_polled, n * sizeof(done[0]));
	td_npolled = 0;
	pthread_mutex_unlock(&td_lock);
	for (unsigned i = 0; i < n; i++) {
		int64_t v;
		memcpy(&v, done[i]->pdu, sizeof(v));
		io_uring_cmd_done(done[i], (long)v, 0);
	}
	return (int)n;
}

static const struct ucmd_file_ops td_fops = {
	.name = "tdev",
	.uring_cmd = td_uring_cmd,
	.uring_cmd_iopoll = td_uring_cmd_iopoll,
};

static const struct ucmd_file_ops td_fops_nopoll = {
	.name = "tdev_nopoll",
	.uring_cmd = td_uring_cmd,
};

void td_register(struct ucmd_engine *e)
{
	assert_int_equal(engine_add_device(e, "tdev", &td_fops, NULL), 0);
	assert_int_equal(engine_add_device(e, "tdev_nopoll", &td_fops_nopoll, NULL), 0);
	td_reset();
}

unsigned td_log_get(struct td_log *out, unsigned max)
{
	pthread_mutex_lock(&td_lock);
	unsigned n = td_nlog < max ? td_nlog : max;
	memcpy(out, td_log, n * sizeof(*out));
	pthread_mutex_unlock(&td_lock);
	return n;
}

unsigned td_nr_issued(void)
{
	pthread_mutex_lock(&td_lock);
	unsigned n = td_nlog;
	pthread_mutex_unlock(&td_lock);
	return n;
}

unsigned td_nr_queued(void)
{
	pthread_mutex_lock(&td_lock);
	unsigned n = td_nqueued;
	pthread_mutex_unlock(&td_lock);
	return n;
}

unsigned td_nr_polls(void)
{
	pthread_mutex_lock(&td_lock);
	unsigned n = td_npolls;
	pthread_mutex_unlock(&td_lock);
	return n;
}

static void td_done_cb(struct io_uring_cmd *cmd, unsigned issue_flags)
{
	int64_t v;

	(void)issue_flags;
	memcpy(&v, cmd->pdu, sizeof(v));
	io_uring_cmd_done(cmd, (long)v, 0);
}

static void *td_completer(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&td_lock);
	unsigned n = td_nqueued;
	struct io_uring_cmd *cmds[TD_MAX_QUEUED];
	memcpy(cmds, td_queued, n * sizeof(cmds[0]));
	td_nqueued = 0;
	pthread_mutex_unlock(&td_lock);
	/* As a device's interrupt thread would. */
	for (unsigned i = 0; i < n; i++)
		io_uring_cmd_complete_in_task(cmds[i], td_done_cb);
	return NULL;
}

unsigned td_complete_some(unsigned max)
{
	struct io_uring_cmd *cmds[TD_MAX_QUEUED];
	unsigned n;

	pthread_mutex_lock(&td_lock);
	n = td_nqueued < max ? td_nqueued : max;
	memcpy(cmds, td_queued, n * sizeof(cmds[0]));
	memmove(td_queued, td_queued + n, (td_nqueued - n) * sizeof(cmds[0]));
	td_nqueued -= n;
	pthread_mutex_unlock(&td_lock);
	for (unsigned i = 0; i < n; i++)
		io_uring_cmd_complete_in_task(cmds[i], td_done_cb);
	return n;
}

void td_complete_queued(void)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, td_completer, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
}

/* ---- ring helpers ---- */

void td_ring_init(struct ucmd_engine *e, struct ucmd_ring *ring, unsigned entries,
		  unsigned flags)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	p.flags = flags;
	assert_int_equal(ucmd_queue_init_engine(e, entries, ring, &p), 0);
}

struct io_uring_sqe *td_sqe(struct ucmd_ring *ring)
{
	struct io_uring_sqe *sqe = ucmd_get_sqe(ring);

	assert_non_null(sqe);
	memset(sqe, 0, sizeof(*sqe) << ucmd_sqe_shift(ring));
	return sqe;
}

struct io_uring_sqe *td_prep(struct ucmd_ring *ring, int fd, int op, uint64_t id, int64_t value)
{
	struct io_uring_sqe *sqe = td_sqe(ring);
	struct td_cmd c = { id, value };

	ucmd_prep_uring_cmd(sqe, op, fd);
	memcpy(ucmd_sqe_cmd(sqe), &c, sizeof(c));
	sqe->user_data = id;
	return sqe;
}

void td_reap(struct ucmd_ring *ring, struct td_cqe *out, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct io_uring_cqe *cqe = NULL;
		assert_int_equal(ucmd_wait_cqe(ring, &cqe), 0);
		assert_non_null(cqe);
		out[i].user_data = cqe->user_data;
		out[i].res = cqe->res;
		out[i].flags = cqe->flags;
		ucmd_cqe_seen(ring, cqe);
	}
}

unsigned td_reap_ready(struct ucmd_ring *ring, struct td_cqe *out, unsigned max)
{
	struct io_uring_cqe *cqe = NULL;
	unsigned n = 0;

	while (n < max && ucmd_peek_cqe(ring, &cqe) == 0) {
		out[n].user_data = cqe->user_data;
		out[n].res = cqe->res;
		out[n].flags = cqe->flags;
		ucmd_cqe_seen(ring, cqe);
		n++;
	}
	return n;
}

unsigned td_reap_bounded(struct ucmd_ring *ring, struct td_cqe *out, unsigned n)
{
	unsigned got = 0, idle_ms = 0;

	while (got < n && idle_ms < 10000) {
		unsigned k = td_reap_ready(ring, out + got, n - got);
		if (k) {
			got += k;
			idle_ms = 0;
			continue;
		}
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
		idle_ms++;
	}
	return got;
}

const struct td_cqe *td_find(const struct td_cqe *c, unsigned n, uint64_t user_data)
{
	for (unsigned i = 0; i < n; i++)
		if (c[i].user_data == user_data)
			return &c[i];
	return NULL;
}
