/* SPDX-License-Identifier: MIT */
/*
 * The process's exit, seen before it happens: a forked child's relayed
 * requests on an inherited ring post their CQEs first (pl_relay_exit,
 * uring_relay.c), as Linux's requests outlive the task that submitted
 * them. exit() runs our atexit handler (registered at load: the program's
 * own handlers, registered later, run before it and may still submit);
 * _exit and _Exit skip atexit, so they are interposed; a program's
 * syscall(SYS_exit_group) is seen in our syscall() (seccomp.c). Not seen:
 * a raw exit_group instruction of the program's own and a death by signal:
 * the daemon then posts the CQEs the child's relay ring holds at its end
 * (UCMDD_QI_RELAY), after cancelling and waiting as for any dead client.
 */
#include <stdlib.h>
#include <unistd.h>

#include "preload/preload.h"

static void exit_hook(void)
{
	pl_relay_exit();
}

__attribute__((constructor)) static void exit_hook_init(void)
{
	atexit(exit_hook);
}

PL_EXPORT void _exit(int status)
{
	static void (*next)(int);

	pl_relay_exit();
	if (!next)
		next = (void (*)(int))pl_next("_exit");
	next(status);
	__builtin_unreachable();
}

PL_EXPORT void _Exit(int status)
{
	static void (*next)(int);

	pl_relay_exit();
	if (!next)
		next = (void (*)(int))pl_next("_Exit");
	next(status);
	__builtin_unreachable();
}
