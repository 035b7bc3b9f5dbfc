/* SPDX-License-Identifier: MIT */
/*
 * No engine without the rules: the NVMe driver checks no permission itself,
 * so an engine whose default policy could not be installed must not be
 * created. Every allocation ucmd_engine_new() makes is failed in turn; each
 * attempt either returns NULL or an engine whose policy module holds the
 * default policy. (glibc's malloc is replaced here: not for sanitizer
 * builds, which replace it themselves.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "security/security.h"
#include "ucmd/ucmd.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static long fail_at = -1, calls;

static int fail_now(void)
{
	return fail_at >= 0 && calls++ == fail_at;
}

void *malloc(size_t n)
{
	return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t a, size_t b)
{
	return fail_now() ? NULL : __libc_calloc(a, b);
}

void *realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __libc_realloc(p, n);
}

void free(void *p)
{
	__libc_free(p);
}

static void test_every_allocation_failure(void **state)
{
	unsigned refused = 0, made = 0;
	long n;

	(void)state;
	/* warm up the process-wide state (opcode table, credentials) */
	ucmd_engine_free(ucmd_engine_new());
	for (n = 0; n < 100000; n++) {
		struct ucmd_engine *e;

		calls = 0;
		fail_at = n;
		e = ucmd_engine_new();
		fail_at = -1;
		if (!e) {
			refused++;
			continue;
		}
		struct ucmd_policy_module *m = security_engine_policy(e);
		assert_non_null(m);
		struct ucmd_policy *p = policy_module_current(m);
		assert_non_null(p);
		assert_true(ucmd_policy_nr_rules(p) > 0);
		ucmd_policy_put(p);
		ucmd_engine_free(e);
		made++;
		if (calls <= n)
			break;	/* no allocation was failed: all have been tried */
	}
	assert_true(refused > 3);
	assert_true(made >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_allocation_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
