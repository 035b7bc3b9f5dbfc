/* SPDX-License-Identifier: MIT */
/*
 * The program's SIGSYS disposition, kept apart from the preload's handler.
 * The seccomp filter traps io_uring, aio and exec calls to our SIGSYS
 * handler (seccomp.c); a process that put its own handler in ours' place
 * (Go's runtime does at start), or reset it (Go's and posix_spawn's
 * children, between fork and exec), would die of SIGSYS on its next
 * trapped call. So the filter traps rt_sigaction of SIGSYS too, and it is
 * answered here: what the program sets is recorded, what it asks is what
 * it set (SIG_DFL until then), and the kernel's handler stays ours. A
 * SIGSYS that is not our filter's (kill, another seccomp filter's trap)
 * goes on to the recorded disposition: its handler, nothing for SIG_IGN,
 * death for SIG_DFL, as without us.
 *
 * A vfork child shares our memory with its parent: its record must not
 * become the parent's. Records are per process id (a few slots; the
 * image's own in the first), and a process without one has the image's.
 * Nothing here allocates, and the kernel is reached through the
 * trampoline (pl_raw_syscall): this runs in such children, and an image
 * after exec installs its handler under the inherited filter.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/preload.h"

#if defined(__x86_64__)

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

/* rt_sigaction's struct on x86-64 */
struct k_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

#define SLOTS 8

static struct {
	pid_t pid;
	struct k_sigaction act;
} slots[SLOTS];
static unsigned next_slot = 1;

static pid_t self_pid(void)
{
	return (pid_t)pl_raw_syscall(__NR_getpid, 0, 0, 0, 0, 0, 0);
}

/* This process's record: its own slot, else the image's (slot 0); create: one of its own. */
static struct k_sigaction *record(bool create)
{
	pid_t pid = self_pid();

	for (unsigned i = 0; i < SLOTS; i++)
		if (slots[i].pid == pid)
			return &slots[i].act;
	if (!create)
		return &slots[0].act;
	unsigned i = 1 + next_slot++ % (SLOTS - 1);

	slots[i].pid = pid;
	slots[i].act = slots[0].act;	/* inherited, as fork inherits dispositions */
	return &slots[i].act;
}

int pl_sigsys_install(void (*handler)(int, siginfo_t *, void *), void *restorer)
{
	struct k_sigaction ka = {
		.handler = (void *)handler,
		/* SA_NODEFER: a handler's own trapped call (a nested ring op) must not be blocked;
		 * SA_ONSTACK: a program's alternate stack (Go's goroutine stacks are small) */
		.flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | SA_ONSTACK | SA_RESTORER,
		.restorer = restorer,
	};

	memset(slots, 0, sizeof(slots));
	slots[0].pid = self_pid();
	return (int)pl_raw_syscall(__NR_rt_sigaction, SIGSYS, (long)&ka, 0, sizeof(ka.mask), 0, 0);
}

long pl_sigsys_action(const long a[6])
{
	struct k_sigaction in, *r;
	int err;

	if ((unsigned long)a[3] != sizeof(in.mask))
		return -EINVAL;
	if (a[1]) {
		err = pl_copy_in(&in, (const void *)a[1], sizeof(in));
		if (err)
			return err;
	}
	r = record(a[1] != 0);
	if (a[2]) {
		err = pl_copy_out((void *)a[2], r, sizeof(*r));
		if (err)
			return err;
	}
	if (a[1])
		*r = in;
	return 0;
}

void pl_sigsys_chain(int sig, siginfo_t *si, void *ctx)
{
	struct k_sigaction *r = record(false), act = *r;

	if (act.handler == SIG_IGN)
		return;
	if (act.handler == SIG_DFL) {
		struct k_sigaction dfl = { .handler = SIG_DFL };
		long tid = pl_raw_syscall(__NR_gettid, 0, 0, 0, 0, 0, 0);

		/* Linux's default: the process ends by SIGSYS once this handler returns */
		pl_raw_syscall(__NR_rt_sigaction, SIGSYS, (long)&dfl, 0, sizeof(dfl.mask), 0, 0);
		pl_raw_syscall(__NR_tgkill, self_pid(), tid, SIGSYS, 0, 0, 0);
		return;
	}
	if (act.flags & SA_RESETHAND)
		r->handler = SIG_DFL;
	if (act.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))act.handler)(sig, si, ctx);
	else
		((void (*)(int))act.handler)(sig);
}

#endif
