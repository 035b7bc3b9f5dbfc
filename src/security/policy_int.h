/* SPDX-License-Identifier: MIT */
/* Policy internals: the parsed form of a policy file (src/security only). */
#ifndef UCMD_SECURITY_POLICY_INT_H
#define UCMD_SECURITY_POLICY_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "security/policy_glob.h"
#include "security/security.h"

/* Which hooks a rule applies to (bit per enum ucmd_security_hook). */
#define POL_HOOK(h) (1u << (h))
#define POL_HOOKS_IO (POL_HOOK(UCMD_HOOK_URING_CMD) | POL_HOOK(UCMD_HOOK_URING_RW))

enum pol_tri { POL_ANY, POL_YES, POL_NO };

/* Open modes, bit per kind of open file */
#define POL_MODE_RO 1u
#define POL_MODE_WO 2u
#define POL_MODE_RW 4u

struct pol_range {
	uint64_t lo, hi;	/* inclusive */
};

/* A list of values and ranges; n == 0 means "not given": matches all. */
struct pol_set {
	unsigned n;
	struct pol_range *r;
};

struct ucmd_policy_rule {
	const char *file;		/* the policy file it comes from */
	unsigned line;			/* of its [rule] header */
	char *name;
	unsigned hooks;
	unsigned keys;			/* keys given (bit per key), for duplicates */
	struct pol_set uid, gid, nsid, select, opcode, target_uid, target_gid;
	unsigned ndevices;
	char **devices;			/* fnmatch() globs */
	struct pol_glob *devglobs;	/* the same, classified (policy_glob.h) */
	unsigned nhostnqns;
	char **hostnqns;		/* fnmatch() globs on the NVMe/TCP host NQN */
	unsigned nhostids;
	char (*hostids)[UCMD_HOSTID_LEN];	/* NVMe/TCP host IDs, canonical UUID text */
	uint32_t verbs;			/* bit per enum ucmd_verb; 0: any */
	unsigned dirs;			/* bit per enum ucmd_dir; 0: any */
	unsigned modes;			/* POL_MODE_*; 0: any */
	enum pol_tri cap_sys_admin, destructive, intrusive, admin_cmd;
	bool has_bytes, has_lba;
	struct pol_range bytes, lba;
	int action;			/* 0 unset, 1 allow, 2 deny */
	bool audit;
};

struct ucmd_policy {
	atomic_uint refs;
	char *file;
	bool default_allow;
	bool audit_default;
	unsigned nrules;
	struct ucmd_policy_rule *rules;
};

void pol_rule_free(struct ucmd_policy_rule *r);
/* "file:line name" (name NULL: "file: default"), as verdicts carry it. */
void policy_rule_label(char *out, size_t len, const char *file, unsigned line, const char *name);

#endif
