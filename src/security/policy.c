/* SPDX-License-Identifier: MIT */
/*
 * The "policy" security module: judges every hook against the rule set in
 * force. Reload builds a whole new rule set and swaps one pointer; a reader
 * takes a reference under a read lock held for two instructions, so a rule
 * set is freed by whoever drops the last reference, never while in use.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/uring_cmd.h"
#include "security/policy_int.h"

struct ucmd_policy_module {
	pthread_rwlock_t lock;		/* guards cur's pointer, not the set */
	struct ucmd_policy *cur;
	struct ucmd_security_ops ops;
};

struct ucmd_policy *policy_module_current(struct ucmd_policy_module *m)
{
	struct ucmd_policy *p;

	pthread_rwlock_rdlock(&m->lock);
	p = ucmd_policy_get(m->cur);
	pthread_rwlock_unlock(&m->lock);
	return p;
}

void policy_module_set(struct ucmd_policy_module *m, struct ucmd_policy *p)
{
	struct ucmd_policy *old;

	pthread_rwlock_wrlock(&m->lock);
	old = m->cur;
	m->cur = p;
	pthread_rwlock_unlock(&m->lock);
	/* files whose every call the old rules allowed must be judged again */
	security_changed();
	ucmd_policy_put(old);
}

int policy_module_reload(struct ucmd_policy_module *m, const char *path, char *err,
			      size_t errlen)
{
	struct ucmd_policy *p;
	int ret = path ? ucmd_policy_load_file(path, &p, err, errlen)
		       : ucmd_policy_load_default(&p, err, errlen);

	if (ret)
		return ret;	/* a bad policy is refused whole; the old one stays */
	policy_module_set(m, p);
	return 0;
}

void policy_module_eval(struct ucmd_policy_module *m, const struct ucmd_policy_subject *s,
			     struct ucmd_policy_verdict *v)
{
	struct ucmd_policy *p = policy_module_current(m);

	policy_eval(p, s, v);
	ucmd_policy_put(p);
}

/* Judge s; note the verdict for the audit module; 0 or -EACCES. */
static int judge(struct ucmd_policy_module *m, const struct ucmd_policy_subject *s)
{
	struct ucmd_policy_verdict v;

	/* with nobody to read the note, the deciding rule need not be named */
	if (!security_noting()) {
		struct ucmd_policy *p = policy_module_current(m);
		bool allow = policy_allows_subject(p, s);

		ucmd_policy_put(p);
		return allow ? 0 : -EACCES;
	}
	policy_module_eval(m, s, &v);
	security_note(v.rule, v.allow && v.audit, s->desc);
	return v.allow ? 0 : -EACCES;
}

/* The engine's device name, which a provider cannot misreport. */
static void desc_device(struct ucmd_cmd_desc *d, const struct ucmd_file *f)
{
	if (f->dev) {
		size_t n = strnlen(f->dev->name, sizeof(d->device) - 1);

		memcpy(d->device, f->dev->name, n);
		d->device[n] = 0;
	}
}

static int pm_uring_cmd(void *priv, const struct io_uring_cmd *cmd)
{
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD,
					 .cred = io_uring_cmd_cred(cmd),
					 .f_mode = cmd->file->f_mode, .desc = &d };
	int ret = 0;

	/* cmd->sqe is the engine's snapshot: the provider executes these bytes */
	ucmd_desc_init(&d, "", cmd->cmd_op, 0);
	if (cmd->file->ops->describe)
		ret = cmd->file->ops->describe(cmd, &d);
	desc_device(&d, cmd->file);
	if (ret < 0) {
		/* a command its own provider cannot read is not run */
		security_note("describe failed", false, &d);
		return ret;
	}
	return judge(priv, &s);
}

