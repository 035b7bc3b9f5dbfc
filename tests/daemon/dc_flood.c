/* SPDX-License-Identifier: MIT */
/*
 * flood: submit NOPs and never reap, until the daemon stops taking SQEs
 * (its CQ and its bounded overflow list for this client are full: the SQ
 * head stops moving) or --limit SQEs. Bounded: a head that does not move
 * for --stall-ms is the backpressure looked for, never a reason to wait
 * on. Then, unless --no-reap (exit with everything held, for the kill
 * tests), reap: every consumed SQE must give exactly one CQE, except those
 * the CQ's overflow counter says were dropped (Linux's rule when even the
 * overflow list is full).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dc.h"

static unsigned sq_head(const struct ucmd_ring *r)
{
	return __atomic_load_n(r->sq.khead, __ATOMIC_ACQUIRE);
}

int dc_flood(const struct dc_opts *o)
{
	struct dc c;
	char nb[32];
	uint64_t queued = 0, reaped = 0;
	unsigned head0, last_head;
	double last_move;
	bool pushed_back = false;
	int ret;

	ret = dc_open(&c, o, o->entries);
	if (ret)
		dc_die("flood: connecting: %s", dc_res_name(ret, nb, sizeof(nb)));
	head0 = last_head = sq_head(&c.ring);
	last_move = dc_now();
	while (queued < o->limit) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&c.ring);
		if (sqe) {
			ucmd_prep_nop(sqe);
			sqe->user_data = queued++;
			continue;
		}
		/* SQ full: publish it (wakes the daemon) and see whether it moves */
		ret = ucmd_submit(&c.ring);
		if (ret < 0)
			dc_die("flood: submit: %s", dc_res_name(ret, nb, sizeof(nb)));
		unsigned h = sq_head(&c.ring);
		if (h != last_head) {
			last_head = h;
			last_move = dc_now();
		} else if ((dc_now() - last_move) * 1000 >= o->stall_ms) {
			pushed_back = true;
			break;
		}
		usleep(200);
	}
	ucmd_submit(&c.ring);
	unsigned consumed = sq_head(&c.ring) - head0;
	unsigned cq_ready = ucmd_cq_ready(&c.ring);
	bool ovf_flag = __atomic_load_n(c.ring.sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_CQ_OVERFLOW;
	printf("flood: %llu queued, %u consumed, %u in the CQ, overflow flag %d, "
	       "dropped %u, %s\n", (unsigned long long)queued, consumed, cq_ready, ovf_flag,
	       *c.ring.cq.koverflow, pushed_back ? "pushed back" : "limit reached");
	fflush(stdout);
	if (o->no_reap) {
		printf("flood: exiting without reaping\n");
		fflush(stdout);
		_exit(0);
	}

	/* reap: the consumed ones come (the overflow list drains as we reap) */
	double last_cqe = dc_now();
	while (reaped + *c.ring.cq.koverflow < queued) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 100000000 };
		ret = ucmd_wait_cqe_timeout(&c.ring, &cqe, &ts);
		if (ret == -ETIME) {
			/* nothing for stall_ms more than once: the rest is lost */
			if ((dc_now() - last_cqe) * 1000 >= 5.0 * o->stall_ms)
				break;
			ucmd_submit(&c.ring);
			continue;
		}
		if (ret < 0)
			dc_die("flood: wait: %s", dc_res_name(ret, nb, sizeof(nb)));
		if (cqe->user_data >= queued)
			dc_die("flood: CQE for user_data %llu never submitted",
			       (unsigned long long)cqe->user_data);
		ucmd_cqe_seen(&c.ring, cqe);
		reaped++;
		last_cqe = dc_now();
	}
	unsigned dropped = *c.ring.cq.koverflow;
	printf("flood: reaped %llu, dropped %u of %llu\n", (unsigned long long)reaped, dropped,
	       (unsigned long long)queued);
	dc_close(&c);
	if (reaped + dropped != queued)
		dc_die("flood: %llu SQEs without a CQE", (unsigned long long)(queued - reaped - dropped));
	return 0;
}
