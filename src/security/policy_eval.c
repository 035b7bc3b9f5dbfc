/* SPDX-License-Identifier: MIT */
/* Judging a subject: rules in file order, the first that matches decides. */
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/file.h"
#include "security/policy_int.h"
#include "security/policy_values.h"

static bool tri_ok(enum pol_tri t, bool v)
{
	return t == POL_ANY || (t == POL_YES) == v;
}

static bool gid_ok(const struct pol_set *set, const struct ucmd_cred *c)
{
	if (!set->n)
		return true;
	if (pv_set_has(set, c->egid))
		return true;
	for (int i = 0; i < c->ngroups && i < UCMD_NGROUPS_MAX; i++)
		if (pv_set_has(set, c->groups[i]))
			return true;
	return false;
}

static bool ids_ok(const struct pol_set *uid, const struct pol_set *gid,
		   const struct ucmd_cred *c)
{
	/* the effective ids, as Linux's permission checks use */
	return (!uid->n || pv_set_has(uid, c->euid)) && gid_ok(gid, c);
}

static unsigned mode_bit(unsigned f_mode)
{
	if ((f_mode & FMODE_READ) && (f_mode & FMODE_WRITE))
		return POL_MODE_RW;
	return (f_mode & FMODE_WRITE) ? POL_MODE_WO : POL_MODE_RO;
}

/*
 * [start, end] of the command against the rule's range: an allow rule must
 * hold the whole command, a deny rule catches any overlap (so neither can
 * be sidestepped by a command straddling the rule's edge).
 */
static bool range_ok(const struct pol_range *r, uint64_t start, uint64_t count, bool allow)
{
	uint64_t end = start + (count ? count - 1 : 0);

	if (end < start)
		end = UINT64_MAX;	/* wraps: treat as reaching the end */
	if (allow)
		return start >= r->lo && end <= r->hi;
	return start <= r->hi && end >= r->lo;
}

/*
 * A rule's range against every range the command touches (its first in
 * slba/nlb or offset/length, then d->ranges): an allow rule must hold them
 * all, a deny rule matches if any overlaps. A command that touches blocks it
 * cannot list (range_unknown) matches every deny rule with a range and no
 * allow rule with one: what it does is judged as if it could be anything.
 * A rule about a range says nothing about a command without one.
 */
static bool ranges_match(const struct pol_range *r, const struct ucmd_cmd_desc *d, bool allow,
			 bool bytes)
{
	bool any = false;

	if (d->range_unknown)
		return !allow;
	if (bytes ? (d->has_range || d->length) : d->has_range) {
		any = true;
		if (range_ok(r, bytes ? d->offset : d->slba, bytes ? d->length : d->nlb, allow) != allow)
			return !allow;
	}
	for (unsigned i = 0; d->ranges && i < d->nr_ranges; i++) {
		const struct ucmd_desc_range *x = &d->ranges[i];

		any = true;
		if (range_ok(r, bytes ? x->offset : x->slba, bytes ? x->length : x->nlb, allow) != allow)
			return !allow;
	}
	return allow && any;
}

/* Each glob was classified at load: most need no fnmatch(), nor a scan for one. */
static bool devices_ok(const struct ucmd_policy_rule *r, const char *dev)
{
	if (!r->ndevices)
		return true;
	for (unsigned i = 0; i < r->ndevices; i++)
		if (pol_glob_match(&r->devglobs[i], dev))
			return true;
	return false;
}

