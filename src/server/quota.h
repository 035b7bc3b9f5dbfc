/* SPDX-License-Identifier: MIT */
/*
 * Per-uid quotas (quota.c): what the connections of one user hold together,
 * with a reserve that only root and the daemon's own user may use.
 */
#ifndef UCMD_SERVER_QUOTA_H
#define UCMD_SERVER_QUOTA_H

#include <stdbool.h>
#include <sys/types.h>

struct srv_daemon;

enum srv_res {
	SRV_RES_CONN,		/* connections */
	SRV_RES_FD,		/* open devices (the engine's shared file table) */
	SRV_RES_RING,		/* rings (a thread each) */
	SRV_RES_REGION,		/* shared memory regions */
	SRV_RES_SPIN,		/* SQPOLL rings whose thread polls for sq_thread_idle */
	SRV_RES_NR
};

/* Kept for root and the daemon's user beyond what the others may hold together. */
#define SRV_RESERVE_CONNS	16u
#define SRV_RESERVE_FDS		256u

struct srv_limits {
	unsigned max[SRV_RES_NR];	/* per unprivileged uid */
	unsigned idle_s;		/* a connection holding nothing, silent this long, is closed; 0 never */
};

/* ucmdd's defaults (docs/daemon.md "Limits"). */
extern const struct srv_limits srv_limits_default;

/*
 * "conns=N,fds=N,rings=N,regions=N,sqpoll=N" (any of them, in any order)
 * into lim; 0 or -EINVAL.
 */
int srv_limits_parse(const char *arg, struct srv_limits *lim);

/* The daemon's accounting; without it (d->quota NULL) nothing is counted. */
int srv_quota_init(struct srv_daemon *d, const struct srv_limits *lim);
void srv_quota_free(struct srv_daemon *d);
/* root, or the daemon's own user: no quota, and the reserve. */
bool srv_uid_privileged(const struct srv_daemon *d, uid_t uid);
unsigned srv_idle_timeout_s(const struct srv_daemon *d);
/*
 * Count n more of res held by uid: 0; -EDQUOT (the uid's quota), -EUSERS
 * (connections) or -ENFILE (devices) when only the reserve is left, for an
 * unprivileged uid; -ENOMEM.
 */
int srv_quota_charge(struct srv_daemon *d, uid_t uid, enum srv_res res, unsigned n);
void srv_quota_uncharge(struct srv_daemon *d, uid_t uid, enum srv_res res, unsigned n);
/* What uid holds of res now (tests, logs). */
unsigned srv_quota_held(struct srv_daemon *d, uid_t uid, enum srv_res res);

#endif /* UCMD_SERVER_QUOTA_H */
