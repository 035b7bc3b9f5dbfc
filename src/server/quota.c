/* SPDX-License-Identifier: MIT */
/*
 * Per-uid quotas: what all the connections of one user hold together --
 * connections, open devices, rings, shared regions, polling (spinning)
 * rings -- as Linux bounds a user's processes (RLIMIT_NPROC) and io_uring
 * memory. Without them one user's idle connections, or its devices, fill
 * the daemon's tables (256 connections, the engine's 4096 files) and
 * nobody else gets in.
 *
 * The privileged -- root and the daemon's own user -- have no per-uid
 * quota, and a reserve beyond what all the others may take together
 * (SRV_RESERVE_CONNS connections, SRV_RESERVE_FDS engine files), so that
 * the administrator always gets in, as Linux keeps the last processes and
 * files for root.
 *
 * Errors: -EDQUOT when the user is at its own quota, -EUSERS (connections)
 * or -ENFILE (devices) when only the reserve is left.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "server/ctl.h"
#include "server/quota.h"

struct srv_uid_use {
	uid_t uid;
	unsigned n[SRV_RES_NR];
};

struct srv_quota {
	pthread_mutex_t lock;
	struct srv_limits lim;
	uid_t owner;			/* the daemon's euid */
	struct srv_uid_use *u;		/* one per uid holding something */
	unsigned nr, cap;
	unsigned unpriv[SRV_RES_NR];	/* held by all unprivileged uids together */
};

const struct srv_limits srv_limits_default = {
	.max = {
		[SRV_RES_CONN] = 32,
		[SRV_RES_FD] = 512,
		[SRV_RES_RING] = 64,
		[SRV_RES_REGION] = 256,
		[SRV_RES_SPIN] = 1,
	},
	.idle_s = 60,
};

/* What every unprivileged uid may hold together: the table less the reserve. */
static unsigned shared_cap(enum srv_res res)
{
	switch (res) {
	case SRV_RES_CONN:
		return SRV_MAX_CLIENTS - SRV_RESERVE_CONNS;
	case SRV_RES_FD:
		return UCMD_MAX_FILES - SRV_RESERVE_FDS;
	default:
		return UINT32_MAX;
	}
}

int srv_quota_init(struct srv_daemon *d, const struct srv_limits *lim)
{
	struct srv_quota *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	q->lim = *lim;
	q->owner = geteuid();
	d->quota = q;
	return 0;
}

void srv_quota_free(struct srv_daemon *d)
{
	struct srv_quota *q = d->quota;

	if (!q)
		return;
	pthread_mutex_destroy(&q->lock);
	free(q->u);
	free(q);
	d->quota = NULL;
}

bool srv_uid_privileged(const struct srv_daemon *d, uid_t uid)
{
	return uid == 0 || (d->quota && uid == d->quota->owner);
}

unsigned srv_idle_timeout_s(const struct srv_daemon *d)
{
	return d->quota ? d->quota->lim.idle_s : 0;
}

static struct srv_uid_use *uid_find(struct srv_quota *q, uid_t uid, bool add)
{
	for (unsigned i = 0; i < q->nr; i++)
		if (q->u[i].uid == uid)
			return &q->u[i];
	if (!add)
		return NULL;
	if (q->nr == q->cap) {
		unsigned cap = q->cap ? 2 * q->cap : 16;
		struct srv_uid_use *u = realloc(q->u, cap * sizeof(*u));

		if (!u)
			return NULL;
		q->u = u;
		q->cap = cap;
	}
	memset(&q->u[q->nr], 0, sizeof(q->u[0]));
	q->u[q->nr].uid = uid;
	return &q->u[q->nr++];
}

/* A uid holding nothing leaves the table, which so stays as long as the users holding something. */
static void uid_drop_if_empty(struct srv_quota *q, struct srv_uid_use *u)
{
	for (unsigned r = 0; r < SRV_RES_NR; r++)
		if (u->n[r])
			return;
	*u = q->u[--q->nr];
}

int srv_quota_charge(struct srv_daemon *d, uid_t uid, enum srv_res res, unsigned n)
{
	struct srv_quota *q = d->quota;
	bool priv = srv_uid_privileged(d, uid);
	struct srv_uid_use *u;
	int ret = 0;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	u = uid_find(q, uid, true);
	if (!u) {
		ret = -ENOMEM;
	} else if (!priv && u->n[res] + n > q->lim.max[res]) {
		ret = -EDQUOT;
	} else if (!priv && q->unpriv[res] + n > shared_cap(res)) {
		ret = res == SRV_RES_CONN ? -EUSERS : -ENFILE;
	} else {
		u->n[res] += n;
		if (!priv)
			q->unpriv[res] += n;
	}
	if (ret && u)
		uid_drop_if_empty(q, u);
	pthread_mutex_unlock(&q->lock);
	return ret;
}

void srv_quota_uncharge(struct srv_daemon *d, uid_t uid, enum srv_res res, unsigned n)
{
	struct srv_quota *q = d->quota;
	struct srv_uid_use *u;

	if (!q || !n)
		return;
	pthread_mutex_lock(&q->lock);
	u = uid_find(q, uid, false);
	if (u) {
		n = n < u->n[res] ? n : u->n[res];
		u->n[res] -= n;
		if (!srv_uid_privileged(d, uid))
			q->unpriv[res] -= n;
		uid_drop_if_empty(q, u);
	}
	pthread_mutex_unlock(&q->lock);
}

unsigned srv_quota_held(struct srv_daemon *d, uid_t uid, enum srv_res res)
{
	struct srv_quota *q = d->quota;
	struct srv_uid_use *u;
	unsigned n = 0;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	u = uid_find(q, uid, false);
	if (u)
		n = u->n[res];
	pthread_mutex_unlock(&q->lock);
	return n;
}

static const char *const res_key[SRV_RES_NR] = {
	[SRV_RES_CONN] = "conns",
	[SRV_RES_FD] = "fds",
	[SRV_RES_RING] = "rings",
	[SRV_RES_REGION] = "regions",
	[SRV_RES_SPIN] = "sqpoll",
};

int srv_limits_parse(const char *arg, struct srv_limits *lim)
{
	char *dup = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		unsigned long v;
		unsigned r;

		ret = -EINVAL;
		if (!eq || eq[1] < '0' || eq[1] > '9')
			break;
		*eq = 0;
		v = strtoul(eq + 1, &end, 10);
		if (*end || v > 1000000)
			break;
		for (r = 0; r < SRV_RES_NR; r++) {
			if (!strcmp(tok, res_key[r])) {
				lim->max[r] = (unsigned)v;
				ret = 0;
			}
		}
	}
	if (!tok && !ret && !strchr(arg, '='))
		ret = -EINVAL;
	free(dup);
	return ret;
}
