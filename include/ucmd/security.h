/* SPDX-License-Identifier: MIT */
/*
 * Security on an engine: who may send which command to which device.
 *
 * Two modules sit behind every ring of an engine: "policy", rules in the
 * language of docs/security.md (with no policy file, policy/default.ini:
 * Linux's nvme_cmd_allowed() written as rules), and "audit", one JSON line
 * per denial and per allowed decision a rule asks to record. Set both up
 * with ucmd_security_setup() before the engine's first ring.
 *
 * Policies (struct ucmd_policy) are immutable, reference counted rule sets;
 * ucmd_policy_explain() judges a described command against one without
 * running anything, as `ucmd policy explain` does.
 *
 * Errors are negative errno values. Calls that take err/errlen write a
 * sentence there ("file:line: problem"); err may be NULL when errlen is 0.
 * Every failing call here also leaves that sentence in ucmd_last_error()
 * (<ucmd/ucmd.h>).
 */
#ifndef UCMD_SECURITY_PUBLIC_H
#define UCMD_SECURITY_PUBLIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

struct ucmd_engine;
struct ucmd_policy;
struct ucmd_audit;

/* ---- both modules on an engine ------------------------------------------ */

/*
 * Register "policy" (policy_path, or the default policy when NULL) and,
 * when audit_path is not NULL, "audit" (a file appended to, or "-" for
 * stderr) on e. On error nothing is registered.
 */
int ucmd_security_setup(struct ucmd_engine *e, const char *policy_path, const char *audit_path,
			char *err, size_t errlen);
/* Reload e's policy from path (NULL: the default); the old one stays on error. */
int ucmd_security_reload(struct ucmd_engine *e, const char *policy_path, char *err, size_t errlen);
/* Unregister and free what ucmd_security_setup() made for e; before ucmd_engine_free(). */
void ucmd_security_teardown(struct ucmd_engine *e);

/* ---- policies ----------------------------------------------------------- */

/*
 * Parse a policy into *out (one reference, dropped with ucmd_policy_put()).
 * -EINVAL for a bad policy (or -ENOMEM, -errno of reading the file); *out
 * is untouched on error.
 */
int ucmd_policy_load_file(const char *path, struct ucmd_policy **out, char *err, size_t errlen);
int ucmd_policy_load_string(const char *name, const char *text, size_t len,
			    struct ucmd_policy **out, char *err, size_t errlen);
/* The compiled-in copy of policy/default.ini (Linux's rules). */
int ucmd_policy_load_default(struct ucmd_policy **out, char *err, size_t errlen);

struct ucmd_policy *ucmd_policy_get(struct ucmd_policy *p);
void ucmd_policy_put(struct ucmd_policy *p);
unsigned ucmd_policy_nr_rules(const struct ucmd_policy *p);

/*
 * A policy's rules as parsed, for enforcers outside the engine (the BPF LSM
 * program of src/bpf/ compiles them into maps). Every pointer points into
 * the policy and lives as long as the reference the caller holds.
 */
#define UCMD_RULE_HOOK_CMD		(1u << 0)	/* uring_cmd and passthrough ioctls */
#define UCMD_RULE_HOOK_RW		(1u << 1)
#define UCMD_RULE_HOOK_SQPOLL		(1u << 2)
#define UCMD_RULE_HOOK_OVERRIDE_CREDS	(1u << 3)

/* The verbs of policy files, bit n of verbs is verb n (ucmd_policy_verb_name()). */
#define UCMD_POLICY_VERBS_NR	23
/* dirs: bit 0 none, 1 to-device, 2 from-device, 3 bidirectional */
/* modes: bit 0 ro, 1 wo, 2 rw */

struct ucmd_policy_range {
	uint64_t lo, hi;		/* inclusive */
};

struct ucmd_policy_set {
	unsigned n;			/* 0: the key is absent (matches all) */
	const struct ucmd_policy_range *r;
};

struct ucmd_policy_rule_info {
	const char *file;
	unsigned line;			/* of the [rule] header */
	const char *name;		/* NULL or "" when unnamed */
	char label[128];		/* "file:line name", as audit records and explain write it */
	unsigned hooks;			/* UCMD_RULE_HOOK_* */
	struct ucmd_policy_set uid, gid, nsid, select, opcode, target_uid, target_gid;
	unsigned ndevices;
	const char *const *devices;	/* fnmatch() globs */
	unsigned nhostnqns;
	uint32_t verbs;			/* 0: any */
	unsigned dirs;			/* 0: any */
	unsigned modes;			/* 0: any */
	/* -1: any, 0: must be false, 1: must be true */
	int cap_sys_admin, destructive, intrusive, admin_cmd;
	bool has_bytes, has_lba;
	struct ucmd_policy_range bytes, lba;
	bool allow;
	bool audit;
};

/* Rule i (0 <= i < ucmd_policy_nr_rules()): 0, or -ERANGE. */
int ucmd_policy_rule_info(const struct ucmd_policy *p, unsigned i, struct ucmd_policy_rule_info *out);
/* What applies when no rule matches; label is "file: default". */
void ucmd_policy_default_info(const struct ucmd_policy *p, bool *allow, bool *audit,
			      char *label, size_t len);
/* A verb's name in policy files, or NULL past the last. */
const char *ucmd_policy_verb_name(unsigned verb);

/* ---- explain: what a policy decides for a described command -------------- */

#define UCMD_EXPLAIN_GROUPS_MAX	32
#define UCMD_EXPLAIN_RANGES_MAX	256
/* Linux's capability number, a bit of struct ucmd_explain.caps */
#define UCMD_CAP_SYS_ADMIN	21

