/* SPDX-License-Identifier: MIT */
/*
 * The files the security modules open (docs/security.md, "Policy and audit
 * files"): a policy must be
 * a regular file of at most 1 MiB named directly; a FIFO, a symbolic link,
 * a directory, /dev/zero or an oversized file is refused at once with a
 * message that says what it is, and nothing blocks. The audit trail refuses
 * a symbolic link and a FIFO nobody reads, and takes a FIFO with a reader.
 * (A hang shows as meson's test timeout.)
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "security/security.h"

static char dir[64];

static const char *at(const char *name)
{
	static char path[4][128];
	static unsigned n;
	char *p = path[n++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static int setup(void **state)
{
	static const char ok[] = "[rule]\nverb = read\naction = allow\n";

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ucmd-polfile.XXXXXX");
	assert_non_null(mkdtemp(dir));
	write_file(at("ok.ini"), ok, strlen(ok));
	assert_int_equal(symlink(at("ok.ini"), at("link.ini")), 0);
	assert_int_equal(mkfifo(at("fifo.ini"), 0600), 0);
	assert_int_equal(mkdir(at("dir.ini"), 0700), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void refused(const char *path, int want_errno, const char *want_text)
{
	struct ucmd_policy *p = NULL;
	char err[512] = "";
	int ret = ucmd_policy_load_file(path, &p, err, sizeof(err));

	if (ret != -want_errno || !strstr(err, want_text) || !strstr(err, path))
		fail_msg("%s: got %d '%s', want %d and '%s'", path, ret, err, -want_errno,
			 want_text);
	assert_null(p);
}

static void test_policy_file_types(void **state)
{
	struct ucmd_policy *p = NULL;
	char err[512];

	(void)state;
	assert_int_equal(ucmd_policy_load_file(at("ok.ini"), &p, err, sizeof(err)), 0);
	ucmd_policy_put(p);
	refused(at("fifo.ini"), EINVAL, "a FIFO");
	refused(at("link.ini"), EINVAL, "a symbolic link");
	refused(at("dir.ini"), EINVAL, "a directory");
	refused("/dev/zero", EINVAL, "a character device");
	refused(at("missing.ini"), ENOENT, "No such file");
}

static void test_policy_file_too_large(void **state)
{
	size_t len = (1u << 20) + 1;
	char *big = malloc(len);

	(void)state;
	assert_non_null(big);
	memset(big, '\n', len);
	write_file(at("big.ini"), big, len);
	refused(at("big.ini"), EFBIG, "at most 1048576");
	/* exactly the limit is fine */
	write_file(at("big.ini"), big, len - 1);
	struct ucmd_policy *p = NULL;
	char err[512];
	assert_int_equal(ucmd_policy_load_file(at("big.ini"), &p, err, sizeof(err)), 0);
	ucmd_policy_put(p);
	free(big);
}

static void test_audit_file_types(void **state)
{
	struct ucmd_audit *a;
	char err[512] = "";
	int rfd;

	(void)state;
	assert_int_equal(symlink(at("audit.target"), at("audit.link")), 0);
	assert_null(ucmd_audit_open(at("audit.link"), err, sizeof(err)));
	assert_non_null(strstr(err, "a symbolic link"));
	assert_int_equal(access(at("audit.target"), F_OK), -1);	/* nothing created */
	/* a log pipe nobody reads: refused, not waited for */
	assert_int_equal(mkfifo(at("audit.fifo"), 0600), 0);
	err[0] = 0;
	assert_null(ucmd_audit_open(at("audit.fifo"), err, sizeof(err)));
	assert_non_null(strstr(err, "a FIFO nobody reads"));
	/* with its reader it is a fine trail */
	rfd = open(at("audit.fifo"), O_RDONLY | O_NONBLOCK);
	assert_true(rfd >= 0);
	a = ucmd_audit_open(at("audit.fifo"), err, sizeof(err));
	assert_non_null(a);
	ucmd_audit_free(a);
	close(rfd);
	/* a directory is no trail */
	assert_null(ucmd_audit_open(at("dir.ini"), err, sizeof(err)));
	/* a regular file is */
	a = ucmd_audit_open(at("audit.jsonl"), err, sizeof(err));
	assert_non_null(a);
	ucmd_audit_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_file_types),
		cmocka_unit_test(test_policy_file_too_large),
		cmocka_unit_test(test_audit_file_types),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
