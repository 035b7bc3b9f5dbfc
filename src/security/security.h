/* SPDX-License-Identifier: MIT */
/*
 * ucmd's security modules on top of the hook chain (hooks.h):
 *   "policy"  rules on who may send which command to which device
 *             (docs/security.md has the file format; policy/default.ini is
 *             Linux's nvme_cmd_allowed() written as such rules)
 *   "audit"   one JSON line per denial, and per allowed decision a rule
 *             asks to record
 * Everything is decided behind the ring, inside the engine, so a daemon
 * holding the engine enforces the same policy unchanged. What users call is
 * in include/ucmd/security.h; this adds the modules' internals.
 */
#ifndef UCMD_SECURITY_SECURITY_H
#define UCMD_SECURITY_SECURITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cred.h"
#include "ucmd/security.h"
#include "security/desc.h"
#include "security/hooks.h"

struct ucmd_engine;
struct ucmd_policy;
struct ucmd_policy_rule;

/* ---- policies: immutable rule sets, reference counted ------------------- */

extern const char policy_default_text[];
extern const char policy_default_name[];

/* What is being judged. */
struct ucmd_policy_subject {
	enum ucmd_security_hook hook;
	const struct ucmd_cred *cred;		/* who acts */
	const struct ucmd_cred *new_cred;	/* override-creds: whom it becomes */
	unsigned f_mode;			/* FMODE_READ / FMODE_WRITE of the file */
	const struct ucmd_cmd_desc *desc;	/* uring_cmd / uring_rw */
};

struct ucmd_policy_verdict {
	bool allow;
	bool audit;				/* the deciding rule asks for a record */
	unsigned line;				/* the rule's [section] line, 0: default */
	char rule[UCMD_SECURITY_RULE_MAX];	/* "file:line name" or "file: default" */
};

void policy_eval(const struct ucmd_policy *p, const struct ucmd_policy_subject *s,
		      struct ucmd_policy_verdict *v);
/* The decision alone, for a chain nobody audits (no rule label to write). */
bool policy_allows_subject(const struct ucmd_policy *p, const struct ucmd_policy_subject *s);

/*
 * Whether p allows every call of hook (cmd or rw) on a file named device
 * opened with f_mode, by any caller whose CAP_SYS_ADMIN is cap, for any
 * command, with no record asked.
 */
bool policy_constant_allow(const struct ucmd_policy *p, enum ucmd_security_hook hook,
				const char *device, unsigned f_mode, bool cap);

/* A typical description for a verb (dir, destructive, admin queue). */
void policy_desc_for_verb(struct ucmd_cmd_desc *d, enum ucmd_verb verb);

/* ---- the "policy" module ------------------------------------------------ */

struct ucmd_policy_module;

/* Takes over the caller's reference to p. */
struct ucmd_policy_module *policy_module_new(struct ucmd_policy *p);
void policy_module_free(struct ucmd_policy_module *m);
int policy_module_register(struct ucmd_engine *e, struct ucmd_policy_module *m);
/* Replace the rule set atomically; takes over the reference to p. */
void policy_module_set(struct ucmd_policy_module *m, struct ucmd_policy *p);
/* Parse path and install it; on error the old policy stays in force. */
int policy_module_reload(struct ucmd_policy_module *m, const char *path, char *err,
			      size_t errlen);
/* The rule set in force now (a reference: drop it with ucmd_policy_put). */
struct ucmd_policy *policy_module_current(struct ucmd_policy_module *m);
/* Evaluate s against the rule set in force. */
void policy_module_eval(struct ucmd_policy_module *m, const struct ucmd_policy_subject *s,
			     struct ucmd_policy_verdict *v);

/* ---- the "audit" module ------------------------------------------------- */

/* ucmd_audit_open(), with -errno and the reason in err. */
int audit_open(const char *path, struct ucmd_audit **out, char *err, size_t errlen);

/* ---- ucmd_last_error() for the calls that take err/errlen --------------- */

/*
 * The public entries of policy_parse.c and security.c are wrappers (api.c)
 * around these, which write their reason into err only.
 */
int policy_load_file(const char *path, struct ucmd_policy **out, char *err, size_t errlen);
int policy_load_string(const char *name, const char *text, size_t len,
		       struct ucmd_policy **out, char *err, size_t errlen);
int policy_load_default(struct ucmd_policy **out, char *err, size_t errlen);
int security_setup(struct ucmd_engine *e, const char *policy_path, const char *audit_path,
		   char *err, size_t errlen);
int security_reload(struct ucmd_engine *e, const char *policy_path, char *err, size_t errlen);

/* ---- the engine's modules (security.c) ----------------------------------- */

/*
 * Every native engine's "policy" module, with the default policy, from its
 * creation (the capability rules live nowhere else): 0 or -errno, and an
 * engine that cannot have it is not created. security_engine_exit()
 * releases the engine's modules when it is freed.
 */
int security_engine_init(struct ucmd_engine *e);
void security_engine_exit(struct ucmd_engine *e);
/* The engine's policy module (NULL on a kernel engine). */
struct ucmd_policy_module *security_engine_policy(struct ucmd_engine *e);


#endif
