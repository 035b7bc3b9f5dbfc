/* SPDX-License-Identifier: MIT */
/* The CLI's option parsers (args.h): argv to structs, nothing else. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

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
}

int cli_global_parse(struct cli *cli, int argc, char **argv, const char **why)
{
	static const struct option opts[] = {
		{ "ctrl", required_argument, 0, 'C' },
		{ "daemon", required_argument, 0, 'D' },
		{ "namespace-id", required_argument, 0, 'n' },
		{ "output-format", required_argument, 0, 'o' },
		{ "policy", required_argument, 0, 'P' },
		{ "audit", required_argument, 0, 'A' },
		{ "hostnqn", required_argument, 0, 'H' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c;

	*why = NULL;
	getopt_reset();
	/* global options stop at the command name */
	while ((c = getopt_long(argc, argv, "+C:n:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'C':
			cli->ctrl_dir = optarg;
			cli->ctrl_given = true;
			break;
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
			if (!strcmp(optarg, "json"))
				cli->fmt = OUT_JSON;
			else if (!strcmp(optarg, "normal"))
				cli->fmt = OUT_NORMAL;
			else {
				*why = "--output-format is normal or json";
				return -EINVAL;
			}
			break;
		case 'h': return 0;
		default: return -EINVAL;
		}
	}
	return optind < argc ? optind : -EINVAL;
}

int rw_args_parse(struct rw_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "start-block", required_argument, 0, 's' },
		{ "block-count", required_argument, 0, 'c' },
		{ "data-size", required_argument, 0, 'z' },
		{ "data", required_argument, 0, 'd' },
		{ "force-unit-access", no_argument, 0, 'f' },
		{ 0, 0, 0, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "s:c:z:d:f", opts, NULL)) != -1) {
		switch (c) {
		case 's': if (parse_u64(optarg, &a->slba)) return -EINVAL; break;
		case 'c': if (parse_u32(optarg, &a->nlb) || a->nlb > 0xffff) return -EINVAL; break;
		case 'z': if (parse_u64(optarg, &a->size)) return -EINVAL; break;
		case 'd': a->path = optarg; break;
		case 'f': a->fua = true; break;
		default: return -EINVAL;
		}
	}
	return 0;
}

int passthru_args_parse(struct passthru_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "opcode", required_argument, 0, 'O' },
		{ "namespace-id", required_argument, 0, 'n' },
		{ "data-len", required_argument, 0, 'l' },
		{ "cdw2", required_argument, 0, '2' },
		{ "cdw3", required_argument, 0, '3' },
		{ "cdw10", required_argument, 0, '4' },
		{ "cdw11", required_argument, 0, '5' },
		{ "cdw12", required_argument, 0, '6' },
		{ "cdw13", required_argument, 0, '7' },
		{ "cdw14", required_argument, 0, '8' },
		{ "cdw15", required_argument, 0, '9' },
		{ "timeout", required_argument, 0, 't' },
		{ "read", no_argument, 0, 'r' },
		{ "write", no_argument, 0, 'w' },
		{ "input-file", required_argument, 0, 'i' },
		{ "raw-binary", no_argument, 0, 'b' },
		{ 0, 0, 0, 0 },
	};
	struct nvme_uring_cmd *cmd = &a->cmd;
	uint32_t v, *dw[] = { &cmd->cdw2, &cmd->cdw3, &cmd->cdw10, &cmd->cdw11, &cmd->cdw12,
			      &cmd->cdw13, &cmd->cdw14, &cmd->cdw15 };
	bool have_op = false;
	int c;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "O:n:l:2:3:4:5:6:7:8:9:t:rwi:b", opts, NULL)) != -1) {
		switch (c) {
		case 'O': if (parse_u32(optarg, &v) || v > 0xff) return -EINVAL;
			cmd->opcode = (uint8_t)v; have_op = true; break;
		case 'n': if (parse_u32(optarg, &cmd->nsid)) return -EINVAL;
			a->have_nsid = true; break;
		case 'l': if (parse_u32(optarg, &cmd->data_len) || cmd->data_len > (64u << 20))
				return -EINVAL;
			break;
		case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
			if (parse_u32(optarg, &v)) return -EINVAL;
			*dw[c == '2' ? 0 : c == '3' ? 1 : c - '4' + 2] = v;
			break;
		case 't': if (parse_u32(optarg, &cmd->timeout_ms)) return -EINVAL; break;
		case 'r': a->rd = true; break;
		case 'w': a->wr = true; break;
		case 'i': a->in = optarg; break;
		case 'b': a->raw = true; break;
		default: return -EINVAL;
		}
	}
	return !have_op || (a->rd && a->wr) ? -EINVAL : 0;
}

