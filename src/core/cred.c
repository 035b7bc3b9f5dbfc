/* SPDX-License-Identifier: MIT */
#include <linux/capability.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/cred.h"

/* CAP_SYS_ADMIN decides admin passthrough, as in Linux's nvme_cmd_allowed(). */
static bool has_cap_sys_admin(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return geteuid() == 0;
	return data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32));
}

static __thread const struct ucmd_cred *cred_override;

void cred_override_set(const struct ucmd_cred *c)
{
	cred_override = c;
}

void current_cred(struct ucmd_cred *c)
{
	uid_t suid;
	gid_t sgid;
	gid_t groups[256];

	if (cred_override) {
		*c = *cred_override;
		c->retired_next = NULL;
		return;
	}
	memset(c, 0, sizeof(*c));
	c->pid = getpid();
	getresuid(&c->uid, &c->euid, &suid);
	getresgid(&c->gid, &c->egid, &sgid);
	int n = getgroups(256, groups);
	if (n < 0)
		n = 0;
	if (n > UCMD_NGROUPS_MAX)
		n = UCMD_NGROUPS_MAX;
	memcpy(c->groups, groups, (size_t)n * sizeof(gid_t));
	c->ngroups = n;
	c->cap_sys_admin = has_cap_sys_admin();
}

const struct ucmd_cred *current_cred_cached(void)
{
	static __thread struct ucmd_cred cache;
	static __thread unsigned long cache_gen;
	static __thread bool cached;
	unsigned long gen = cred_generation();

	if (cred_override)
		return cred_override;
	/* the generation is read first: a change after it makes the next call refresh */
	if (!cached || cache_gen != gen) {
		current_cred(&cache);
		cache_gen = gen;
		cached = true;
	}
	return &cache;
}

bool cred_in_group(const struct ucmd_cred *c, gid_t gid)
{
	if (c->gid == gid || c->egid == gid)
		return true;
	for (int i = 0; i < c->ngroups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}
