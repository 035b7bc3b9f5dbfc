/* SPDX-License-Identifier: MIT */
/* Credentials: who opened a file, who owns a ring, whom a personality names. */
#ifndef UCMD_CORE_CRED_H
#define UCMD_CORE_CRED_H

#include <stdbool.h>
#include <sys/types.h>

#define UCMD_NGROUPS_MAX 32
#define UCMD_HOSTNQN_MAX 224	/* an NQN is at most 223 bytes */
#define UCMD_HOSTID_LEN 37	/* a UUID as text, 8-4-4-4-12 lowercase hex, and its NUL */

struct ucmd_cred {
	pid_t pid;
	uid_t uid, euid;
	gid_t gid, egid;
	int ngroups;		/* supplementary groups kept, at most UCMD_NGROUPS_MAX */
	gid_t groups[UCMD_NGROUPS_MAX];
	bool cap_sys_admin;	/* CAP_SYS_ADMIN in the effective set */
	/*
	 * The NVMe over Fabrics host NQN of an NVMe/TCP connection to ucmdd's
	 * target (src/tcp), empty for everyone else: the policy's hostnqn key
	 * and the audit see it.
	 */
	char hostnqn[UCMD_HOSTNQN_MAX];
	/*
	 * And its host ID (Connect data HOSTID, 16 bytes) as text, e.g.
	 * "5d0a1f3e-0000-4000-8000-0000c0ffee01", empty for everyone else:
	 * the policy's hostid key and the audit see it.
	 */
	char hostid[UCMD_HOSTID_LEN];
	struct ucmd_cred *retired_next;	/* engine bookkeeping */
};

/* Capture the calling thread's credentials. */
void current_cred(struct ucmd_cred *c);

/*
 * The credential generation: bumped after every credential change the
 * process makes through libc (setuid and its family, setgroups, capset,
 * prctl; src/core/cred_interpose.c defines those symbols, so the
 * application's calls reach them). A cached credential whose generation
 * still matches is current, so checking costs a load, not a syscall.
 */
unsigned long cred_generation(void);
void cred_changed(void);
/*
 * The calling thread's credentials through a per-thread cache refreshed
 * when the generation moved: for paths that act as the current task
 * (Linux's capable() in the synchronous ioctl path).
 */
const struct ucmd_cred *current_cred_cached(void);
bool cred_in_group(const struct ucmd_cred *c, gid_t gid);

/*
 * Act as c on the calling thread (Linux's override_creds()): until reverted
 * with NULL, current_cred() and current_cred_cached() answer c,
 * which the caller keeps alive. ucmdd's threads act as their client this
 * way, so that open, ring set-up, the security chain and the audit trail
 * see the peer, never the daemon.
 */
void cred_override_set(const struct ucmd_cred *c);

#endif
