/* SPDX-License-Identifier: MIT */
/*
 * quota.c: per-uid counts, the quota's EDQUOT, the reserve that only root
 * and the daemon's user may use (EUSERS, ENFILE), --limit's parsing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/core.h"
#include "server/ctl.h"

/* Neither root nor the test's own user (the daemon's, here). */
static uid_t other(unsigned k)
{
	uid_t u = 60000 + k;

	return u == geteuid() ? u + 1000 : u;
}

static void test_quota_per_uid(void **state)
{
	struct srv_daemon d = { 0 };
	struct srv_limits lim = srv_limits_default;

	(void)state;
	lim.max[SRV_RES_RING] = 3;
	assert_int_equal(srv_quota_init(&d, &lim), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(srv_quota_charge(&d, other(1), SRV_RES_RING, 1), 0);
	assert_int_equal(srv_quota_charge(&d, other(1), SRV_RES_RING, 1), -EDQUOT);
	/* another user has its own quota */
	assert_int_equal(srv_quota_charge(&d, other(2), SRV_RES_RING, 1), 0);
	assert_int_equal(srv_quota_held(&d, other(1), SRV_RES_RING), 3);
	srv_quota_uncharge(&d, other(1), SRV_RES_RING, 1);
	assert_int_equal(srv_quota_charge(&d, other(1), SRV_RES_RING, 1), 0);
	/* root and the daemon's user have none */
	for (int i = 0; i < 10; i++) {
		assert_int_equal(srv_quota_charge(&d, 0, SRV_RES_RING, 1), 0);
		assert_int_equal(srv_quota_charge(&d, geteuid(), SRV_RES_RING, 1), 0);
	}
	/* giving back more than held is clamped, never wraps */
	srv_quota_uncharge(&d, other(2), SRV_RES_RING, 5);
	assert_int_equal(srv_quota_held(&d, other(2), SRV_RES_RING), 0);
	srv_quota_free(&d);
	/* without accounting nothing is refused */
	assert_int_equal(srv_quota_charge(&d, other(1), SRV_RES_RING, 1000), 0);
}

static void test_quota_reserve(void **state)
{
	struct srv_daemon d = { 0 };
	struct srv_limits lim = srv_limits_default;
	unsigned got = 0;

	(void)state;
	lim.max[SRV_RES_CONN] = 100;
	lim.max[SRV_RES_FD] = 3000;
	assert_int_equal(srv_quota_init(&d, &lim), 0);
	for (unsigned k = 0; k < 3; k++)
		for (unsigned i = 0; i < 100; i++)
			got += srv_quota_charge(&d, other(k), SRV_RES_CONN, 1) == 0;
	assert_int_equal(got, SRV_MAX_CLIENTS - SRV_RESERVE_CONNS);
	assert_int_equal(srv_quota_charge(&d, other(3), SRV_RES_CONN, 1), -EUSERS);
	assert_int_equal(srv_quota_charge(&d, 0, SRV_RES_CONN, 1), 0);
	assert_int_equal(srv_quota_charge(&d, geteuid(), SRV_RES_CONN, 1), 0);
	assert_int_equal(srv_quota_charge(&d, other(4), SRV_RES_FD, 3000), 0);
	assert_int_equal(srv_quota_charge(&d, other(5), SRV_RES_FD,
					  UCMD_MAX_FILES - SRV_RESERVE_FDS - 3000 + 1), -ENFILE);
	assert_int_equal(srv_quota_charge(&d, 0, SRV_RES_FD, SRV_RESERVE_FDS), 0);
	srv_quota_free(&d);
}

static void test_limits_parse(void **state)
{
	struct srv_limits lim = srv_limits_default;

	(void)state;
	assert_int_equal(srv_limits_parse("conns=4,fds=5,rings=6,regions=7,sqpoll=0", &lim), 0);
	assert_int_equal(lim.max[SRV_RES_CONN], 4);
	assert_int_equal(lim.max[SRV_RES_FD], 5);
	assert_int_equal(lim.max[SRV_RES_RING], 6);
	assert_int_equal(lim.max[SRV_RES_REGION], 7);
	assert_int_equal(lim.max[SRV_RES_SPIN], 0);
	assert_int_equal(srv_limits_parse("", &lim), -EINVAL);
	assert_int_equal(srv_limits_parse("conns", &lim), -EINVAL);
	assert_int_equal(srv_limits_parse("conns=", &lim), -EINVAL);
	assert_int_equal(srv_limits_parse("conns=-1", &lim), -EINVAL);
	assert_int_equal(srv_limits_parse("conns=1x", &lim), -EINVAL);
	assert_int_equal(srv_limits_parse("threads=1", &lim), -EINVAL);
	assert_int_equal(srv_limits_parse("conns=1,,fds=2", &lim), 0);
	assert_int_equal(srv_limits_parse("fds=99999999", &lim), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quota_per_uid),
		cmocka_unit_test(test_quota_reserve),
		cmocka_unit_test(test_limits_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
