/* SPDX-License-Identifier: MIT */
/*
 * Reason strings: every failing set-up call of the public API leaves a
 * sentence in ucmd_last_error(), per thread, and the int-returning forms of
 * the calls that used to return NULL give the errno.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <ucmd/ctrl.h>
#include <ucmd/kernel.h>
#include <ucmd/security.h>
#include <ucmd/ucmd.h>

static char dir[64];

static const char *at(const char *name)
{
	static char path[128];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ucmd-api-err-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_engine_create(void **state)
{
	struct ucmd_engine *e = NULL;

	(void)state;
	assert_int_equal(ucmd_engine_create(NULL), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "ucmd_engine_create"));
	assert_int_equal(ucmd_engine_create_kernel(NULL), -EINVAL);
	assert_int_equal(ucmd_engine_create(&e), 0);
	assert_non_null(e);
	/* a successful call leaves the last reason alone, as errno is left */
	assert_non_null(strstr(ucmd_last_error(), "ucmd_engine_create"));
	ucmd_engine_free(e);
}

/* A directory with an image but no state: the reason names both, in errbuf and last_error. */
static void test_ctrl_create(void **state)
{
	struct ucmd_ctrl_params cp = { 0 };
	struct ucmd_ctrl *c = NULL;
	char errbuf[256] = "x";
	char sub[128];
	int fd;

	(void)state;
	assert_int_equal(ucmd_ctrl_create(NULL, &c), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "params"));
	snprintf(sub, sizeof(sub), "%s", at("ctrl"));
	assert_int_equal(mkdir(sub, 0700), 0);
	fd = open(at("ctrl/ns1.img"), O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	cp.dir = sub;
	cp.errbuf = errbuf;
	cp.errbuf_len = sizeof(errbuf);
	assert_int_equal(ucmd_ctrl_create(&cp, &c), -EUCLEAN);
	assert_null(c);
	assert_non_null(strstr(errbuf, "no ctrl.json"));
	assert_string_equal(ucmd_last_error(), errbuf);
	/* without errbuf the reason is still there */
	cp.errbuf = NULL;
	cp.errbuf_len = 0;
	assert_int_equal(ucmd_engine_create(NULL), -EINVAL);
	assert_int_equal(ucmd_ctrl_create(&cp, &c), -EUCLEAN);
	assert_non_null(strstr(ucmd_last_error(), "no ctrl.json"));
}

static void test_policy_and_security(void **state)
{
	static const char bad[] = "[rule x]\nverb = frobnicate\naction = allow\n";
	struct ucmd_policy *p = NULL;
	struct ucmd_engine *e, *k;
	char err[256] = "";

	(void)state;
	assert_int_equal(ucmd_policy_load_string("site.ini", bad, sizeof(bad) - 1, &p, err,
						 sizeof(err)), -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, "site.ini:"));
	assert_string_equal(ucmd_last_error(), err);
	/* err is optional */
	assert_int_equal(ucmd_policy_load_string("other.ini", bad, sizeof(bad) - 1, &p, NULL, 0),
			 -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "other.ini:"));
	assert_int_equal(ucmd_policy_load_file(at("missing.ini"), &p, NULL, 0), -ENOENT);
	assert_non_null(strstr(ucmd_last_error(), "missing.ini"));

	assert_int_equal(ucmd_engine_create(&e), 0);
	assert_int_equal(ucmd_security_setup(e, at("missing.ini"), NULL, NULL, 0), -ENOENT);
	assert_non_null(strstr(ucmd_last_error(), "missing.ini"));
	/* every engine carries the default policy: reloading it needs no setup */
	assert_int_equal(ucmd_security_reload(e, NULL, NULL, 0), 0);
	/* a kernel engine runs none of ucmd's modules: the kernel judges there */
	assert_int_equal(ucmd_engine_create_kernel(&k), 0);
	assert_int_equal(ucmd_security_reload(k, NULL, NULL, 0), -EOPNOTSUPP);
	assert_non_null(strstr(ucmd_last_error(), "kernel backend"));
	ucmd_engine_free(k);
	assert_int_equal(ucmd_security_setup(e, NULL, at("audit.jsonl"), NULL, 0), 0);
	assert_int_equal(ucmd_security_reload(e, at("missing.ini"), NULL, 0), -ENOENT);
	ucmd_security_teardown(e);
	ucmd_engine_free(e);
	assert_int_equal(ucmd_security_setup(NULL, NULL, NULL, NULL, 0), -EINVAL);
}

static void test_audit_create(void **state)
{
	struct ucmd_audit *a = NULL;
	char target[128];

	(void)state;
	snprintf(target, sizeof(target), "%s", at("target.jsonl"));
	assert_int_equal(symlink(target, at("audit.link")), 0);
	assert_int_equal(ucmd_audit_create(at("audit.link"), &a), -ELOOP);
	assert_null(a);
	assert_non_null(strstr(ucmd_last_error(), "symbolic link"));
	assert_int_equal(ucmd_audit_create(dir, &a), -EISDIR);
	assert_int_equal(ucmd_audit_create(NULL, &a), -EINVAL);
	assert_int_equal(ucmd_audit_create(at("audit.jsonl"), &a), 0);
	assert_non_null(a);
	assert_int_equal(ucmd_audit_written(a), 0);
	ucmd_audit_free(a);
	/* the NULL-returning form says the same */
	assert_null(ucmd_audit_open(at("audit.link"), NULL, 0));
	assert_non_null(strstr(ucmd_last_error(), "symbolic link"));
}

static void *fail_elsewhere(void *arg)
{
	(void)arg;
	assert_int_equal(ucmd_policy_load_file("/nonexistent/elsewhere.ini", &(struct ucmd_policy *){ 0 },
					       NULL, 0), -ENOENT);
	assert_non_null(strstr(ucmd_last_error(), "elsewhere.ini"));
	return NULL;
}

/* One reason per thread: a failure in another thread does not change this one's. */
static void test_per_thread(void **state)
{
	pthread_t t;

	(void)state;
	assert_int_equal(ucmd_engine_create(NULL), -EINVAL);
	assert_int_equal(pthread_create(&t, NULL, fail_elsewhere, NULL), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_non_null(strstr(ucmd_last_error(), "ucmd_engine_create"));
	assert_null(strstr(ucmd_last_error(), "elsewhere"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_create),
		cmocka_unit_test(test_ctrl_create),
		cmocka_unit_test(test_policy_and_security),
		cmocka_unit_test(test_audit_create),
		cmocka_unit_test(test_per_thread),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
