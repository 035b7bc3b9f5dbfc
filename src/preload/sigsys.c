/* SPDX-License-Identifier: MIT */
/*
 * The program's SIGSYS disposition, kept apart from the preload's handler.
 * The seccomp filter traps io_uring, aio and exec calls to our SIGSYS
 * handler (seccomp.c); a process that put its own handler in ours' place
 * (Go's runtime does at start), or reset it (Go's children, between fork
 * and exec), would die of SIGSYS on its next trapped call. Under `ucmd
 * exec`, ucmd-supervise's filter sends it every rt_sigaction of SIGSYS not
 * made from our trampoline (sv_sigsys.c): what the program sets is
 * recorded there, what it asks is what it set, and the kernel's handler
 * stays ours. A user notification, not a trap: Go's child resets its
 * handlers with every signal blocked, where a trap would kill it.
 *
 * Here: our handler goes in through the trampoline, after a reset of the
 * record through libc (a new image starts with SIG_DFL, as exec leaves
 * it); a SIGSYS that is not our filter's (kill, another seccomp filter's
 * trap) goes on to the recorded disposition: the program's handler,
 * nothing for SIG_IGN, death for SIG_DFL, as without us. Without the
 * supervisor (the preload loaded by hand) the program's calls reach the
 * kernel, and replace our handler, as before. The masks the program sets
 * through libc never block SIGSYS (without_sigsys).
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

static void *our_handler;

int pl_sigsys_install(void (*handler)(int, siginfo_t *, void *), void *restorer)
{
	struct k_sigaction dfl = { .handler = SIG_DFL }, ka = {
		.handler = (void *)handler,
		/* SA_NODEFER: a handler's own trapped call (a nested ring op) must not be blocked;
		 * SA_ONSTACK: a program's alternate stack (Go's goroutine stacks are small) */
		.flags = SA_SIGINFO | SA_NODEFER | SA_RESTART | SA_ONSTACK | SA_RESTORER,
		.restorer = restorer,
	};

	our_handler = (void *)handler;
	/* libc's instruction: the supervisor's record of this image (ENOSYS once it is gone) */
	syscall(SYS_rt_sigaction, SIGSYS, &dfl, NULL, sizeof(dfl.mask));
	return (int)pl_raw_syscall(__NR_rt_sigaction, SIGSYS, (long)&ka, 0, sizeof(ka.mask), 0, 0);
}

/*
 * SIGSYS is never blocked while the filter is there: a trapped call made
 * while it is (a thread that blocks every signal and then writes its log
 * to stderr, once the std-write trap is on: seccomp.c; a handler whose
 * sa_mask holds it) would end the process, the kernel resetting a blocked
 * trap signal to its default. So a mask the program asks for through libc
 * is made without SIGSYS (a SIGSYS sent by kill is delivered as unblocked).
 */
static const sigset_t *without_sigsys(int how, const sigset_t *set, sigset_t *copy)
{
	if (!set || how == SIG_UNBLOCK || !pl_seccomp_on() || sigismember(set, SIGSYS) != 1)
		return set;
	*copy = *set;
	sigdelset(copy, SIGSYS);
	return copy;
}

PL_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	static int (*next)(int, const sigset_t *, sigset_t *);
	sigset_t copy;

	if (!next)
		next = pl_next("sigprocmask");
	return next(how, without_sigsys(how, set, &copy), old);
}

PL_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	static int (*next)(int, const sigset_t *, sigset_t *);
	sigset_t copy;

	if (!next)
		next = pl_next("pthread_sigmask");
	return next(how, without_sigsys(how, set, &copy), old);
}

PL_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static int (*next)(int, const struct sigaction *, struct sigaction *);
	struct sigaction copy;

	if (!next)
		next = pl_next("sigaction");
	if (act && pl_seccomp_on() && sigismember(&act->sa_mask, SIGSYS) == 1) {
		copy = *act;
		sigdelset(&copy.sa_mask, SIGSYS);
		act = &copy;
	}
	return next(sig, act, old);
}

void pl_sigsys_chain(int sig, siginfo_t *si, void *ctx)
{
	struct k_sigaction act = { .handler = SIG_DFL };

	/* the supervisor's record; without one, the kernel's answer, which may be ours */
	if (syscall(SYS_rt_sigaction, SIGSYS, NULL, &act, sizeof(act.mask)) ||
	    act.handler == our_handler)
		act.handler = SIG_DFL;
	if (act.handler == SIG_IGN)
		return;
	if (act.handler == SIG_DFL) {
		struct k_sigaction dfl = { .handler = SIG_DFL };
		long tid = pl_raw_syscall(__NR_gettid, 0, 0, 0, 0, 0, 0);
		long pid = pl_raw_syscall(__NR_getpid, 0, 0, 0, 0, 0, 0);

		/* Linux's default: the process ends by SIGSYS once this handler returns */
		pl_raw_syscall(__NR_rt_sigaction, SIGSYS, (long)&dfl, 0, sizeof(dfl.mask), 0, 0);
		pl_raw_syscall(__NR_tgkill, pid, tid, SIGSYS, 0, 0, 0);
		return;
	}
	if (act.flags & SA_RESETHAND) {
		struct k_sigaction dfl = { .handler = SIG_DFL };

		syscall(SYS_rt_sigaction, SIGSYS, &dfl, NULL, sizeof(dfl.mask));
	}
	if (act.flags & SA_SIGINFO)
		((void (*)(int, siginfo_t *, void *))act.handler)(sig, si, ctx);
	else
		((void (*)(int))act.handler)(sig);
}

#endif
