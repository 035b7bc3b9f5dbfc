/* SPDX-License-Identifier: MIT */
/*
 * The modules every native engine carries, kept on the engine itself:
 *   "policy"  from creation on, with the compiled-in default policy
 *             (policy/default.ini: Linux's nvme_cmd_allowed()), which is
 *             the only place those rules live, so an engine is never
 *             without them; ucmd_security_setup() swaps in a site's policy
 *   "audit"   when ucmd_security_setup() is given a trail
 * Engine free releases both (security_engine_exit); nothing is global.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "security/security.h"

struct security_setup {
	pthread_mutex_t lock;		/* setup, reload and teardown of this engine */
	struct ucmd_policy_module *policy;
	struct ucmd_audit *audit;
	bool site;			/* ucmd_security_setup() ran, no teardown since */
};

/*
 * The default policy, parsed once and shared: a policy is immutable and
 * reference counted, and every engine starts with it, so creating one
 * costs no parse. A failed parse (out of memory) is retried next time.
 */
static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ucmd_policy *default_policy;

static int default_policy_get(struct ucmd_policy **out)
{
	char err[128];
	int ret = 0;

	pthread_mutex_lock(&default_lock);
	if (!default_policy)
		ret = ucmd_policy_load_default(&default_policy, err, sizeof(err));
	if (!ret)
		*out = ucmd_policy_get(default_policy);
	pthread_mutex_unlock(&default_lock);
	return ret;
}

int security_engine_init(struct ucmd_engine *e)
{
	struct security_setup *s = calloc(1, sizeof(*s));
	struct ucmd_policy *p = NULL;
	int ret;

	if (!s)
		return -ENOMEM;
	ret = default_policy_get(&p);
	if (ret)
		goto fail;
	s->policy = policy_module_new(p);
	if (!s->policy) {
		ucmd_policy_put(p);
		ret = -ENOMEM;
		goto fail;
	}
	ret = policy_module_register(e, s->policy);
	if (ret)
		goto fail;
	pthread_mutex_init(&s->lock, NULL);
	e->setup = s;
	return 0;
fail:
	policy_module_free(s->policy);
	free(s);
	return ret;
}

/* After the engine's last ring and file: no module is called any more. */
void security_engine_exit(struct ucmd_engine *e)
{
	struct security_setup *s = e->setup;

	if (!s)
		return;
	e->setup = NULL;
	ucmd_audit_free(s->audit);
	policy_module_free(s->policy);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The engine's setup, or NULL with err filled: only native engines have one. */
static struct security_setup *setup_of(struct ucmd_engine *e, char *err, size_t errlen)
{
	if (!e->setup)
		snprintf(err, errlen, "this engine runs no ucmd security modules (kernel backend)");
	return e->setup;
}

int security_setup(struct ucmd_engine *e, const char *policy_path, const char *audit_path,
		   char *err, size_t errlen)
{
	struct security_setup *s = setup_of(e, err, errlen);
	struct ucmd_audit *a = NULL;
	struct ucmd_policy *p;
	int ret;

	if (!s)
		return -EOPNOTSUPP;
	ret = policy_path ? policy_load_file(policy_path, &p, err, errlen)
			  : default_policy_get(&p);
	if (ret) {
		if (!policy_path)
			snprintf(err, errlen, "the default policy: %s", strerror(-ret));
		return ret;
	}
	pthread_mutex_lock(&s->lock);
	if (s->site) {
		snprintf(err, errlen, "security is set up on this engine already");
		ret = -EEXIST;
		goto fail;
	}
	if (audit_path && (ret = audit_open(audit_path, &a, err, errlen)) != 0)
		goto fail;
	/* the trail first: no decision of the new policy goes unrecorded */
	if (a && (ret = ucmd_audit_register(e, a)) != 0) {
		snprintf(err, errlen, "registering the audit module: %s", strerror(-ret));
		goto fail;
	}
	s->audit = a;
	s->site = true;
	policy_module_set(s->policy, p);
	pthread_mutex_unlock(&s->lock);
	return 0;
fail:
	pthread_mutex_unlock(&s->lock);
	ucmd_audit_free(a);
	ucmd_policy_put(p);
	return ret;
}

int security_reload(struct ucmd_engine *e, const char *policy_path, char *err, size_t errlen)
{
	struct security_setup *s = setup_of(e, err, errlen);
	int ret;

	if (!s)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&s->lock);
	ret = policy_module_reload(s->policy, policy_path, err, errlen);
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* Undo ucmd_security_setup(): no trail, and the default policy again. */
void ucmd_security_teardown(struct ucmd_engine *e)
{
	struct security_setup *s = e->setup;
	struct ucmd_policy *p;
	struct ucmd_audit *a;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	a = s->audit;
	s->audit = NULL;
	if (a)
		security_unregister(e, "audit");
	if (s->site && default_policy_get(&p) == 0)
		policy_module_set(s->policy, p);
	s->site = false;
	pthread_mutex_unlock(&s->lock);
	ucmd_audit_free(a);
}

struct ucmd_policy_module *security_engine_policy(struct ucmd_engine *e)
{
	return e->setup ? e->setup->policy : NULL;
}
