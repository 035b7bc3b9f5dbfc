/* SPDX-License-Identifier: MIT */
/*
 * ucmd_policy_explain(): what `ucmd policy explain` prints, through the
 * public struct ucmd_explain (no internal credential or description type).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <ucmd/security.h>
#include <ucmd/ucmd.h>

static void user(struct ucmd_explain *x, uint32_t uid, const char *verb)
{
	ucmd_explain_init(x);
	x->uid = x->gid = uid;
	x->ngroups = 0;
	x->caps = uid == 0 ? 1ull << UCMD_CAP_SYS_ADMIN : 0;
	x->verb = verb;
}

/* Linux's nvme_cmd_allowed(), as policy/default.ini writes it. */
static void test_default_policy(void **state)
{
	struct ucmd_explain_result r;
	struct ucmd_policy *p;
	struct ucmd_explain x;

	(void)state;
	assert_int_equal(ucmd_policy_load_default(&p, NULL, 0), 0);
	user(&x, 1000, "format");
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	assert_true(r.range_unknown);
	assert_non_null(strstr(r.rule, "admin"));
	user(&x, 0, "format");
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_true(r.allow);
	assert_non_null(strstr(r.rule, "cap-sys-admin"));
	/* root without CAP_SYS_ADMIN is an ordinary user */
	x.caps = 0;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	/* a read needs a file open for reading; a write one open for writing */
	user(&x, 1000, "read");
	x.may_write = false;
	x.has_lba_range = true;
	x.slba = 0;
	x.nlb = 1;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_true(r.allow);
	assert_false(r.range_unknown);
	x.verb = "write";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	assert_non_null(strstr(r.rule, "write-needs-fmode-write"));
	ucmd_policy_put(p);
}

static void test_ranges(void **state)
{
	static const char site[] =
		"[policy]\ninherit = default\n\n"
		"[rule protect-label]\nuid = 0-1000, 1002-4294967295\n"
		"verb = write, copy\nbytes = 0+1M\naction = deny\n";
	const struct ucmd_lba_range label = { 0, 8 }, outside = { 4096, 8 };
	struct ucmd_explain_result r;
	struct ucmd_policy *p;
	struct ucmd_explain x;

	(void)state;
	assert_int_equal(ucmd_policy_load_string("site.ini", site, sizeof(site) - 1, &p, NULL, 0),
			 0);
	user(&x, 65534, "write");
	x.has_lba_range = true;
	x.slba = 8192;
	x.nlb = 8;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_true(r.allow);
	x.slba = 0;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	assert_non_null(strstr(r.rule, "site.ini:"));
	assert_non_null(strstr(r.rule, "protect-label"));
	assert_true(r.line > 0);
	/* no range at all: judged as any range, so the range rule denies */
	x.has_lba_range = false;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	assert_true(r.range_unknown);
	/* a copy is judged on its sources too */
	x.verb = "copy";
	x.has_lba_range = true;
	x.slba = 8192;
	x.ranges = &outside;
	x.nr_ranges = 1;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_true(r.allow);
	x.ranges = &label;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	ucmd_policy_put(p);
}

/* an NVMe/TCP host: its host NQN and host ID are keys of the policy */
static void test_tcp_host(void **state)
{
	static const char text[] =
		"[policy]\ndefault = allow\n"
		"[rule lab-host]\nhostid = 5D0A1F3E-0000-4000-8000-0000C0FFEE01\nverb = write\n"
		"action = deny\n"
		"[rule strangers]\nhostnqn = nqn.2014-08.org.example:*\naction = deny\n";
	struct ucmd_explain_result r;
	struct ucmd_policy *p;
	struct ucmd_explain x;

	(void)state;
	assert_int_equal(ucmd_policy_load_string("t.ini", text, sizeof(text) - 1, &p, NULL, 0), 0);
	user(&x, (uint32_t)-1, "write");
	x.hostnqn = "nqn.2024-01.io.ucmd:lab";
	x.hostid = "5d0a1f3e-0000-4000-8000-0000c0ffee01";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	assert_string_equal(r.rule, "t.ini:3 lab-host");
	/* the same host reads; another host ID writes; any case names it */
	x.verb = "read";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_true(r.allow);
	x.verb = "write";
	x.hostid = "5d0a1f3e-0000-4000-8000-0000c0ffee02";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_true(r.allow);
	x.hostid = "5D0A1F3E-0000-4000-8000-0000C0FFEE01";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	/* a local caller has no host ID: the rule is not for it */
	x.hostid = NULL;
	x.hostnqn = NULL;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_true(r.allow);
	x.hostnqn = "nqn.2014-08.org.example:h1";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), 0);
	assert_false(r.allow);
	assert_string_equal(r.rule, "t.ini:7 strangers");
	/* bad identities are refused, not judged */
	x.hostid = "5d0a1f3e-0000-4000-8000-0000c0ffee0";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "hostid"));
	x.hostid = "5d0a1f3e+0000-4000-8000-0000c0ffee01";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	x.hostid = NULL;
	x.hostnqn = "";
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "hostnqn"));
	ucmd_policy_put(p);
}

static void test_bad_subject(void **state)
{
	struct ucmd_explain_result r;
	struct ucmd_policy *p;
	struct ucmd_explain x;

	(void)state;
	assert_int_equal(ucmd_policy_load_default(&p, NULL, 0), 0);
	user(&x, 1000, "frobnicate");
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "unknown verb \"frobnicate\""));
	user(&x, 1000, "read");
	x.ngroups = UCMD_EXPLAIN_GROUPS_MAX + 1;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	assert_non_null(strstr(ucmd_last_error(), "groups"));
	user(&x, 1000, "read");
	x.nr_ranges = 1;
	x.ranges = NULL;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	user(&x, 1000, "read");
	x.opcode = 256;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	user(&x, 1000, "read");
	x.hook = (enum ucmd_explain_hook)9;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	user(&x, 1000, "read");
	x.device = NULL;
	assert_int_equal(ucmd_policy_explain(p, &x, &r), -EINVAL);
	assert_int_equal(ucmd_policy_explain(NULL, &x, &r), -EINVAL);
	ucmd_policy_put(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_bad_subject),
		cmocka_unit_test(test_tcp_host),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
