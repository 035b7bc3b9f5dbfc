/* SPDX-License-Identifier: MIT */
/* ucmd_security_setup(): the policy and audit modules on an engine, for tools. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "security/security.h"

/* What setup made for each engine, so reload and teardown can find it. */
struct setup {
	struct ucmd_engine *e;
	struct ucmd_policy_module *policy;
	struct ucmd_audit *audit;
	struct setup *next;
};

static pthread_mutex_t setups_lock = PTHREAD_MUTEX_INITIALIZER;
static struct setup *setups;

static struct setup **find(struct ucmd_engine *e)
{
	struct setup **s = &setups;

	while (*s && (*s)->e != e)
		s = &(*s)->next;
	return s;
}

int security_setup(struct ucmd_engine *e, const char *policy_path, const char *audit_path,
		   char *err, size_t errlen)
{
	struct ucmd_policy *p;
	struct setup *s;
	int ret;

	ret = policy_path ? ucmd_policy_load_file(policy_path, &p, err, errlen)
			  : ucmd_policy_load_default(&p, err, errlen);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->policy = ucmd_policy_module_new(p))) {
		ucmd_policy_put(p);
		free(s);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->e = e;
	if (audit_path && (ret = audit_open(audit_path, &s->audit, err, errlen)) != 0)
		goto fail;
	/* audit first: it must be in the chain before any decision it records */
	if (s->audit && (ret = ucmd_audit_register(e, s->audit)) != 0) {
		snprintf(err, errlen, "registering the audit module: %s", strerror(-ret));
		goto fail;
	}
	ret = ucmd_policy_module_register(e, s->policy);
	if (ret) {
		snprintf(err, errlen, "registering the policy module: %s", strerror(-ret));
		if (s->audit)
			ucmd_security_unregister(e, "audit");
		goto fail;
	}
	pthread_mutex_lock(&setups_lock);
	s->next = setups;
	setups = s;
	pthread_mutex_unlock(&setups_lock);
	return 0;
fail:
	ucmd_audit_free(s->audit);
	ucmd_policy_module_free(s->policy);
	free(s);
	return ret;
}

int security_reload(struct ucmd_engine *e, const char *policy_path, char *err, size_t errlen)
{
	struct setup *s;
	int ret = -ENOENT;

	pthread_mutex_lock(&setups_lock);
	s = *find(e);
	if (s)
		ret = ucmd_policy_module_reload(s->policy, policy_path, err, errlen);
	else
		snprintf(err, errlen, "no security setup on this engine");
	pthread_mutex_unlock(&setups_lock);
	return ret;
}

void ucmd_security_teardown(struct ucmd_engine *e)
{
	struct setup **sp, *s;

	pthread_mutex_lock(&setups_lock);
	sp = find(e);
	s = *sp;
	if (s)
		*sp = s->next;
	pthread_mutex_unlock(&setups_lock);
	if (!s)
		return;
	ucmd_security_unregister(e, "policy");
	if (s->audit)
		ucmd_security_unregister(e, "audit");
	ucmd_policy_module_free(s->policy);
	ucmd_audit_free(s->audit);
	free(s);
}
