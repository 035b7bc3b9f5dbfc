/* SPDX-License-Identifier: MIT */
/*
 * ucmd policy check FILE      validate a policy (file:line: problem on error)
 * ucmd policy explain [...]   what a policy decides for a caller and a
 *                             command, and which rule decides, without
 *                             running anything
 * Exit status: 0 valid / allowed, 1 invalid / denied, 2 usage error.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/file.h"
#include "security/security.h"

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

static int parse_yesno(const char *s, bool *out)
{
	if (!strcmp(s, "yes"))
		*out = true;
	else if (!strcmp(s, "no"))
		*out = false;
	else
		return -1;
	return 0;
}

static int parse_groups(char *s, struct ucmd_cred *c)
{
	c->ngroups = 0;
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		uint32_t g;
		if (parse_u32(tok, &g) || c->ngroups == UCMD_NGROUPS_MAX)
			return -1;
		c->groups[c->ngroups++] = g;
	}
	return 0;
}

static const char *const hook_names[] = { "cmd", "rw", "sqpoll", "override-creds" };

#define EXPLAIN_MAX_RANGES 256

struct explain_args {
	struct ucmd_cred cred;
	struct ucmd_cmd_desc d;
	struct ucmd_desc_range ranges[EXPLAIN_MAX_RANGES];	/* --range */
	const char *policy;
	unsigned f_mode;
	int hook;
	bool cap_given;
};

/* --range SLBA+NLB: one more range (a Copy source, a DSM entry) */
static int parse_range_arg(char *s, struct explain_args *a)
{
	struct ucmd_desc_range *r;
	char *plus = strchr(s, '+');

	if (!plus || a->d.nr_ranges == EXPLAIN_MAX_RANGES)
		return -1;
	*plus = 0;
	r = &a->ranges[a->d.nr_ranges];
	if (parse_u64(s, &r->slba) || parse_u64(plus + 1, &r->nlb))
		return -1;
	/* bytes at 512-byte blocks, as for --slba/--nlb */
	r->offset = r->slba * 512;
	r->length = r->nlb * 512;
	a->d.ranges = a->ranges;
	a->d.nr_ranges++;
	return 0;
}

/* Verbs whose commands read or change logical blocks. */
static bool verb_touches_lbas(enum ucmd_verb v)
{
	switch (v) {
	case UCMD_VERB_READ: case UCMD_VERB_WRITE: case UCMD_VERB_TRIM:
	case UCMD_VERB_WRITE_ZEROES: case UCMD_VERB_WRITE_UNCOR: case UCMD_VERB_COMPARE:
	case UCMD_VERB_VERIFY: case UCMD_VERB_COPY: case UCMD_VERB_FORMAT:
	case UCMD_VERB_SANITIZE: case UCMD_VERB_VENDOR: case UCMD_VERB_UNKNOWN:
		return true;
	default:
		return false;
	}
}

