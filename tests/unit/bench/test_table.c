// SPDX-License-Identifier: MIT
/*
 * bench/table.c's --only: one case, or several separated by '|' (run side
 * by side, round by round: `bench_tcp --only 'rr-tcp-ram|rr-inproc-ram'`);
 * a list that names a case that is not there, names one twice or has an
 * empty name is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../../bench/table.h"

static const struct table_case cases[] = {
	{ .name = "rr-tcp-ram" }, { .name = "rr-inproc-ram" }, { .name = "rr-tcp" },
};
static const struct table t = { .cases = cases, .nr_cases = 3 };

static void test_picks(void **state)
{
	(void)state;
	assert_true(table_picks(NULL, "rr-tcp"));
	assert_true(table_picks("rr-tcp", "rr-tcp"));
	assert_false(table_picks("rr-tcp", "rr-tcp-ram"));
	assert_false(table_picks("rr-tcp-ram", "rr-tcp"));
	assert_true(table_picks("rr-tcp-ram|rr-inproc-ram", "rr-tcp-ram"));
	assert_true(table_picks("rr-tcp-ram|rr-inproc-ram", "rr-inproc-ram"));
	assert_false(table_picks("rr-tcp-ram|rr-inproc-ram", "rr-tcp"));
	assert_false(table_picks("rr-tcp-ram|rr-inproc-ram", "rr-inproc"));
}

static void test_only_ok(void **state)
{
	(void)state;
	assert_true(table_only_ok(&t, NULL));
	assert_true(table_only_ok(&t, "rr-tcp"));
	assert_true(table_only_ok(&t, "rr-tcp-ram|rr-inproc-ram"));
	assert_true(table_only_ok(&t, "rr-tcp|rr-tcp-ram|rr-inproc-ram"));
	assert_false(table_only_ok(&t, "rr-tcp-ram|rr-nowhere"));
	assert_false(table_only_ok(&t, "rr-tcp-ram|"));
	assert_false(table_only_ok(&t, "|rr-tcp-ram"));
	assert_false(table_only_ok(&t, "rr-tcp|rr-tcp"));
	assert_false(table_only_ok(&t, ""));
	assert_false(table_only_ok(&t, "rr"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_picks),
		cmocka_unit_test(test_only_ok),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
