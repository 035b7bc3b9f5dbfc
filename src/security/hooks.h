/* SPDX-License-Identifier: MIT */
/*
 * The security hook chain (seed 001, the kernel's LSM hooks for io_uring):
 * named modules, called in registration order, first denial wins. Hooks:
 *   uring_cmd            before every IORING_OP_URING_CMD reaches its provider
 *   uring_rw             before every READ/WRITE family request on a device
 *   uring_sqpoll         before a ring with a polling thread is created
 *   uring_override_creds before a request runs with a registered personality
 *   file_ioctl           before a synchronous ioctl reaches its provider
 *                        (Linux's security_file_ioctl), judging the
 *                        engine's copy of what the ioctl carries in
 * A hook returns 0 to allow or a negative errno (normally -EACCES/-EPERM).
 * The chain is replaced atomically, so modules can be added while rings run.
 *
 * After the chain has decided, every module with a ->decided op learns the
 * final decision and which module made it (the audit module), as the
 * kernel's audit sees an LSM's verdict. A module explains its verdict with
 * security_note() during its hook: like the kernel's per-task audit
 * context, the note belongs to the thread running the chain.
 */
#ifndef UCMD_SECURITY_HOOKS_H
#define UCMD_SECURITY_HOOKS_H

#include <stdatomic.h>

#include "core/cred.h"
#include "core/file.h"

struct ucmd_engine;
struct io_uring_cmd;
struct ucmd_kiocb_rw;
struct ucmd_file;

enum ucmd_security_hook {
	UCMD_HOOK_URING_CMD,
	UCMD_HOOK_URING_RW,
	UCMD_HOOK_URING_SQPOLL,
	UCMD_HOOK_URING_OVERRIDE_CREDS,
	UCMD_HOOK_FILE_IOCTL,
};

/* What file_ioctl judges: the ioctl and the engine's copy of its argument. */
struct ucmd_ioctl_call {
	const struct ucmd_file *file;
	unsigned long cmd;
	const void *karg;	/* _IOC_SIZE(cmd) bytes copied in, or NULL */
};

#define UCMD_SECURITY_RULE_MAX 96

/* One decision of the chain, as ->decided sees it. */
struct ucmd_security_event {
	enum ucmd_security_hook hook;
	const struct io_uring_cmd *cmd;		/* UCMD_HOOK_URING_CMD */
	const struct ucmd_kiocb_rw *kiocb;	/* UCMD_HOOK_URING_RW */
	const struct ucmd_ioctl_call *ioctl;	/* UCMD_HOOK_FILE_IOCTL */
	const struct ucmd_cred *cred;		/* who acts */
	const struct ucmd_cred *new_cred;	/* UCMD_HOOK_URING_OVERRIDE_CREDS */
	int ret;				/* 0 or the denial */
	const char *module;			/* who denied, or whose note explains the allow */
	const char *rule;			/* the deciding module's note, or "" */
	bool audit;				/* an allowing module asked for a record */
	const struct ucmd_cmd_desc *desc;	/* noted description, or NULL */
};

struct ucmd_security_ops {
	const char *name;
	int (*uring_cmd)(void *priv, const struct io_uring_cmd *cmd);
	int (*uring_rw)(void *priv, const struct ucmd_kiocb_rw *kiocb, const struct ucmd_cred *cred);
	int (*uring_sqpoll)(void *priv, const struct ucmd_cred *cred);
	int (*uring_override_creds)(void *priv, const struct ucmd_cred *cur,
				    const struct ucmd_cred *new_cred);
	int (*file_ioctl)(void *priv, const struct ucmd_ioctl_call *call,
			  const struct ucmd_cred *cred);
	/* After every decision of the chain (allow or deny); must not fail. */
	void (*decided)(void *priv, const struct ucmd_security_event *ev);
	/*
	 * Whether the module, as it stands, allows every call of hook
	 * (UCMD_HOOK_URING_CMD, _URING_RW or _FILE_IOCTL) on f by any caller
	 * whose CAP_SYS_ADMIN is cap, whatever the caller's ids and the
	 * command, and asks no record of it; its ->decided would have
	 * nothing to write. When every module with the hook or ->decided says
	 * so, the chain is not run for such calls on f (a per-file answer,
	 * kept until security_changed()): the null device's uring_cmds, and
	 * a privileged caller's under the default policy, pay one compare.
	 * A module without this op is always run.
	 */
	bool (*file_constant_allow)(void *priv, const struct ucmd_file *f,
				    enum ucmd_security_hook hook, bool cap);
};

