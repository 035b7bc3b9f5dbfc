/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "security/hooks.h"

struct ucmd_security_module {
	const struct ucmd_security_ops *ops;
	void *priv;
};

/* Immutable once published; replaced whole on every change. */
struct ucmd_security_chain {
	struct ucmd_security_chain *retired_next;
	unsigned n;
	struct ucmd_security_module mod[UCMD_SECURITY_MAX_MODULES];
};

static struct ucmd_security_chain *chain_get(struct ucmd_engine *e)
{
	return atomic_load_explicit(&e->security, memory_order_acquire);
}

/*
 * Publish next in place of the current chain. The old chain may still be
 * read by a request in flight, so it is retired, not freed, until the
 * engine goes away (chains change rarely: module load and unload).
 */
static void chain_publish(struct ucmd_engine *e, struct ucmd_security_chain *next)
{
	struct ucmd_security_chain *old = atomic_exchange_explicit(&e->security, next,
								   memory_order_acq_rel);
	if (old) {
		old->retired_next = e->retired;
		e->retired = old;
	}
}

int ucmd_security_register(struct ucmd_engine *e, const struct ucmd_security_ops *ops, void *priv)
{
	struct ucmd_security_chain *cur, *next;

	if (!ops || !ops->name)
		return -EINVAL;
	pthread_mutex_lock(&e->lock);
	cur = chain_get(e);
	if (cur && cur->n == UCMD_SECURITY_MAX_MODULES) {
		pthread_mutex_unlock(&e->lock);
		return -ENOSPC;
	}
	for (unsigned i = 0; cur && i < cur->n; i++) {
		if (!strcmp(cur->mod[i].ops->name, ops->name)) {
			pthread_mutex_unlock(&e->lock);
			return -EEXIST;
		}
	}
	next = calloc(1, sizeof(*next));
	if (!next) {
		pthread_mutex_unlock(&e->lock);
		return -ENOMEM;
	}
	if (cur)
		memcpy(next->mod, cur->mod, cur->n * sizeof(cur->mod[0]));
	next->n = cur ? cur->n : 0;
	next->mod[next->n].ops = ops;
	next->mod[next->n].priv = priv;
	next->n++;
	chain_publish(e, next);
	pthread_mutex_unlock(&e->lock);
	return 0;
}

int ucmd_security_unregister(struct ucmd_engine *e, const char *name)
{
	struct ucmd_security_chain *cur, *next;
	int ret = -ENOENT;

	pthread_mutex_lock(&e->lock);
	cur = chain_get(e);
	if (cur) {
		next = calloc(1, sizeof(*next));
		if (!next) {
			pthread_mutex_unlock(&e->lock);
			return -ENOMEM;
		}
		for (unsigned i = 0; i < cur->n; i++) {
			if (!strcmp(cur->mod[i].ops->name, name))
				ret = 0;
			else
				next->mod[next->n++] = cur->mod[i];
		}
		if (ret == 0)
			chain_publish(e, next);
		else
			free(next);
	}
	pthread_mutex_unlock(&e->lock);
	return ret;
}

void ucmd_security_engine_free(struct ucmd_engine *e)
{
	struct ucmd_security_chain *c = atomic_exchange(&e->security, NULL);

	free(c);
	while (e->retired) {
		c = e->retired;
		e->retired = c->retired_next;
		free(c);
	}
}

/* The kernel's call_int_hook(): every module with the hook, in order. */
#define call_int_hook(e, HOOK, ...)						\
	({									\
		const struct ucmd_security_chain *c_ = chain_get(e);		\
		int rc_ = 0;							\
		for (unsigned i_ = 0; c_ && i_ < c_->n && !rc_; i_++)		\
			if (c_->mod[i_].ops->HOOK)				\
				rc_ = c_->mod[i_].ops->HOOK(c_->mod[i_].priv, __VA_ARGS__); \
		rc_;								\
	})

int security_uring_cmd(struct ucmd_engine *e, const struct io_uring_cmd *cmd)
{
	return call_int_hook(e, uring_cmd, cmd);
}

int security_uring_rw(struct ucmd_engine *e, const struct ucmd_kiocb_rw *kiocb,
		      const struct ucmd_cred *cred)
{
	return call_int_hook(e, uring_rw, kiocb, cred);
}

int security_uring_sqpoll(struct ucmd_engine *e, const struct ucmd_cred *cred)
{
	return call_int_hook(e, uring_sqpoll, cred);
}

int security_uring_override_creds(struct ucmd_engine *e, const struct ucmd_cred *cur,
				  const struct ucmd_cred *new_cred)
{
	return call_int_hook(e, uring_override_creds, cur, new_cred);
}
