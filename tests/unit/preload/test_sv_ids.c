/* SPDX-License-Identifier: MIT */
/*
 * A thread's credentials as ucmd-supervise reads them from /proc/TID/status
 * (src/preload/sv_ids.c): every field an open is judged by, a Groups: list
 * longer than the groups kept told apart from another, a status without a
 * line refused, and our own read from /proc as getresuid and friends say.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <grp.h>
#include <unistd.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "preload/sv_ids.h"

static const char status[] =
	"Name:\tcat\n"
	"Umask:\t0027\n"
	"State:\tR (running)\n"
	"Tgid:\t42\n"
	"Uid:\t1000\t1001\t1002\t1003\n"
	"Gid:\t2000\t2001\t2002\t2003\n"
	"FDSize:\t64\n"
	"Groups:\t4 24 27 \n"
	"CapInh:\t0000000000000000\n"
	"CapPrm:\t000001ffffffffff\n"
	"CapEff:\t0000000000000402\n"
	"CapBnd:\t000001ffffffffff\n";

static void test_parse(void **state)
{
	struct sv_ids id;

	(void)state;
	assert_int_equal(sv_ids_parse(status, &id), 0);
	assert_int_equal(id.uid[0], 1000);
	assert_int_equal(id.uid[3], 1003);
	assert_int_equal(id.gid[1], 2001);
	assert_int_equal(id.gid[3], 2003);
	assert_int_equal(id.ngroups, 3);
	assert_int_equal(id.groups[0], 4);
	assert_int_equal(id.groups[2], 27);
	assert_int_equal(id.cap_eff, 0x402);
	assert_true(id.cap_prm == 0x1ffffffffffull);
	assert_int_equal(id.umask, 027);
}

/* "Groups:" empty, no Umask: (Linux before 4.7): no groups, 022 */
static void test_no_groups(void **state)
{
	char text[sizeof(status)];
	struct sv_ids id;
	char *g, *u;

	(void)state;
	memcpy(text, status, sizeof(status));
	g = strstr(text, "4 24 27 ");
	memset(g, ' ', strlen("4 24 27 "));
	u = strstr(text, "Umask");
	u[0] = 'X';
	assert_int_equal(sv_ids_parse(text, &id), 0);
	assert_int_equal(id.ngroups, 0);
	assert_int_equal(id.umask, 022);
}

/* A missing line: the credentials are not known, nothing is opened as them. */
static void test_missing(void **state)
{
	static const char *const keys[] = { "Uid:", "Gid:", "Groups:", "CapPrm:", "CapEff:" };
	struct sv_ids id;

	(void)state;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		char text[sizeof(status)];

		memcpy(text, status, sizeof(status));
		strstr(text, keys[k])[0] = 'X';
		assert_int_equal(sv_ids_parse(text, &id), -EACCES);
	}
	assert_int_equal(sv_ids_parse("Uid:\t1 2 3\nGid:\t1 2 3 4\nGroups:\nCapEff:\t0\n", &id),
			 -EACCES);
}

/* groups from..from+n-1, with the last one replaced by last */
static char *long_status(int n, unsigned last)
{
	size_t cap = 128 + (size_t)n * 12;
	char *t = malloc(cap);
	size_t len;

	assert_non_null(t);
	len = (size_t)snprintf(t, cap, "Uid:\t0 0 0 0\nGid:\t0 0 0 0\nGroups:\t");
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, "%u ", i == n - 1 ? last : 5000u + i);
	snprintf(t + len, cap - len, "\nCapPrm:\t0\nCapEff:\t0\n");
	return t;
}

/* Same ids, same groups: the same; one differing field (even a group past those kept): not. */
static void test_same(void **state)
{
	struct sv_ids a, b;
	char *x, *y, *z;

	(void)state;
	assert_int_equal(sv_ids_parse(status, &a), 0);
	b = a;
	b.umask = 0;
	assert_true(sv_ids_same(&a, &b));	/* the umask is not a credential */
	b = a;
	b.uid[3] = 0;
	assert_false(sv_ids_same(&a, &b));
	b = a;
	b.gid[2] = 0;
	assert_false(sv_ids_same(&a, &b));
	b = a;
	b.cap_eff = 0;
	assert_false(sv_ids_same(&a, &b));
	b = a;
	b.groups[1] = 25;
	assert_false(sv_ids_same(&a, &b));

	x = long_status(SV_IDS_GROUPS_MAX + 44, 9999);
	y = long_status(SV_IDS_GROUPS_MAX + 44, 9998);
	z = long_status(SV_IDS_GROUPS_MAX + 43, 9999);
	assert_int_equal(sv_ids_parse(x, &a), 0);
	assert_int_equal(a.ngroups, SV_IDS_GROUPS_MAX + 44);
	assert_int_equal(a.groups[SV_IDS_GROUPS_MAX - 1], 5000 + SV_IDS_GROUPS_MAX - 1);
	assert_int_equal(sv_ids_parse(x, &b), 0);
	assert_true(sv_ids_same(&a, &b));
	assert_int_equal(sv_ids_parse(y, &b), 0);
	assert_false(sv_ids_same(&a, &b));
	assert_int_equal(sv_ids_parse(z, &b), 0);
	assert_false(sv_ids_same(&a, &b));
	free(x);
	free(y);
	free(z);
}

/* Ours, from /proc, as the kernel's own calls say them. */
static void test_ours(void **state)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;
	gid_t groups[SV_IDS_GROUPS_MAX];
	int n = getgroups(SV_IDS_GROUPS_MAX, groups);
	mode_t um = umask(0);
	struct sv_ids id;

	(void)state;
	umask(um);
	assert_int_equal(getresuid(&r, &e, &s), 0);
	assert_int_equal(getresgid(&gr, &ge, &gs), 0);
	assert_int_equal(sv_ids_of(0, &id), 0);
	assert_int_equal(id.uid[0], r);
	assert_int_equal(id.uid[1], e);
	assert_int_equal(id.uid[2], s);
	assert_int_equal(id.gid[0], gr);
	assert_int_equal(id.gid[1], ge);
	assert_int_equal(id.gid[2], gs);
	assert_int_equal(id.umask, um);
	assert_true(n >= 0);
	assert_int_equal(id.ngroups, n);
	for (int i = 0; i < n; i++)
		assert_int_equal(id.groups[i], groups[i]);
	assert_int_equal(sv_ids_of(getpid(), &id), 0);
	/* a thread that is not there */
	assert_int_equal(sv_ids_of(0x3ffffff0, &id), -ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_no_groups),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_same),
		cmocka_unit_test(test_ours),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
