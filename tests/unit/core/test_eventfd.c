/* SPDX-License-Identifier: MIT */
/*
 * ucmd_register_eventfd: the eventfd is signalled when CQEs are posted,
 * also for a completion found on another thread, not while
 * IORING_CQ_EVENTFD_DISABLED is set; Linux's errors for the rest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <cmocka.h>

#include "parity.h"
#include "testdev.h"

static uint64_t drain(int efd)
{
	uint64_t v = 0;

	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;	/* EAGAIN: not signalled */
	return v;
}

static void test_signalled(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct cqe_copy c;
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	(void)state;
	assert_true(efd >= 0);
	ring_setup(e, &r, 8, 0);
	assert_int_equal(ucmd_register_eventfd(&r, efd), 0);
	assert_int_equal(drain(efd), 0);
	p_nop(&r, 1, 0);
	assert_int_equal(submit_one(&r, &c), 0);
	assert_true(drain(efd) >= 1);
	/* the application turned notifications off */
	__atomic_fetch_or(r.cq.kflags, IORING_CQ_EVENTFD_DISABLED, __ATOMIC_RELEASE);
	p_nop(&r, 2, 0);
	assert_int_equal(submit_one(&r, &c), 0);
	assert_int_equal(drain(efd), 0);
	__atomic_fetch_and(r.cq.kflags, ~IORING_CQ_EVENTFD_DISABLED, __ATOMIC_RELEASE);
	assert_int_equal(ucmd_unregister_eventfd(&r), 0);
	p_nop(&r, 3, 0);
	assert_int_equal(submit_one(&r, &c), 0);
	assert_int_equal(drain(efd), 0);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
	close(efd);
}

/* A completion from a device thread: poll the eventfd, then the CQE is there. */
static void test_remote_completion(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	struct io_uring_cqe *cqe;
	int efd = eventfd(0, EFD_CLOEXEC), fd;
	struct pollfd pfd = { .fd = efd, .events = POLLIN };

	(void)state;
	td_register(e);
	fd = ucmd_open(e, "tdev", O_RDWR);
	ring_setup(e, &r, 8, IORING_SETUP_SQPOLL);
	assert_int_equal(ucmd_register_eventfd(&r, efd), 0);
	td_prep(&r, fd, TD_OP_QUEUE, 1, 9);
	assert_int_equal(ucmd_submit(&r), 1);
	while (td_nr_queued() == 0)
		usleep(100);
	td_complete_queued();
	/* the SQPOLL thread posts the CQE and signals: no enter needed to learn of it */
	assert_int_equal(poll(&pfd, 1, -1), 1);
	assert_int_equal(ucmd_wait_cqe(&r, &cqe), 0);
	assert_int_equal(cqe->res, 9);
	ucmd_cqe_seen(&r, cqe);
	ucmd_queue_exit(&r);
	ucmd_close(e, fd);
	ucmd_engine_free(e);
	close(efd);
}

static void test_errors(void **state)
{
	struct ucmd_engine *e = ucmd_engine_new();
	struct ucmd_ring r;
	int efd = eventfd(0, EFD_CLOEXEC), pfd[2];

	(void)state;
	assert_int_equal(pipe(pfd), 0);
	ring_setup(e, &r, 8, 0);
	assert_int_equal(ucmd_unregister_eventfd(&r), -ENXIO);
	assert_int_equal(ucmd_register_eventfd(&r, pfd[0]), -EINVAL);
	assert_int_equal(ucmd_register_eventfd(&r, 100000), -EBADF);
	assert_int_equal(ucmd_register_eventfd(&r, efd), 0);
	assert_int_equal(ucmd_register_eventfd(&r, efd), -EBUSY);
	/* the ring holds its own reference: closing ours changes nothing */
	close(efd);
	ucmd_queue_exit(&r);
	ucmd_engine_free(e);
	close(pfd[0]);
	close(pfd[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signalled),
		cmocka_unit_test(test_remote_completion),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
