/* SPDX-License-Identifier: MIT */
/*
 * Whose /dev and /sys a thread's path reaches (src/preload/view.c): the
 * one verdict of ucmd-supervise (sv_tview.c) and the preload (paths.c).
 * A thread with our root and mounts is ours whatever the path; else a
 * path under /dev or /sys is ours through its root only where that top
 * is our own, and any other path is its own. The preload's side: no look
 * until the process may have left our view, then its own "/" and top
 * against the reference it started with (UCMD_EXEC_VIEW).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "preload/preload.h"

static int looks;	/* the preload side's stats, counted */

long pl_raw_syscall(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
	long r;

	if (nr == __NR_newfstatat)
		looks++;
	r = syscall(nr, a0, a1, a2, a3, a4, a5);
	return r < 0 ? -errno : r;
}

static const char *asked;

static bool top_yes(const char *top, void *arg)
{
	asked = top;
	return arg != NULL;
}

static void test_verdict(void **state)
{
	int yes;

	(void)state;
	asked = NULL;
	assert_int_equal(pl_view_of("/dev/ng0n1", true, top_yes, NULL), PL_VIEW_OURS);
	assert_null(asked);	/* our view: no top looked at */
	assert_int_equal(pl_view_of("/dev/ng0n1", false, top_yes, &yes), PL_VIEW_THROUGH);
	assert_string_equal(asked, "/dev");
	assert_int_equal(pl_view_of("/sys/block/nvme0n1", false, top_yes, &yes), PL_VIEW_THROUGH);
	assert_string_equal(asked, "/sys");
	assert_int_equal(pl_view_of("/sys/block/nvme0n1", false, top_yes, NULL), PL_VIEW_OWN);
	asked = NULL;
	assert_int_equal(pl_view_of("/devices/x", false, top_yes, &yes), PL_VIEW_OWN);
	assert_int_equal(pl_view_of("/tmp/dev/ng0n1", false, top_yes, &yes), PL_VIEW_OWN);
	assert_null(asked);
	assert_int_equal(pl_view_of("/dev", false, top_yes, &yes), PL_VIEW_THROUGH);
}

/* A reference that is not this process's "/" (the start of an exec that chrooted since). */
static void test_here(void **state)
{
	struct stat dev, sys;
	char ref[256];

	(void)state;
	if (stat("/dev", &dev) || stat("/sys", &sys))
		skip();
	/* never left: ours, and not one look */
	unsetenv(PL_ENV_VIEW);
	pl_view_init();
	assert_non_null(getenv(PL_ENV_VIEW));
	assert_false(pl_view_left());
	looks = 0;
	assert_int_equal(pl_view_here("/dev/ng0n1"), PL_VIEW_OURS);
	assert_int_equal(looks, 0);
	/* left, but "/" and /dev as they were: ours */
	pl_view_moved();
	assert_true(pl_view_left());
	assert_int_equal(pl_view_here("/dev/ng0n1"), PL_VIEW_OURS);
	assert_int_equal(pl_view_here("/tmp/x"), PL_VIEW_OURS);
	/* started under another root whose /dev is ours: through; whose /sys is not: its own */
	snprintf(ref, sizeof(ref), "1:2,%llx:%llx,3:4", (unsigned long long)dev.st_dev,
		 (unsigned long long)dev.st_ino);
	setenv(PL_ENV_VIEW, ref, 1);
	pl_view_init();
	assert_true(pl_view_left());
	assert_int_equal(pl_view_here("/dev/ng0n1"), PL_VIEW_THROUGH);
	assert_int_equal(pl_view_here("/sys/block/nvme0n1"), PL_VIEW_OWN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdict),
		cmocka_unit_test(test_here),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
