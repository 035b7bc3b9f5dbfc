/* SPDX-License-Identifier: MIT */
/* The keys of a [rule] section and what they accept. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "security/policy_parse.h"
#include "security/policy_values.h"

enum {
	K_NAME, K_HOOK, K_UID, K_GID, K_TUID, K_TGID, K_CAP,
	K_DEVICE, K_NSID, K_VERB, K_DIR, K_MODE, K_ADMIN_CMD, K_DESTRUCTIVE, K_INTRUSIVE,
	K_SELECT, K_OPCODE, K_BYTES, K_LBA,
	K_ACTION, K_AUDIT, K_HOSTNQN, K_HOSTID, K_NR
};

static const char *const key_names[K_NR] = {
	"name", "hook", "uid", "gid", "target-uid", "target-gid", "cap-sys-admin",
	"device", "nsid", "verb", "dir", "mode", "admin-cmd", "destructive", "intrusive",
	"select", "opcode", "bytes", "lba",
	"action", "audit", "hostnqn", "hostid",
};

/* keys that look at a command: only for hooks cmd and rw */
#define CMD_KEYS (((1u << (K_LBA + 1)) - 1) & ~((1u << K_DEVICE) - 1))
#define TARGET_KEYS ((1u << K_TUID) | (1u << K_TGID))

static const char *const hook_names[] = {
	[UCMD_HOOK_URING_CMD] = "cmd",
	[UCMD_HOOK_URING_RW] = "rw",
	[UCMD_HOOK_URING_SQPOLL] = "sqpoll",
	[UCMD_HOOK_URING_OVERRIDE_CREDS] = "override-creds",
	"io",	/* cmd and rw */
};

static const char *const dir_names[] = { "none", "to-device", "from-device", "bidirectional" };
/* bit i is POL_MODE_* 1 << i */
static const char *const mode_names[] = { "ro", "wo", "rw" };

void pol_rule_init(struct ucmd_policy_rule *r, const char *file, unsigned line)
{
	memset(r, 0, sizeof(*r));
	r->file = file;
	r->line = line;
	r->hooks = POL_HOOKS_IO;
}

void pol_rule_free(struct ucmd_policy_rule *r)
{
	struct pol_set *sets[] = { &r->uid, &r->gid, &r->nsid, &r->select, &r->opcode,
				   &r->target_uid, &r->target_gid };

	for (unsigned i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		free(sets[i]->r);
	for (unsigned i = 0; i < r->ndevices; i++)
		free(r->devices[i]);
	free(r->devices);
	free(r->devglobs);
	for (unsigned i = 0; i < r->nhostnqns; i++)
		free(r->hostnqns[i]);
	free(r->hostnqns);
	free(r->hostids);
	free(r->name);
}

static int set_tri(const char *v, enum pol_tri *t)
{
	bool b;

	if (pv_bool(v, &b))
		return -EINVAL;
	*t = b ? POL_YES : POL_NO;
	return 0;
}

static int set_devices(struct ucmd_policy_rule *r, char *v, const char **bad)
{
	char *items[64];
	int n = pv_split(v, items, 64);

	*bad = v;
	if (n < 0)
		return n;
	r->devices = calloc((size_t)n, sizeof(char *));
	r->devglobs = calloc((size_t)n, sizeof(*r->devglobs));
	if (!r->devices || !r->devglobs)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		*bad = items[i];
		if (strlen(items[i]) >= 32)
			return -EINVAL;	/* longer than any device name */
		if (!(r->devices[r->ndevices] = strdup(items[i])))
			return -ENOMEM;
		pol_glob_init(&r->devglobs[r->ndevices], r->devices[r->ndevices]);
		r->ndevices++;
	}
	return 0;
}

/* hostnqn: globs on the host NQN of an NVMe/TCP connection (at most 223 bytes) */
static int set_hostnqns(struct ucmd_policy_rule *r, char *v, const char **bad)
{
	char *items[64];
	int n = pv_split(v, items, 64);

	*bad = v;
	if (n < 0)
		return n;
	r->hostnqns = calloc((size_t)n, sizeof(char *));
	if (!r->hostnqns)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		*bad = items[i];
		if (strlen(items[i]) >= UCMD_HOSTNQN_MAX)
			return -EINVAL;
		if (!(r->hostnqns[r->nhostnqns] = strdup(items[i])))
			return -ENOMEM;
		r->nhostnqns++;
	}
	return 0;
}

/*
 * hostid: host IDs of NVMe/TCP connections, as UUIDs (8-4-4-4-12 hex
 * digits, either case); kept lowercase, the form the credentials carry.
 */
static int set_hostids(struct ucmd_policy_rule *r, char *v, const char **bad)
{
	char *items[64];
	int n = pv_split(v, items, 64);

	*bad = v;
	if (n < 0)
		return n;
	r->hostids = calloc((size_t)n, sizeof(*r->hostids));
	if (!r->hostids)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		*bad = items[i];
		if (pv_uuid(items[i], r->hostids[r->nhostids]))
			return -EINVAL;
		r->nhostids++;
	}
	return 0;
}

