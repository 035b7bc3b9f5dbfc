/* SPDX-License-Identifier: MIT */
/*
 * A SQPOLL ring's poller (uring_sqpoll.c): the preload's thread that takes
 * what the program publishes in its SQ, as Linux's SQ thread does, so that
 * its own descriptors and raw copies of devices are looked at as an enter's
 * SQEs are.
 */
#ifndef UCMD_PRELOAD_URING_SQPOLL_H
#define UCMD_PRELOAD_URING_SQPOLL_H

#include "client/client.h"

/*
 * Submit n SQEs of the program's SQ as a submitting enter would: how many,
 * or -errno (-ENOTCONN: the ring is gone, the poller ends).
 */
typedef long (*pl_sqpoll_submit_fn)(void *ctx, unsigned n);

/*
 * Start ring's poller (a SQPOLL ring with a program's SQ, dc_psq_polled):
 * it polls for idle_ms after its last SQE (the daemon's bound: 1 ms when 0,
 * 100 ms at most), then sleeps with IORING_SQ_NEED_WAKEUP set. 0 or -errno.
 */
int pl_sqpoll_start(struct ucmd_ring *ring, unsigned idle_ms, pl_sqpoll_submit_fn submit,
		    void *ctx);

/*
 * io_uring_enter on such a ring, from any process holding it: wake the
 * poller (IORING_ENTER_SQ_WAKEUP), wait for room in the program's SQ
 * (IORING_ENTER_SQ_WAIT; not once the ring is gone).
 */
void pl_sqpoll_enter(struct ucmd_ring *ring, unsigned flags);

#endif