static int explain_opts(int argc, char **argv, struct explain_args *a)
{
	static const struct option opts[] = {
		{ "uid", required_argument, 0, 'u' },	{ "gid", required_argument, 0, 'g' },
		{ "groups", required_argument, 0, 'G' }, { "device", required_argument, 0, 'd' },
		{ "verb", required_argument, 0, 'v' },	{ "nsid", required_argument, 0, 'n' },
		{ "slba", required_argument, 0, 's' },	{ "nlb", required_argument, 0, 'c' },
		{ "offset", required_argument, 0, 'o' }, { "length", required_argument, 0, 'l' },
		{ "mode", required_argument, 0, 'm' },	{ "policy", required_argument, 0, 'p' },
		{ "cap-sys-admin", required_argument, 0, 'A' },
		{ "admin-cmd", required_argument, 0, 'a' },
		{ "destructive", required_argument, 0, 'D' },
		{ "select", required_argument, 0, 'S' }, { "opcode", required_argument, 0, 'O' },
		{ "hook", required_argument, 0, 'H' },	{ "range", required_argument, 0, 'r' },
		{ 0, 0, 0, 0 },
	};
	uint64_t v64;
	uint32_t v;
	int c, verb;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true, b = false;
		switch (c) {
		case 'u': ok = !parse_u32(optarg, &v); a->cred.uid = a->cred.euid = v;
			if (!a->cap_given)
				a->cred.cap_sys_admin = v == 0;
			break;
		case 'g': ok = !parse_u32(optarg, &v); a->cred.gid = a->cred.egid = v; break;
		case 'G': ok = !parse_groups(optarg, &a->cred); break;
		case 'd': snprintf(a->d.device, sizeof(a->d.device), "%s", optarg); break;
		case 'v':
			verb = ucmd_verb_from_name(optarg);
			ok = verb >= 0;
			if (ok)
				ucmd_policy_desc_for_verb(&a->d, (enum ucmd_verb)verb);
			break;
		case 'n': ok = !parse_u32(optarg, &a->d.nsid); break;
		case 's': ok = !parse_u64(optarg, &a->d.slba); a->d.has_range = true; break;
		case 'c': ok = !parse_u64(optarg, &a->d.nlb); a->d.has_range = true; break;
		case 'r': ok = !parse_range_arg(optarg, a); break;
		case 'o': ok = !parse_u64(optarg, &a->d.offset); break;
		case 'l': ok = !parse_u64(optarg, &a->d.length); break;
		case 'm':
			a->f_mode = !strcmp(optarg, "rw") ? FMODE_READ | FMODE_WRITE :
				    !strcmp(optarg, "ro") ? FMODE_READ :
				    !strcmp(optarg, "wo") ? FMODE_WRITE : 0;
			ok = a->f_mode != 0;
			break;
		case 'p': a->policy = optarg; break;
		case 'A': ok = !parse_yesno(optarg, &b); a->cred.cap_sys_admin = b;
			a->cap_given = true;
			break;
		case 'a': ok = !parse_yesno(optarg, &b); a->d.admin = b; break;
		case 'D': ok = !parse_yesno(optarg, &b); a->d.destructive = b; break;
		case 'S': ok = !parse_u32(optarg, &a->d.select); a->d.has_select = true; break;
		case 'O': ok = !parse_u64(optarg, &v64) && v64 < 256; a->d.opcode = (uint8_t)v64;
			break;
		case 'H':
			a->hook = -1;
			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, hook_names[i]))
					a->hook = i;
			ok = a->hook >= 0;
			break;
		default: ok = false; break;
		}
		if (!ok) {
			fprintf(stderr, "ucmd policy explain: bad option or value%s%s\n",
				optarg ? ": " : "", optarg ? optarg : "");
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

static int policy_explain(struct cli *cli, int argc, char **argv)
{
	struct explain_args a = { .f_mode = FMODE_READ | FMODE_WRITE };
	struct ucmd_policy_subject s;
	struct ucmd_policy_verdict v;
	struct ucmd_policy *p;
	char err[512];
	int ret;

	ucmd_cred_current(&a.cred);
	ucmd_desc_init(&a.d, "ng0n1", NVME_URING_CMD_IO, 0);
	ucmd_policy_desc_for_verb(&a.d, UCMD_VERB_READ);
	a.d.nsid = 1;
	if (explain_opts(argc, argv, &a)) {
		fprintf(stderr, "usage: ucmd policy explain [--uid U] [--gid G] [--groups a,b] "
				"[--device ng0n1] [--verb read] [--nsid N]\n"
				"  [--slba X --nlb Y | --offset B --length B] [--mode rw|ro|wo] "
				"[--policy FILE]\n  [--cap-sys-admin yes|no] [--admin-cmd yes|no] "
				"[--destructive yes|no] [--select N] [--opcode N]\n"
				"  [--hook cmd|rw|sqpoll|override-creds] [--range SLBA+NLB ...]\n"
				"A command of a verb that touches blocks, given no range, is "
				"judged as if it could touch any\n(range unknown: a deny rule with "
				"a range matches it). --slba/--nlb is Copy's destination\nor DSM's "
				"first range; each --range adds a Copy source or a DSM range.\n");
		return 2;
	}
	/* no range given: as the engine judges a list it cannot read */
	if (!a.d.has_range && !a.d.length && !a.d.nr_ranges && verb_touches_lbas(a.d.verb))
		a.d.range_unknown = true;
	/* a block range also gives the byte range, at 512-byte blocks unless given */
	if (a.d.has_range && !a.d.length) {
		a.d.offset = a.d.slba * 512;
		a.d.length = (a.d.nlb ? a.d.nlb : 1) * 512;
	}
	ret = a.policy ? ucmd_policy_load_file(a.policy, &p, err, sizeof(err))
		       : ucmd_policy_load_default(&p, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	s = (struct ucmd_policy_subject){ .hook = (enum ucmd_security_hook)a.hook,
					  .cred = &a.cred, .new_cred = &a.cred,
					  .f_mode = a.f_mode, .desc = &a.d };
	ucmd_policy_eval(p, &s, &v);
	ucmd_policy_put(p);
	if (cli->fmt == OUT_JSON) {
		json_object *o = json_object_new_object();
		json_object_object_add(o, "decision",
				       json_object_new_string(v.allow ? "allow" : "deny"));
		json_object_object_add(o, "rule", json_object_new_string(v.rule));
		json_object_object_add(o, "audit", json_object_new_boolean(v.audit || !v.allow));
		json_object_object_add(o, "range_unknown",
				       json_object_new_boolean(a.d.range_unknown));
		json_print(o);
	} else {
		printf("%s (%s)%s%s\n", v.allow ? "allow" : "deny", v.rule,
		       v.audit && v.allow ? ", audited" : "",
		       a.d.range_unknown ? ", range unknown: judged as any range" : "");
	}
	return v.allow ? 0 : 1;
}

int cmd_policy(struct cli *cli, int argc, char **argv)
{
	/* argv[0] is "policy" */
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return policy_check(cli, argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "explain"))
		return policy_explain(cli, argc - 1, argv + 1);
	fprintf(stderr, "usage: ucmd policy check FILE\n"
			"       ucmd policy explain [OPTIONS]   (see ucmd policy explain --help)\n");
	return 2;
}
