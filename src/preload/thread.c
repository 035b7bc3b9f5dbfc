/* SPDX-License-Identifier: MIT */
/*
 * The preload's own threads (the supervisor table's watcher, the kernel
 * ring's reaper, an inherited ring's relay): detached, and started with
 * the program's signals blocked so that none of its handlers runs on a
 * thread it does not know of (Linux's io_uring workers take none either).
 * The synchronous ones stay deliverable: a seccomp trap (SIGSYS) or a fault
 * on this thread is its own and is forced by the kernel anyway.
 */
#include <pthread.h>
#include <signal.h>

#include "preload/preload.h"

int pl_thread_start(void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	pthread_attr_t at;
	pthread_t t;
	int ret;

	sigfillset(&all);
	sigdelset(&all, SIGSYS);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	ret = pthread_create(&t, &at, fn, arg);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -ret;
}
