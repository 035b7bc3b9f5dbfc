/* SPDX-License-Identifier: MIT */
/*
 * The public entries of include/ucmd/security.h that only add the error
 * convention to the modules' own calls: the reason goes to the caller's
 * err (which may be NULL) and to ucmd_last_error().
 */
#include <errno.h>
#include <stdio.h>

#include "lib/error.h"
#include "security/security.h"
#include "ucmd/ucmd.h"

/* Copy the reason out, and keep it for ucmd_last_error(). */
static int reason(int ret, const char *why, char *err, size_t errlen)
{
	if (!ret)
		return 0;
	last_error_set(ret, "%s", why);	/* strerror(-ret) when why is empty */
	if (err && errlen)
		snprintf(err, errlen, "%s", ucmd_last_error());
	return ret;
}

int ucmd_policy_load_file(const char *path, struct ucmd_policy **out, char *err, size_t errlen)
{
	char why[LAST_ERROR_MAX] = "";

	if (!path || !out)
		return reason(-EINVAL, "ucmd_policy_load_file: path or out is NULL", err, errlen);
	return reason(policy_load_file(path, out, why, sizeof(why)), why, err, errlen);
}

int ucmd_policy_load_string(const char *name, const char *text, size_t len,
			    struct ucmd_policy **out, char *err, size_t errlen)
{
	char why[LAST_ERROR_MAX] = "";

	if (!name || (!text && len) || !out)
		return reason(-EINVAL, "ucmd_policy_load_string: name, text or out is NULL", err,
			      errlen);
	return reason(policy_load_string(name, text ? text : "", len, out, why, sizeof(why)), why,
		      err, errlen);
}

int ucmd_policy_load_default(struct ucmd_policy **out, char *err, size_t errlen)
{
	char why[LAST_ERROR_MAX] = "";

	if (!out)
		return reason(-EINVAL, "ucmd_policy_load_default: out is NULL", err, errlen);
	return reason(policy_load_default(out, why, sizeof(why)), why, err, errlen);
}

int ucmd_security_setup(struct ucmd_engine *e, const char *policy_path, const char *audit_path,
			char *err, size_t errlen)
{
	char why[LAST_ERROR_MAX] = "";

	if (!e)
		return reason(-EINVAL, "ucmd_security_setup: the engine is NULL", err, errlen);
	return reason(security_setup(e, policy_path, audit_path, why, sizeof(why)), why, err,
		      errlen);
}

int ucmd_security_reload(struct ucmd_engine *e, const char *policy_path, char *err, size_t errlen)
{
	char why[LAST_ERROR_MAX] = "";

	if (!e)
		return reason(-EINVAL, "ucmd_security_reload: the engine is NULL", err, errlen);
	return reason(security_reload(e, policy_path, why, sizeof(why)), why, err, errlen);
}

int ucmd_audit_create(const char *path, struct ucmd_audit **out)
{
	char why[LAST_ERROR_MAX] = "";

	if (!path || !out)
		return reason(-EINVAL, "ucmd_audit_create: path or out is NULL", NULL, 0);
	return reason(audit_open(path, out, why, sizeof(why)), why, NULL, 0);
}

struct ucmd_audit *ucmd_audit_open(const char *path, char *err, size_t errlen)
{
	char why[LAST_ERROR_MAX] = "";
	struct ucmd_audit *a = NULL;

	if (!path)
		reason(-EINVAL, "ucmd_audit_open: path is NULL", err, errlen);
	else
		reason(audit_open(path, &a, why, sizeof(why)), why, err, errlen);
	return a;
}
