/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the ucmd CLI's option parsing (tools/ucmd/args.c and
 * tools/bench/opts.c) on arbitrary argv, without running any command. The
 * input split on NUL bytes is argv after "ucmd" (at most MAX_ARGS words):
 * the global options are parsed, then the named command's options, as
 * main() would before opening a session. Whatever a parser accepts must be
 * within the bounds the commands rely on (block counts, list lengths,
 * feature ids...); nothing may crash or leak, and parsers run back to back
 * in one process, as getopt's state must allow.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "opts.h"

#define MAX_ARGS 64

static void check(bool ok)
{
	if (!ok)
		abort();
}

static void parse_command(const char *name, int argc, char **argv)
{
	struct rw_args rw;
	struct passthru_args pt;
	struct range_args rg;
	struct ranges_args rs;
	struct feature_args ft;
	struct format_args fm;
	struct create_ns_args cn;
	struct attach_args at;
	uint64_t bytes = 64u << 20;	/* cmd_run's default */
	uint32_t n;

	if (!strcmp(name, "read") || !strcmp(name, "write") || !strcmp(name, "compare")) {
		if (!rw_args_parse(&rw, argc, argv))
			check(rw.nlb <= 0xffff);
	} else if (!strcmp(name, "io-passthru") || !strcmp(name, "admin-passthru")) {
		if (!passthru_args_parse(&pt, argc, argv))
			check(!(pt.rd && pt.wr) && pt.cmd.data_len <= (64u << 20));
	} else if (!strcmp(name, "write-zeroes") || !strcmp(name, "write-uncor") ||
		   !strcmp(name, "verify")) {
		bool deac = !strcmp(name, "write-zeroes");

		if (!range_args_parse(&rg, argc, argv, deac))
			check(rg.nlb <= 0xffff && (deac || !rg.deac));
	} else if (!strcmp(name, "dsm")) {
		if (!dsm_args_parse(&rs, argc, argv))
			check(rs.n >= 1 && rs.n <= CLI_MAX_RANGES);
	} else if (!strcmp(name, "copy")) {
		if (!copy_args_parse(&rs, argc, argv))
			check(rs.n >= 1 && rs.n <= CLI_MAX_RANGES);
	} else if (!strcmp(name, "error-log")) {
		if (!error_log_args_parse(&n, argc, argv))
			check(n >= 1 && n <= 256);
	} else if (!strcmp(name, "get-feature") || !strcmp(name, "set-feature")) {
		bool set = name[0] == 's';

		if (!feature_args_parse(&ft, argc, argv, set))
			check(ft.fid <= 0xff && ft.sel <= 3 && (set || !ft.save));
	} else if (!strcmp(name, "format")) {
		if (!format_args_parse(&fm, argc, argv))
			check(fm.lbaf <= 63 && fm.ses <= 7 && fm.ms <= 1);
	} else if (!strcmp(name, "create-ns")) {
		if (!create_ns_args_parse(&cn, argc, argv))
			check(cn.nsze && cn.flbas <= 0xff);
	} else if (!strcmp(name, "attach-ns") || !strcmp(name, "detach-ns")) {
		if (!attach_args_parse(&at, argc, argv)) {
			check(at.n <= 32);
			for (uint32_t i = 0; i < at.n; i++)
				check(at.ids[i] <= 0xffff);
		}
	} else if (!strcmp(name, "run")) {
		if (!run_args_parse(&bytes, 128 * 1024, argc, argv))
			check(bytes && bytes % (128 * 1024) == 0);
	} else if (!strcmp(name, "policy") && argc >= 2 && !strcmp(argv[1], "explain")) {
		struct explain_args ex;

		memset(&ex, 0, sizeof(ex));
		ucmd_explain_init(&ex.x);
		if (!explain_args_parse(&ex, argc - 1, argv + 1))
			check(ex.x.hook <= UCMD_EXPLAIN_OVERRIDE_CREDS &&
			      ex.x.ngroups <= UCMD_EXPLAIN_GROUPS_MAX && ex.x.device && ex.x.verb &&
			      ex.x.nr_ranges <= UCMD_EXPLAIN_RANGES_MAX &&
			      ex.x.opcode >= 0 && ex.x.opcode < 256);
	} else if (!strcmp(name, "bench")) {
		struct bench_opts o;
		char err[256];

		bench_opts_default(&o);
		(void)bench_opts_parse(&o, argc, argv, err, sizeof(err));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct cli cli = { .fmt = OUT_NORMAL, .ctrl_dir = "./ucmd-ctrl" };
	char *argv[MAX_ARGS + 2], *buf = malloc(size + 1);
	const char *why;
	int argc = 0, k;

	if (!buf)
		abort();
	opterr = 0;	/* getopt's complaints are the commands' business */
	memcpy(buf, in, size);
	buf[size] = 0;
	argv[argc++] = "ucmd";
	for (size_t i = 0; i <= size && argc <= MAX_ARGS;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;

	k = cli_global_parse(&cli, argc, argv, &why);
	if (k > 0) {
		check(k < argc && (cli.fmt == OUT_NORMAL || cli.fmt == OUT_JSON));
		parse_command(argv[k], argc - k, argv + k);
	}
	free(buf);
	return 0;
}
