/* SPDX-License-Identifier: MIT */
/* A thread's credentials from /proc/TID/status (sv_ids.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/sv_ids.h"

/* The value of line "key:\t..." in text, or NULL. */
static const char *field(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
		if (!strncmp(l, key, n) && l[n] == ':')
			return l + n + 1;
	return NULL;
}

static bool four(const char *v, unsigned out[4])
{
	return v && sscanf(v, "%u %u %u %u", &out[0], &out[1], &out[2], &out[3]) == 4;
}

int sv_ids_parse(const char *text, struct sv_ids *id)
{
	const char *g = field(text, "Groups"), *cap = field(text, "CapEff");
	const char *prm = field(text, "CapPrm"), *um = field(text, "Umask");
	unsigned long long c, cp;
	unsigned m;

	memset(id, 0, sizeof(*id));
	if (!four(field(text, "Uid"), id->uid) || !four(field(text, "Gid"), id->gid) || !g ||
	    !cap || sscanf(cap, "%llx", &c) != 1 || !prm || sscanf(prm, "%llx", &cp) != 1)
		return -EACCES;
	id->cap_eff = c;
	id->cap_prm = cp;
	id->umask = um && sscanf(um, "%o", &m) == 1 ? m : 022;
	id->groups_hash = 14695981039346656037ull;
	for (const char *p = g; *p && *p != '\n'; p++)
		id->groups_hash = (id->groups_hash ^ (unsigned char)*p) * 1099511628211ull;
	for (const char *p = g;;) {
		char *end;
		unsigned long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		v = strtoul(p, &end, 10);
		if (id->ngroups < SV_IDS_GROUPS_MAX)
			id->groups[id->ngroups] = (unsigned)v;
		id->ngroups++;
		p = end;
	}
	return 0;
}

int sv_ids_of(pid_t tid, struct sv_ids *id)
{
	char path[64], stack[4096], *buf = stack;
	size_t cap = sizeof(stack), len = 0;
	int fd, ret;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	for (;;) {
		ssize_t n;

		if (len + 1 == cap) {
			/* a long Groups: list (up to 65536 groups) */
			char *more = malloc(cap * 4);

			if (!more) {
				ret = -ENOMEM;
				goto out;
			}
			memcpy(more, buf, len);
			if (buf != stack)
				free(buf);
			buf = more;
			cap *= 4;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = errno == ESRCH ? -ESRCH : -errno;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	ret = sv_ids_parse(buf, id);
out:
	close(fd);
	if (buf != stack)
		free(buf);
	return ret;
}

bool sv_ids_same(const struct sv_ids *a, const struct sv_ids *b)
{
	int n = a->ngroups < SV_IDS_GROUPS_MAX ? a->ngroups : SV_IDS_GROUPS_MAX;

	return !memcmp(a->uid, b->uid, sizeof(a->uid)) && !memcmp(a->gid, b->gid, sizeof(a->gid)) &&
	       a->ngroups == b->ngroups && a->groups_hash == b->groups_hash &&
	       !memcmp(a->groups, b->groups, sizeof(a->groups[0]) * (size_t)n) &&
	       a->cap_eff == b->cap_eff;
}
