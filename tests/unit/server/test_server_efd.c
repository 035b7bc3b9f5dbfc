/* SPDX-License-Identifier: MIT */
/*
 * srv_efd_drain (src/server/efd.c): a doorbell eventfd the client shares,
 * and may have made blocking, is reset without waiting for anyone and with
 * one non-blocking read: no timer of the thread (the guard of a read that
 * could block) is needed for it.
 */
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "server/efd.h"

/* POSIX timers of this process: /proc/self/timers has an "ID:" line per timer. */
static int nr_timers(void)
{
	FILE *f = fopen("/proc/self/timers", "r");
	char line[256];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "ID:", 3);
	fclose(f);
	return n;
}

static void test_drain_blocking_efd(void **state)
{
	int fd = eventfd(0, EFD_CLOEXEC);	/* blocking, as a client may leave it */
	uint64_t v = 7;
	int before = nr_timers();

	(void)state;
	assert_true(fd >= 0);
	if (before < 0)
		skip();
	/* empty: returns at once (a blocking read would hang the test) */
	srv_efd_drain(fd);
	assert_int_equal(write(fd, &v, sizeof(v)), sizeof(v));
	srv_efd_drain(fd);
	srv_efd_drain(fd);
	/* drained: nothing left to read */
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };

		assert_int_equal(poll(&p, 1, 0), 0);
	}
	/* and without a timer: the guarded read made one for the thread */
	assert_int_equal(nr_timers(), before);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_blocking_efd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
