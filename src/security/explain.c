/* SPDX-License-Identifier: MIT */
/*
 * ucmd_policy_explain(): a public description of a caller and a command
 * (struct ucmd_explain) turned into the credentials and command description
 * the policy module judges, so that users never see those internal types.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/file.h"
#include "lib/error.h"
#include "security/policy_values.h"
#include "security/security.h"
#include "ucmd/uapi/nvme_ioctl.h"

void ucmd_explain_init(struct ucmd_explain *x)
{
	struct ucmd_cred c;

	memset(x, 0, sizeof(*x));
	current_cred(&c);
	x->uid = (uint32_t)c.euid;
	x->gid = (uint32_t)c.egid;
	x->ngroups = c.ngroups < 0 ? 0 : (unsigned)c.ngroups;
	if (x->ngroups > UCMD_EXPLAIN_GROUPS_MAX)
		x->ngroups = UCMD_EXPLAIN_GROUPS_MAX;
	for (unsigned i = 0; i < x->ngroups; i++)
		x->groups[i] = (uint32_t)c.groups[i];
	x->caps = c.cap_sys_admin ? 1ull << UCMD_CAP_SYS_ADMIN : 0;
	x->hook = UCMD_EXPLAIN_URING_CMD;
	x->may_read = x->may_write = true;
	x->device = "ng0n1";
	x->verb = "read";
	x->nsid = 1;
	x->admin = x->destructive = -1;
	x->select = -1;
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

static int bad(const char *what)
{
	return last_error_set(-EINVAL, "ucmd_policy_explain: %s", what);
}

int ucmd_policy_explain(const struct ucmd_policy *p, const struct ucmd_explain *x,
			struct ucmd_explain_result *r)
{
	struct ucmd_desc_range *ranges = NULL;
	struct ucmd_policy_subject s;
	struct ucmd_policy_verdict v;
	struct ucmd_cmd_desc d;
	struct ucmd_cred c;
	int verb;

	if (!p || !x || !r)
		return bad("policy, subject or result is NULL");
	if (!x->device || !x->verb)
		return bad("no device or verb");
	verb = desc_verb_from_name(x->verb);
	if (verb < 0)
		return last_error_set(-EINVAL, "ucmd_policy_explain: unknown verb \"%s\"", x->verb);
	if ((unsigned)x->hook > UCMD_EXPLAIN_OVERRIDE_CREDS)
		return bad("unknown hook");
	if (x->ngroups > UCMD_EXPLAIN_GROUPS_MAX || x->ngroups > UCMD_NGROUPS_MAX)
		return bad("too many groups");
	if (x->nr_ranges > UCMD_EXPLAIN_RANGES_MAX || (x->nr_ranges && !x->ranges))
		return bad("too many ranges, or none given");
	if (x->opcode < 0 || x->opcode > 255)
		return bad("opcode out of range 0..255");
	if (x->select < -1 || x->select > UINT32_MAX)
		return bad("select out of range");

	memset(&c, 0, sizeof(c));
	c.pid = getpid();
	c.uid = c.euid = (uid_t)x->uid;
	c.gid = c.egid = (gid_t)x->gid;
	c.ngroups = (int)x->ngroups;
	for (unsigned i = 0; i < x->ngroups; i++)
		c.groups[i] = (gid_t)x->groups[i];
	c.cap_sys_admin = (x->caps >> UCMD_CAP_SYS_ADMIN) & 1;
	if (x->hostnqn) {
		if (!*x->hostnqn || strlen(x->hostnqn) >= sizeof(c.hostnqn))
			return bad("hostnqn empty or longer than 223 bytes");
		snprintf(c.hostnqn, sizeof(c.hostnqn), "%s", x->hostnqn);
	}
	if (x->hostid && pv_uuid(x->hostid, c.hostid))
		return bad("hostid is not a UUID (8-4-4-4-12 hex digits)");

	ucmd_desc_init(&d, x->device, NVME_URING_CMD_IO, (uint8_t)x->opcode);
	policy_desc_for_verb(&d, (enum ucmd_verb)verb);
	d.nsid = x->nsid;
	if (x->admin >= 0)
		d.admin = x->admin;
	if (x->destructive >= 0)
		d.destructive = x->destructive;
	if (x->select >= 0) {
		d.has_select = true;
		d.select = (uint32_t)x->select;
	}
	d.has_range = x->has_lba_range;
	d.slba = x->slba;
	d.nlb = x->nlb;
	d.offset = x->offset;
	d.length = x->length;
	/* a block range also gives the byte range, at 512-byte blocks unless given */
	if (d.has_range && !d.length) {
		d.offset = d.slba * 512;
		d.length = (d.nlb ? d.nlb : 1) * 512;
	}
	if (x->nr_ranges) {
		ranges = calloc(x->nr_ranges, sizeof(*ranges));
		if (!ranges)
			return last_error_set(-ENOMEM, "ucmd_policy_explain: out of memory");
		for (unsigned i = 0; i < x->nr_ranges; i++)
			ranges[i] = (struct ucmd_desc_range){
				.slba = x->ranges[i].slba, .nlb = x->ranges[i].nlb,
				.offset = x->ranges[i].slba * 512, .length = x->ranges[i].nlb * 512,
			};
		d.ranges = ranges;
		d.nr_ranges = x->nr_ranges;
	}
	/* no range given: as the engine judges a list it cannot read */
	if (!d.has_range && !d.length && !d.nr_ranges && verb_touches_lbas(d.verb))
		d.range_unknown = true;

	s = (struct ucmd_policy_subject){
		.hook = (enum ucmd_security_hook)x->hook, .cred = &c, .new_cred = &c,
		.f_mode = (x->may_read ? FMODE_READ : 0) | (x->may_write ? FMODE_WRITE : 0),
		.desc = &d,
	};
	policy_eval(p, &s, &v);
	free(ranges);
	memset(r, 0, sizeof(*r));
	r->allow = v.allow;
	r->audit = v.audit;
	r->range_unknown = d.range_unknown;
	r->line = v.line;
	_Static_assert(sizeof(r->rule) >= sizeof(v.rule), "rule fits");
	memcpy(r->rule, v.rule, sizeof(v.rule));
	return 0;
}