static bool cmd_ok(const struct ucmd_policy_rule *r, const struct ucmd_policy_subject *s)
{
	const struct ucmd_cmd_desc *d = s->desc;
	bool allow = r->action == 1;

	if (!d)
		return false;
	if (r->nsid.n && !pv_set_has(&r->nsid, d->nsid))
		return false;
	if (r->verbs && !(r->verbs & (1u << d->verb)))
		return false;
	if (r->dirs && !(r->dirs & (1u << d->dir)))
		return false;
	if (r->modes && !(r->modes & mode_bit(s->f_mode)))
		return false;
	if (!tri_ok(r->admin_cmd, d->admin) || !tri_ok(r->destructive, d->destructive) ||
	    !tri_ok(r->intrusive, d->intrusive))
		return false;
	if (r->select.n && (!d->has_select || !pv_set_has(&r->select, d->select)))
		return false;
	if (r->opcode.n && !pv_set_has(&r->opcode, d->opcode))
		return false;
	if (r->has_bytes && !ranges_match(&r->bytes, d, allow, true))
		return false;
	if (r->has_lba && !ranges_match(&r->lba, d, allow, false))
		return false;
	/*
	 * The device last: every key must match, so the order changes no
	 * answer, and the integer keys above turn most rules away first (the
	 * default policy's rules all name "nvme*, ng*" and differ in them).
	 */
	return devices_ok(r, d->device);
}

/* A rule naming host NQNs matches only NVMe/TCP connections with one of them. */
static bool hostnqn_ok(const struct ucmd_policy_rule *r, const struct ucmd_cred *c)
{
	if (!r->nhostnqns)
		return true;
	if (!c->hostnqn[0])
		return false;
	for (unsigned i = 0; i < r->nhostnqns; i++)
		if (!fnmatch(r->hostnqns[i], c->hostnqn, 0))
			return true;
	return false;
}

/* A rule naming host IDs matches only NVMe/TCP connections with one of them. */
static bool hostid_ok(const struct ucmd_policy_rule *r, const struct ucmd_cred *c)
{
	if (!r->nhostids)
		return true;
	for (unsigned i = 0; i < r->nhostids && c->hostid[0]; i++)
		if (!strcmp(r->hostids[i], c->hostid))
			return true;
	return false;
}

static bool rule_matches(const struct ucmd_policy_rule *r, const struct ucmd_policy_subject *s)
{
	if (!(r->hooks & POL_HOOK(s->hook)))
		return false;
	if (!s->cred || !ids_ok(&r->uid, &r->gid, s->cred) ||
	    !tri_ok(r->cap_sys_admin, s->cred->cap_sys_admin) || !hostnqn_ok(r, s->cred) ||
	    !hostid_ok(r, s->cred))
		return false;
	if (s->hook == UCMD_HOOK_URING_OVERRIDE_CREDS)
		return s->new_cred && ids_ok(&r->target_uid, &r->target_gid, s->new_cred);
	if (s->hook == UCMD_HOOK_URING_SQPOLL)
		return true;
	return cmd_ok(r, s);
}

/* Append at most max bytes of t at *pos in out (size len, kept terminated). */
static void put(char *out, size_t len, size_t *pos, const char *t, size_t max)
{
	while (*t && max-- && *pos + 1 < len)
		out[(*pos)++] = *t++;
	out[*pos] = 0;
}

/*
 * "file:line name" (the name cut at 40 bytes), or "file: default". Written
 * by hand: this runs for every judged command, and snprintf() cost ten
 * times the rest of the evaluation.
 */
void policy_rule_label(char *out, size_t len, const char *file, unsigned line, const char *name)
{
	char num[16];
	size_t pos = 0, n = sizeof(num) - 1;

	num[n] = 0;
	do
		num[--n] = (char)('0' + line % 10);
	while ((line /= 10) && n);
	put(out, len, &pos, file, SIZE_MAX);
	put(out, len, &pos, name ? ":" : ": default", SIZE_MAX);
	if (!name)
		return;
	put(out, len, &pos, num + n, SIZE_MAX);
	if (*name) {
		put(out, len, &pos, " ", 1);
		put(out, len, &pos, name, 40);
	}
}

static const struct ucmd_policy_rule *first_match(const struct ucmd_policy *p,
						  const struct ucmd_policy_subject *s)
{
	for (unsigned i = 0; i < p->nrules; i++)
		if (rule_matches(&p->rules[i], s))
			return &p->rules[i];
	return NULL;
}

bool policy_allows_subject(const struct ucmd_policy *p, const struct ucmd_policy_subject *s)
{
	const struct ucmd_policy_rule *r = first_match(p, s);

	return r ? r->action == 1 : p->default_allow;
}

