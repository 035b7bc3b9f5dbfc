/* SPDX-License-Identifier: MIT */
/*
 * ucmd-supervise's access of the tree's files (src/preload/sv_access.c):
 * Linux's permission check for a thread's ids, as access(2) makes it,
 * against what stat shows. Each case is what Linux answers for a file of
 * that owner and mode (generic_permission): the owner's bits alone for the
 * owner, the group's for a member, the others' for the rest; then
 * CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "preload/sv.h"

#define OVERRIDE (1ull << 1)	/* CAP_DAC_OVERRIDE */
#define READ_SEARCH (1ull << 2)	/* CAP_DAC_READ_SEARCH */
#define ALL_CAPS 0x1ffffffffffull

static struct stat file(mode_t mode, uid_t uid, gid_t gid)
{
	struct stat st = { .st_mode = mode, .st_uid = uid, .st_gid = gid };

	return st;
}

/* A 0600 node of root's, as Linux's /dev/ng0n1: root may, a user that root dropped to may not. */
static void test_root_node(void **state)
{
	struct stat st = file(S_IFCHR | 0600, 0, 0);

	(void)state;
	assert_int_equal(sv_access_check(&st, R_OK | W_OK, 0, 0, NULL, 0, ALL_CAPS), 0);
	assert_int_equal(sv_access_check(&st, R_OK, 65534, 65534, NULL, 0, 0), -EACCES);
	assert_int_equal(sv_access_check(&st, W_OK, 65534, 65534, NULL, 0, 0), -EACCES);
	/* F_OK: the node is there, whoever asks */
	assert_int_equal(sv_access_check(&st, F_OK, 65534, 65534, NULL, 0, 0), 0);
	/* uid 0 without capabilities (access's real uid 0, an empty permitted set): the bits */
	assert_int_equal(sv_access_check(&st, R_OK, 0, 0, NULL, 0, 0), 0);
	assert_int_equal(sv_access_check(&st, X_OK, 0, 0, NULL, 0, 0), -EACCES);
	/* a user with CAP_DAC_OVERRIDE reads and writes it, but never executes a file without x bits */
	assert_int_equal(sv_access_check(&st, R_OK | W_OK, 1000, 1000, NULL, 0, OVERRIDE), 0);
	assert_int_equal(sv_access_check(&st, X_OK, 1000, 1000, NULL, 0, OVERRIDE), -EACCES);
	assert_int_equal(sv_access_check(&st, X_OK, 0, 0, NULL, 0, ALL_CAPS), -EACCES);
	/* CAP_DAC_READ_SEARCH: reading alone */
	assert_int_equal(sv_access_check(&st, R_OK, 1000, 1000, NULL, 0, READ_SEARCH), 0);
	assert_int_equal(sv_access_check(&st, R_OK | W_OK, 1000, 1000, NULL, 0, READ_SEARCH),
			 -EACCES);
}

/* The owner's bits are the owner's only answer, even where the others' would give more. */
static void test_classes(void **state)
{
	struct stat st = file(S_IFREG | 0046, 1000, 100);
	unsigned groups[] = { 20, 100 };

	(void)state;
	assert_int_equal(sv_access_check(&st, R_OK, 1000, 1000, NULL, 0, 0), -EACCES);
	/* a member by its gid, or by a supplementary group: the group's bits */
	assert_int_equal(sv_access_check(&st, R_OK, 1001, 100, NULL, 0, 0), 0);
	assert_int_equal(sv_access_check(&st, W_OK, 1001, 100, NULL, 0, 0), -EACCES);
	assert_int_equal(sv_access_check(&st, R_OK, 1001, 1001, groups, 2, 0), 0);
	/* the others: theirs */
	assert_int_equal(sv_access_check(&st, R_OK | W_OK, 1001, 1001, NULL, 0, 0), 0);
	assert_int_equal(sv_access_check(&st, X_OK, 1001, 1001, NULL, 0, 0), -EACCES);
	/* an executable bit anywhere lets CAP_DAC_OVERRIDE execute */
	st.st_mode = S_IFREG | 0001;
	assert_int_equal(sv_access_check(&st, X_OK, 1000, 1000, NULL, 0, OVERRIDE), 0);
	/* sysfs's attributes: 0444 read by all, written by no one without a capability */
	st = file(S_IFREG | 0444, 0, 0);
	assert_int_equal(sv_access_check(&st, R_OK, 65534, 65534, NULL, 0, 0), 0);
	assert_int_equal(sv_access_check(&st, W_OK, 65534, 65534, NULL, 0, 0), -EACCES);
	assert_int_equal(sv_access_check(&st, W_OK, 0, 0, NULL, 0, ALL_CAPS), 0);
}

/* Directories: both capabilities search them; only CAP_DAC_OVERRIDE writes. */
static void test_dirs(void **state)
{
	struct stat st = file(S_IFDIR | 0700, 0, 0);

	(void)state;
	assert_int_equal(sv_access_check(&st, R_OK | X_OK, 1000, 1000, NULL, 0, 0), -EACCES);
	assert_int_equal(sv_access_check(&st, R_OK | X_OK, 1000, 1000, NULL, 0, READ_SEARCH), 0);
	assert_int_equal(sv_access_check(&st, W_OK, 1000, 1000, NULL, 0, READ_SEARCH), -EACCES);
	assert_int_equal(sv_access_check(&st, R_OK | W_OK | X_OK, 1000, 1000, NULL, 0, OVERRIDE), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_node),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_dirs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
