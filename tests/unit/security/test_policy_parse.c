/* SPDX-License-Identifier: MIT */
/* The policy language: valid files, every error with its line, reload. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/file.h"
#include "secutil.h"
#include "security/security.h"

static struct ucmd_policy *parse_ok(const char *text)
{
	struct ucmd_policy *p = NULL;
	char err[256] = "";
	int ret = ucmd_policy_load_string("t.ini", text, strlen(text), &p, err, sizeof(err));

	if (ret)
		fail_msg("unexpected error: %s", err);
	return p;
}

static void parse_err(const char *text, const char *want)
{
	struct ucmd_policy *p = NULL;
	char err[256] = "";
	int ret = ucmd_policy_load_string("t.ini", text, strlen(text), &p, err, sizeof(err));

	assert_int_equal(ret, -EINVAL);
	assert_null(p);
	if (strncmp(err, want, strlen(want)))
		fail_msg("error '%s', want prefix '%s'", err, want);
}

static struct ucmd_cred cred_of(uid_t uid, gid_t gid, bool admin)
{
	struct ucmd_cred c;

	memset(&c, 0, sizeof(c));
	c.uid = c.euid = uid;
	c.gid = c.egid = gid;
	c.cap_sys_admin = admin;
	return c;
}

static bool judge(const struct ucmd_policy *p, const struct ucmd_cred *c, const char *dev,
		  enum ucmd_verb verb, uint64_t slba, uint64_t nlb, unsigned f_mode,
		  struct ucmd_policy_verdict *v)
{
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD, .cred = c,
					 .f_mode = f_mode, .desc = &d };

	ucmd_desc_init(&d, dev, TP_IO, 0);
	policy_desc_for_verb(&d, verb);
	d.nsid = 1;
	d.has_range = nlb != 0;
	d.slba = slba;
	d.nlb = nlb;
	d.offset = slba * 512;
	d.length = nlb * 512;
	policy_eval(p, &s, v);
	return v->allow;
}

static void test_valid(void **state)
{
	struct ucmd_policy_verdict v;
	struct ucmd_cred alice = cred_of(1000, 1000, false);
	struct ucmd_cred bob = cred_of(1001, 1001, false);
	struct ucmd_policy *p = parse_ok(
		"; comment\n"
		"[policy]\n"
		"default = deny\n"
		"\n"
		"[rule alice-reads]\n"			/* line 5 */
		"uid = 1000, 2000-2999\n"
		"device = ng*n1\n"
		"verb = read, identify\n"
		"lba = 0-1023\n"
		"action = allow\n"
		"audit = yes\n"
		"[rule]\n"				/* line 12: unnamed, consecutive */
		"gid = 1001\n"
		"verb = write\n"
		"bytes = 1M+1M\n"
		"mode = rw, wo\n"
		"action = allow\n"
		"[rule]\n"				/* line 18 */
		"action = deny\n");

	(void)state;
	assert_int_equal(ucmd_policy_nr_rules(p), 3);
	assert_true(judge(p, &alice, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	assert_true(v.audit);
	assert_string_equal(v.rule, "t.ini:5 alice-reads");
	/* an allow rule must hold the whole range */
	assert_false(judge(p, &alice, "ng0n1", UCMD_VERB_READ, 1020, 8, FMODE_READ, &v));
	assert_string_equal(v.rule, "t.ini:18");
	assert_false(judge(p, &alice, "nvme0", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	assert_false(judge(p, &bob, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	/* bytes 1M..2M-1 = LBA 2048..4095, and only on a file open for write */
	assert_true(judge(p, &bob, "ng0n1", UCMD_VERB_WRITE, 2048, 2048,
			  FMODE_READ | FMODE_WRITE, &v));
	assert_string_equal(v.rule, "t.ini:12");
	assert_false(judge(p, &bob, "ng0n1", UCMD_VERB_WRITE, 2048, 2048, FMODE_READ, &v));
	assert_false(judge(p, &bob, "ng0n1", UCMD_VERB_WRITE, 2047, 2, FMODE_WRITE, &v));
	/* supplementary groups count */
	alice.groups[0] = 1001;
	alice.ngroups = 1;
	assert_true(judge(p, &alice, "ng0n1", UCMD_VERB_WRITE, 2048, 1, FMODE_WRITE, &v));
	ucmd_policy_put(p);

	/* a deny rule with a range catches any overlap; the default decides the rest */
	p = parse_ok("[policy]\ndefault = allow\n[rule mbr]\nverb = write\nlba = 0-7\naction = deny\n");
	assert_false(judge(p, &bob, "ng0n1", UCMD_VERB_WRITE, 7, 100, FMODE_WRITE, &v));
	assert_true(judge(p, &bob, "ng0n1", UCMD_VERB_WRITE, 8, 100, FMODE_WRITE, &v));
	assert_string_equal(v.rule, "t.ini: default");
	ucmd_policy_put(p);
}

/* hostnqn: an NVMe/TCP host by the NQN of its Connect, nobody else */
static void test_hostnqn(void **state)
{
	struct ucmd_policy_verdict v;
	struct ucmd_cred tcp = cred_of((uid_t)-1, (gid_t)-1, false);
	struct ucmd_cred other = tcp, local = cred_of(1000, 1000, false);
	struct ucmd_policy *p = parse_ok(
		"[policy]\n"
		"default = deny\n"
		"[rule test-hosts]\n"			/* line 3 */
		"hostnqn = nqn.2014-08.org.example:host-*, nqn.x:y\n"
		"action = allow\n");

	(void)state;
	snprintf(tcp.hostnqn, sizeof(tcp.hostnqn), "nqn.2014-08.org.example:host-1");
	snprintf(other.hostnqn, sizeof(other.hostnqn), "nqn.2014-08.org.example:other");
	assert_true(judge(p, &tcp, "nvme0", UCMD_VERB_FORMAT, 0, 0, FMODE_READ, &v));
	assert_string_equal(v.rule, "t.ini:3 test-hosts");
	snprintf(tcp.hostnqn, sizeof(tcp.hostnqn), "nqn.x:y");
	assert_true(judge(p, &tcp, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	assert_false(judge(p, &other, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	/* a local client has no host NQN: the rule is not for it */
	assert_false(judge(p, &local, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	assert_string_equal(v.rule, "t.ini: default");
	/* who the caller is matters: never a constant answer for a file */
	assert_false(policy_constant_allow(p, UCMD_HOOK_URING_CMD, "ng0n1", FMODE_READ, false));
	ucmd_policy_put(p);

	/* the longest NQN there is (223 bytes): longer than libinih's 200-byte lines */
	char nqn[224], text[512];

	memset(nqn, 'h', sizeof(nqn) - 1);
	nqn[sizeof(nqn) - 1] = 0;
	memcpy(nqn, "nqn.2014-08.org.example:", 24);
	snprintf(text, sizeof(text), "[policy]\ndefault = deny\n[rule %s]\nhostnqn = %s\n"
		 "action = allow\n", "a-rule-name-longer-than-the-fifty-bytes-of-libinih-sections", nqn);
	p = parse_ok(text);
	snprintf(tcp.hostnqn, sizeof(tcp.hostnqn), "%s", nqn);
	assert_int_equal(strlen(tcp.hostnqn), 223);
	assert_true(judge(p, &tcp, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	/* a verdict names at most 40 bytes of a rule's name (policy_rule_label()) */
	assert_string_equal(v.rule, "t.ini:3 a-rule-name-longer-than-the-fifty-bytes-");
	tcp.hostnqn[222] = 'x';
	assert_false(judge(p, &tcp, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	ucmd_policy_put(p);
	/* one byte more is no NQN */
	snprintf(text, sizeof(text), "[rule]\nhostnqn = %sh\naction = allow\n", nqn);
	parse_err(text, "t.ini:2: ");

	parse_err("[rule]\nhostnqn =\naction = allow\n", "t.ini:2: ");
	parse_err("[rule]\nhostnqn = a,,b\naction = allow\n", "t.ini:2: ");
}

/* hostid: an NVMe/TCP host by the host ID of its Connect, nobody else */
static void test_hostid(void **state)
{
	struct ucmd_policy_verdict v;
	struct ucmd_cred tcp = cred_of((uid_t)-1, (gid_t)-1, false);
	struct ucmd_cred local = cred_of(1000, 1000, false);
	struct ucmd_policy *p = parse_ok(
		"[policy]\n"
		"default = allow\n"
		"[rule lab]\n"				/* line 3 */
		"hostid = 5d0a1f3e-0000-4000-8000-0000c0ffee01, 00000000-0000-0000-0000-0000000000AB\n"
		"hostnqn = nqn.x:*\n"
		"verb = write\n"
		"action = deny\n");

	(void)state;
	snprintf(tcp.hostnqn, sizeof(tcp.hostnqn), "nqn.x:y");
	snprintf(tcp.hostid, sizeof(tcp.hostid), "00000000-0000-0000-0000-0000000000ab");
	assert_false(judge(p, &tcp, "ng0n1", UCMD_VERB_WRITE, 0, 8, FMODE_WRITE, &v));
	assert_string_equal(v.rule, "t.ini:3 lab");
	assert_true(judge(p, &tcp, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	/* both keys must match: the host ID alone, or the NQN alone, is not the host */
	snprintf(tcp.hostid, sizeof(tcp.hostid), "00000000-0000-0000-0000-0000000000ac");
	assert_true(judge(p, &tcp, "ng0n1", UCMD_VERB_WRITE, 0, 8, FMODE_WRITE, &v));
	snprintf(tcp.hostid, sizeof(tcp.hostid), "5d0a1f3e-0000-4000-8000-0000c0ffee01");
	snprintf(tcp.hostnqn, sizeof(tcp.hostnqn), "nqn.other:y");
	assert_true(judge(p, &tcp, "ng0n1", UCMD_VERB_WRITE, 0, 8, FMODE_WRITE, &v));
	/* a local client has no host ID */
	assert_true(judge(p, &local, "ng0n1", UCMD_VERB_WRITE, 0, 8, FMODE_WRITE, &v));
	assert_string_equal(v.rule, "t.ini: default");
	assert_false(policy_constant_allow(p, UCMD_HOOK_URING_CMD, "ng0n1", FMODE_WRITE, false));
	ucmd_policy_put(p);

	parse_err("[rule]\nhostid =\naction = allow\n", "t.ini:2: ");
	parse_err("[rule]\nhostid = 5d0a1f3e-0000-4000-8000-0000c0ffee0\naction = allow\n", "t.ini:2: ");
	parse_err("[rule]\nhostid = 5d0a1f3e00000-4000-8000-0000c0ffee01\naction = allow\n", "t.ini:2: ");
	parse_err("[rule]\nhostid = 5d0a1f3e-0000-4000-8000-0000c0ffee0g\naction = allow\n", "t.ini:2: ");
	parse_err("[rule]\nhostid = nqn.x:y\naction = allow\n", "t.ini:2: ");
}

static void test_sqpoll_override_rules(void **state)
{
	struct ucmd_policy_verdict v;
	struct ucmd_cred root = cred_of(0, 0, true), nobody = cred_of(65534, 65534, false);
	struct ucmd_policy *p = parse_ok(
		"[rule]\nhook = sqpoll\nuid = 0\naction = allow\n"
		"[rule]\nhook = override-creds\ntarget-uid = 65534\naction = allow\n"
		"[rule]\nhook = sqpoll, override-creds\naction = deny\n");
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_SQPOLL, .cred = &root };

	(void)state;
	policy_eval(p, &s, &v);
	assert_true(v.allow);
	s.cred = &nobody;
	policy_eval(p, &s, &v);
	assert_false(v.allow);
	s.hook = UCMD_HOOK_URING_OVERRIDE_CREDS;
	s.cred = &root;
	s.new_cred = &nobody;
	policy_eval(p, &s, &v);
	assert_true(v.allow);
	s.new_cred = &root;
	policy_eval(p, &s, &v);
	assert_false(v.allow);
	ucmd_policy_put(p);
}

/* Every class of error, each with the line it is on. */
static void test_errors(void **state)
{
	(void)state;
	parse_err("[rule]\naction = allow\nverb = read\nverb = write\n",
		  "t.ini:4: key 'verb' given twice");
	parse_err("[rule]\nbogus = 1\naction = allow\n", "t.ini:2: unknown key 'bogus'");
	parse_err("\n[rules]\naction = allow\n", "t.ini:2: unknown section [rules]");
	parse_err("action = allow\n", "t.ini:1: key 'action' outside any section");
	parse_err("[rule]\nverb = read, frobnicate\naction = allow\n",
		  "t.ini:2: bad value 'frobnicate' for 'verb'");
	parse_err("[rule]\nuid = 12x\naction = allow\n", "t.ini:2: bad value '12x' for 'uid'");
	parse_err("[rule]\nlba = 10-5\naction = allow\n", "t.ini:2: out of range '10-5'");
	parse_err("[rule]\nopcode = 0x100\naction = allow\n", "t.ini:2: out of range");
	parse_err("[rule]\nuid = no-such-user-xyz\naction = allow\n",
		  "t.ini:2: no such user or group");
	parse_err("[rule]\nverb = read,,write\naction = allow\n", "t.ini:2: bad value");
	parse_err("[rule]\naction = maybe\n", "t.ini:2: bad value 'maybe' for 'action'");
	parse_err("[rule]\ncap-sys-admin = perhaps\naction = deny\n", "t.ini:2: bad value");
	parse_err("[policy]\ndefault = allow\n\n[rule x]\nverb = read\n",
		  "t.ini:4: [rule x]: no 'action = allow|deny'");
	parse_err("[rule]\nhook = sqpoll\nverb = read\naction = deny\n",
		  "t.ini:1: [rule ]: command keys");
	parse_err("[rule]\ntarget-uid = 0\naction = deny\n", "t.ini:1: [rule ]: target-uid");
	parse_err("[rule]\nlba = 0-1\nbytes = 0-1\naction = deny\n", "t.ini:1: [rule ]: give");
	parse_err("[rule]\naction = allow\n[rule]\n[rule]\naction = deny\n",
		  "t.ini:3: empty section");
	parse_err("[rule]\naction = allow\n[rule]\n", "t.ini:3: empty section");
	parse_err("[policy]\ndefault = allow\n[policy]\naudit = yes\n",
		  "t.ini:3: second [policy] section");
	parse_err("[policy]\ndefault = perhaps\n", "t.ini:2: bad value 'perhaps' for 'default'");
	parse_err("[policy]\nfoo = 1\n", "t.ini:2: unknown key 'foo' in [policy]");
	parse_err("[rule]\naction = allow\nthis line has no equals sign\n",
		  "t.ini:3: syntax error");
	parse_err("[rule\naction = allow\n", "t.ini:1: syntax error");

	/* lines have no fixed limit but an absurd one, refused with the line named */
	size_t huge = 8u << 20;
	char *longline = malloc(huge + 32);
	assert_non_null(longline);
	memset(longline, 'a', huge);
	memcpy(longline, "[rule]\nname = ", 14);
	strcpy(longline + huge, "\naction = allow\n");
	parse_err(longline, "t.ini:2: line longer than 65536 bytes");
	strcpy(longline + 14 + 65536 - 7, "\naction = allow\n");	/* exactly the limit */
	struct ucmd_policy *lp = parse_ok(longline);
	struct ucmd_cred c = cred_of(1000, 1000, false);
	struct ucmd_policy_verdict v;

	assert_true(judge(lp, &c, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	assert_int_equal(strncmp(v.rule, "t.ini:1 aaaa", 12), 0);
	ucmd_policy_put(lp);
	free(longline);

	/* indented keys are keys (libinih read them as the previous key's continuation) */
	lp = parse_ok("[rule]\n  verb = read\n\taction = allow\n");
	assert_true(judge(lp, &c, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	assert_false(judge(lp, &c, "ng0n1", UCMD_VERB_WRITE, 0, 8, FMODE_READ, &v));
	ucmd_policy_put(lp);
	/* libinih's syntax otherwise: a BOM, ':' for '=', ';' comments after a blank */
	lp = parse_ok("\xEF\xBB\xBF[rule x] ; why\n# c\n; c\nverb: write ; read is a comment\n"
		      "action = allow\n");
	assert_false(judge(lp, &c, "ng0n1", UCMD_VERB_READ, 0, 8, FMODE_READ, &v));
	assert_true(judge(lp, &c, "ng0n1", UCMD_VERB_WRITE, 0, 8, FMODE_WRITE, &v));
	assert_string_equal(v.rule, "t.ini:1 x");
	ucmd_policy_put(lp);
	parse_err("[rule]\nverb = read\n[rule y ; no bracket\naction = allow\n", "t.ini:3: syntax");
	/* a first line shorter than a BOM (the fuzzer's: ASan reads past a 1-byte line) */
	parse_err("Z\n[rule]\n", "t.ini:1: syntax");
	const char nul[] = "[rule]\nact\0ion = allow\n";
	struct ucmd_policy *p = NULL;
	char err[128];
	assert_int_equal(ucmd_policy_load_string("t.ini", nul, sizeof(nul) - 1, &p, err,
						 sizeof(err)), -EINVAL);
	assert_string_equal(err, "t.ini:2: NUL byte in line");
	/* the first error wins */
	parse_err("[rule]\nbogus = 1\n[x]\n", "t.ini:2: unknown key");
}

static void test_default_policy(void **state)
{
	struct ucmd_policy *p = NULL;
	char err[256], path[512];

	(void)state;
	assert_int_equal(ucmd_policy_load_default(&p, err, sizeof(err)), 0);
	assert_true(ucmd_policy_nr_rules(p) >= 10);
	ucmd_policy_put(p);
	/* the file in the repository is the compiled-in text, and parses as itself */
	snprintf(path, sizeof(path), "%s/policy/default.ini", SOURCE_ROOT);
	assert_int_equal(ucmd_policy_load_file(path, &p, err, sizeof(err)), 0);
	ucmd_policy_put(p);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	assert_string_equal(buf, policy_default_text);
	/* inherit = default appends Linux's rules after a file's own */
	p = parse_ok("[policy]\ninherit = default\n[rule]\nuid = 7\nverb = format\naction = allow\n");
	assert_true(ucmd_policy_nr_rules(p) >= 11);
	struct ucmd_policy_verdict v;
	struct ucmd_cred seven = cred_of(7, 7, false), eight = cred_of(8, 8, false);
	assert_true(judge(p, &seven, "nvme0", UCMD_VERB_FORMAT, 0, 0, FMODE_WRITE, &v));
	assert_false(judge(p, &eight, "nvme0", UCMD_VERB_FORMAT, 0, 0, FMODE_WRITE, &v));
	assert_non_null(strstr(v.rule, "policy/default.ini:"));
	ucmd_policy_put(p);
}

/* A bad file is refused whole: the policy in force stays in force. */
static void test_reload_keeps_previous(void **state)
{
	struct ucmd_policy_verdict v;
	struct ucmd_cred c = cred_of(1000, 1000, false);
	struct ucmd_policy *p = parse_ok("[rule]\nverb = read\naction = allow\n");
	struct ucmd_policy_module *m = policy_module_new(p);
	char err[256];
	const char *bad = sec_tmpfile("[rule]\nverb = read\naction = allow\n[rule]\nverb = writ\n"
				      "action = deny\n");
	const char *good = sec_tmpfile("[rule]\nverb = read\naction = deny\n");
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD, .cred = &c,
					 .f_mode = FMODE_READ, .desc = &d };

	(void)state;
	ucmd_desc_init(&d, "ng0n1", 1, 2);
	policy_desc_for_verb(&d, UCMD_VERB_READ);
	assert_int_equal(policy_module_reload(m, bad, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ":5: bad value 'writ' for 'verb'"));
	assert_int_equal(strncmp(err, bad, strlen(bad)), 0);
	policy_module_eval(m, &s, &v);
	assert_true(v.allow);
	assert_int_equal(policy_module_reload(m, "/nonexistent/p.ini", err, sizeof(err)),
			 -ENOENT);
	policy_module_eval(m, &s, &v);
	assert_true(v.allow);
	assert_int_equal(policy_module_reload(m, good, err, sizeof(err)), 0);
	policy_module_eval(m, &s, &v);
	assert_false(v.allow);
	policy_module_free(m);
	unlink(bad);
	unlink(good);
}

/*
 * Reload while evaluating: two policies that differ in every rule's name and
 * decision; an evaluation must always see one whole policy, never a mix,
 * and freeing old sets must not race readers (TSan/ASan check that).
 */
struct reload_ctx {
	struct ucmd_policy_module *m;
	atomic_bool stop;
	atomic_ulong evals, bad;
};

static void *evaluator(void *arg)
{
	struct reload_ctx *rc = arg;
	struct ucmd_cred c = cred_of(1000, 1000, false);
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD, .cred = &c,
					 .f_mode = FMODE_READ, .desc = &d };
	struct ucmd_policy_verdict v;

	ucmd_desc_init(&d, "ng0n1", 1, 2);
	policy_desc_for_verb(&d, UCMD_VERB_READ);
	while (!atomic_load(&rc->stop)) {
		struct ucmd_policy *p = policy_module_current(rc->m);
		unsigned n = ucmd_policy_nr_rules(p);
		policy_eval(p, &s, &v);
		/* policy A: 2 rules, read allowed by rule A; policy B: 3 rules, denied by B */
		if (!((n == 2 && v.allow && strstr(v.rule, " A")) ||
		      (n == 3 && !v.allow && strstr(v.rule, " B"))))
			atomic_fetch_add(&rc->bad, 1);
		ucmd_policy_put(p);
		policy_module_eval(rc->m, &s, &v);
		atomic_fetch_add(&rc->evals, 1);
	}
	return NULL;
}

static void test_reload_concurrent(void **state)
{
	static const char a[] = "[rule A]\nverb = read\naction = allow\n[rule A]\naction = deny\n";
	static const char b[] = "[rule B]\nverb = write\naction = allow\n[rule B]\nverb = read\n"
				"action = deny\n[rule B]\naction = allow\n";
	struct reload_ctx rc = { .m = policy_module_new(parse_ok(a)) };
	pthread_t th[3];
	char err[128];

	(void)state;
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, evaluator, &rc), 0);
	/*
	 * At least 2000 reloads, and go on until the evaluators have really
	 * run alongside (on a busy machine they may not have been scheduled
	 * yet); the cap only stops a run whose threads never ran at all.
	 */
	for (long i = 0; i < 2000 || (atomic_load(&rc.evals) < 3000 && i < 20000000); i++) {
		struct ucmd_policy *p;
		const char *t = (i & 1) ? a : b;
		assert_int_equal(ucmd_policy_load_string("r.ini", t, strlen(t), &p, err,
							 sizeof(err)), 0);
		policy_module_set(rc.m, p);
	}
	atomic_store(&rc.stop, true);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	assert_int_equal(atomic_load(&rc.bad), 0);
	assert_true(atomic_load(&rc.evals) >= 3000);
	policy_module_free(rc.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_hostnqn),
		cmocka_unit_test(test_hostid),
		cmocka_unit_test(test_sqpoll_override_rules),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_reload_keeps_previous),
		cmocka_unit_test(test_reload_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