int range_args_parse(struct range_args *a, int argc, char **argv, bool allow_deac)
{
	static const struct option opts[] = {
		{ "start-block", required_argument, 0, 's' },
		{ "block-count", required_argument, 0, 'c' },
		{ "deac", no_argument, 0, 'd' },
		{ 0, 0, 0, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "s:c:d", opts, NULL)) != -1) {
		switch (c) {
		case 's': if (parse_u64(optarg, &a->slba)) return -EINVAL; break;
		case 'c': if (parse_u32(optarg, &a->nlb) || a->nlb > 0xffff) return -EINVAL; break;
		case 'd': if (!allow_deac) return -EINVAL; a->deac = true; break;
		default: return -EINVAL;
		}
	}
	return 0;
}

/* Comma-separated list of numbers ("0,8,64"); returns the count or -EINVAL. */
static int parse_list(const char *s, uint64_t *out, int max)
{
	char buf[4096], *save = NULL;
	int n = 0;

	if (!s || snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -EINVAL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || parse_u64(tok, &out[n]))
			return -EINVAL;
		n++;
	}
	return n ? n : -EINVAL;
}

/* --slbs and --blocks of equal, non-zero length; copy also wants --sdlba */
static int ranges_parse(struct ranges_args *a, int argc, char **argv, bool copy)
{
	static const struct option dsm_opts[] = {
		{ "slbs", required_argument, 0, 's' },
		{ "blocks", required_argument, 0, 'b' },
		{ "ad", no_argument, 0, 'd' },
		{ 0, 0, 0, 0 },
	};
	static const struct option copy_opts[] = {
		{ "sdlba", required_argument, 0, 'd' },
		{ "slbs", required_argument, 0, 's' },
		{ "blocks", required_argument, 0, 'b' },
		{ 0, 0, 0, 0 },
	};
	int ns = -1, nb = -1, c;
	bool have_d = false;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, copy ? "d:s:b:" : "s:b:d",
				copy ? copy_opts : dsm_opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			/* copy: -d is --sdlba; dsm: -d is --ad */
			if (copy)
				have_d = !parse_u64(optarg, &a->sdlba);
			else
				a->ad = true;
			break;
		case 's': ns = parse_list(optarg, a->slbs, CLI_MAX_RANGES); break;
		case 'b': nb = parse_list(optarg, a->blocks, CLI_MAX_RANGES); break;
		default: return -EINVAL;
		}
	}
	if ((copy && !have_d) || ns < 1 || ns != nb)
		return -EINVAL;
	a->n = ns;
	return 0;
}

int dsm_args_parse(struct ranges_args *a, int argc, char **argv)
{
	return ranges_parse(a, argc, argv, false);
}

int copy_args_parse(struct ranges_args *a, int argc, char **argv)
{
	return ranges_parse(a, argc, argv, true);
}

int error_log_args_parse(uint32_t *entries, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "log-entries", required_argument, 0, 'e' }, { 0, 0, 0, 0 } };
	int c;

	*entries = 64;
	getopt_reset();
	while ((c = getopt_long(argc, argv, "e:", opts, NULL)) != -1)
		if (c != 'e' || parse_u32(optarg, entries) || !*entries || *entries > 256)
			return -EINVAL;
	return 0;
}

