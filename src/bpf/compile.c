// SPDX-License-Identifier: MIT
/*
 * A policy file into the BPF program's rule set. The parse is libucmd's
 * (ucmd_policy_load_file), so a policy the engine refuses is refused here,
 * whole; then each rule that can judge a uring_cmd or an ioctl becomes one
 * fixed-size struct ul_rule, in file order. Rules that cannot match on
 * Linux's path are left out (hooks rw, sqpoll, override-creds; hostnqn,
 * which only NVMe/TCP connections to ucmdd have), which changes no
 * decision: the first rule that matches still decides. Device globs are
 * matched here, against the devices the loader found, into a bit mask.
 */
#include <errno.h>
#include <fnmatch.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ucmd/security.h"
#include "ucmd_bpf.h"
#include "ucmd_lsm.h"

static const char *const verb_names[UL_VERB_NR] = {
	"read", "write", "flush", "trim", "write-zeroes", "write-uncor", "compare", "verify",
	"copy", "identify", "get-log", "get-feature", "set-feature", "format", "sanitize",
	"firmware", "ns-manage", "ns-attach", "queue-manage", "abort", "async-event",
	"vendor", "unknown",
};

/* The program's verb numbers are the policy language's: checked, not assumed. */
static int verbs_agree(char *err, size_t errlen)
{
	for (unsigned i = 0; i < UL_VERB_NR; i++) {
		const char *n = ucmd_policy_verb_name(i);

		if (!n || strcmp(n, verb_names[i])) {
			snprintf(err, errlen, "the BPF program's verb %u (%s) is libucmd's %s", i,
				 verb_names[i], n ? n : "(none)");
			return -EPROTO;
		}
	}
	if (ucmd_policy_verb_name(UL_VERB_NR)) {
		snprintf(err, errlen, "libucmd knows more verbs than the BPF program");
		return -EPROTO;
	}
	return 0;
}

static int set_ranges(const struct ucmd_policy_set *in, struct ul_range *out, __u8 *n,
		      const char *label, const char *key, char *err, size_t errlen)
{
	if (in->n > UL_SET_MAX) {
		snprintf(err, errlen, "%s: %u values in %s; the BPF program holds %u", label, in->n,
			 key, UL_SET_MAX);
		return -EINVAL;
	}
	for (unsigned i = 0; i < in->n; i++) {
		out[i].lo = in->r[i].lo;
		out[i].hi = in->r[i].hi;
	}
	*n = (__u8)in->n;
	return 0;
}

/* values 0..255 (opcode, the 8-bit sub-selectors): a bit map */
static void set_bits(const struct ucmd_policy_set *in, __u64 bits[4])
{
	for (unsigned i = 0; i < in->n; i++)
		for (uint64_t v = in->r[i].lo; v <= in->r[i].hi && v < 256; v++)
			bits[v >> 6] |= 1ull << (v & 63);
}

static int compile_rule(const struct ucmd_policy_rule_info *ri, const struct ucmd_bpf_dev *devs,
			unsigned ndevs, struct ul_rule *r, char *err, size_t errlen)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if ((ret = set_ranges(&ri->uid, r->uid, &r->nuid, ri->label, "uid", err, errlen)) ||
	    (ret = set_ranges(&ri->gid, r->gid, &r->ngid, ri->label, "gid", err, errlen)) ||
	    (ret = set_ranges(&ri->nsid, r->nsid, &r->nnsid, ri->label, "nsid", err, errlen)))
		return ret;
	if (ri->ndevices) {
		r->has_dev = 1;
		for (unsigned d = 0; d < ndevs; d++)
			for (unsigned g = 0; g < ri->ndevices; g++)
				if (!fnmatch(ri->devices[g], devs[d].name, 0))
					r->devmask |= 1ull << d;
	}
	if (ri->opcode.n) {
		r->has_opcode = 1;
		set_bits(&ri->opcode, r->opcodes);
	}
	if (ri->select.n) {
		/* the program reads the 8-bit selectors (CNS, LID, FID) as the engine does */
		r->has_select = 1;
		set_bits(&ri->select, r->selects);
	}
	r->verbs = ri->verbs;
	r->dirs = (__u8)ri->dirs;
	r->modes = (__u8)ri->modes;
	r->cap = (__s8)ri->cap_sys_admin;
	r->destructive = (__s8)ri->destructive;
	r->intrusive = (__s8)ri->intrusive;
	r->admin = (__s8)ri->admin_cmd;
	r->has_bytes = ri->has_bytes;
	r->has_lba = ri->has_lba;
	r->bytes.lo = ri->bytes.lo;
	r->bytes.hi = ri->bytes.hi;
	r->lba.lo = ri->lba.lo;
	r->lba.hi = ri->lba.hi;
	r->allow = ri->allow;
	r->audit = ri->audit;
	return 0;
}

void bpf_lsm_image_free(struct ucmd_bpf_image *img)
{
	free(img->rules);
	free(img->labels);
	memset(img, 0, sizeof(*img));
}

int bpf_lsm_compile(const char *path, const struct ucmd_bpf_dev *devs, unsigned ndevs,
		     struct ucmd_bpf_image *img, char *err, size_t errlen)
{
	struct ucmd_policy *p;
	int ret;

	memset(img, 0, sizeof(*img));
	ret = verbs_agree(err, errlen);
	if (ret)
		return ret;
	if (ndevs > UL_MAX_DEVS) {
		snprintf(err, errlen, "%u NVMe devices; the BPF program tells %u apart", ndevs,
			 UL_MAX_DEVS);
		return -E2BIG;
	}
	ret = ucmd_policy_load_file(path, &p, err, errlen);
	if (ret)
		return ret;
	img->rules = calloc(UL_MAX_RULES, sizeof(*img->rules));
	img->labels = calloc(UL_MAX_RULES + 1, sizeof(*img->labels));
	if (!img->rules || !img->labels) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < ucmd_policy_nr_rules(p); i++) {
		struct ucmd_policy_rule_info ri;

		ucmd_policy_rule_info(p, i, &ri);
		/* a rule that cannot match a local caller's command on Linux's path */
		if (!(ri.hooks & UCMD_RULE_HOOK_CMD) || ri.nhostnqns)
			continue;
		if (img->nrules == UL_MAX_RULES) {
			snprintf(err, errlen, "%s: more than %u rules judge commands; the BPF "
				 "program holds %u", path, UL_MAX_RULES, UL_MAX_RULES);
			ret = -E2BIG;
			goto out;
		}
		ret = compile_rule(&ri, devs, ndevs, &img->rules[img->nrules], err, errlen);
		if (ret)
			goto out;
		img->rules[img->nrules].index = i;
		snprintf(img->labels[img->nrules], sizeof(img->labels[0]), "%s", ri.label);
		img->nrules++;
	}
	ucmd_policy_default_info(p, &img->default_allow, &img->audit_default,
				 img->labels[UL_MAX_RULES], sizeof(img->labels[0]));
out:
	ucmd_policy_put(p);
	if (ret)
		bpf_lsm_image_free(img);
	return ret;
}
