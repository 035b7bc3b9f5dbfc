/* SPDX-License-Identifier: MIT */
/*
 * A policy's rules in public terms, for enforcers outside the engine: the
 * BPF LSM program (src/bpf/) compiles exactly what the engine evaluates, so
 * both judge from one parse.
 */
#include <errno.h>
#include <string.h>

#include "security/desc.h"
#include "security/policy_int.h"

_Static_assert(UCMD_POLICY_VERBS_NR == UCMD_VERB_NR, "public verb count");
_Static_assert(sizeof(struct ucmd_policy_range) == sizeof(struct pol_range), "range layout");
_Static_assert(POL_MODE_RO == 1 && POL_MODE_WO == 2 && POL_MODE_RW == 4, "mode bits");

static void set_out(const struct pol_set *in, struct ucmd_policy_set *out)
{
	out->n = in->n;
	out->r = (const struct ucmd_policy_range *)in->r;
}

static int tri_out(enum pol_tri t)
{
	return t == POL_ANY ? -1 : t == POL_YES;
}

int ucmd_policy_rule_info(const struct ucmd_policy *p, unsigned i, struct ucmd_policy_rule_info *o)
{
	const struct ucmd_policy_rule *r;

	if (!p || i >= p->nrules)
		return -ERANGE;
	r = &p->rules[i];
	memset(o, 0, sizeof(*o));
	o->file = r->file;
	o->line = r->line;
	o->name = r->name;
	policy_rule_label(o->label, sizeof(o->label), r->file, r->line, r->name ? r->name : "");
	/* the engine's file_ioctl judges with the cmd rules (docs/security.md) */
	if (r->hooks & POL_HOOK(UCMD_HOOK_URING_CMD))
		o->hooks |= UCMD_RULE_HOOK_CMD;
	if (r->hooks & POL_HOOK(UCMD_HOOK_URING_RW))
		o->hooks |= UCMD_RULE_HOOK_RW;
	if (r->hooks & POL_HOOK(UCMD_HOOK_URING_SQPOLL))
		o->hooks |= UCMD_RULE_HOOK_SQPOLL;
	if (r->hooks & POL_HOOK(UCMD_HOOK_URING_OVERRIDE_CREDS))
		o->hooks |= UCMD_RULE_HOOK_OVERRIDE_CREDS;
	set_out(&r->uid, &o->uid);
	set_out(&r->gid, &o->gid);
	set_out(&r->nsid, &o->nsid);
	set_out(&r->select, &o->select);
	set_out(&r->opcode, &o->opcode);
	set_out(&r->target_uid, &o->target_uid);
	set_out(&r->target_gid, &o->target_gid);
	o->ndevices = r->ndevices;
	o->devices = (const char *const *)r->devices;
	o->nhostnqns = r->nhostnqns;
	o->verbs = r->verbs;
	o->dirs = r->dirs;
	o->modes = r->modes;
	o->cap_sys_admin = tri_out(r->cap_sys_admin);
	o->destructive = tri_out(r->destructive);
	o->intrusive = tri_out(r->intrusive);
	o->admin_cmd = tri_out(r->admin_cmd);
	o->has_bytes = r->has_bytes;
	o->has_lba = r->has_lba;
	o->bytes.lo = r->bytes.lo;
	o->bytes.hi = r->bytes.hi;
	o->lba.lo = r->lba.lo;
	o->lba.hi = r->lba.hi;
	o->allow = r->action == 1;
	o->audit = r->audit;
	return 0;
}

void ucmd_policy_default_info(const struct ucmd_policy *p, bool *allow, bool *audit,
			      char *label, size_t len)
{
	*allow = p->default_allow;
	*audit = p->audit_default;
	if (label && len)
		policy_rule_label(label, len, p->file, 0, NULL);
}

const char *ucmd_policy_verb_name(unsigned verb)
{
	return verb < UCMD_VERB_NR ? desc_verb_name((enum ucmd_verb)verb) : NULL;
}
