/* SPDX-License-Identifier: MIT */
/*
 * The ucmd peer: null uring_cmds on an engine's "null" device -- the
 * process's default engine, or one given (bench_daemon: an engine connected
 * to ucmdd).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "ucmd/daemon.h"
#include "ucmd/ucmd.h"
#include "null_bench.h"

struct ucmd_peer {
	struct ucmd_ring ring;
	struct ucmd_engine *e;
	int fd;
	bool polled;		/* a poller takes the SQEs: SQPOLL, or ucmdd's proxy */
};

struct ucmd_peer *ucmd_peer_new(unsigned entries)
{
	return ucmd_peer_new_engine(ucmd_engine_default(), entries);
}

struct ucmd_peer *ucmd_peer_new_engine(struct ucmd_engine *e, unsigned entries)
{
	struct ucmd_peer *p = calloc(1, sizeof(*p));
	struct io_uring_params params = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	int ret;

	if (!p)
		return NULL;
	p->e = e;
	p->fd = -1;
	p->polled = ucmd_engine_is_daemon(e);
	ret = ucmd_queue_init_engine(e, entries, &p->ring, &params);
	if (ret) {
		fprintf(stderr, "ucmd_queue_init_params: %s\n", strerror(-ret));
		free(p);
		return NULL;
	}
	p->fd = ucmd_open(e, "null", O_RDWR);
	if (p->fd < 0) {
		fprintf(stderr, "ucmd_open(null): %s\n", strerror(-p->fd));
		goto fail;
	}
	ret = ucmd_register_files(&p->ring, &p->fd, 1);
	if (ret) {
		fprintf(stderr, "ucmd_register_files: %s\n", strerror(-ret));
		goto fail;
	}
	return p;
fail:
	ucmd_peer_free(p);
	return NULL;
}

static void one_batch(struct ucmd_peer *p, unsigned batch)
{
	struct io_uring_cqe *cqe;
	unsigned head, seen = 0;
	int ret;

	for (unsigned i = 0; i < batch; i++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&p->ring);
		/* The ring is as deep as the batch and drained each time. */
		if (!sqe) {
			fprintf(stderr, "ucmd: SQ full\n");
			exit(1);
		}
		ucmd_prep_uring_cmd(sqe, 0, 0);	/* fixed file slot 0 */
		sqe->flags = IOSQE_FIXED_FILE;
		sqe->user_data = i;
	}
	ret = ucmd_submit_and_wait(&p->ring, batch);
	/*
	 * On a polled ring (SQPOLL, or any ring of a daemon engine, whose
	 * proxy thread polls) the count is, as liburing's, what the poller
	 * had not yet taken: less than the batch when it is quick. The CQEs
	 * below are what counts.
	 */
	if (ret < 0 || (ret != (int)batch && !p->polled && !(p->ring.flags & IORING_SETUP_SQPOLL))) {
		fprintf(stderr, "ucmd_submit_and_wait: %d of %u\n", ret, batch);
		exit(1);
	}
	ucmd_for_each_cqe(&p->ring, head, cqe) {
		if (cqe->res != 0) {
			fprintf(stderr, "ucmd: CQE res %d (%s)\n", cqe->res, strerror(-cqe->res));
			exit(1);
		}
		seen++;
	}
	if (seen != batch) {
		fprintf(stderr, "ucmd: %u CQEs for %u SQEs\n", seen, batch);
		exit(1);
	}
	ucmd_cq_advance(&p->ring, seen);
}

int64_t ucmd_peer_run(struct ucmd_peer *p, unsigned batch, enum bench_op op, double seconds,
		      double *elapsed)
{
	unsigned every = bench_check_every(batch);
	double start = bench_now(), now;
	int64_t ops = 0;

	if (op != BENCH_URING_CMD)
		return -EINVAL;
	do {
		for (unsigned i = 0; i < every; i++)
			one_batch(p, batch);
		ops += (int64_t)every * batch;
		now = bench_now();
	} while (now - start < seconds);
	*elapsed = now - start;
	return ops;
}

void ucmd_peer_free(struct ucmd_peer *p)
{
	if (!p)
		return;
	if (p->ring.ops)
		ucmd_queue_exit(&p->ring);
	if (p->fd >= 0)
		ucmd_close(p->e, p->fd);
	free(p);
}

int64_t ucmd_peer_run_n(struct ucmd_peer *p, unsigned batch, enum bench_op op, uint64_t n)
{
	if (op != BENCH_URING_CMD)
		return -EINVAL;
	for (uint64_t i = 0; i < n; i++)
		one_batch(p, batch);
	return (int64_t)(n * batch);
}
