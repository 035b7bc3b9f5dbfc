/* SPDX-License-Identifier: MIT */
/*
 * The security hook chain (seed 001, the kernel's LSM hooks for io_uring):
 * named modules, called in registration order, first denial wins. Hooks:
 *   uring_cmd            before every IORING_OP_URING_CMD reaches its provider
 *   uring_rw             before every READ/WRITE family request on a device
 *   uring_sqpoll         before a ring with a polling thread is created
 *   uring_override_creds before a request runs with a registered personality
 * A hook returns 0 to allow or a negative errno (normally -EACCES/-EPERM).
 * The chain is replaced atomically, so modules can be added while rings run.
 */
#ifndef UCMD_SECURITY_HOOKS_H
#define UCMD_SECURITY_HOOKS_H

#include "core/cred.h"

struct ucmd_engine;
struct io_uring_cmd;
struct ucmd_kiocb_rw;

struct ucmd_security_ops {
	const char *name;
	int (*uring_cmd)(void *priv, const struct io_uring_cmd *cmd);
	int (*uring_rw)(void *priv, const struct ucmd_kiocb_rw *kiocb, const struct ucmd_cred *cred);
	int (*uring_sqpoll)(void *priv, const struct ucmd_cred *cred);
	int (*uring_override_creds)(void *priv, const struct ucmd_cred *cur,
				    const struct ucmd_cred *new_cred);
};

#define UCMD_SECURITY_MAX_MODULES 16

int ucmd_security_register(struct ucmd_engine *e, const struct ucmd_security_ops *ops, void *priv);
int ucmd_security_unregister(struct ucmd_engine *e, const char *name);
void ucmd_security_engine_free(struct ucmd_engine *e);

/* Called by the engine. Return 0 or the first module's denial. */
int security_uring_cmd(struct ucmd_engine *e, const struct io_uring_cmd *cmd);
int security_uring_rw(struct ucmd_engine *e, const struct ucmd_kiocb_rw *kiocb,
		      const struct ucmd_cred *cred);
int security_uring_sqpoll(struct ucmd_engine *e, const struct ucmd_cred *cred);
int security_uring_override_creds(struct ucmd_engine *e, const struct ucmd_cred *cur,
				  const struct ucmd_cred *new_cred);

#endif
