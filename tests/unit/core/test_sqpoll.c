/* SPDX-License-Identifier: MIT */
/*
 * IORING_SETUP_SQPOLL: the polling thread consumes the SQ without the
 * application entering, goes to sleep after sq_thread_idle with
 * IORING_SQ_NEED_WAKEUP set, and ucmd_submit() wakes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "testdev.h"

struct fx {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int fd;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct io_uring_params p;

	f->e = ucmd_engine_new();
	assert_non_null(f->e);
	f->fd = ucmd_open(f->e, "null", O_RDWR);
	assert_true(f->fd >= 0);
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 10;
	assert_int_equal(ucmd_queue_init_engine(f->e, 64, &f->ring, &p), 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;

	ucmd_queue_exit(&f->ring);
	ucmd_engine_free(f->e);
	free(f);
	return 0;
}

static bool need_wakeup(struct ucmd_ring *ring)
{
	return __atomic_load_n(ring->sq.kflags, __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP;
}

/* Bounded: up to ~10 s for the poller to go to sleep. */
static bool wait_need_wakeup(struct ucmd_ring *ring)
{
	for (unsigned i = 0; i < 10000; i++) {
		if (need_wakeup(ring))
			return true;
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	return need_wakeup(ring);
}

/* Only shared memory: read what the poller posted, never enter. */
static unsigned drain_cq(struct ucmd_ring *ring, unsigned char *seen, unsigned n)
{
	struct io_uring_cqe *cqe;
	unsigned head, k = 0;

	ucmd_for_each_cqe(ring, head, cqe) {
		assert_true(cqe->user_data < n);
		assert_int_equal(cqe->res, 0);
		seen[cqe->user_data]++;
		k++;
	}
	ucmd_cq_advance(ring, k);
	return k;
}

static void test_thousands_without_enter(void **state)
{
	struct fx *f = *state;
	enum { N = 5000 };
	unsigned char *seen = calloc(N, 1);
	unsigned queued = 0, done = 0, spins = 0;

	while (done < N) {
		bool progress = false;
		while (queued < N) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&f->ring);
			if (!sqe)
				break;
			if (queued % 2)
				ucmd_prep_nop(sqe);
			else
				ucmd_prep_uring_cmd(sqe, 0, f->fd);
			sqe->user_data = queued++;
			progress = true;
		}
		/* publishes the tail; enters only if the poller is asleep */
		assert_true(ucmd_submit(&f->ring) >= 0);
		unsigned k = drain_cq(&f->ring, seen, N);
		done += k;
		progress |= k != 0;
		if (!progress) {
			sched_yield();
			assert_true(++spins < 100000000u);
		}
	}
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(ucmd_cq_ready(&f->ring), 0);
	free(seen);
}

static void test_idle_and_wakeup(void **state)
{
	struct fx *f = *state;
	struct io_uring_cqe *cqe;

	/* nothing to do for longer than sq_thread_idle: the poller sleeps */
	assert_true(wait_need_wakeup(&f->ring));
	for (unsigned round = 0; round < 3; round++) {
		struct io_uring_sqe *sqe = ucmd_get_sqe(&f->ring);
		assert_non_null(sqe);
		ucmd_prep_nop(sqe);
		sqe->user_data = 77 + round;
		/* ucmd_submit sees NEED_WAKEUP and wakes it */
		assert_int_equal(ucmd_submit(&f->ring), 1);
		/* waiting from the application thread works too */
		assert_int_equal(ucmd_wait_cqe(&f->ring, &cqe), 0);
		assert_int_equal(cqe->user_data, 77 + round);
		assert_int_equal(cqe->res, 0);
		ucmd_cqe_seen(&f->ring, cqe);
		assert_true(wait_need_wakeup(&f->ring));
	}
}

static void test_wait_from_app(void **state)
{
	struct fx *f = *state;
	struct io_uring_cqe *cqe;

	for (unsigned round = 0; round < 200; round++) {
		for (unsigned i = 0; i < 8; i++) {
			struct io_uring_sqe *sqe = ucmd_get_sqe(&f->ring);
			assert_non_null(sqe);
			ucmd_prep_uring_cmd(sqe, 0, f->fd);
			sqe->user_data = i;
		}
		/*
		 * On an SQPOLL ring the count is what was still in the SQ when
		 * it was published (liburing's too): the poller may already
		 * have taken some. The CQEs below are what proves submission.
		 */
		int n = ucmd_submit_and_wait(&f->ring, 8);
		assert_true(n >= 0 && n <= 8);
		assert_int_equal(ucmd_wait_cqe_nr(&f->ring, &cqe, 8), 0);
		assert_true(ucmd_cq_ready(&f->ring) >= 8);
		ucmd_cq_advance(&f->ring, 8);
	}
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_thousands_without_enter),
		T(test_idle_and_wakeup),
		T(test_wait_from_app),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
