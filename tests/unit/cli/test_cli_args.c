/* SPDX-License-Identifier: MIT */
/*
 * The CLI's table-driven parser (tools/ucmd/args.c, cmd_tab.c): nvme-cli's
 * names and defaults, each class of bad input refused with a message that
 * names the option, help winning over everything, the global -n and -o as
 * defaults, and the suggestion and completion from the tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "args.h"
#include "cli.h"

static char err[256];

/* parse NAME ARGS... (NULL-terminated) for command NAME into a */
static int parse(struct cmd_args *a, const char *name, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;

	argv[argc++] = (char *)name;
	va_start(ap, name);
	for (char *w; (w = va_arg(ap, char *));)
		argv[argc++] = w;
	va_end(ap);
	argv[argc] = NULL;
	err[0] = 0;
	return cli_args_parse(cli_spec_find(name), a, argc, argv, err, sizeof(err));
}

static void test_defaults_and_names(void **state)
{
	struct cmd_args a = { 0 };

	(void)state;
	assert_int_equal(parse(&a, "error-log", NULL), 0);
	assert_int_equal(a.log_entries, 64);		/* nvme-cli's default */
	assert_int_equal(parse(&a, "self-test-log", NULL), 0);
	assert_int_equal(a.dst_entries, 20);
	assert_int_equal(parse(&a, "fw-download", "-f", "x.bin", NULL), 0);
	assert_int_equal(a.xfer, 4096);
	assert_string_equal(a.fw, "x.bin");
	assert_int_equal(parse(&a, "set-feature", "-f", "4", "-v", "0x15e", "-s", NULL), 0);
	assert_int_equal(a.fid, 4);
	assert_int_equal(a.value, 350);
	assert_true(a.save);
	/* io-passthru's -o is the opcode, not the output format */
	assert_int_equal(parse(&a, "io-passthru", "-o", "2", "-l", "512", "-r", "-b", NULL), 0);
	assert_int_equal(a.opcode, 2);
	assert_int_equal(a.fmt, OUT_NORMAL);
	assert_true(a.rd && a.raw);
	/* get-log's -o is the log page offset */
	assert_int_equal(parse(&a, "get-log", "-i", "2", "-l", "512", "-o", "8", NULL), 0);
	assert_int_equal(a.lpo, 8);
	assert_int_equal(parse(&a, "sanitize", "--sanact=start-crypto-erase", NULL), 0);
	assert_int_equal(a.sanact, 4);
	assert_int_equal(parse(&a, "dsm", "--slbs=1,2", "-b", "3,4", "-d", NULL), 0);
	assert_int_equal(a.slbs.n, 2);
	assert_int_equal(a.blocks.v[1], 4);
	assert_true(a.ad);
	/* show-topology: nvme-cli's ranking by namespace unless -r ctrl */
	assert_int_equal(parse(&a, "show-topology", NULL), 0);
	assert_int_equal(a.ranking, TOPO_NAMESPACE);
	assert_int_equal(parse(&a, "show-topology", "-r", "ctrl", "-o", "binary", NULL), 0);
	assert_int_equal(a.ranking, TOPO_CTRL);
	assert_int_equal(a.fmt, OUT_BINARY);
	assert_int_equal(parse(&a, "show-topology", "--ranking=namespace", NULL), 0);
	assert_int_equal(a.ranking, TOPO_NAMESPACE);
}

static void test_globals_and_device(void **state)
{
	struct cmd_args a = { .nsid = 3, .fmt = OUT_JSON };

	(void)state;
	assert_int_equal(parse(&a, "id-ns", NULL), 0);
	assert_int_equal(a.nsid, 3);			/* the global -n */
	assert_int_equal(a.fmt, OUT_JSON);		/* the global -o */
	assert_false(a.nsid_given);
	a.nsid = 3;
	assert_int_equal(parse(&a, "id-ns", "/dev/ng0n2", "-n", "2", "-o", "binary", NULL), 0);
	assert_int_equal(a.nsid, 2);
	assert_true(a.nsid_given);
	assert_int_equal(a.fmt, OUT_BINARY);
	assert_string_equal(a.dev, "/dev/ng0n2");
	/* a required -n is satisfied by the global one */
	memset(&a, 0, sizeof(a));
	a.nsid = 5;
	assert_int_equal(parse(&a, "delete-ns", NULL), 0);
	assert_int_equal(a.nsid, 5);
	memset(&a, 0, sizeof(a));
	assert_int_equal(parse(&a, "delete-ns", NULL), -EINVAL);
	assert_non_null(strstr(err, "--namespace-id is required"));
}

