/* SPDX-License-Identifier: MIT */
/* IOSQE_ASYNC and -EAGAIN retries through the io-wq worker. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/file.h"
#include "testdev.h"

struct fx {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int null_fd, td_fd;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->e = ucmd_engine_new();
	assert_non_null(f->e);
	td_register(f->e);
	f->null_fd = ucmd_open(f->e, "null", O_RDWR);
	f->td_fd = ucmd_open(f->e, "tdev", O_RDWR);
	assert_true(f->null_fd >= 0 && f->td_fd >= 0);
	td_ring_init(f->e, &f->ring, 256, 0);
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

static void test_force_async(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[200];
	char buf[64];
	struct io_uring_sqe *sqe;

	for (unsigned i = 0; i < 100; i++) {
		sqe = td_sqe(&f->ring);
		ucmd_prep_nop(sqe);
		sqe->flags = IOSQE_ASYNC;
		sqe->user_data = 1000 + i;
		td_prep(&f->ring, f->td_fd, TD_OP_OK, 2000 + i, i)->flags = IOSQE_ASYNC;
	}
	assert_int_equal(ucmd_submit(&f->ring), 200);
	assert_int_equal(td_reap_bounded(&f->ring, c, 200), 200);
	for (unsigned i = 0; i < 100; i++) {
		assert_non_null(td_find(c, 200, 1000 + i));
		assert_int_equal(td_find(c, 200, 1000 + i)->res, 0);
		assert_non_null(td_find(c, 200, 2000 + i));
		assert_int_equal(td_find(c, 200, 2000 + i)->res, (int)i);
	}
	/* issued once each, by a worker, allowed to block */
	struct td_log log[100];
	assert_int_equal(td_log_get(log, 100), 100);
	for (unsigned i = 0; i < 100; i++) {
		assert_true(log[i].issue_flags & IO_URING_F_IOWQ);
		assert_false(log[i].issue_flags & IO_URING_F_NONBLOCK);
	}

	/* reads and writes too */
	sqe = td_sqe(&f->ring);
	ucmd_prep_write(sqe, f->null_fd, buf, sizeof(buf), 0);
	sqe->flags = IOSQE_ASYNC;
	sqe = td_sqe(&f->ring);
	ucmd_prep_read(sqe, f->null_fd, buf, sizeof(buf), 0);
	sqe->flags = IOSQE_ASYNC;
	sqe->user_data = 1;
	assert_int_equal(ucmd_submit(&f->ring), 2);
	td_reap(&f->ring, c, 2);
	assert_int_equal(td_find(c, 2, 0)->res, (int)sizeof(buf));
	assert_int_equal(td_find(c, 2, 1)->res, 0);
}

static void test_eagain_retried_blocking(void **state)
{
	struct fx *f = *state;
	enum { N = 150 };
	struct td_cqe c[N];

	for (unsigned i = 0; i < N; i++)
		td_prep(&f->ring, f->td_fd, TD_OP_EAGAIN, i, (int64_t)i * 3);
	assert_int_equal(ucmd_submit(&f->ring), N);
	assert_int_equal(td_reap_bounded(&f->ring, c, N), N);
	for (unsigned i = 0; i < N; i++) {
		const struct td_cqe *x = td_find(c, N, i);
		assert_non_null(x);
		assert_int_not_equal(x->res, -EAGAIN);
		assert_int_equal(x->res, (int)i * 3);
	}
	/* each was tried once non-blocking, then once from the worker */
	static struct td_log log[2 * N];
	assert_int_equal(td_log_get(log, 2 * N), 2 * N);
	for (unsigned i = 0; i < N; i++) {
		unsigned nb = 0, blk = 0;
		for (unsigned j = 0; j < 2 * N; j++) {
			if (log[j].id != i)
				continue;
			if (log[j].issue_flags & IO_URING_F_NONBLOCK) {
				assert_int_equal(blk, 0);	/* the non-blocking try came first */
				nb++;
			} else {
				assert_true(log[j].issue_flags & IO_URING_F_IOWQ);
				blk++;
			}
		}
		assert_int_equal(nb, 1);
		assert_int_equal(blk, 1);
	}
}

/* A chain whose members go to the worker keeps its order. */
static void test_async_chain(void **state)
{
	struct fx *f = *state;
	struct td_cqe c[4];

	td_prep(&f->ring, f->td_fd, TD_OP_EAGAIN, 1, 1)->flags = IOSQE_IO_LINK;
	td_prep(&f->ring, f->td_fd, TD_OP_OK, 2, 2)->flags = IOSQE_IO_LINK | IOSQE_ASYNC;
	td_prep(&f->ring, f->td_fd, TD_OP_FAIL, 3, 0)->flags = IOSQE_IO_LINK | IOSQE_ASYNC;
	td_prep(&f->ring, f->td_fd, TD_OP_OK, 4, 4);
	assert_int_equal(ucmd_submit(&f->ring), 4);
	assert_int_equal(td_reap_bounded(&f->ring, c, 4), 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(c[i].user_data, i + 1);
	assert_int_equal(c[0].res, 1);
	assert_int_equal(c[1].res, 2);
	assert_int_equal(c[2].res, -EIO);
	assert_int_equal(c[3].res, -ECANCELED);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_force_async),
		T(test_eagain_retried_blocking),
		T(test_async_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
