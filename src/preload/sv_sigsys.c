/* SPDX-License-Identifier: MIT */
/*
 * rt_sigaction of SIGSYS for a dynamic program (--dirs; the preload's
 * sigsys.c says why): the disposition a process sets is recorded here per
 * thread group and not made, so the kernel's handler stays the preload's;
 * what a process asks is its record, else its parent's (fork inherits
 * dispositions), else SIG_DFL. The preload resets its image's record when
 * it starts (exec leaves SIG_DFL). A vfork child is a thread group of its
 * own: its reset is not its parent's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "preload/sv.h"

/* rt_sigaction's struct on x86-64 */
struct k_sigaction {
	uint64_t handler, flags, restorer, mask;
};

#define RECORDS 256

static struct {
	pid_t tg;		/* 0: free */
	struct k_sigaction act;
} rec[RECORDS];
static unsigned next_rec;

static pid_t parent_of(pid_t tg)
{
	char path[64], line[128];
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tg);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return (pid_t)ppid;
}

static int find(pid_t tg)
{
	for (int i = 0; i < RECORDS; i++)
		if (rec[i].tg == tg)
			return i;
	return -1;
}

void sv_sigaction(struct sv *s, const struct seccomp_notif *req, pid_t tg, struct sv_ans *a)
{
	const __u64 *g = req->data.args;
	struct k_sigaction in, cur = { 0 };
	int i = find(tg);

	(void)s;
	if (g[3] != sizeof(in.mask)) {
		a->error = -EINVAL;
		return;
	}
	if (i >= 0) {
		cur = rec[i].act;
	} else {
		int p = find(parent_of(tg));

		if (p >= 0)
			cur = rec[p].act;
	}
	if (g[1] && sv_mem_in((pid_t)req->pid, &in, g[1], sizeof(in))) {
		a->error = -EFAULT;
		return;
	}
	if (g[2] && sv_mem_out((pid_t)req->pid, g[2], &cur, sizeof(cur))) {
		a->error = -EFAULT;
		return;
	}
	if (g[1]) {
		if (i < 0) {
			i = find(0);
			if (i < 0)
				i = (int)(next_rec++ % RECORDS);	/* the oldest, most likely gone */
		}
		rec[i].tg = tg;
		rec[i].act = in;
	}
	a->val = 0;
}
