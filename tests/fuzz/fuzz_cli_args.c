/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the ucmd CLI's option parsing (tools/ucmd/args.c with
 * every command's table, cmd_tab.c, and tools/bench/opts.c) on arbitrary
 * argv, without running any command. The input split on NUL bytes is argv
 * after "ucmd" (at most MAX_ARGS words): the global options are parsed,
 * then the named command's options with its table, as main() does before
 * opening a session. Whatever the parser accepts must be within the
 * bounds the table declares (every number at most its max, non-zero where
 * it says so, required options present, lists within their capacity);
 * nothing may crash or leak, and parsers run back to back in one process,
 * as getopt's state must allow. Help, completion and the option dump run
 * on the same words too.
 */
#include <getopt.h>
#include <stdio.h>
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

/* every accepted value within what its table entry allows */
static void check_bounds(const struct cmd_spec *c, const struct cmd_args *a)
{
	for (int i = 0; c->opts[i].lname; i++) {
		const struct opt *o = &c->opts[i];
		const void *p = (const char *)a + o->off;
		uint64_t max = o->max ? o->max : o->type == OPT_U32 ? UINT32_MAX : UINT64_MAX;

		if ((o->flags & OPT_REQUIRED))
			check(a->seen[i]);	/* no global -n is given here */
		if (!a->seen[i])
			continue;
		switch (o->type) {
		case OPT_U32:
			check(*(const uint32_t *)p <= max);
			check(!(o->flags & OPT_NONZERO) || *(const uint32_t *)p);
			break;
		case OPT_U64:
		case OPT_SIZE:	/* bytes after the suffix is applied */
			check(*(const uint64_t *)p <= max);
			break;
		case OPT_LIST: {
			const struct u64_list *l = p;

			check(l->n >= 1 && l->n <= CLI_MAX_RANGES);
			for (int k = 0; k < l->n; k++)
				check(l->v[k] <= max);
			break;
		}
		case OPT_SANACT:
			check(*(const uint32_t *)p >= 1 && *(const uint32_t *)p <= 4);
			break;
		case OPT_RANKING:
			check(a->ranking == TOPO_NAMESPACE || a->ranking == TOPO_CTRL);
			break;
		case OPT_FMT:
			check(a->fmt <= (enum out_fmt)max);
			break;
		case OPT_STR:
			check(*(const char *const *)p && **(const char *const *)p);
			break;
		case OPT_FLAG:
			check(*(const bool *)p);
			break;
		}
	}
	check(!a->dev || !strncmp(a->dev, "/dev/", 5));
}

static void parse_command(const char *name, int argc, char **argv)
{
	const struct cmd_spec *c = cli_spec_find(name);
	struct cmd_args a;
	char err[256];
	FILE *null = fopen("/dev/null", "w");

	if (!null)
		abort();
	if (c && c->opts) {
		memset(&a, 0, sizeof(a));
		int ret = cli_args_parse(c, &a, argc, argv, err, sizeof(err));

		check(ret == 0 || ret == 1 || (ret < 0 && err[0]));
		if (ret == 0)
			check_bounds(c, &a);
		cli_args_help(null, c);
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

		bench_opts_default(&o);
		(void)bench_opts_parse(&o, argc, argv, err, sizeof(err));
	} else if (!c) {
		(void)cli_spec_suggest(name);
	}
	/* completion of these very words, at each position */
	for (int cw = 0; cw <= argc; cw++)
		cli_args_complete(null, cw, argc, argv);
	fclose(null);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct cli cli = { .fmt = OUT_NORMAL, .ctrl_dir = "./ucmd-ctrl" };
	char *argv[MAX_ARGS + 2], *buf = malloc(size + 1);
	const char *why;
	bool version;
	int argc = 0, k;

	if (!buf)
		abort();
	memcpy(buf, in, size);
	buf[size] = 0;
	argv[argc++] = "ucmd";
	for (size_t i = 0; i <= size && argc <= MAX_ARGS;) {
		argv[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	argv[argc] = NULL;

	k = cli_global_parse(&cli, argc, argv, &why, &version);
	if (k > 0) {
		check(k < argc && cli.fmt <= OUT_BINARY);
		parse_command(argv[k], argc - k, argv + k);
	} else if (k < 0) {
		check(why != NULL);
	}
	free(buf);
	return 0;
}