static int set_range(char *v, bool sizes, struct pol_range *out, bool *has)
{
	int rc = pv_range(v, sizes, out);

	*has = !rc;
	return rc;
}

static int apply(struct ucmd_policy_rule *r, unsigned k, char *v, const char **bad)
{
	uint32_t mask;
	int rc;

	*bad = v;
	switch (k) {
	case K_NAME:
		free(r->name);
		return (r->name = strdup(v)) ? 0 : -ENOMEM;
	case K_HOOK:
		rc = pv_names(v, hook_names, 5, &mask, bad);
		if (mask & (1u << 4))
			mask = (mask & ~(1u << 4)) | POL_HOOKS_IO;
		r->hooks = mask;
		return rc;
	case K_UID:
		return pv_set(v, PV_USER, UINT32_MAX, &r->uid, bad);
	case K_GID:
		return pv_set(v, PV_GROUP, UINT32_MAX, &r->gid, bad);
	case K_TUID:
		return pv_set(v, PV_USER, UINT32_MAX, &r->target_uid, bad);
	case K_TGID:
		return pv_set(v, PV_GROUP, UINT32_MAX, &r->target_gid, bad);
	case K_CAP:
		return set_tri(v, &r->cap_sys_admin);
	case K_DEVICE:
		return set_devices(r, v, bad);
	case K_NSID:
		return pv_set(v, PV_PLAIN, UINT32_MAX, &r->nsid, bad);
	case K_DIR:
		return pv_names(v, dir_names, 4, &r->dirs, bad);
	case K_MODE:
		return pv_names(v, mode_names, 3, &r->modes, bad);
	case K_ADMIN_CMD:
		return set_tri(v, &r->admin_cmd);
	case K_DESTRUCTIVE:
		return set_tri(v, &r->destructive);
	case K_INTRUSIVE:
		return set_tri(v, &r->intrusive);
	case K_SELECT:
		return pv_set(v, PV_PLAIN, UINT32_MAX, &r->select, bad);
	case K_OPCODE:
		return pv_set(v, PV_PLAIN, 255, &r->opcode, bad);
	case K_BYTES:
		return set_range(v, true, &r->bytes, &r->has_bytes);
	case K_LBA:
		return set_range(v, false, &r->lba, &r->has_lba);
	case K_ACTION:
		if (strcmp(v, "allow") && strcmp(v, "deny"))
			return -EINVAL;
		r->action = strcmp(v, "allow") ? 2 : 1;
		return 0;
	case K_AUDIT:
		return pv_bool(v, &r->audit);
	case K_HOSTNQN:
		return set_hostnqns(r, v, bad);
	case K_HOSTID:
		return set_hostids(r, v, bad);
	}
	return -EINVAL;
}

static int set_verbs(struct ucmd_policy_rule *r, char *v, const char **bad)
{
	const char *names[UCMD_VERB_NR];

	for (int i = 0; i < UCMD_VERB_NR; i++)
		names[i] = desc_verb_name((enum ucmd_verb)i);
	return pv_names(v, names, UCMD_VERB_NR, &r->verbs, bad);
}

int pol_rule_key(struct ucmd_policy_rule *r, const char *name, const char *value, char *why,
		 size_t whylen)
{
	const char *bad = NULL;
	char *v;
	unsigned k;
	int rc;

	for (k = 0; k < K_NR && strcmp(key_names[k], name); k++)
		;
	if (k == K_NR) {
		snprintf(why, whylen, "unknown key '%s'", name);
		return -EINVAL;
	}
	if (r->keys & (1u << k)) {
		snprintf(why, whylen, "key '%s' given twice", name);
		return -EINVAL;
	}
	r->keys |= 1u << k;
	if (!(v = strdup(value))) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	rc = k == K_VERB ? set_verbs(r, v, &bad) : apply(r, k, v, &bad);
	if (rc) {
		const char *what = rc == -ERANGE ? "out of range" :
				   rc == -ENOENT ? "no such user or group" :
				   rc == -ENOMEM ? "out of memory" : "bad value";
		if (bad && *bad)
			snprintf(why, whylen, "%s '%.32s' for '%s'", what, bad, name);
		else
			snprintf(why, whylen, "%s for '%s' (empty item?)", what, name);
	}
	free(v);
	return rc ? -EINVAL : 0;
}

const char *pol_rule_check(const struct ucmd_policy_rule *r)
{
	if (!r->action)
		return "no 'action = allow|deny'";
	if (!r->hooks)
		return "no hook";
	if ((r->keys & CMD_KEYS) && (r->hooks & ~POL_HOOKS_IO))
		return "command keys (device, verb, ...) need hook cmd, rw or io";
	if ((r->keys & TARGET_KEYS) && r->hooks != POL_HOOK(UCMD_HOOK_URING_OVERRIDE_CREDS))
		return "target-uid/target-gid need hook = override-creds alone";
	if (r->has_lba && r->has_bytes)
		return "give 'bytes' or 'lba', not both";
	return NULL;
}