static void test_help_wins(void **state)
{
	struct cmd_args a = { 0 };

	(void)state;
	assert_int_equal(parse(&a, "delete-ns", "-n", "1", "--help", NULL), 1);
	assert_int_equal(parse(&a, "format", "--bogus", "-h", NULL), 1);
	assert_int_equal(parse(&a, "read", "-s", "xyz", "--help", NULL), 1);
	/* after --, -h is an argument, not help */
	assert_int_equal(parse(&a, "flush", "--", "-h", NULL), -EINVAL);
}

static void test_bad_input_named(void **state)
{
	static const struct { const char *cmd, *a1, *a2, *want; } bad[] = {
		{ "id-ctrl", "--bogus", NULL, "'--bogus'" },
		{ "id-ctrl", "-Z", NULL, "'-Z'" },
		{ "format", "--lbaf", NULL, "'--lbaf' requires an argument" },
		{ "format", "--lbaf", "64", "--lbaf" },
		{ "read", "-c", "65536", "--block-count" },
		{ "read", "-s", "-1", "--start-block" },
		{ "read", "-s", "", "--start-block" },
		{ "error-log", "-e", "0", "--log-entries" },
		{ "id-ns", "-n", "0", "--namespace-id" },
		{ "list", "-o", "binary", "--output-format" },
		{ "id-ctrl", "-o", "yaml", "--output-format" },
		{ "sanitize", "-a", "5", "--sanact" },
		{ "dsm", "--slbs", "1,,x", "--slbs" },
		{ "copy", "--blocks", "70000", "--blocks" },
		{ "attach-ns", "-c", "65536", "--controllers" },
		{ "io-passthru", "-l", "99999999", "--data-len" },
		{ "get-feature", "-s", "4", "--sel" },
		{ "fw-download", "--fw", "", "--fw" },
		{ "id-ns", "stray", NULL, "unexpected argument 'stray'" },
		{ "run", "/dev/ng0n1", NULL, "unexpected argument" },
		{ "get-log", "-i", "2", "--log-len is required" },
		{ "show-topology", "-r", "bogus", "invalid value 'bogus' for --ranking" },
		{ "show-topology", "-r", "", "--ranking" },
		{ "show-topology", "/dev/nvme0n1", NULL, "unexpected argument" },
	};
	struct cmd_args a;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&a, 0, sizeof(a));
		assert_int_equal(parse(&a, bad[i].cmd, bad[i].a1, bad[i].a2, NULL), -EINVAL);
		if (!strstr(err, bad[i].want))
			fail_msg("%s %s %s: '%s' lacks '%s'", bad[i].cmd, bad[i].a1,
				 bad[i].a2 ? bad[i].a2 : "", err, bad[i].want);
	}
}

static void test_every_table(void **state)
{
	(void)state;
	for (const struct cmd_spec *c = cli_specs; c->name; c++) {
		if (!c->opts)
			continue;
		for (const struct opt *o = c->opts; o->lname; o++) {
			assert_true(o->help && *o->help);
			assert_true(o->sname != 'h');	/* -h is help, always */
			for (const struct opt *p = o + 1; p->lname; p++) {
				assert_string_not_equal(o->lname, p->lname);
				if (o->sname)
					assert_true(o->sname != p->sname);
			}
		}
	}
}

static void test_suggest_and_complete(void **state)
{
	char *words[] = { "ucmd", "delete-ns", "--na" };
	char buf[4096];
	FILE *f;

	(void)state;
	assert_string_equal(cli_spec_suggest("id-ctl"), "id-ctrl");
	assert_string_equal(cli_spec_suggest("smartlog"), "smart-log");
	assert_null(cli_spec_suggest("zzzzzzzz"));
	f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	cli_args_complete(f, 2, 3, words);
	fclose(f);
	assert_string_equal(buf, "--namespace-id\n");
	/* show-topology -r: its two rankings */
	char *topo[] = { "ucmd", "show-topology", "-r", "" };
	f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	cli_args_complete(f, 3, 4, topo);
	fclose(f);
	assert_string_equal(buf, "namespace\nctrl\n");
	topo[3] = "c";
	f = fmemopen(buf, sizeof(buf), "w");
	assert_non_null(f);
	cli_args_complete(f, 3, 4, topo);
	fclose(f);
	assert_string_equal(buf, "ctrl\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_and_names),
		cmocka_unit_test(test_globals_and_device),
		cmocka_unit_test(test_help_wins),
		cmocka_unit_test(test_bad_input_named),
		cmocka_unit_test(test_every_table),
		cmocka_unit_test(test_suggest_and_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
