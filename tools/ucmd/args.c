/* SPDX-License-Identifier: MIT */
/*
 * The CLI's option parsers (args.h): argv to structs, nothing else. One
 * generic parser reads every command's arguments with the command's table
 * (cmd_tab.c); the policy explainer keeps its own (its options are not
 * nvme-cli's).
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "args.h"
#include "cli.h"

/*
 * glibc keeps its position inside a cluster of short options ("-fd")
 * across calls; optind = 0 asks for a full reset, which optind = 1 does
 * not: a parser that stopped mid-cluster would leave the next one reading
 * the old argv.
 */
static void getopt_reset(void)
{
	optind = 0;
	opterr = 0;	/* the parsers say what was wrong, naming the option */
}

static int parse_fmt(const char *s, enum out_fmt *f)
{
	if (!strcmp(s, "normal"))
		*f = OUT_NORMAL;
	else if (!strcmp(s, "json"))
		*f = OUT_JSON;
	else if (!strcmp(s, "binary"))
		*f = OUT_BINARY;
	else
		return -EINVAL;
	return 0;
}

int cli_global_parse(struct cli *cli, int argc, char **argv, const char **why, bool *version)
{
	static const struct option opts[] = {
		{ "ctrl", required_argument, 0, 'C' },
		{ "create", no_argument, 0, 'c' },
		{ "daemon", required_argument, 0, 'D' },
		{ "namespace-id", required_argument, 0, 'n' },
		{ "output-format", required_argument, 0, 'o' },
		{ "policy", required_argument, 0, 'P' },
		{ "audit", required_argument, 0, 'A' },
		{ "hostnqn", required_argument, 0, 'H' },
		{ "help", no_argument, 0, 'h' },
		{ "version", no_argument, 0, 'V' },
		{ 0, 0, 0, 0 },
	};
	int c;

	*why = NULL;
	*version = false;
	getopt_reset();
	/* global options stop at the command name */
	while ((c = getopt_long(argc, argv, "+:C:n:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			cli->ctrl_dir = optarg;
			cli->ctrl_given = true;
			break;
		case 'c': cli->create = true; break;
		case 'D':
			if (!*optarg) {
				*why = "--daemon needs the daemon's socket path";
				return -EINVAL;
			}
			cli->daemon = optarg;
			break;
		case 'P': cli->policy = optarg; break;
		case 'A': cli->audit = optarg; break;
		case 'H': cli->hostnqn = optarg; break;
		case 'n':
			if (parse_u32(optarg, &cli->nsid) || !cli->nsid) {
				*why = "bad --namespace-id";
				return -EINVAL;
			}
			break;
		case 'o':
			if (parse_fmt(optarg, &cli->fmt)) {
				*why = "--output-format is normal, json or binary";
				return -EINVAL;
			}
			break;
		case 'V':
			*version = true;
			return 0;
		case 'h': return 0;
		case ':':
			*why = "a global option lacks its argument";
			return -EINVAL;
		default:
			*why = "unrecognized global option (command options go after the command)";
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		*why = "no command given (ucmd help lists them)";
		return -EINVAL;
	}
	return optind;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Comma-separated list of numbers ("0,8,64"), each at most max. */
static int parse_list(const char *s, struct u64_list *l, uint64_t max)
{
	char buf[8192], *save = NULL;

	l->n = 0;
	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (l->n == CLI_MAX_RANGES || parse_u64(tok, &l->v[l->n]) || l->v[l->n] > max)
			return -EINVAL;
		l->n++;
	}
	return l->n ? 0 : -EINVAL;
}

/* nvme-cli's sanitize action names, or the numbers 1..4 */
static int parse_sanact(const char *s, uint32_t *v)
{
	static const char *const names[] = { "exit-failure", "start-block-erase",
					     "start-overwrite", "start-crypto-erase" };

	for (unsigned i = 0; i < 4; i++)
		if (!strcasecmp(s, names[i])) {
			*v = i + 1;
			return 0;
		}
	return parse_u32(s, v) || *v < 1 || *v > 4 ? -EINVAL : 0;
}

static uint64_t opt_max(const struct opt *o)
{
	if (o->max)
		return o->max;
	return o->type == OPT_U32 ? UINT32_MAX : UINT64_MAX;
}

/* A byte count as QEMU's size options take it: 128M, 1G, 4096 */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	char buf[32];
	size_t len = s ? strlen(s) : 0;
	const char *u;
	uint64_t v;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	u = strchr(units, buf[len - 1] & ~0x20);
	if (!u || !(buf[len - 1] & ~0x20))
		return parse_u64(s, out);
	buf[len - 1] = 0;
	if (parse_u64(buf, &v))
		return -EINVAL;
	for (const char *p = units; p <= u; p++) {
		if (v > UINT64_MAX / 1024)
			return -EINVAL;
		v *= 1024;
	}
	*out = v;
	return 0;
}

/* "--long" or "-s": how the user may have spelled it, for messages */
static const char *opt_name(const struct opt *o, char *buf, size_t len)
{
	snprintf(buf, len, "--%s", o->lname);
	return buf;
}

static int set_value(const struct opt *o, struct cmd_args *a, const char *v, char *err,
		     size_t errlen)
{
	void *p = (char *)a + o->off;
	uint64_t max = opt_max(o), x;
	char n[64];

	switch (o->type) {
	case OPT_FLAG:
		*(bool *)p = true;
		return 0;
	case OPT_STR:
		if (!*v)
			return fail(err, errlen, "%s needs a non-empty value",
				    opt_name(o, n, sizeof(n)));
		*(const char **)p = v;
		return 0;
	case OPT_FMT:
		if (parse_fmt(v, p) || *(enum out_fmt *)p > (enum out_fmt)o->max)
			return fail(err, errlen, "invalid value '%s' for %s (%s)", v,
				    opt_name(o, n, sizeof(n)), o->max == OUT_BINARY ?
				    "normal, json or binary" : "normal or json");
		return 0;
	case OPT_SANACT:
		if (parse_sanact(v, p))
			return fail(err, errlen, "invalid value '%s' for %s (1..4 or exit-failure, "
				    "start-block-erase, start-overwrite, start-crypto-erase)",
				    v, opt_name(o, n, sizeof(n)));
		return 0;
	case OPT_RANKING:
		/* nvme-cli's two words, nothing else (it refuses the rest too) */
		if (strcmp(v, "namespace") && strcmp(v, "ctrl"))
			return fail(err, errlen, "invalid value '%s' for %s (namespace or ctrl)", v,
				    opt_name(o, n, sizeof(n)));
		*(enum topo_ranking *)p = strcmp(v, "ctrl") ? TOPO_NAMESPACE : TOPO_CTRL;
		return 0;
	case OPT_LIST:
		if (parse_list(v, p, max))
			return fail(err, errlen, "invalid list '%s' for %s (1..%d numbers, "
				    "comma-separated, each at most %llu)", v,
				    opt_name(o, n, sizeof(n)), CLI_MAX_RANGES,
				    (unsigned long long)max);
		return 0;
	case OPT_SIZE:
		if (parse_size(v, &x) || x > max)
			return fail(err, errlen, "invalid size '%s' for %s (bytes, with K, M, G or "
				    "T for KiB, MiB, GiB, TiB)", v, opt_name(o, n, sizeof(n)));
		*(uint64_t *)p = x;
		return 0;
	case OPT_U32:
	case OPT_U64:
		if (parse_u64(v, &x) || x > max || (!x && (o->flags & OPT_NONZERO)))
			return fail(err, errlen, "invalid value '%s' for %s (a number %s..%llu)", v,
				    opt_name(o, n, sizeof(n)), o->flags & OPT_NONZERO ? "1" : "0",
				    (unsigned long long)max);
		if (o->type == OPT_U32)
			*(uint32_t *)p = (uint32_t)x;
		else
			*(uint64_t *)p = x;
		return 0;
	}
	return -EINVAL;
}

static void set_default(const struct opt *o, struct cmd_args *a)
{
	void *p = (char *)a + o->off;

	if (!o->def)
		return;
	if (o->type == OPT_U32)
		*(uint32_t *)p = (uint32_t)o->def;
	else if (o->type == OPT_U64)
		*(uint64_t *)p = o->def;
}

int cli_args_parse(const struct cmd_spec *c, struct cmd_args *a, int argc, char **argv,
		   char *err, size_t errlen)
{
	struct option lopts[CLI_MAX_OPTS + 2];
	char sopts[3 * CLI_MAX_OPTS + 8], *sp = sopts;
	uint32_t gnsid = a->nsid;
	enum out_fmt gfmt = a->fmt;
	const struct opt *t = c->opts;
	int n = 0, ch, idx;

	memset(a, 0, sizeof(*a));
	a->nsid = gnsid;
	a->fmt = gfmt;
	*err = 0;
	if (!t)
		return fail(err, errlen, "%s parses its own options", c->name);
	*sp++ = ':';	/* a missing argument is ':', not '?' */
	for (; t[n].lname; n++) {
		if (n == CLI_MAX_OPTS)
			return fail(err, errlen, "%s: option table too long", c->name);
		set_default(&t[n], a);
		lopts[n] = (struct option){ t[n].lname,
					    t[n].type == OPT_FLAG ? no_argument : required_argument,
					    NULL, 256 + n };
		if (t[n].sname) {
			*sp++ = t[n].sname;
			if (t[n].type != OPT_FLAG)
				*sp++ = ':';
		}
	}
	lopts[n] = (struct option){ "help", no_argument, NULL, 'h' };
	lopts[n + 1] = (struct option){ 0, 0, 0, 0 };
	*sp++ = 'h';
	*sp = 0;

	/*
	 * -h/--help anywhere wins over everything else on the line, even an
	 * option this command does not know or a bad value: help is asked
	 * for precisely when the user is unsure of the rest.
	 */
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	getopt_reset();
	while ((ch = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		if (ch == 'h')
			return 1;	/* help asked: nothing else is checked or run */
		if (ch == '?') {
			if (optopt)
				return fail(err, errlen, "unrecognized option '-%c'", optopt);
			return fail(err, errlen, "unrecognized option '%s'", argv[optind - 1]);
		}
		if (ch == ':')
			return fail(err, errlen, "option '%s' requires an argument",
				    argv[optind - 1]);
		idx = -1;
		if (ch >= 256)
			idx = ch - 256;
		else
			for (int i = 0; i < n; i++)
				if (t[i].sname == ch)
					idx = i;
		if (idx < 0)
			return fail(err, errlen, "unrecognized option '-%c'", ch);
		if (set_value(&t[idx], a, optarg, err, errlen))
			return -EINVAL;
		a->seen[idx] = true;
		if (t[idx].off == offsetof(struct cmd_args, nsid))
			a->nsid_given = true;
	}
	/* what is left: at most one device path, as nvme-cli's <device> */
	for (int i = optind; i < argc; i++) {
		if (!strncmp(argv[i], "/dev/", 5) && !a->dev && !c->no_device) {
			a->dev = argv[i];
			continue;
		}
		return fail(err, errlen, "unexpected argument '%s'", argv[i]);
	}
	for (int i = 0; i < n; i++) {
		/* the old global -n before the command still names the namespace */
		if (t[i].off == offsetof(struct cmd_args, nsid) && gnsid)
			continue;
		if ((t[i].flags & OPT_REQUIRED) && !a->seen[i])
			return fail(err, errlen, "--%s is required", t[i].lname);
	}
	return 0;
}

bool cli_args_given(const struct cmd_spec *c, const struct cmd_args *a, const char *lname)
{
	for (int i = 0; c->opts && c->opts[i].lname && i < CLI_MAX_OPTS; i++)
		if (!strcmp(c->opts[i].lname, lname))
			return a->seen[i];
	return false;
}

/* nvme-cli's layout: "  [  --name=<NUM>, -n <NUM> ]" padded, then "--- help" */
static void print_opt_line(FILE *f, const char *left, const char *help)
{
	char box[128];

	snprintf(box, sizeof(box), "[  %s ]", left);
	fprintf(f, "  %-36s --- %s\n", box, help);
}

void cli_args_help(FILE *f, const struct cmd_spec *c)
{
	fprintf(f, "Usage: ucmd %s%s [OPTIONS]\n\n%s\n", c->name,
		c->no_device ? "" : " [<device>]", c->desc ? c->desc : c->summary);
	if (!c->opts)
		return;
	fprintf(f, "\nOptions:\n");
	for (const struct opt *o = c->opts; o->lname; o++) {
		char left[96];
		int k;

		if (o->type == OPT_FLAG)
			k = snprintf(left, sizeof(left), "--%s", o->lname);
		else
			k = snprintf(left, sizeof(left), "--%s=<%s>", o->lname, o->meta);
		if (o->sname && k > 0 && (size_t)k < sizeof(left))
			snprintf(left + k, sizeof(left) - (size_t)k, o->type == OPT_FLAG ?
				 ", -%c" : ", -%c <%s>", o->sname, o->meta);
		print_opt_line(f, left, o->help);
	}
	print_opt_line(f, "--help, -h", "show this help (runs nothing)");
}

static const char *type_name(enum opt_type t)
{
	static const char *const names[] = { "flag", "num", "num", "string", "fmt", "list",
					     "string", "size", "string" };

	return names[t];
}

void cli_args_dump(FILE *f)
{
	for (const struct cmd_spec *c = cli_specs; c->name; c++) {
		if (!c->opts) {
			fprintf(f, "%s\t*\t-\town\n", c->name);
			continue;
		}
		fprintf(f, "%s\t-\t-\tcommand\n", c->name);
		for (const struct opt *o = c->opts; o->lname; o++) {
			char s[3] = "-";

			if (o->sname)
				snprintf(s, sizeof(s), "-%c", o->sname);
			fprintf(f, "%s\t--%s\t%s\t%s\n", c->name, o->lname, s, type_name(o->type));
		}
	}
}

/* global options that take a value: their next word is not the command */
static bool global_takes_arg(const char *w)
{
	static const char *const g[] = { "--ctrl", "--daemon", "--namespace-id", "-n",
					 "--output-format", "-o", "--policy", "--audit",
					 "--hostnqn", "-C", NULL };

	for (int i = 0; g[i]; i++)
		if (!strcmp(w, g[i]))
			return true;
	return false;
}

void cli_args_complete(FILE *f, int cword, int nwords, char **words)
{
	static const char *const globals[] = { "--ctrl", "--create", "--daemon", "--namespace-id",
					       "--output-format", "--policy", "--audit",
					       "--hostnqn", "--help", "--version", NULL };
	const char *cur = cword < nwords ? words[cword] : "";
	size_t lc = strlen(cur);
	const struct cmd_spec *c = NULL;
	int ci = -1;

	for (int i = 1; i < nwords && i < cword; i++) {
		if (words[i][0] == '-') {
			i += global_takes_arg(words[i]) && !strchr(words[i], '=');
			continue;
		}
		ci = i;
		c = cli_spec_find(words[i]);
		break;
	}
	if (cword > 0 && cword - 1 < nwords && cword - 1 > 0) {
		const char *prev = words[cword - 1];

		if (!strcmp(prev, "--output-format") || !strcmp(prev, "-o")) {
			/* -o is opcode for the passthrus and lpo for get-log */
			if (!c || (strcmp(c->name, "io-passthru") && strcmp(c->name, "admin-passthru") &&
				   strcmp(c->name, "get-log") && strcmp(c->name, "fw-download"))) {
				for (const char *const *v = (const char *const[]){ "normal", "json",
					"binary", NULL }; *v; v++)
					if (!strncmp(*v, cur, lc))
						fprintf(f, "%s\n", *v);
				return;
			}
		}
	}
	/* show-topology's -r (elsewhere -r is a flag: sanitize-log's, zns changed-zone-list's) */
	if (c && !strcmp(c->name, "show-topology") && cword - 1 > ci && cword - 1 < nwords &&
	    (!strcmp(words[cword - 1], "-r") || !strcmp(words[cword - 1], "--ranking"))) {
		for (const char *const *v = (const char *const[]){ "namespace", "ctrl", NULL }; *v; v++)
			if (!strncmp(*v, cur, lc))
				fprintf(f, "%s\n", *v);
		return;
	}
	if (ci < 0) {
		if (cur[0] == '-') {
			for (int i = 0; globals[i]; i++)
				if (!strncmp(globals[i], cur, lc))
					fprintf(f, "%s\n", globals[i]);
			return;
		}
		for (const struct cmd_spec *s = cli_specs; s->name; s++)
			if (!strncmp(s->name, cur, lc))
				fprintf(f, "%s\n", s->name);
		return;
	}
	if (!c)
		return;
	if (!strcmp(c->name, "help")) {
		for (const struct cmd_spec *s = cli_specs; s->name; s++)
			if (!strncmp(s->name, cur, lc))
				fprintf(f, "%s\n", s->name);
		return;
	}
	if (cur[0] == '-' && c->opts) {
		for (const struct opt *o = c->opts; o->lname; o++) {
			char l[64];

			snprintf(l, sizeof(l), "--%s", o->lname);
			if (!strncmp(l, cur, lc))
				fprintf(f, "%s\n", l);
		}
		if (!strncmp("--help", cur, lc))
			fprintf(f, "--help\n");
	}
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

/* splits s in place, as strtok does */
static int parse_groups(char *s, struct ucmd_explain *x)
{
	char *save = NULL;

	x->ngroups = 0;
	for (char *tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t g;
		if (parse_u32(tok, &g) || x->ngroups == UCMD_EXPLAIN_GROUPS_MAX)
			return -1;
		x->groups[x->ngroups++] = g;
	}
	return 0;
}

static const char *const hook_names[] = { "cmd", "rw", "sqpoll", "override-creds" };

/* --range SLBA+NLB: one more range (a Copy source, a DSM entry) */
static int parse_range_arg(char *s, struct explain_args *a)
{
	struct ucmd_lba_range *r;
	char *plus = strchr(s, '+');

	if (!plus || a->x.nr_ranges == UCMD_EXPLAIN_RANGES_MAX)
		return -1;
	*plus = 0;
	r = &a->ranges[a->x.nr_ranges];
	if (parse_u64(s, &r->slba) || parse_u64(plus + 1, &r->nlb))
		return -1;
	a->x.ranges = a->ranges;
	a->x.nr_ranges++;
	return 0;
}

int explain_args_parse(struct explain_args *a, int argc, char **argv)
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
		{ "hostnqn", required_argument, 0, 'N' }, { "hostid", required_argument, 0, 'I' },
		{ 0, 0, 0, 0 },
	};
	struct ucmd_explain *x = &a->x;
	uint64_t v64;
	uint32_t v;
	int c;

	a->bad = NULL;
	getopt_reset();
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		bool ok = true, b = false;
		switch (c) {
		case 'u': ok = !parse_u32(optarg, &x->uid);
			/* root has CAP_SYS_ADMIN unless --cap-sys-admin says otherwise */
			if (!a->cap_given)
				x->caps = x->uid == 0 ? 1ull << UCMD_CAP_SYS_ADMIN : 0;
			break;
		case 'g': ok = !parse_u32(optarg, &x->gid); break;
		case 'G': ok = !parse_groups(optarg, x); break;
		case 'd': x->device = optarg; break;
		case 'v': x->verb = optarg; break;
		case 'n': ok = !parse_u32(optarg, &x->nsid); break;
		case 's': ok = !parse_u64(optarg, &x->slba); x->has_lba_range = true; break;
		case 'c': ok = !parse_u64(optarg, &x->nlb); x->has_lba_range = true; break;
		case 'r': ok = !parse_range_arg(optarg, a); break;
		case 'o': ok = !parse_u64(optarg, &x->offset); break;
		case 'l': ok = !parse_u64(optarg, &x->length); break;
		case 'm':
			x->may_read = !strcmp(optarg, "rw") || !strcmp(optarg, "ro");
			x->may_write = !strcmp(optarg, "rw") || !strcmp(optarg, "wo");
			ok = x->may_read || x->may_write;
			break;
		case 'p': a->policy = optarg; break;
		case 'N': x->hostnqn = optarg; break;	/* checked by ucmd_policy_explain */
		case 'I': x->hostid = optarg; break;
		case 'A': ok = !parse_yesno(optarg, &b);
			x->caps = b ? 1ull << UCMD_CAP_SYS_ADMIN : 0;
			a->cap_given = true;
			break;
		case 'a': ok = !parse_yesno(optarg, &b); x->admin = b; break;
		case 'D': ok = !parse_yesno(optarg, &b); x->destructive = b; break;
		case 'S': ok = !parse_u32(optarg, &v); x->select = v; break;
		case 'O': ok = !parse_u64(optarg, &v64) && v64 < 256; x->opcode = (int)(v64 & 0xff);
			break;
		case 'H':
			ok = false;
			for (int i = 0; i < 4; i++)
				if (!strcmp(optarg, hook_names[i])) {
					x->hook = (enum ucmd_explain_hook)i;
					ok = true;
				}
			break;
		default: ok = false; break;
		}
		if (!ok) {
			a->bad = optarg ? optarg : "";
			return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}