/*
 * What any module decides changed (a chain published, a policy replaced):
 * every cached per-file answer is stale. Call after the change is visible.
 */
void security_changed(void);
/*
 * The generation of what modules decide, kept as a file's sec_allow word
 * would read if every call were allowed at it: gen << SEC_ALLOW_SHIFT |
 * SEC_ALLOW_ANY | SEC_ALLOW_CAP, so the common check is one compare.
 */
extern atomic_uint security_gen;

#define UCMD_SECURITY_MAX_MODULES 16

struct ucmd_cmd_desc;

/*
 * From inside a hook: say which rule decided (rule, e.g. "file:line"),
 * whether an allowed decision should be recorded (audit), and the
 * description judged (desc, copied; NULL if none), for ->decided.
 */
void security_note(const char *rule, bool audit, const struct ucmd_cmd_desc *desc);
/* Whether a note written now would be read (a module with ->decided listens). */
bool security_noting(void);

int security_register(struct ucmd_engine *e, const struct ucmd_security_ops *ops, void *priv);
int security_unregister(struct ucmd_engine *e, const char *name);
void security_engine_free(struct ucmd_engine *e);

/*
 * Called by the engine. Return 0 or the first module's denial. Never
 * inlined: behind security_file_allowed() they are the slow path, and
 * inlined they gave the issue path a frame it does not otherwise need.
 */
__attribute__((noinline)) int security_uring_cmd(struct ucmd_engine *e,
						 const struct io_uring_cmd *cmd);
__attribute__((noinline)) int security_uring_rw(struct ucmd_engine *e,
						const struct ucmd_kiocb_rw *kiocb,
						const struct ucmd_cred *cred);

/*
 * f's cached answer for hook (file.h's sec_allow): every call by cred is
 * allowed, whatever the command. One compare when anyone is allowed
 * anything (the null device); a load of cred too when only the privileged
 * are.
 */
#define SEC_ALLOW_ANY	1u	/* every caller */
#define SEC_ALLOW_CAP	2u	/* every caller with CAP_SYS_ADMIN */
#define SEC_ALLOW_SHIFT	2
/* file.h's sec_allow[] slot of a hook: uring_cmd, uring_rw, file_ioctl */
#define SEC_SLOT(hook)	((hook) == UCMD_HOOK_FILE_IOCTL ? 2 : (hook))

static inline bool security_file_allowed(struct ucmd_file *f, enum ucmd_security_hook hook,
					 const struct ucmd_cred *cred)
{
	unsigned all = atomic_load_explicit(&security_gen, memory_order_acquire);
	unsigned c = atomic_load_explicit(&f->sec_allow[SEC_SLOT(hook)], memory_order_relaxed);

	if (c == all)
		return true;
	return c == (all & ~SEC_ALLOW_ANY) && cred->cap_sys_admin;
}
int security_uring_sqpoll(struct ucmd_engine *e, const struct ucmd_cred *cred);
int security_uring_override_creds(struct ucmd_engine *e, const struct ucmd_cred *cur,
				  const struct ucmd_cred *new_cred);
__attribute__((noinline)) int security_file_ioctl(struct ucmd_engine *e,
						  const struct ucmd_ioctl_call *call,
						  const struct ucmd_cred *cred);

#endif
