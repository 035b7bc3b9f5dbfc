/* SPDX-License-Identifier: MIT */
/*
 * Security state is each engine's own: two engines hold different policies
 * side by side, a reload of one leaves the other alone, and freeing an
 * engine releases its modules (its audit trail is closed; ASan sees any
 * leak) with no teardown called. Every engine is born with the policy
 * module: the default policy is in force before any setup.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "secutil.h"
#include "security/security.h"

static const char deny_reads[] =
	"[policy]\ndefault = allow\n[rule no-reads]\nverb = read\naction = deny\n";
static const char deny_writes[] =
	"[policy]\ndefault = allow\n[rule no-writes]\nverb = write\naction = deny\n";

static unsigned nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

struct side {
	struct ucmd_engine *e;
	struct ucmd_ring ring;
	int fd;
};

static void side_open(struct side *s)
{
	s->e = ucmd_engine_new();
	assert_non_null(s->e);
	tp_register(s->e, "tp0");
	sec_ring(s->e, &s->ring, 8);
	s->fd = ucmd_open(s->e, "tp0", O_RDWR);
	assert_true(s->fd >= 0);
}

static int side_cmd(struct side *s, uint8_t opcode)
{
	tp_prep(&s->ring, s->fd, TP_IO, opcode, 0, 1);
	return sec_submit_one(&s->ring);
}

static void test_two_engines_two_policies(void **state)
{
	const char *p1 = sec_tmpfile(deny_reads), *p2 = sec_tmpfile(deny_writes);
	struct side a, b;
	char err[256];

	(void)state;
	tp_reset();
	side_open(&a);
	side_open(&b);
	assert_int_equal(ucmd_security_setup(a.e, p1, NULL, err, sizeof(err)), 0);
	assert_int_equal(ucmd_security_setup(b.e, p2, NULL, err, sizeof(err)), 0);
	/* a second setup on the same engine is refused, the first stays */
	assert_int_equal(ucmd_security_setup(a.e, p2, NULL, err, sizeof(err)), -EEXIST);

	assert_int_equal(side_cmd(&a, TP_READ), -EACCES);
	assert_int_equal(side_cmd(&a, TP_WRITE), 0);
	assert_int_equal(side_cmd(&b, TP_READ), 0);
	assert_int_equal(side_cmd(&b, TP_WRITE), -EACCES);

	/* reloading one engine changes nothing on the other */
	assert_int_equal(ucmd_security_reload(a.e, p2, err, sizeof(err)), 0);
	assert_int_equal(side_cmd(&a, TP_READ), 0);
	assert_int_equal(side_cmd(&a, TP_WRITE), -EACCES);
	assert_int_equal(side_cmd(&b, TP_READ), 0);

	/* freeing one engine leaves the other's policy in force */
	ucmd_queue_exit(&a.ring);
	ucmd_engine_free(a.e);
	assert_int_equal(side_cmd(&b, TP_WRITE), -EACCES);
	assert_int_equal(side_cmd(&b, TP_READ), 0);
	ucmd_queue_exit(&b.ring);
	ucmd_engine_free(b.e);
	unlink(p1);
	unlink(p2);
}

/* No teardown: ucmd_engine_free() closes the trail and frees the modules. */
static void test_engine_free_releases(void **state)
{
	const char *p = sec_tmpfile(deny_reads), *apath = sec_tmpfile("");
	unsigned before = nr_fds();
	struct side s;
	char err[256], *lines[4];

	(void)state;
	unsigned with_ring;

	tp_reset();
	side_open(&s);
	with_ring = nr_fds();
	assert_int_equal(ucmd_security_setup(s.e, p, apath, err, sizeof(err)), 0);
	assert_int_equal(nr_fds(), with_ring + 1);	/* the trail */
	assert_int_equal(side_cmd(&s, TP_READ), -EACCES);
	ucmd_queue_exit(&s.ring);
	ucmd_engine_free(s.e);
	assert_int_equal(nr_fds(), before);
	assert_int_equal(sec_read_lines(apath, lines, 4), 1);
	sec_free_lines(lines, 1);
	unlink(p);
	unlink(apath);
}

/*
 * Teardown takes the site policy away but never the rules: the default
 * policy is back in force (here: Linux's refusal of a vendor command on an
 * ng* device to an unprivileged caller, tested by test_host_perm; on this
 * test provider, the site rule stops applying).
 */
static void test_teardown_restores_default(void **state)
{
	const char *p = sec_tmpfile(deny_reads);
	struct side s;
	char err[256];
	struct ucmd_policy *cur;

	(void)state;
	tp_reset();
	side_open(&s);
	cur = policy_module_current(security_engine_policy(s.e));
	assert_non_null(cur);
	unsigned default_rules = ucmd_policy_nr_rules(cur);
	ucmd_policy_put(cur);
	assert_true(default_rules > 0);
	assert_int_equal(ucmd_security_setup(s.e, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(side_cmd(&s, TP_READ), -EACCES);
	ucmd_security_teardown(s.e);
	assert_int_equal(side_cmd(&s, TP_READ), 0);
	cur = policy_module_current(security_engine_policy(s.e));
	assert_int_equal(ucmd_policy_nr_rules(cur), default_rules);
	ucmd_policy_put(cur);
	/* and setup works again after a teardown */
	assert_int_equal(ucmd_security_setup(s.e, p, NULL, err, sizeof(err)), 0);
	assert_int_equal(side_cmd(&s, TP_READ), -EACCES);
	ucmd_queue_exit(&s.ring);
	ucmd_engine_free(s.e);
	unlink(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_engines_two_policies),
		cmocka_unit_test(test_engine_free_releases),
		cmocka_unit_test(test_teardown_restores_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
