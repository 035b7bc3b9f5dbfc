/* SPDX-License-Identifier: MIT */
/*
 * Device globs classified at load (src/security/policy_glob.c): every form
 * answers as fnmatch(glob, name, 0) does, and judging a command with an
 * exact or prefix glob scans and fnmatch()es nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "core/file.h"
#include "secutil.h"
#include "security/policy_glob.h"
#include "security/security.h"

/*
 * strcspn() and fnmatch() as the policy code calls them: this binary's
 * definitions (and strncmp()'s) come before libc's, so the calls made while `counting` is
 * set are counted (the rest of the time they only do their work).
 */
static bool counting;
static unsigned n_strcspn, n_fnmatch, n_strncmp;

int strncmp(const char *a, const char *b, size_t n)
{
	if (counting)
		n_strncmp++;
	for (; n; a++, b++, n--)
		if (*a != *b || !*a)
			return (unsigned char)*a - (unsigned char)*b;
	return 0;
}

size_t strcspn(const char *s, const char *reject)
{
	size_t n = 0;

	if (counting)
		n_strcspn++;
	while (s[n] && !strchr(reject, s[n]))
		n++;
	return n;
}

int fnmatch(const char *pattern, const char *string, int flags)
{
	static int (*real)(const char *, const char *, int);

	if (!real)
		real = (int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "fnmatch");
	if (counting)
		n_fnmatch++;
	return real(pattern, string, flags);
}

static const struct {
	const char *glob;
	enum pol_glob_kind kind;
	size_t len;
} kinds[] = {
	{ "nvme0n1", POL_GLOB_EXACT, 7 },
	{ "ng0n1", POL_GLOB_EXACT, 5 },
	{ "", POL_GLOB_EXACT, 0 },
	{ "a.b/c", POL_GLOB_EXACT, 5 },
	{ "nvme*", POL_GLOB_PREFIX, 4 },
	{ "*", POL_GLOB_PREFIX, 0 },
	{ "ng0n*", POL_GLOB_PREFIX, 4 },
	{ "nvme**", POL_GLOB_FNMATCH, 4 },	/* two stars: not the prefix form */
	{ "*n1", POL_GLOB_FNMATCH, 0 },
	{ "nv*me", POL_GLOB_FNMATCH, 2 },
	{ "nvme?n1", POL_GLOB_FNMATCH, 4 },
	{ "nvme[0-3]n1", POL_GLOB_FNMATCH, 4 },
	{ "nvme[!0]*", POL_GLOB_FNMATCH, 4 },
	{ "nvme\\*", POL_GLOB_FNMATCH, 4 },	/* an escaped star is a literal */
	{ "nvme\\", POL_GLOB_FNMATCH, 4 },	/* a trailing backslash */
	{ "\\n*", POL_GLOB_FNMATCH, 0 },
	{ "[", POL_GLOB_FNMATCH, 0 },
	{ "nvme[*", POL_GLOB_FNMATCH, 4 },	/* an unclosed bracket */
};

static const char *const names[] = {
	"", "n", "nvme", "nvme*", "nvme\\", "nvme0", "nvme0n1", "nvme0n1x", "nvme1n1", "nvme4n1",
	"nvme12n1", "ng0n1", "ng0n", "ng0n12", "nvme**", "nvme[0", "nvme[*", "a.b/c", "a.b/cd",
	".nvme", "xnvme0n1", "nvme/0", "nvmex", "nv", "nvmn1", "n1", "[", "\\n1", "nvme?n1",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_kinds(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(kinds); i++) {
		struct pol_glob g;

		pol_glob_init(&g, kinds[i].glob);
		if (g.kind != kinds[i].kind || g.len != kinds[i].len || g.text != kinds[i].glob)
			fail_msg("'%s': kind %d len %zu, want %d %zu", kinds[i].glob, g.kind,
				 g.len, kinds[i].kind, kinds[i].len);
	}
}

/* Each form, the fallback included, answers as fnmatch() for every name. */
static void test_same_as_fnmatch(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(kinds); i++) {
		struct pol_glob g;

		pol_glob_init(&g, kinds[i].glob);
		for (size_t j = 0; j < N(names); j++)
			if (pol_glob_match(&g, names[j]) != !fnmatch(kinds[i].glob, names[j], 0))
				fail_msg("glob '%s' name '%s': %d, fnmatch says %d", kinds[i].glob,
					 names[j], pol_glob_match(&g, names[j]),
					 !fnmatch(kinds[i].glob, names[j], 0));
	}
}

static struct ucmd_policy *load(const char *devices)
{
	char text[256];
	char err[256] = "";
	struct ucmd_policy *p = NULL;
	int ret;

