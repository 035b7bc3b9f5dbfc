/* SPDX-License-Identifier: MIT */
/*
 * ucmd policy check FILE      validate a policy (file:line: problem on error)
 * ucmd policy explain [...]   what a policy decides for a caller and a
 *                             command, and which rule decides, without
 *                             running anything
 * Exit status: 0 valid / allowed, 1 invalid / denied, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ucmd/security.h"
#include "ucmd/ucmd.h"

static int policy_check(struct cli *cli, int argc, char **argv)
{
	struct ucmd_policy *p;
	char err[512];

	if (argc != 2) {
		fprintf(stderr, "usage: ucmd policy check FILE\n");
		return 2;
	}
	if (ucmd_policy_load_file(argv[1], &p, err, sizeof(err))) {
		if (cli->fmt == OUT_JSON) {
			json_object *o = json_object_new_object();
			json_object_object_add(o, "valid", json_object_new_boolean(false));
			json_object_object_add(o, "error", json_object_new_string(err));
			json_print(o);
		}
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (cli->fmt == OUT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "valid", json_object_new_boolean(true));
		json_object_object_add(o, "rules", json_object_new_int((int)ucmd_policy_nr_rules(p)));
		json_print(o);
	} else {
		printf("%s: valid, %u rules\n", argv[1], ucmd_policy_nr_rules(p));
	}
	ucmd_policy_put(p);
	return 0;
}

static void explain_usage_to(FILE *f)
{
	fprintf(f, "usage: ucmd policy explain [--uid U] [--gid G] [--groups a,b] "
			"[--device ng0n1] [--verb read] [--nsid N]\n"
			"  [--slba X --nlb Y | --offset B --length B] [--mode rw|ro|wo] "
			"[--policy FILE]\n  [--cap-sys-admin yes|no] [--admin-cmd yes|no] "
			"[--destructive yes|no] [--select N] [--opcode N]\n"
			"  [--hook cmd|rw|sqpoll|override-creds] [--range SLBA+NLB ...]\n"
			"  [--hostnqn NQN] [--hostid UUID]   (an NVMe/TCP host of ucmdd --nvme-tcp)\n"
			"A command of a verb that touches blocks, given no range, is "
			"judged as if it could touch any\n(range unknown: a deny rule with "
			"a range matches it). --slba/--nlb is Copy's destination\nor DSM's "
			"first range; each --range adds a Copy source or a DSM range.\n");
}

static void explain_usage(void)
{
	explain_usage_to(stderr);
}

static int policy_explain(struct cli *cli, int argc, char **argv)
{
	struct explain_args a = { 0 };
	struct ucmd_explain_result v;
	struct ucmd_policy *p;
	int ret;

	ucmd_explain_init(&a.x);
	if (explain_args_parse(&a, argc, argv)) {
		if (a.bad)
			fprintf(stderr, "ucmd policy explain: bad option or value%s%s\n",
				*a.bad ? ": " : "", a.bad);
		explain_usage();
		return 2;
	}
	ret = a.policy ? ucmd_policy_load_file(a.policy, &p, NULL, 0)
		       : ucmd_policy_load_default(&p, NULL, 0);
	if (ret) {
		fprintf(stderr, "%s\n", ucmd_last_error());
		return 1;
	}
	ret = ucmd_policy_explain(p, &a.x, &v);
	ucmd_policy_put(p);
	if (ret) {
		/* an unknown verb: a usage error, as any bad value */
		fprintf(stderr, "ucmd policy explain: %s\n", ucmd_last_error());
		explain_usage();
		return 2;
	}
	if (cli->fmt == OUT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "decision",
				       json_object_new_string(v.allow ? "allow" : "deny"));
		json_object_object_add(o, "rule", json_object_new_string(v.rule));
		json_object_object_add(o, "audit", json_object_new_boolean(v.audit || !v.allow));
		json_object_object_add(o, "range_unknown",
				       json_object_new_boolean(v.range_unknown));
		json_print(o);
	} else {
		printf("%s (%s)%s%s\n", v.allow ? "allow" : "deny", v.rule,
		       v.audit && v.allow ? ", audited" : "",
		       v.range_unknown ? ", range unknown: judged as any range" : "");
	}
	return v.allow ? 0 : 1;
}

/* load|unload|status|audit --bpf: the BPF LSM enforcer (cmd_policy_bpf.c) */
int cmd_policy_bpf(struct cli *cli, int argc, char **argv);

static void policy_usage(FILE *f)
{
	fprintf(f, "usage: ucmd policy check FILE\n"
		   "       ucmd policy explain [OPTIONS]   (see ucmd policy explain --help)\n"
		   "       ucmd policy load|unload|status|audit --bpf ...   (Linux's devices)\n");
}

static bool is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

int cmd_policy(struct cli *cli, int argc, char **argv)
{
	/* argv[0] is "policy"; --help anywhere only prints the usage, and succeeds */
	for (int i = 1; i < argc; i++) {
		if (!is_help(argv[i]))
			continue;
		if (!strcmp(argv[1], "explain"))
			explain_usage_to(stdout);
		else
			policy_usage(stdout);
		return 0;
	}
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], "--bpf"))
			return cmd_policy_bpf(cli, argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return policy_check(cli, argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "explain"))
		return policy_explain(cli, argc - 1, argv + 1);
	policy_usage(stderr);
	return 2;
}