/* Which check is asked (the hooks of docs/security.md). */
enum ucmd_explain_hook {
	UCMD_EXPLAIN_URING_CMD,		/* a uring_cmd on a device */
	UCMD_EXPLAIN_URING_RW,		/* a READ/WRITE-family request on a block device */
	UCMD_EXPLAIN_SQPOLL,		/* creating an SQPOLL ring */
	UCMD_EXPLAIN_OVERRIDE_CREDS,	/* a request under a registered personality */
};

struct ucmd_lba_range {
	uint64_t slba, nlb;
};

/*
 * A subject and a command, described in the policy language's terms. Fill
 * it with ucmd_explain_init() first, then change what differs.
 */
struct ucmd_explain {
	/* who: the caller's own credentials after ucmd_explain_init() */
	uint32_t uid, gid;		/* real and effective alike */
	unsigned ngroups;		/* supplementary groups, at most UCMD_EXPLAIN_GROUPS_MAX */
	uint32_t groups[UCMD_EXPLAIN_GROUPS_MAX];
	uint64_t caps;			/* effective capabilities: bit n is Linux's capability n */
	enum ucmd_explain_hook hook;
	bool may_read, may_write;	/* the file's open mode */
	/* what: a device, a verb as policy files name it ("read", "format", ...) */
	const char *device;		/* "ng0n1" */
	const char *verb;		/* "read" */
	uint32_t nsid;			/* 1 */
	/*
	 * where: logical blocks (has_lba_range: Copy's destination, DSM's
	 * first range) and bytes (length 0: slba/nlb at 512-byte blocks),
	 * and more ranges (Copy's sources, DSM's other entries). A verb that
	 * touches blocks, given none of these, is judged as if it could touch
	 * any (range_unknown in the result).
	 */
	bool has_lba_range;
	uint64_t slba, nlb;
	uint64_t offset, length;
	unsigned nr_ranges;		/* at most UCMD_EXPLAIN_RANGES_MAX */
	const struct ucmd_lba_range *ranges;
	/* what the verb implies unless set: -1 keeps the verb's, 0 no, 1 yes */
	int admin;			/* an admin-queue command */
	int destructive;		/* changes or destroys data */
	int64_t select;			/* sub-selector (CNS, LID, FID); -1: none */
	int opcode;			/* 0..255 */
	/*
	 * an NVMe/TCP host (ucmdd --nvme-tcp): the host NQN and host ID
	 * (UUID text) of its Connect; NULL for a local caller
	 */
	const char *hostnqn;
	const char *hostid;
};

struct ucmd_explain_result {
	bool allow;
	bool audit;			/* the deciding rule asks for a record */
	bool range_unknown;		/* judged as touching any block */
	unsigned line;			/* the deciding rule's [section] line; 0: the default */
	char rule[96];			/* "file:line name" or "file: default" */
};

/* The caller's credentials, hook uring_cmd, read-write, "ng0n1", "read", nsid 1. */
void ucmd_explain_init(struct ucmd_explain *x);
/*
 * Judge x against p into *r. 0, or -EINVAL (with ucmd_last_error()) for an
 * unknown verb or hook, too many groups or ranges, a NULL device or an
 * opcode out of range.
 */
int ucmd_policy_explain(const struct ucmd_policy *p, const struct ucmd_explain *x,
			struct ucmd_explain_result *r);

/* ---- audit trails ------------------------------------------------------- */

/*
 * Open an audit trail into *out: path is a file (appended to; never
 * through a symbolic link; a FIFO needs a reader) or "-" for stderr.
 * Release with ucmd_audit_free() after the engine is done with it.
 */
int ucmd_audit_create(const char *path, struct ucmd_audit **out);
/* The same, returning NULL on failure with the reason in err. */
struct ucmd_audit *ucmd_audit_open(const char *path, char *err, size_t errlen);
/* Write to fd (not closed by ucmd_audit_free() unless own_fd). */
struct ucmd_audit *ucmd_audit_open_fd(int fd, bool own_fd);
void ucmd_audit_free(struct ucmd_audit *a);
/* Put a in e's hook chain (before its first ring); 0 or -errno. */
int ucmd_audit_register(struct ucmd_engine *e, struct ucmd_audit *a);
/* Records written, and records lost (failed writes not yet reported). */
uint64_t ucmd_audit_written(struct ucmd_audit *a);
uint64_t ucmd_audit_lost(struct ucmd_audit *a);

/*
 * A decision made outside the engine (the BPF LSM program, src/bpf/), to
 * write as the same JSON line the engine's decisions get (docs/security.md).
 */
struct ucmd_audit_record {
	uint64_t time_ns;		/* CLOCK_REALTIME; 0: now */
	bool ioctl;			/* hook file_ioctl, else uring_cmd */
	int32_t pid;
	uint32_t uid, gid;		/* effective */
	bool cap_sys_admin;
	const char *device;
	uint32_t cmd_op;
	uint8_t opcode;
	unsigned verb;			/* ucmd_policy_verb_name() */
	unsigned dir;			/* 0 none, 1 to-device, 2 from-device, 3 bidirectional */
	bool admin;
	uint32_t nsid;
	bool has_range, range_unknown, destructive;
	uint64_t offset, length, slba, nlb;
	bool allow;
	int err;			/* positive errno of a denial */
	const char *module;
	const char *rule;
};
/* One record: 0 or -errno (it is then counted as lost). */
int ucmd_audit_write_record(struct ucmd_audit *a, const struct ucmd_audit_record *r);
/* Records lost before they reached the trail: the next record carries them. */
void ucmd_audit_add_lost(struct ucmd_audit *a, uint64_t n);
/* Write a dedicated record reporting lost records, if any; 0 or -errno. */
int ucmd_audit_flush_lost(struct ucmd_audit *a);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif /* UCMD_SECURITY_PUBLIC_H */