static int pm_uring_rw(void *priv, const struct ucmd_kiocb_rw *kiocb,
		       const struct ucmd_cred *cred)
{
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_RW, .cred = cred,
					 .f_mode = kiocb->file->f_mode, .desc = &d };
	int ret = 0;

	ucmd_desc_init(&d, "", 0, 0);
	d.verb = kiocb->rw == UCMD_WRITE ? UCMD_VERB_WRITE : UCMD_VERB_READ;
	d.dir = kiocb->rw == UCMD_WRITE ? UCMD_DIR_TO_DEVICE : UCMD_DIR_FROM_DEVICE;
	d.offset = kiocb->pos;
	d.length = kiocb->iter.count;
	d.has_range = true;
	if (kiocb->file->ops->describe_rw)
		ret = kiocb->file->ops->describe_rw(kiocb, &d);
	desc_device(&d, kiocb->file);
	if (ret < 0) {
		security_note("describe failed", false, &d);
		return ret;
	}
	return judge(priv, &s);
}

/*
 * An ioctl is judged by the rules for device commands (hook = cmd), from
 * its provider's description of the copy the provider will execute: one
 * rule covers a command however it is sent.
 */
static int pm_file_ioctl(void *priv, const struct ucmd_ioctl_call *call,
			 const struct ucmd_cred *cred)
{
	const struct ucmd_file *f = call->file;
	struct ucmd_cmd_desc d;
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_CMD, .cred = cred,
					 .f_mode = f->f_mode, .desc = &d };
	int ret = 0;

	ucmd_desc_init(&d, "", (uint32_t)call->cmd, 0);
	if (f->ops->describe_ioctl)
		ret = f->ops->describe_ioctl(f, call->cmd, call->karg, &d);
	desc_device(&d, f);
	if (ret == 1)
		return 0;	/* no device command in it (NVME_IOCTL_ID) */
	if (ret < 0) {
		security_note("describe failed", false, &d);
		return ret;
	}
	return judge(priv, &s);
}

static bool pm_constant_allow(void *priv, const struct ucmd_file *f, enum ucmd_security_hook hook,
			      bool cap)
{
	struct ucmd_policy *p;
	bool ok;

	/* judged by the provider's own name otherwise: always run */
	if (!f->dev)
		return false;
	p = policy_module_current(priv);
	/* an ioctl is judged by the rules for commands (pm_file_ioctl) */
	ok = policy_constant_allow(p, hook == UCMD_HOOK_FILE_IOCTL ? UCMD_HOOK_URING_CMD : hook,
					f->dev->name, f->f_mode, cap);

	ucmd_policy_put(p);
	return ok;
}

static int pm_uring_sqpoll(void *priv, const struct ucmd_cred *cred)
{
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_SQPOLL, .cred = cred };

	return judge(priv, &s);
}

static int pm_override(void *priv, const struct ucmd_cred *cur, const struct ucmd_cred *new_cred)
{
	struct ucmd_policy_subject s = { .hook = UCMD_HOOK_URING_OVERRIDE_CREDS, .cred = cur,
					 .new_cred = new_cred };

	return judge(priv, &s);
}

struct ucmd_policy_module *policy_module_new(struct ucmd_policy *p)
{
	struct ucmd_policy_module *m = calloc(1, sizeof(*m));
	pthread_rwlockattr_t attr;

	if (!m)
		return NULL;
	/* reloads must not starve behind a stream of commands */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&m->lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	m->cur = p;
	m->ops.name = "policy";
	m->ops.uring_cmd = pm_uring_cmd;
	m->ops.uring_rw = pm_uring_rw;
	m->ops.uring_sqpoll = pm_uring_sqpoll;
	m->ops.uring_override_creds = pm_override;
	m->ops.file_ioctl = pm_file_ioctl;
	m->ops.file_constant_allow = pm_constant_allow;
	return m;
}

void policy_module_free(struct ucmd_policy_module *m)
{
	if (!m)
		return;
	ucmd_policy_put(m->cur);
	pthread_rwlock_destroy(&m->lock);
	free(m);
}

int policy_module_register(struct ucmd_engine *e, struct ucmd_policy_module *m)
{
	return security_register(e, &m->ops, m);
}