void policy_eval(const struct ucmd_policy *p, const struct ucmd_policy_subject *s,
		      struct ucmd_policy_verdict *v)
{
	const struct ucmd_policy_rule *r = first_match(p, s);

	if (r) {
		v->allow = r->action == 1;
		v->audit = r->audit;
		v->line = r->line;
		policy_rule_label(v->rule, sizeof(v->rule), r->file, r->line, r->name ? r->name : "");
		return;
	}
	v->allow = p->default_allow;
	v->audit = p->audit_default;
	v->line = 0;
	policy_rule_label(v->rule, sizeof(v->rule), p->file, 0, NULL);
}

/* A rule that looks at who calls or at the command, beyond device, mode, capability. */
static bool rule_conditional(const struct ucmd_policy_rule *r)
{
	return r->uid.n || r->gid.n || r->nhostnqns || r->nhostids || r->nsid.n || r->verbs ||
	       r->dirs || r->admin_cmd != POL_ANY || r->destructive != POL_ANY ||
	       r->intrusive != POL_ANY || r->select.n || r->opcode.n || r->has_bytes ||
	       r->has_lba;
}

bool policy_constant_allow(const struct ucmd_policy *p, enum ucmd_security_hook hook,
				const char *device, unsigned f_mode, bool cap)
{
	for (unsigned i = 0; i < p->nrules; i++) {
		const struct ucmd_policy_rule *r = &p->rules[i];

		if (!(r->hooks & POL_HOOK(hook)) || !devices_ok(r, device) ||
		    (r->modes && !(r->modes & mode_bit(f_mode))) || !tri_ok(r->cap_sys_admin, cap))
			continue;	/* matches nothing on this file for such a caller */
		if (!rule_conditional(r))
			return r->action == 1 && !r->audit;	/* decides every call */
		/* may match some calls: only an allow without a record keeps it constant */
		if (r->action != 1 || r->audit)
			return false;
	}
	return p->default_allow && !p->audit_default;
}

void policy_desc_for_verb(struct ucmd_cmd_desc *d, enum ucmd_verb verb)
{
	d->verb = verb;
	d->dir = UCMD_DIR_NONE;
	d->destructive = false;
	d->admin = false;
	switch (verb) {
	case UCMD_VERB_READ:
	case UCMD_VERB_IDENTIFY:
	case UCMD_VERB_GET_LOG:
	case UCMD_VERB_GET_FEATURE:
		d->dir = UCMD_DIR_FROM_DEVICE;
		break;
	case UCMD_VERB_WRITE:
		d->dir = UCMD_DIR_TO_DEVICE;
		d->destructive = true;
		break;
	case UCMD_VERB_TRIM:
		d->dir = UCMD_DIR_TO_DEVICE;	/* the range list */
		d->destructive = true;
		break;
	case UCMD_VERB_WRITE_ZEROES:
	case UCMD_VERB_WRITE_UNCOR:
	case UCMD_VERB_FORMAT:
	case UCMD_VERB_SANITIZE:
		d->destructive = true;
		break;
	case UCMD_VERB_COMPARE:
	case UCMD_VERB_FIRMWARE:
	case UCMD_VERB_SET_FEATURE:
		d->dir = UCMD_DIR_TO_DEVICE;
		break;
	case UCMD_VERB_COPY:
		d->dir = UCMD_DIR_TO_DEVICE;	/* the source range list */
		d->destructive = true;
		break;
	default:
		break;
	}
	switch (verb) {
	case UCMD_VERB_IDENTIFY: case UCMD_VERB_GET_LOG: case UCMD_VERB_GET_FEATURE:
	case UCMD_VERB_SET_FEATURE: case UCMD_VERB_FORMAT: case UCMD_VERB_SANITIZE:
	case UCMD_VERB_FIRMWARE: case UCMD_VERB_NS_MANAGE: case UCMD_VERB_NS_ATTACH:
	case UCMD_VERB_QUEUE_MANAGE: case UCMD_VERB_ABORT: case UCMD_VERB_ASYNC_EVENT:
		d->admin = true;
		break;
	default:
		break;
	}
}
