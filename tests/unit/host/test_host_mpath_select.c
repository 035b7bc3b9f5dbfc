/* SPDX-License-Identifier: MIT */
/*
 * Path choice of a multipath head (nvme_mpath_select), one test per
 * iopolicy as Linux's nvme_find_path decides: ANA optimized before
 * non-optimized, inaccessible / persistent loss / change and a controller
 * that is not live never; numa the first usable optimized path;
 * round-robin the next one after the last; queue-depth the least busy.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nvme/host/mpath_select.h"

#define OPT	NVME_ANA_STATE_OPTIMIZED
#define NONOPT	NVME_ANA_STATE_NONOPTIMIZED
#define INACC	NVME_ANA_STATE_INACCESSIBLE
#define LOSS	NVME_ANA_STATE_PERSISTENT_LOSS
#define CHANGE	NVME_ANA_STATE_CHANGE

static int pick(const struct nvme_path_view *p, unsigned n, enum nvme_iopolicy pol, int last)
{
	return nvme_mpath_select(p, n, pol, last);
}

static void test_unusable_states(void **state)
{
	(void)state;
	for (int pol = NVME_IOPOLICY_NUMA; pol <= NVME_IOPOLICY_QD; pol++) {
		struct nvme_path_view p[4] = {
			{ true, INACC, 0 }, { true, LOSS, 0 }, { true, CHANGE, 0 },
			{ false, OPT, 0 },	/* optimized, but its controller is reconnecting */
		};

		assert_int_equal(pick(p, 4, pol, -1), -1);
		assert_int_equal(pick(p, 4, pol, 3), -1);
		/* one non-optimized path left: taken whatever the policy */
		p[1].ana_state = NONOPT;
		assert_int_equal(pick(p, 4, pol, -1), 1);
		assert_int_equal(pick(p, 4, pol, 1), 1);
		assert_int_equal(pick(p, 4, pol, 0), 1);
	}
}

static void test_numa(void **state)
{
	struct nvme_path_view p[3] = { { true, NONOPT, 0 }, { true, OPT, 5 }, { true, OPT, 0 } };

	(void)state;
	/* the first usable optimized path, whatever the depths and the last choice */
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_NUMA, -1), 1);
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_NUMA, 1), 1);
	p[1].ana_state = INACC;
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_NUMA, 1), 2);
	p[2].live = false;
	/* no optimized path: the non-optimized one */
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_NUMA, -1), 0);
}

static void test_round_robin(void **state)
{
	struct nvme_path_view p[3] = { { true, OPT, 0 }, { true, OPT, 0 }, { true, OPT, 0 } };
	int last = -1, seen[3] = { 0 };

	(void)state;
	for (int i = 0; i < 9; i++) {
		last = pick(p, 3, NVME_IOPOLICY_RR, last);
		assert_true(last >= 0);
		seen[last]++;
	}
	assert_int_equal(seen[0], 3);
	assert_int_equal(seen[1], 3);
	assert_int_equal(seen[2], 3);
	/* after path 0: the next optimized one, skipping an inaccessible path */
	p[1].ana_state = INACC;
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_RR, 0), 2);
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_RR, 2), 0);
	/* an optimized path after a non-optimized one, before falling back */
	p[1].ana_state = NONOPT;
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_RR, 0), 2);
	/* only the last path optimized: it stays, the non-optimized ones wait */
	p[0].ana_state = NONOPT;
	p[2].ana_state = NONOPT;
	p[1].ana_state = OPT;
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_RR, 1), 1);
	/* the last path gone inaccessible: a non-optimized one */
	p[1].ana_state = INACC;
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_RR, 1), 2);
	/* the last path non-optimized and nothing else usable: it stays */
	p[0].live = false;
	p[2].ana_state = CHANGE;
	p[1].ana_state = NONOPT;
	assert_int_equal(pick(p, 3, NVME_IOPOLICY_RR, 1), 1);
}

static void test_queue_depth(void **state)
{
	struct nvme_path_view p[4] = {
		{ true, OPT, 7 }, { true, OPT, 3 }, { true, NONOPT, 0 }, { true, OPT, 4 },
	};

	(void)state;
	/* the least busy optimized path, though a non-optimized one is idle */
	assert_int_equal(pick(p, 4, NVME_IOPOLICY_QD, -1), 1);
	p[3].nr_active = 0;
	assert_int_equal(pick(p, 4, NVME_IOPOLICY_QD, 1), 3);
	/* an idle optimized path is taken at once, the first of them */
	p[1].nr_active = 0;
	assert_int_equal(pick(p, 4, NVME_IOPOLICY_QD, -1), 1);
	/* no optimized path usable: the least busy non-optimized */
	p[0].ana_state = INACC;
	p[1].live = false;
	p[3].ana_state = NONOPT;
	p[3].nr_active = 2;
	p[2].nr_active = 5;
	assert_int_equal(pick(p, 4, NVME_IOPOLICY_QD, -1), 3);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(nvme_iopolicy_parse("numa"), NVME_IOPOLICY_NUMA);
	assert_int_equal(nvme_iopolicy_parse("round-robin"), NVME_IOPOLICY_RR);
	assert_int_equal(nvme_iopolicy_parse("queue-depth"), NVME_IOPOLICY_QD);
	assert_int_equal(nvme_iopolicy_parse("rr"), -EINVAL);
	assert_int_equal(nvme_iopolicy_parse(NULL), -EINVAL);
	assert_string_equal(nvme_iopolicy_name(NVME_IOPOLICY_QD), "queue-depth");
}

static void test_path_errors(void **state)
{
	(void)state;
	assert_true(nvme_mpath_is_path_error(0x302));	/* ANA inaccessible */
	assert_true(nvme_mpath_is_path_error(0x301));
	assert_true(nvme_mpath_is_path_error(0x303));
	assert_true(nvme_mpath_is_path_error(0x370));	/* host path error */
	assert_true(nvme_mpath_is_path_error(-ENOTCONN));
	assert_false(nvme_mpath_is_path_error(0x281));	/* unrecovered read: media */
	assert_false(nvme_mpath_is_path_error(0x2));
	assert_false(nvme_mpath_is_path_error(-EINVAL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unusable_states),
		cmocka_unit_test(test_numa),
		cmocka_unit_test(test_round_robin),
		cmocka_unit_test(test_queue_depth),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_path_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
