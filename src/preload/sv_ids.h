/* SPDX-License-Identifier: MIT */
/*
 * What decides a thread's access to files, as /proc/TID/status says it:
 * its uids and gids (real, effective, saved, file system), supplementary
 * groups, permitted and effective capabilities, and its umask. One reader
 * for the supervisor's every question about a thread's credentials (has it
 * changed them since it started, which to take on to open as it would,
 * what access(2) answers it: sv_access.c).
 */
#ifndef UCMD_PRELOAD_SV_IDS_H
#define UCMD_PRELOAD_SV_IDS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SV_IDS_GROUPS_MAX 256

struct sv_ids {
	unsigned uid[4], gid[4];	/* real, effective, saved, fs */
	unsigned groups[SV_IDS_GROUPS_MAX];
	int ngroups;			/* all of them; groups[] holds the first SV_IDS_GROUPS_MAX */
	uint64_t groups_hash;		/* FNV-1a of the whole Groups: list, to tell longer ones apart */
	uint64_t cap_prm, cap_eff;
	unsigned umask;			/* 022 when the kernel does not say (before Linux 4.7) */
};

/*
 * The text of a status file: 0, or -EACCES when a Uid, Gid, Groups,
 * CapPrm or CapEff line is missing (credentials not known: nothing is opened as them).
 */
int sv_ids_parse(const char *text, struct sv_ids *id);

/* Thread tid's (0: our process's): 0, -ESRCH when there is no such thread, other -errno. */
int sv_ids_of(pid_t tid, struct sv_ids *id);

/* The same credentials (the umask aside)? */
bool sv_ids_same(const struct sv_ids *a, const struct sv_ids *b);

#endif
