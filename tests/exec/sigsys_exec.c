/* SPDX-License-Identifier: MIT */
/*
 * A program whose SIGSYS disposition is not the preload's, making exec
 * system calls with its own instruction, as Go's runtime and its children
 * do:
 *
 *   sigsys_exec vfork PROG [ARGS...]   a vfork child resets SIGSYS to SIG_DFL
 *                                      (its own rt_sigaction instruction) and
 *                                      runs execve with its own instruction;
 *                                      prints "child exit N" or "child signal
 *                                      N", or "child execve: ERR" (exit 3)
 *   sigsys_exec blocked PROG [ARGS...] the same with every signal blocked
 *                                      around vfork until the child's reset is
 *                                      done, as Go's os/exec
 *   sigsys_exec own PROG [ARGS...]     installs a SIGSYS handler of its own
 *                                      (it prints "own handler" and exits 99),
 *                                      checks sigaction reads it back, then
 *                                      runs execve with its own instruction
 *   sigsys_exec raise                  its own handler, then raise(SIGSYS):
 *                                      prints "own handler", exit 99
 *   sigsys_exec raise-dfl              raise(SIGSYS) with SIG_DFL: killed by it
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "insn.h"

extern char **environ;


static void own(int sig)
{
	(void)sig;
	write(1, "own handler\n", 12);
	_exit(99);
}

int main(int argc, char **argv)
{
	if (argc >= 3 && (!strcmp(argv[1], "vfork") || !strcmp(argv[1], "blocked"))) {
		int st, blocked = !strcmp(argv[1], "blocked");
		sigset_t all, old;
		pid_t pid;

		sigfillset(&all);
		if (blocked)
			sigprocmask(SIG_SETMASK, &all, &old);
		pid = vfork();

		if (pid == 0) {
			/* struct k_sigaction { handler, flags, restorer, mask }: SIG_DFL */
			long ka[4] = { 0, 0, 0, 0 };
			long ret = insn4(SYS_rt_sigaction, SIGSYS, (long)ka, 0, 8);
			char msg[64];
			int n;

			if (ret) {
				n = snprintf(msg, sizeof(msg), "child rt_sigaction: %s\n",
					     strerror((int)-ret));
				write(1, msg, (size_t)n);
				_exit(2);
			}
			if (blocked)
				insn4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8);
			ret = insn3(SYS_execve, (long)argv[2], (long)(argv + 2), (long)environ);
			n = snprintf(msg, sizeof(msg), "child execve: %s\n", strerror((int)-ret));
			write(1, msg, (size_t)n);
			_exit(3);
		}
		if (blocked)
			sigprocmask(SIG_SETMASK, &old, NULL);
		if (pid < 0 || waitpid(pid, &st, 0) != pid)
			return 1;
		if (WIFSIGNALED(st))
			printf("child signal %d\n", WTERMSIG(st));
		else
			printf("child exit %d\n", WEXITSTATUS(st));
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "own")) {
		struct sigaction sa = { .sa_handler = own }, back;
		long ret;

		sigaction(SIGSYS, &sa, NULL);
		if (sigaction(SIGSYS, NULL, &back) || back.sa_handler != own) {
			printf("sigaction reads back another handler\n");
			return 1;
		}
		fflush(stdout);
		ret = insn3(SYS_execve, (long)argv[2], (long)(argv + 2), (long)environ);
		printf("execve: %s\n", strerror((int)-ret));
		return 3;
	}
	if (argc == 2 && !strcmp(argv[1], "raise")) {
		signal(SIGSYS, own);
		raise(SIGSYS);
		return 1;
	}
	if (argc == 2 && !strcmp(argv[1], "raise-dfl")) {
		raise(SIGSYS);
		return 1;
	}
	fprintf(stderr, "usage: sigsys_exec vfork|blocked|own PROG [ARGS...] | raise | raise-dfl\n");
	return 1;
}