int feature_args_parse(struct feature_args *a, int argc, char **argv, bool set)
{
	static const struct option opts[] = {
		{ "feature-id", required_argument, 0, 'f' },
		{ "sel", required_argument, 0, 's' },
		{ "cdw11", required_argument, 0, 'c' },
		{ "value", required_argument, 0, 'V' },
		{ "save", no_argument, 0, 'S' },
		{ 0, 0, 0, 0 },
	};
	bool have_fid = false, have_v = false;
	int c;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "f:s:c:V:S", opts, NULL)) != -1) {
		switch (c) {
		case 'f': if (parse_u32(optarg, &a->fid) || a->fid > 0xff) return -EINVAL;
			have_fid = true; break;
		case 's': if (set || parse_u32(optarg, &a->sel) || a->sel > 3) return -EINVAL; break;
		case 'c': if (parse_u32(optarg, &a->cdw11)) return -EINVAL; break;
		case 'V': if (!set || parse_u32(optarg, &a->cdw11)) return -EINVAL;
			have_v = true; break;
		case 'S': if (!set) return -EINVAL; a->save = true; break;
		default: return -EINVAL;
		}
	}
	return !have_fid || (set && !have_v) ? -EINVAL : 0;
}

int format_args_parse(struct format_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lbaf", required_argument, 0, 'l' },
		{ "ses", required_argument, 0, 's' },
		{ "ms", required_argument, 0, 'm' },
		{ 0, 0, 0, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "l:s:m:", opts, NULL)) != -1) {
		switch (c) {
		case 'l': if (parse_u32(optarg, &a->lbaf) || a->lbaf > 63) return -EINVAL; break;
		case 's': if (parse_u32(optarg, &a->ses) || a->ses > 7) return -EINVAL; break;
		case 'm': if (parse_u32(optarg, &a->ms) || a->ms > 1) return -EINVAL; break;
		default: return -EINVAL;
		}
	}
	return 0;
}

int create_ns_args_parse(struct create_ns_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nsze", required_argument, 0, 's' },
		{ "ncap", required_argument, 0, 'c' },
		{ "flbas", required_argument, 0, 'f' },
		{ 0, 0, 0, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "s:c:f:", opts, NULL)) != -1) {
		switch (c) {
		case 's': if (parse_u64(optarg, &a->nsze)) return -EINVAL; break;
		case 'c': if (parse_u64(optarg, &a->ncap)) return -EINVAL; break;
		case 'f': if (parse_u32(optarg, &a->flbas) || a->flbas > 0xff) return -EINVAL; break;
		default: return -EINVAL;
		}
	}
	return a->nsze ? 0 : -EINVAL;
}

int attach_args_parse(struct attach_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "controllers", required_argument, 0, 'c' }, { 0, 0, 0, 0 } };
	int c;

	memset(a, 0, sizeof(*a));
	getopt_reset();
	while ((c = getopt_long(argc, argv, "c:", opts, NULL)) != -1) {
		char buf[512], *save = NULL;

		if (c != 'c')
			return -EINVAL;
		snprintf(buf, sizeof(buf), "%s", optarg);
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (a->n == 32 || parse_u32(t, &a->ids[a->n]) || a->ids[a->n] > 0xffff)
				return -EINVAL;
			a->n++;
		}
	}
	return 0;
}

int run_args_parse(uint64_t *bytes, uint64_t chunk, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, 0, 's' },
		{ 0, 0, 0, 0 },
	};
	uint64_t v;
	int c;

	getopt_reset();
	while ((c = getopt_long(argc, argv, "s:", opts, NULL)) != -1) {
		if (c != 's' || parse_u64(optarg, &v) || !v || v % chunk)
			return -EINVAL;
		*bytes = v;
	}
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
