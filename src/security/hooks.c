/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "security/desc.h"
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
 * Generation 1: a new file's zeroed cache (generation 0) is stale. Read by
 * every command, written only when a policy or a chain changes.
 */
_Alignas(64) atomic_uint security_gen = 1u << SEC_ALLOW_SHIFT | SEC_ALLOW_ANY | SEC_ALLOW_CAP;

void security_changed(void)
{
	const unsigned step = 1u << SEC_ALLOW_SHIFT;
	unsigned g = atomic_fetch_add_explicit(&security_gen, step, memory_order_acq_rel) + step;

	/* wrapped to generation 0, which a zeroed cache holds: one more */
	if (!(g >> SEC_ALLOW_SHIFT))
		atomic_fetch_add_explicit(&security_gen, step, memory_order_acq_rel);
}

static bool chain_constant_allow(const struct ucmd_security_chain *c, const struct ucmd_file *f,
				 enum ucmd_security_hook hook, bool cap)
{
	for (unsigned i = 0; c && i < c->n; i++) {
		const struct ucmd_security_ops *o = c->mod[i].ops;
		bool runs = o->decided ||
			    (hook == UCMD_HOOK_URING_CMD ? o->uring_cmd != NULL :
			     hook == UCMD_HOOK_URING_RW ? o->uring_rw != NULL : o->file_ioctl != NULL);

		if (runs && (!o->file_constant_allow ||
			     !o->file_constant_allow(c->mod[i].priv, f, hook, cap)))
			return false;
	}
	return true;
}

/*
 * Compute f's answer for hook if stale, cache it, and apply it to cred. The
 * generation is read before the chain and the modules' state: a change
 * racing with this stores an answer for a generation already past, which
 * nobody matches.
 */
static bool file_allowed_slow(struct ucmd_engine *e, struct ucmd_file *f,
			      enum ucmd_security_hook hook, const struct ucmd_cred *cred)
{
	unsigned gen = atomic_load_explicit(&security_gen, memory_order_acquire) &
		       ~(SEC_ALLOW_ANY | SEC_ALLOW_CAP);
	atomic_uint *slot = &f->sec_allow[SEC_SLOT(hook)];
	unsigned c = atomic_load_explicit(slot, memory_order_relaxed);

	if ((c & ~(SEC_ALLOW_ANY | SEC_ALLOW_CAP)) != gen) {
		const struct ucmd_security_chain *chain = chain_get(e);

		c = gen;
		if (chain_constant_allow(chain, f, hook, true)) {
			c |= SEC_ALLOW_CAP;
			if (chain_constant_allow(chain, f, hook, false))
				c |= SEC_ALLOW_ANY;
		}
		atomic_store_explicit(slot, c, memory_order_relaxed);
	}
	return (c & SEC_ALLOW_ANY) || ((c & SEC_ALLOW_CAP) && cred && cred->cap_sys_admin);
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
	security_changed();
}

int security_register(struct ucmd_engine *e, const struct ucmd_security_ops *ops, void *priv)
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

int security_unregister(struct ucmd_engine *e, const char *name)
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

void security_engine_free(struct ucmd_engine *e)
{
	struct ucmd_security_chain *c = atomic_exchange(&e->security, NULL);

	free(c);
	while (e->retired) {
		c = e->retired;
		e->retired = c->retired_next;
		free(c);
	}
}

/*
 * The decision in progress on this thread: what modules noted while the
 * chain ran (the kernel keeps the same in current->audit_context).
 */
struct chain_note {
	unsigned module;		/* the module being called */
	int rule_module;		/* who wrote rule, -1 for nobody */
	bool audit;
	bool has_desc;
	bool cur_noted;			/* the module being called wrote cur_rule */
	char rule[UCMD_SECURITY_RULE_MAX];
	char cur_rule[UCMD_SECURITY_RULE_MAX];
	struct ucmd_cmd_desc desc;
};

static __thread struct chain_note *cur_note;

static void copy_rule(char dst[UCMD_SECURITY_RULE_MAX], const char *rule)
{
	size_t n = rule ? strnlen(rule, UCMD_SECURITY_RULE_MAX - 1) : 0;

	memcpy(dst, rule ? rule : "", n);
	dst[n] = 0;
}

bool security_noting(void)
{
	return cur_note != NULL;
}

void security_note(const char *rule, bool audit, const struct ucmd_cmd_desc *desc)
{
	struct chain_note *n = cur_note;

	if (!n)
		return;		/* outside a chain (e.g. `ucmd policy explain`) */
	/* a denial is explained by its own module's note, whoever noted before */
	copy_rule(n->cur_rule, rule);
	n->cur_noted = true;
	/* an allowing module that wants a record keeps its rule for it */
	if (n->rule_module < 0 || audit || n->rule_module == (int)n->module) {
		copy_rule(n->rule, rule);
		n->rule_module = (int)n->module;
	}
	n->audit |= audit;
	if (desc) {
		n->desc = *desc;
		n->has_desc = true;
	}
}