	snprintf(text, sizeof(text),
		 "[policy]\ndefault = deny\n[rule]\naction = allow\ndevice = %s\n", devices);
	ret = ucmd_policy_load_string("t.ini", text, strlen(text), &p, err, sizeof(err));
	if (ret)
		fail_msg("'%s': %s", devices, err);
	return p;
}

static bool judge(const struct ucmd_policy *p, const char *dev, enum ucmd_verb verb,
		  unsigned f_mode)
{
	struct ucmd_cred c;
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD, .cred = &c,
					 .f_mode = f_mode, .desc = &d };
	bool was = counting;
	bool ret;

	counting = false;	/* only the judging */
	memset(&c, 0, sizeof(c));
	ucmd_desc_init(&d, dev, TP_IO, 0);
	policy_desc_for_verb(&d, verb);
	d.nsid = 1;
	counting = was;
	ret = policy_allows_subject(p, &s);
	return ret;
}

static bool allows(const struct ucmd_policy *p, const char *dev)
{
	return judge(p, dev, UCMD_VERB_READ, FMODE_READ);
}

/*
 * Through a loaded policy: a rule with one glob allows what fnmatch()
 * matches (globs with a space or comma cannot be written in a list, and
 * the empty one is not a list item, so those are left out).
 */
static void test_policy_same_as_fnmatch(void **state)
{
	(void)state;
	for (size_t i = 0; i < N(kinds); i++) {
		struct ucmd_policy *p;

		if (!kinds[i].glob[0])
			continue;
		p = load(kinds[i].glob);
		for (size_t j = 0; j < N(names); j++)
			if (names[j][0] && allows(p, names[j]) != !fnmatch(kinds[i].glob, names[j], 0))
				fail_msg("rule device = %s on '%s': %d", kinds[i].glob, names[j],
					 allows(p, names[j]));
		ucmd_policy_put(p);
	}
}

/* Judging commands against exact and prefix globs scans no glob and calls no fnmatch(). */
static void test_no_scan_per_command(void **state)
{
	struct ucmd_policy *p = load("ng0n1, ng1n1, nvme2n1, nvme*");

	(void)state;
	n_strcspn = n_fnmatch = 0;
	counting = true;
	for (int i = 0; i < 100; i++) {
		assert_true(allows(p, "nvme0n1"));
		assert_true(allows(p, "ng1n1"));
		assert_false(allows(p, "ng0n12"));
	}
	counting = false;
	ucmd_policy_put(p);
	if (n_strcspn || n_fnmatch)
		fail_msg("300 commands: %u strcspn(), %u fnmatch()", n_strcspn, n_fnmatch);
}

/* A glob that needs it still goes to fnmatch(), once per judged command. */
static void test_fallback_calls_fnmatch(void **state)
{
	struct ucmd_policy *p = load("nvme[0-3]n1");

	(void)state;
	n_strcspn = n_fnmatch = 0;
	counting = true;
	assert_true(allows(p, "nvme2n1"));
	assert_false(allows(p, "nvme4n1"));
	counting = false;
	ucmd_policy_put(p);
	assert_int_equal(n_fnmatch, 2);
	assert_int_equal(n_strcspn, 0);
}

/*
 * The default policy's command rules all name "nvme*, ng*" and differ in
 * opcode, admin, direction: a read by a caller without CAP_SYS_ADMIN is
 * turned away by those before any device is compared, and allowed by the
 * last rule, which names none. A write on a read-only file still reaches
 * the device of the rule that denies it.
 */
static void test_default_policy_read_compares_no_device(void **state)
{
	struct ucmd_policy *p = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(ucmd_policy_load_default(&p, err, sizeof(err)), 0);
	n_strcspn = n_fnmatch = n_strncmp = 0;
	counting = true;
	for (int i = 0; i < 100; i++)
		assert_true(judge(p, "ng0n1", UCMD_VERB_READ, FMODE_READ));
	counting = false;
	if (n_strcspn || n_fnmatch || n_strncmp)
		fail_msg("100 reads: %u strcspn(), %u fnmatch(), %u strncmp()", n_strcspn,
			 n_fnmatch, n_strncmp);
	counting = true;
	assert_false(judge(p, "ng0n1", UCMD_VERB_WRITE, FMODE_READ));
	assert_true(judge(p, "ng0n1", UCMD_VERB_WRITE, FMODE_READ | FMODE_WRITE));
	assert_true(judge(p, "null0", UCMD_VERB_WRITE, FMODE_READ));	/* no rule names it */
	counting = false;
	assert_true(n_strncmp > 0);
	ucmd_policy_put(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_same_as_fnmatch),
		cmocka_unit_test(test_policy_same_as_fnmatch),
		cmocka_unit_test(test_no_scan_per_command),
		cmocka_unit_test(test_fallback_calls_fnmatch),
		cmocka_unit_test(test_default_policy_read_compares_no_device),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