static int call_one(const struct ucmd_security_module *m, const struct ucmd_security_event *ev)
{
	const struct ucmd_security_ops *o = m->ops;

	switch (ev->hook) {
	case UCMD_HOOK_URING_CMD:
		return o->uring_cmd ? o->uring_cmd(m->priv, ev->cmd) : 0;
	case UCMD_HOOK_URING_RW:
		return o->uring_rw ? o->uring_rw(m->priv, ev->kiocb, ev->cred) : 0;
	case UCMD_HOOK_URING_SQPOLL:
		return o->uring_sqpoll ? o->uring_sqpoll(m->priv, ev->cred) : 0;
	case UCMD_HOOK_URING_OVERRIDE_CREDS:
		return o->uring_override_creds ?
			       o->uring_override_creds(m->priv, ev->cred, ev->new_cred) : 0;
	case UCMD_HOOK_FILE_IOCTL:
		return o->file_ioctl ? o->file_ioctl(m->priv, ev->ioctl, ev->cred) : 0;
	}
	return 0;
}

/*
 * The kernel's call_int_hook(): every module with the hook, in order, the
 * first denial wins; then every ->decided learns the outcome.
 */
static int call_chain(struct ucmd_engine *e, struct ucmd_security_event *ev)
{
	const struct ucmd_security_chain *c = chain_get(e);
	struct chain_note note, *saved = cur_note;
	bool notify = false;
	int rc = 0;
	unsigned i;

	if (!c)
		return 0;
	for (i = 0; i < c->n; i++)
		notify |= c->mod[i].ops->decided != NULL;
	if (!notify) {
		/* nobody reads the notes: modules' security_note() returns at once */
		cur_note = NULL;
		for (i = 0; i < c->n && !rc; i++)
			rc = call_one(&c->mod[i], ev);
		cur_note = saved;
		return rc;
	}
	note.rule_module = -1;
	note.audit = false;
	note.has_desc = false;
	note.rule[0] = 0;
	cur_note = &note;
	for (i = 0; i < c->n && !rc; i++) {
		note.module = i;
		note.cur_noted = false;
		rc = call_one(&c->mod[i], ev);
	}
	cur_note = saved;
	ev->ret = rc;
	/* i is one past the denier when rc != 0 */
	if (rc)
		ev->module = c->mod[i - 1].ops->name;
	else
		ev->module = note.rule_module >= 0 ? c->mod[note.rule_module].ops->name : NULL;
	ev->rule = !rc ? note.rule : note.cur_noted ? note.cur_rule : "";
	ev->audit = note.audit;
	ev->desc = note.has_desc ? &note.desc : NULL;
	for (i = 0; i < c->n; i++)
		if (c->mod[i].ops->decided)
			c->mod[i].ops->decided(c->mod[i].priv, ev);
	return rc;
}

int security_uring_cmd(struct ucmd_engine *e, const struct io_uring_cmd *cmd)
{
	struct ucmd_security_event ev = { .hook = UCMD_HOOK_URING_CMD, .cmd = cmd,
					  .cred = io_uring_cmd_cred(cmd) };

	if (file_allowed_slow(e, cmd->file, UCMD_HOOK_URING_CMD, ev.cred))
		return 0;
	return call_chain(e, &ev);
}

int security_uring_rw(struct ucmd_engine *e, const struct ucmd_kiocb_rw *kiocb,
		      const struct ucmd_cred *cred)
{
	struct ucmd_security_event ev = { .hook = UCMD_HOOK_URING_RW, .kiocb = kiocb,
					  .cred = cred };

	if (file_allowed_slow(e, kiocb->file, UCMD_HOOK_URING_RW, cred))
		return 0;
	return call_chain(e, &ev);
}

int security_uring_sqpoll(struct ucmd_engine *e, const struct ucmd_cred *cred)
{
	struct ucmd_security_event ev = { .hook = UCMD_HOOK_URING_SQPOLL, .cred = cred };

	return call_chain(e, &ev);
}

int security_uring_override_creds(struct ucmd_engine *e, const struct ucmd_cred *cur,
				  const struct ucmd_cred *new_cred)
{
	struct ucmd_security_event ev = { .hook = UCMD_HOOK_URING_OVERRIDE_CREDS, .cred = cur,
					  .new_cred = new_cred };

	return call_chain(e, &ev);
}

int security_file_ioctl(struct ucmd_engine *e, const struct ucmd_ioctl_call *call,
			const struct ucmd_cred *cred)
{
	struct ucmd_security_event ev = { .hook = UCMD_HOOK_FILE_IOCTL, .ioctl = call,
					  .cred = cred };

	/* the file is the engine's: a const view of it for the modules */
	if (file_allowed_slow(e, (struct ucmd_file *)call->file, UCMD_HOOK_FILE_IOCTL, cred))
		return 0;
	return call_chain(e, &ev);
}
